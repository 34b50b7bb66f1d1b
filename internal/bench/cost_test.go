package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// A floor with round numbers: ECDH 40 µs, ecrecover 50, sign 30, k·G 25.
var testFloor = Floor{ECDHNs: 40e3, RecoverNs: 50e3, SignNs: 30e3, BaseMultNs: 25e3, Rounds: 10}

func TestFloorFormulas(t *testing.T) {
	f := testFloor
	if got := f.HopNs(); !near(got, 120e3) {
		t.Fatalf("hop %v", got)
	}
	if got := f.RecipientNs(); !near(got, 90e3) {
		t.Fatalf("recipient %v", got)
	}
	for _, tc := range []struct {
		relayers float64
		want     float64
	}{
		// 3 hops: 3 ECDH, 3 ephemeral keys + 4 PoR points, 1 signature.
		{2, 3*40e3 + 7*25e3 + 30e3},
		{1, 2*40e3 + 5*25e3 + 30e3},
		{3, 4*40e3 + 9*25e3 + 30e3},
		// A direct message: no ticket, one ephemeral key and the ack challenge.
		{0, 40e3 + 2*25e3},
		// A mean over paths of 2 and 3 relayers is linear between them.
		{2.5, (3*40e3 + 7*25e3 + 30e3 + 4*40e3 + 9*25e3 + 30e3) / 2},
	} {
		if got := f.CreateNs(tc.relayers); !near(got, tc.want) {
			t.Errorf("CreateNs(%v) = %v, want %v", tc.relayers, got, tc.want)
		}
	}
	m := MeanFloor(f, Floor{ECDHNs: 60e3, RecoverNs: 70e3, SignNs: 50e3, BaseMultNs: 35e3, Rounds: 10})
	if !near(m.ECDHNs, 50e3) || !near(m.RecoverNs, 60e3) || !near(m.SignNs, 40e3) || !near(m.BaseMultNs, 30e3) || m.Rounds != 20 {
		t.Fatalf("mean %+v", m)
	}
}

func TestCosts(t *testing.T) {
	nodes := []NodeUsage{
		{Node: 1, Role: "sender", CPUSeconds: 4.2, PacketsSent: 10_010, PacketsForwarded: 0, PacketsDelivered: 5},
		{Node: 2, Role: "relayer", CPUSeconds: 2.4, PacketsSent: 5, PacketsForwarded: 10_010, PacketsDelivered: 0},
		{Node: 3, Role: "relayer", CPUSeconds: 3.6, PacketsSent: 5, PacketsForwarded: 10_010, PacketsDelivered: 0},
		{Node: 4, Role: "recipient", CPUSeconds: 1.8, PacketsSent: 5, PacketsForwarded: 0, PacketsDelivered: 10_000},
	}
	// The floor got slower during the run: before 120 µs a hop, after 180.
	after := Floor{ECDHNs: 60e3, RecoverNs: 75e3, SignNs: 45e3, BaseMultNs: 37.5e3, Rounds: 10}
	c := Costs(nodes, 10_000, testFloor, after, 0)
	if !near(c.Drift, 1.5) {
		t.Fatalf("drift %v", c.Drift)
	}
	if c.RelayersSource != "counters" || !near(c.Relayers, 2) {
		t.Fatalf("relayers %v (%s)", c.Relayers, c.RelayersSource)
	}
	mean := MeanFloor(testFloor, after) // hop 150 µs, recipient 112.5, create(2) 3·50+7·31.25+37.5 = 406.25
	if len(c.Roles) != 3 {
		t.Fatalf("roles %+v", c.Roles)
	}
	want := []struct {
		role              string
		nodes             int
		cpu, packets      float64
		perPacket, perMsg float64
		floor             float64
	}{
		{"sender", 1, 4.2, 10_010, 4.2e6 / 10_010, 420, mean.CreateNs(2) / 1e3},
		{"relayer", 2, 6.0, 20_020, 6e6 / 20_020, 600, 150},
		{"recipient", 1, 1.8, 10_000, 180, 180, 112.5},
	}
	for i, w := range want {
		r := c.Roles[i]
		if r.Role != w.role || len(r.Nodes) != w.nodes || !near(r.CPUSeconds, w.cpu) || !near(r.Packets, w.packets) ||
			!near(r.PerPacketUs, w.perPacket) || !near(r.PerMessageUs, w.perMsg) || !near(r.FloorUs, w.floor) ||
			!near(r.Ratio, w.perPacket/w.floor) {
			t.Errorf("role %d: %+v, want %+v", i, r, w)
		}
	}
	if !near(c.Roles[0].FloorUs, 406.25) {
		t.Fatalf("sender floor %v", c.Roles[0].FloorUs)
	}
	// The network: 12 CPU s for 10,000 messages = 1,200 µs, against 406.25 + 2·150 + 112.5.
	n := c.Network
	if !near(n.PerMessageUs, 1200) || !near(n.FloorUs, 818.75) || !near(n.Ratio, 1200/818.75) || len(n.Nodes) != 4 {
		t.Fatalf("network %+v", n)
	}

	// Given relayers win over the counters.
	if c := Costs(nodes, 10_000, testFloor, after, 3); c.Relayers != 3 || c.RelayersSource != "given" ||
		!near(c.Roles[0].FloorUs, mean.CreateNs(3)/1e3) {
		t.Fatalf("given: %v %s %v", c.Relayers, c.RelayersSource, c.Roles[0].FloorUs)
	}
}

