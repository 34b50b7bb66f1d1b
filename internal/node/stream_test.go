package node

import (
	"fmt"
	"net/http"
	"testing"
)

// TestConstantRateStream: on a small network where every node has a channel to every other, a
// node with a sendRate sends drop cover in its empty slots, to nodes that discard it (paid like
// messages: the first relayer holds the tickets); its message takes a slot and is delivered;
// the recipient re-emits the message as a drop, so that on the wire it relayed it.
func TestConstantRateStream(t *testing.T) {
	net := newTestNet(t, 4)
	for _, n := range net.nodes {
		net.mustCall(n, http.MethodPut, "/settings/relayers", `{"settingValue":2}`, http.StatusNoContent, nil)
	}
	for _, from := range net.nodes {
		for _, to := range net.nodes {
			if from != to {
				net.open(from, to, tokens(10))
			}
		}
	}
	a, b := net.nodes[0], net.nodes[3]
	bFrames := watch(t, b)
	for _, n := range []*Node{a, b} {
		net.mustCall(n, http.MethodPut, "/settings/sendRate", `{"settingValue":20}`, http.StatusNoContent, nil)
	}
	net.eventually("a's drop cover", func() bool { return net.metricFloat(a, `relayd_stream_packets_sent_total{kind="drop"}`) >= 10 })
	dropsEnded := func() float64 {
		sum := 0.0
		for _, n := range net.nodes {
			sum += net.metricFloat(n, "relayd_relay_drops_received_total")
		}
		return sum
	}
	net.eventually("drops discarded at their ends", func() bool { return dropsEnded() >= 10 })

	net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"in the stream","recipient":%q}`, b.id.PeerID()), http.StatusAccepted, nil)
	expectMessage(t, bFrames, "in the stream")
	if got := net.metricFloat(a, `relayd_stream_packets_sent_total{kind="real"}`); got != 1 {
		t.Fatalf("a's stream sent %v real packets, want 1", got)
	}
	if got := net.metricFloat(a, "relayd_stream_queue_seconds_count"); got != 1 {
		t.Fatalf("%v queue waits observed, want 1", got)
	}
	net.eventually("b re-emits the message", func() bool { return net.metricFloat(b, `relayd_stream_packets_sent_total{kind="reemit"}`) == 1 })
	if got := net.metricFloat(b, "relayd_message_latency_seconds_count"); got != 1 {
		t.Fatalf("b received %v messages, want 1 (drops are not messages)", got)
	}
	// Off again: nothing more is sent.
	for _, n := range []*Node{a, b} {
		net.mustCall(n, http.MethodPut, "/settings/sendRate", `{"settingValue":0}`, http.StatusNoContent, nil)
	}
	if spent := net.metricFloat(a, `relayd_stream_tokens_spent_total{kind="drop"}`); spent <= 0 {
		t.Fatalf("a's drops cost %v tokens", spent)
	}
}
