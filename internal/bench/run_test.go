package bench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/bench/benchtest"
	"github.com/relayd/relayd/internal/ws"
)

func TestRunAgainstFakeNetwork(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{
		NodeLatencyMs: 3,
		Reject: func(seq int) (int, string, bool) {
			return http.StatusUnprocessableEntity, "NOT_ENOUGH_BALANCE", seq%50 == 7
		},
		Drop: func(seq int) bool { return seq%40 == 3 },
	})
	// Frames from before the run (a replayed message of an older run, and
	// of another application) must not count.
	net.Hubs[3].Publish(ws.TypeMessage, bench.MessageText("0ldrun00", 1, 100))
	net.Hubs[3].Publish(ws.TypeMessage, "hello")

	var mu sync.Mutex
	var progress []bench.Progress
	rep, err := bench.Run(t.Context(), bench.Config{
		Env: net.Env, Senders: []int{1, 2}, Recipient: 4, Messages: 200, Rate: 0, Concurrency: 8, Size: 120,
		Timeout: 300 * time.Millisecond, ScrapeInterval: 20 * time.Millisecond,
		Progress: func(p bench.Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	// 200 messages: seq%50==7 rejected (4), seq%40==3 dropped (5).
	if rep.Attempted != 200 || rep.Sent != 196 || rep.Rejected != 4 || rep.Delivered != 191 || rep.Lost != 5 {
		t.Fatalf("attempted %d sent %d rejected %d delivered %d lost %d", rep.Attempted, rep.Sent, rep.Rejected, rep.Delivered, rep.Lost)
	}
	if rep.Rejections["HTTP 422 NOT_ENOUGH_BALANCE"] != 4 || len(rep.Rejections) != 1 {
		t.Fatalf("rejections %v", rep.Rejections)
	}
	if rep.Foreign < 2 || rep.Duplicates != 0 || rep.Unexpected != 0 {
		t.Fatalf("foreign %d duplicates %d unexpected %d", rep.Foreign, rep.Duplicates, rep.Unexpected)
	}
	if want := 191.0 / 196; rep.DeliveryRatio != want {
		t.Fatalf("ratio %v, want %v", rep.DeliveryRatio, want)
	}
	if rep.Latency.Count != 191 || rep.Latency.P50Ms <= 0 || rep.Latency.MaxMs < rep.Latency.P99Ms {
		t.Fatalf("latency %+v", rep.Latency)
	}
	if rep.NodeLatency.Count != 191 || rep.NodeLatency.P99Ms != 3 {
		t.Fatalf("node latency %+v", rep.NodeLatency)
	}
	if rep.SentPerSecond <= 0 || rep.DeliveredPerSecond <= 0 || rep.Size != 120 {
		t.Fatalf("rates %v %v size %d", rep.SentPerSecond, rep.DeliveredPerSecond, rep.Size)
	}
	// Every accepted text is distinct and of the asked size.
	acc := net.Accepted()
	slices.Sort(acc)
	if len(slices.Compact(acc)) != 196 || len(acc[0]) != 120 {
		t.Fatalf("%d distinct accepted texts of %d bytes", len(acc), len(acc[0]))
	}
	// Node usage: CPU is the difference between the first and last scrape
	// (0.25 s per scrape in the fake), the peak RSS the third scrape's.
	if len(rep.Nodes) != 4 {
		t.Fatalf("nodes %+v", rep.Nodes)
	}
	roles := []string{"sender", "sender", "relayer", "recipient"}
	for i, n := range rep.Nodes {
		scrapes := net.Scrapes(i + 1)
		if n.Role != roles[i] || n.Scrapes != scrapes || n.ScrapeErrors != 0 || n.CPUSeconds != 0.25*float64(scrapes-1) {
			t.Fatalf("node %d: %+v (fake scraped %d times)", i+1, n, scrapes)
		}
		if scrapes >= 3 && n.PeakRSSBytes != 80e6 || n.EndRSSBytes != 50e6 {
			t.Fatalf("node %d RSS: %+v", i+1, n)
		}
	}
	// Cost: the fake's counters give 100 sent per scrape at each sender and 200 forwarded at
	// the relayer, so one relayer per message, 2.5 ms of sender CPU per message sent and
	// 1.25 ms of relayer CPU per packet forwarded, against a floor this process timed.
	c := rep.Cost
	if c == nil || c.RelayersSource != "counters" || c.Relayers != 1 || len(c.Roles) != 3 || c.Before.Rounds != 1000 || c.Before.HopNs() <= 0 || c.After.HopNs() <= 0 {
		t.Fatalf("cost %+v", c)
	}
	if s, r := c.Roles[0], c.Roles[1]; s.Role != "sender" || s.PerPacketUs != 2500 || s.Ratio <= 0 || r.Role != "relayer" || r.PerPacketUs != 1250 || r.FloorUs != c.Floor.HopNs()/1e3 {
		t.Fatalf("roles %+v", c.Roles)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil || !strings.Contains(table.String(), "× floor") {
		t.Fatalf("table (%v):\n%s", err, table.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) == 0 || progress[len(progress)-1].Phase != "done" || progress[len(progress)-1].Delivered != 191 {
		t.Fatalf("progress %+v", progress)
	}
}

// TestRunEndsWhenAllArrive: with nothing lost the run does not wait for its
// (long) timeout.
func TestRunEndsWhenAllArrive(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{})
	start := time.Now()
	rep, err := bench.Run(t.Context(), bench.Config{Env: net.Env, Senders: []int{1}, Recipient: 4, Messages: 50, Rate: 2000, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Delivered != 50 || rep.Lost != 0 || rep.DeliveryRatio != 1 {
		t.Fatalf("report %+v", rep)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the run took %v: it waited for the timeout", d)
	}
}

func TestRunErrors(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{})
	bad := net.Env
	bad.APIToken = "wrong-token"
	if _, err := bench.Run(t.Context(), bench.Config{Env: bad, Senders: []int{1}, Recipient: 4, Messages: 1}); !errors.Is(err, bench.ErrAuth) {
		t.Fatalf("wrong token: %v", err)
	}
	for _, c := range []struct {
		name string
		cfg  bench.Config
		want string
	}{
		{"sender is recipient", bench.Config{Senders: []int{4}, Recipient: 4, Messages: 1}, "both a sender and a recipient"},
		{"sender is one recipient", bench.Config{Senders: []int{1, 3}, Recipients: []int{3, 4}, Messages: 1}, "node 3 cannot be both"},
		{"recipient and recipients", bench.Config{Senders: []int{1}, Recipient: 4, Recipients: []int{3, 4}, Messages: 1}, "not both"},
		{"no recipient", bench.Config{Senders: []int{1}, Messages: 1}, "no recipient"},
		{"recipient twice", bench.Config{Senders: []int{1}, Recipients: []int{4, 4}, Messages: 1}, "twice as a recipient"},
		{"no such recipient among several", bench.Config{Senders: []int{1}, Recipients: []int{4, 5}, Messages: 1}, "node 5 does not exist"},
		{"no such recipient", bench.Config{Senders: []int{1}, Recipient: 9, Messages: 1}, "node 9 does not exist"},
		{"too large", bench.Config{Senders: []int{1}, Recipient: 4, Messages: 1, Size: 65537}, "at most 65536"},
		{"too many replies", bench.Config{Senders: []int{1}, Recipient: 4, Messages: 1, Replies: 17}, "between 0 and 16"},
		{"no messages", bench.Config{Senders: []int{1}, Recipient: 4}, "messages must be"},
		{"negative rate", bench.Config{Senders: []int{1}, Recipient: 4, Messages: 1, Rate: -1}, "rate"},
		{"twice", bench.Config{Senders: []int{1, 1}, Recipient: 4, Messages: 1}, "twice"},
	} {
		c.cfg.Env = net.Env
		if _, err := bench.Run(t.Context(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestReportJSONShape pins the names of the JSON report's fields: scripts
// read them.
func TestReportJSONShape(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{})
	rep, err := bench.Run(t.Context(), bench.Config{Env: net.Env, Senders: []int{1}, Recipient: 4, Messages: 5, Rate: 0})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"runId", "start", "senders", "recipient", "recipients", "perRecipient", "misrouted", "messages", "rate", "concurrency", "size",
		"attempted", "notSent", "sent", "rejected", "rejections", "delivered", "lost", "deliveryRatio", "unexpected",
		"duplicates", "foreign", "wsReconnects", "latency", "nodeLatency", "apiLatency", "sendSeconds", "deliverSeconds",
		"totalSeconds", "sentPerSecond", "deliveredPerSecond", "nodes", "toolCpuSeconds", "hostBusyPercent", "cost"}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("JSON keys\n got %v\nwant %v", got, want)
	}
	var lat map[string]float64
	if err := json.Unmarshal(m["latency"], &lat); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"count", "minMs", "meanMs", "p50Ms", "p90Ms", "p99Ms", "maxMs"} {
		if _, ok := lat[k]; !ok {
			t.Fatalf("latency has no %s: %v", k, lat)
		}
	}
	if lat["count"] != 5 {
		t.Fatalf("latency count %v", lat["count"])
	}
	var per []map[string]any
	if err := json.Unmarshal(m["perRecipient"], &per); err != nil || len(per) != 1 {
		t.Fatalf("perRecipient %s: %v", m["perRecipient"], err)
	}
	for _, k := range []string{"node", "attempted", "sent", "rejected", "delivered", "lost", "misrouted"} {
		if _, ok := per[0][k]; !ok {
			t.Fatalf("perRecipient has no %s: %v", k, per[0])
		}
	}
	var nodes []map[string]any
	if err := json.Unmarshal(m["nodes"], &nodes); err != nil || len(nodes) != 4 {
		t.Fatalf("nodes %s: %v", m["nodes"], err)
	}
	for _, k := range []string{"node", "role", "cpuSeconds", "cpuPercent", "peakRssBytes", "endRssBytes", "scrapes", "scrapeErrors"} {
		if _, ok := nodes[0][k]; !ok {
			t.Fatalf("node has no %s: %v", k, nodes[0])
		}
	}

	var table, svg bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sent (API accepted)", "delivery ratio", "100.0000 %", "send → WS frame", "recipient",
		"recipient attempted sent rejected delivered lost misrouted", "node 4 5 5 0 5 0 0"} {
		if !strings.Contains(squash(table.String()), s) {
			t.Fatalf("table has no %q:\n%s", s, table.String())
		}
	}
	if err := rep.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svg.String(), "<svg") || strings.Count(svg.String(), "<circle") != 5 || !strings.Contains(svg.String(), "p99") {
		t.Fatalf("svg:\n%s", svg.String())
	}
}

// TestRunSeveralRecipients: 2 senders and 2 recipients; every sender sends
// to every recipient, each recipient's admin server is watched, and the
// counts are split by recipient.
func TestRunSeveralRecipients(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{
		Nodes: 5,
		Reject: func(seq int) (int, string, bool) {
			return http.StatusUnprocessableEntity, "PATH_NOT_FOUND", seq%20 == 6 // seq 6, 26, …: to node 5
		},
		Drop: func(seq int) bool { return seq%25 == 3 }, // seq 3, 53 to node 5; 28, 78 to node 4
	})
	rep, err := bench.Run(t.Context(), bench.Config{
		Env: net.Env, Senders: []int{1, 2}, Recipients: []int{4, 5}, Messages: 100, Concurrency: 8,
		Timeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 95 || rep.Rejected != 5 || rep.Delivered != 91 || rep.Lost != 4 || rep.Misrouted != 0 {
		t.Fatalf("sent %d rejected %d delivered %d lost %d misrouted %d", rep.Sent, rep.Rejected, rep.Delivered, rep.Lost, rep.Misrouted)
	}
	if rep.Rejections["HTTP 422 PATH_NOT_FOUND"] != 5 {
		t.Fatalf("rejections %v", rep.Rejections)
	}
	want := []bench.RecipientCounts{
		{Node: 4, Attempted: 50, Sent: 50, Delivered: 48, Lost: 2},
		{Node: 5, Attempted: 50, Sent: 45, Rejected: 5, Delivered: 43, Lost: 2},
	}
	if !slices.Equal(rep.PerRecipient, want) {
		t.Fatalf("per recipient\n got %+v\nwant %+v", rep.PerRecipient, want)
	}
	if rep.Recipient != 0 || !slices.Equal(rep.Recipients, []int{4, 5}) {
		t.Fatalf("recipient %d recipients %v", rep.Recipient, rep.Recipients)
	}
	// Every sender sent to every recipient, evenly (accepted messages).
	routes := net.Routes()
	wantRoutes := map[[2]int]int{{1, 4}: 25, {2, 4}: 25, {1, 5}: 20, {2, 5}: 25}
	if !maps.Equal(routes, wantRoutes) {
		t.Fatalf("routes %v, want %v", routes, wantRoutes)
	}
	roles := []string{"sender", "sender", "relayer", "recipient", "recipient"}
	for i, n := range rep.Nodes {
		if n.Role != roles[i] {
			t.Fatalf("node %d role %s, want %s", i+1, n.Role, roles[i])
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"to nodes 4,5", "node 4 50 50 0 48 2 0", "node 5 50 45 5 43 2 0", "HTTP 422 PATH_NOT_FOUND 5"} {
		if !strings.Contains(squash(table.String()), s) {
			t.Fatalf("table has no %q:\n%s", s, table.String())
		}
	}
}

// TestRunDetectsMisroutedDelivery: a message the network hands to the other
// recipient is reported as misrouted and lost, not as delivered.
func TestRunDetectsMisroutedDelivery(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{
		Misroute: func(seq, to int) int {
			if seq%10 == 5 { // seq 5, 15, …: from node 2; 5, 25, … to node 3, 15, 35, … to node 4
				return 7 - to
			}
			return to
		},
	})
	rep, err := bench.Run(t.Context(), bench.Config{
		Env: net.Env, Senders: []int{1, 2}, Recipients: []int{3, 4}, Messages: 40, Timeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 40 || rep.Delivered != 36 || rep.Lost != 4 || rep.Misrouted != 4 || rep.Foreign != 0 {
		t.Fatalf("sent %d delivered %d lost %d misrouted %d foreign %d", rep.Sent, rep.Delivered, rep.Lost, rep.Misrouted, rep.Foreign)
	}
	want := []bench.RecipientCounts{
		{Node: 3, Attempted: 20, Sent: 20, Delivered: 18, Lost: 2, Misrouted: 2},
		{Node: 4, Attempted: 20, Sent: 20, Delivered: 18, Lost: 2, Misrouted: 2},
	}
	if !slices.Equal(rep.PerRecipient, want) {
		t.Fatalf("per recipient\n got %+v\nwant %+v", rep.PerRecipient, want)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if got := squash(table.String()); !strings.Contains(got, "MISROUTED (arrived at another recipient) 4") || !strings.Contains(got, "node 3 20 20 0 18 2 2") {
		t.Fatalf("table:\n%s", table.String())
	}
}

// squash replaces every run of white space in s with one space, so tests
// need not know a table's column widths.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestLongMessagesWithReplies: the tool sends texts beyond one packet and asks for reply blocks
// ("replies" of POST /messages), and matches their delivery as it does a one-packet message's.
func TestLongMessagesWithReplies(t *testing.T) {
	net := benchtest.Start(t, benchtest.Options{})
	rep, err := bench.Run(t.Context(), bench.Config{Env: net.Env, Senders: []int{1}, Recipient: 4, Messages: 12, Rate: 0,
		Size: 8192, Replies: 1, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 12 || rep.Delivered != 12 || rep.Size != 8192 || rep.Replies != 1 {
		t.Fatalf("sent %d delivered %d size %d replies %d", rep.Sent, rep.Delivered, rep.Size, rep.Replies)
	}
	for i, text := range net.Accepted() {
		if len(text) != 8192 || net.Replies()[i] != 1 {
			t.Fatalf("message %d: %d bytes with %d reply blocks", i, len(text), net.Replies()[i])
		}
	}
	// Without replies the field is left out, as the original interface's request has it.
	rep, err = bench.Run(t.Context(), bench.Config{Env: net.Env, Senders: []int{1}, Recipient: 4, Messages: 3, Rate: 0, Timeout: time.Second})
	if err != nil || rep.Delivered != 3 || rep.Replies != 0 {
		t.Fatalf("%v: %+v", err, rep)
	}
	if r := net.Replies(); r[len(r)-1] != 0 {
		t.Fatalf("replies %v", r)
	}
	// The recipient's "NODE RECEIVED MESSAGE" time is read with each delivery: no later than
	// the tool saw it (to the millisecond of the line).
	for _, s := range rep.Samples {
		if delivered := rep.Start.Add(s.SentAt + s.Latency); s.Received.IsZero() || s.Received.After(delivered) {
			t.Fatalf("message %d: received at %v, the tool saw it at %v", s.Seq, s.Received, delivered)
		}
	}
}
