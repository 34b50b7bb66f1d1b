package node

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/version"
)

// TestCommandsOriginalWording: where relayd has a command the original 2022
// node had, its output starts with the original's wording (brand renamed),
// so scripts written for it match; relayd's detail follows.
func TestCommandsOriginalWording(t *testing.T) {
	n := startNode(t, testConfig(t))
	admin := dialAdmin(t, n)
	id, addr := n.id.PeerID().String(), n.id.Address().Hex()
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"address", []string{"RELAY Address:  " + id + " (PeerId)", "ETH Address:    " + addr + " (native address)"}},
		{"address native", []string{"ETH Address:    " + addr + " (native address)"}},
		{"address hopr", []string{"RELAY Address:  " + id + " (PeerId)"}},
		{"address both", []string{`"both" is neither relay nor native. Usage: address [relay|native]`}},
		{"version", []string{version.Release}},
		{"peers", []string{"network peers status: 0 nodes in total, 0 nodes with quality 1.0, 0 nodes with quality below 0.5"}},
		{"addresses me", []string{"Announced addresses for me:", "Observed addresses for me:"}},
		{"addresses", []string{"addresses needs exactly one peer. Usage: addresses <peer>"}},
		{"quit now", []string{"quit takes no arguments. Usage: quit"}},
		{"blance", []string{"Unknown command: blance. Did you mean 'balance'? Type 'help'."}},
		{"redeemtickets", []string{"Unknown command: redeemtickets. Did you mean 'redeemTickets'? Type 'help'."}},
	} {
		want := tt.want
		out := admin.run(tt.line, func(s string) bool { return s == want[len(want)-1] })
		if strings.Join(out, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %q, want %q", tt.line, out, want)
		}
	}
}

// TestQuitStopsTheNode: quit answers, then the node stops as on a signal:
// Run returns nil.
func TestQuitStopsTheNode(t *testing.T) {
	n, err := New(testConfig(t), os.Stderr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Run(context.Background()) }()
	admin := dialAdmin(t, n)
	if out := admin.run("quit", func(string) bool { return true }); out[0] != "Stopping the node." {
		t.Fatalf("quit: %q", out)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the node did not stop")
	}
}

// TestChainCommandsOriginalWording covers the commands that need a chain.
func TestChainCommandsOriginalWording(t *testing.T) {
	net := newTestNet(t, 2)
	a, b := net.nodes[0], net.nodes[1]
	admin := dialAdmin(t, a)
	bID := b.id.PeerID().String()
	last := func(prefix string) func(string) bool {
		return func(s string) bool { return strings.HasPrefix(s, prefix) }
	}

	out := admin.run("open "+bID+" 2", last(""))
	if !regexp.MustCompile(`^Successfully opened channel 0x[0-9a-f]{64} to ` + bID + ` with 2 RELAY \(tx 0x[0-9a-f]{64}\)$`).MatchString(out[0]) {
		t.Fatalf("open: %q", out)
	}
	out = admin.run("channels", last("No incoming channels."))
	if len(out) != 5 || !strings.HasPrefix(out[0], "Outgoing Channel:       0x") || out[1] != "To:                     "+bID ||
		out[2] != "Status:                 Open" || out[3] != "Balance:                2 RELAY" {
		t.Fatalf("channels: %q", out)
	}
	out = admin.run("balance", last("ETH Balance:"))
	if len(out) != 2 || out[0] != "RELAY Balance:  98 RELAY" || !strings.HasPrefix(out[1], "ETH Balance:    ") || !strings.HasSuffix(out[1], " NATIVE") {
		t.Fatalf("balance: %q", out)
	}
	out = admin.run("tickets", last("- Rejected Value:"))
	if len(out) != 11 || out[0] != "Tickets:" || out[2] != "- Unredeemed:       0" || out[7] != "- Win Proportion:   0%" {
		t.Fatalf("tickets: %q", out)
	}
	out = admin.run("redeemTickets", last(""))
	if out[0] != "Redeemed all tickets. Run 'tickets' for details (0 tickets worth 0 RELAY)." {
		t.Fatalf("redeemTickets: %q", out)
	}
	out = admin.run("info", last("Topology:"))
	if len(out) != 9 || out[8] != "Topology: free routes" || !strings.HasPrefix(out[0], "Announcing to other nodes as: /") || out[2] != "Running on: test" ||
		!strings.HasPrefix(out[3], "RELAY Token: 0x") || !strings.HasPrefix(out[4], "RELAY Channels: 0x") ||
		out[5] != "Channel closure period: 1 minute (60 s)" {
		t.Fatalf("info: %q", out)
	}
	out = admin.run("close "+bID, last(""))
	if !regexp.MustCompile(`^Initiated channel closure, the channel must remain open for at least 1 minute\. Please send the close command again once the cool-off has passed\. Receipt: 0x[0-9a-f]{64}\. \(channel to ` + bID + `\)$`).MatchString(out[0]) {
		t.Fatalf("close: %q", out)
	}
	out = admin.run("close "+bID, last(""))
	if out[0] != "Closing channel, closure window still active. Run close again once the closure period has passed." {
		t.Fatalf("close again: %q", out)
	}
	out = admin.run("peers", last("2 peers have announced themselves on chain:"))
	if len(out) != 3 || !strings.HasPrefix(out[0], "network peers status: 1 nodes in total, ") || !strings.HasPrefix(out[1], "- id: "+bID+", quality: ") {
		t.Fatalf("peers: %q", out)
	}
	to := b.id.Address().Hex()
	out = admin.run("withdraw 0.5 native "+to, last(""))
	if !regexp.MustCompile(`^Withdrawing 0\.5 NATIVE to ` + to + `, receipt 0x[0-9a-f]{64}\.$`).MatchString(out[0]) {
		t.Fatalf("withdraw: %q", out)
	}
}
