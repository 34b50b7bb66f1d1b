package node

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/wait"
)

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, cond, 10*time.Second, what)
}

// metricFloat reads a metric of n as a number (0 when absent).
func (net *testNet) metricFloat(n *Node, name string) float64 {
	net.t.Helper()
	s := net.metric(n, name)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		net.t.Fatalf("%s = %q", name, s)
	}
	return v
}

// TestCoverTraffic: on a small network a node with a cover rate sends loop packets over paid
// channels back to itself: without a loop the ticks are skipped and counted; with one the
// packets return, are counted, and reach neither the admin WebSocket nor the message metrics;
// the relayers hold the cover's tickets, whose worth the node reports. A text made like a cover
// text by another node is an ordinary message.
func TestCoverTraffic(t *testing.T) {
	net := newTestNet(t, 4)
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	net.open(a, r1, tokens(10))
	net.open(r1, r2, tokens(10))
	aFrames := watch(t, a)

	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":20}`, http.StatusNoContent, nil)
	net.eventually("cover ticks skipped without a loop", func() bool {
		return net.metricFloat(a, `relayd_cover_packets_skipped_total{reason="no_path"}`) >= 2
	})
	if sent := net.metricFloat(a, "relayd_cover_packets_sent_total"); sent != 0 {
		t.Fatalf("%v cover packets sent without a loop", sent)
	}

	// Off while the loop's last channel is indexed: a node that has indexed it sends over it
	// before the relayer that pays it has, which loses that packet (a fresh channel's race, not
	// the subject here).
	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":0}`, http.StatusNoContent, nil)
	waitFor(t, "cover sends under way to end", func() bool { return a.cover.Busy() == 0 })
	net.open(r2, a, tokens(10)) // the loop a → r1 → r2 → a
	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":20}`, http.StatusNoContent, nil)
	net.eventually("cover packets back", func() bool { return net.metricFloat(a, "relayd_cover_packets_returned_total") >= 5 })
	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":0}`, http.StatusNoContent, nil)
	var sent float64
	defer net.logRelayMetricsIfFailed()
	net.eventually("every cover packet sent is back", func() bool {
		sent = net.metricFloat(a, "relayd_cover_packets_sent_total")
		return sent == net.metricFloat(a, "relayd_cover_packets_returned_total")
	})
	if got := net.metricFloat(a, "relayd_cover_bytes_sent_total"); got != sent*relay.MsgFrameLen {
		t.Fatalf("cover bytes %v for %v packets", got, sent)
	}
	if n := net.metricFloat(a, "relayd_cover_round_trip_seconds_count"); n != sent {
		t.Fatalf("%v round trips observed for %v returned packets", n, sent)
	}
	if n := net.metricFloat(a, "relayd_message_latency_seconds_count"); n != 0 {
		t.Fatalf("cover counted as %v received messages", n)
	}
	for _, f := range aFrames.drain() {
		if strings.HasPrefix(f, "message ") || strings.Contains(f, "NODE RECEIVED MESSAGE") {
			t.Fatalf("cover reached the admin WebSocket: %q", f)
		}
	}

	// Paid like messages: r1 holds a ticket from a per cover packet, worth what a reports.
	var list []ticketView
	net.eventually("r1's cover tickets acknowledged", func() bool {
		net.mustCall(r1, http.MethodGet, "/tickets", "", http.StatusOK, &list)
		return float64(len(list)) == sent
	})
	var worth float64
	for _, tk := range list {
		v, _ := strconv.ParseFloat(tk.Amount, 64)
		worth += v / 1e18
		if tk.Counterparty != a.id.PeerID().String() {
			t.Fatalf("r1 holds a ticket from %s", tk.Counterparty)
		}
	}
	if spent := net.metricFloat(a, "relayd_cover_tokens_spent_total"); worth == 0 || math.Abs(spent-worth) > 1e-9 {
		t.Fatalf("cover spent %v tokens, r1's tickets are worth %v", spent, worth)
	}

	// b's cover text is no cover text of a's: a delivers it.
	forged, err := b.cover.Text()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.router.SendPath(t.Context(), []peer.ID{a.id.PeerID()}, forged); err != nil {
		t.Fatal(err)
	}
	expectMessage(t, aFrames, forged)
}