// A node without the relay counters (an older build) leaves its role's packets unknown: no
// per-packet figure, no ratio, the default relayers; the CPU per message is still there.
func TestCostsWithoutCounters(t *testing.T) {
	nodes := []NodeUsage{
		{Node: 1, Role: "sender", CPUSeconds: 2, PacketsSent: -1, PacketsForwarded: -1, PacketsDelivered: -1},
		{Node: 2, Role: "relayer", CPUSeconds: 1, PacketsSent: -1, PacketsForwarded: -1, PacketsDelivered: -1},
		{Node: 3, Role: "recipient", CPUSeconds: 1, PacketsSent: -1, PacketsForwarded: -1, PacketsDelivered: -1},
	}
	c := Costs(nodes, 1000, testFloor, testFloor, 0)
	if c.RelayersSource != "default" || c.Relayers != DefaultRelayers || c.Drift != 1 {
		t.Fatalf("relayers %v %s drift %v", c.Relayers, c.RelayersSource, c.Drift)
	}
	for _, r := range c.Roles {
		if r.Packets != -1 || r.PerPacketUs != 0 || r.Ratio != 0 || r.PerMessageUs <= 0 {
			t.Fatalf("%+v", r)
		}
	}
	var b strings.Builder
	c.writeTable(&b)
	out := b.String()
	for _, want := range []string{"× floor", "sender", "relayers per message 2.00 (default)", "?"} {
		if !strings.Contains(out, want) {
			t.Fatalf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestCostTable(t *testing.T) {
	nodes := []NodeUsage{
		{Node: 1, Role: "sender", CPUSeconds: 4.0625, PacketsSent: 10_000},
		{Node: 2, Role: "relayer", CPUSeconds: 2.4, PacketsForwarded: 10_000},
		{Node: 3, Role: "recipient", CPUSeconds: 1.8, PacketsDelivered: 10_000},
	}
	c := Costs(nodes, 10_000, testFloor, testFloor, 0)
	var b strings.Builder
	c.writeTable(&b)
	out := b.String()
	// Sender: 406.25 µs per message against a 1-relayer floor of 2·40 + 5·25 + 30 = 235 µs.
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = strings.Join(f, " ")
		}
	}
	for role, want := range map[string]string{
		"sender":    "sender 1 4.06 10000 406.2 406.2 235.0 1.73",
		"relayer":   "relayer 2 2.40 10000 240.0 240.0 120.0 2.00",
		"recipient": "recipient 3 1.80 10000 180.0 180.0 90.0 2.00",
		// 8.2625 s over 10,000 messages against 235 + 120 + 90 µs.
		"network": "network 1,2,3 8.26 10000 826.3 826.3 445.0 1.86",
	} {
		if rows[role] != want {
			t.Errorf("row %q, want %q:\n%s", rows[role], want, out)
		}
	}
	if !strings.Contains(out, "relayers per message 1.00 (counters)") || !strings.Contains(out, "drift 1.00") {
		t.Errorf("table:\n%s", out)
	}
}

func TestMeasureFloor(t *testing.T) {
	if _, err := MeasureFloor(0); err == nil {
		t.Fatal("0 rounds accepted")
	}
	f, err := MeasureFloor(3)
	if err != nil {
		t.Fatal(err)
	}
	if f.Rounds != 20 || f.ECDHNs <= 0 || f.RecoverNs <= 0 || f.SignNs <= 0 || f.BaseMultNs <= 0 {
		t.Fatalf("%+v", f)
	}
}

func TestMedianNs(t *testing.T) {
	if got := medianNs([]time.Duration{5, 1, 900}); got != 5 {
		t.Fatalf("odd: %v", got)
	}
	if got := medianNs([]time.Duration{4, 1, 2, 1000}); got != 3 {
		t.Fatalf("even: %v", got)
	}
}
