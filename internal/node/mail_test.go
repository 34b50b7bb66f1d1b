package node

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

type outgoingView struct {
	ID, State, Reason     string
	Fragments, Attempts   int
	Acknowledged, Replies int
}

type inboxView struct {
	Seq         uint64
	ID, Body    string
	Reply       bool
	InReplyTo   string
	RepliesLeft int
}

// TestLongMessageAndAnswer: A sends B an 8 KiB message with a reply block over paid relayers
// (A → R1 → R2 → B); every fragment travels as an ordinary packet, B keeps it whole, once, and
// answers on the block (B → R2 → R1 → A) without learning who A is.
func TestLongMessageAndAnswer(t *testing.T) {
	net := newTestNet(t, 4)
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	for _, c := range [][2]*Node{{a, r1}, {r1, r2}, {r2, b}, {b, r2}, {r2, r1}, {r1, a}} {
		net.open(c[0], c[1], tokens(5))
	}
	body := strings.Repeat("0123456789abcdef", 512) // 8 KiB: 18 fragments
	var id string
	net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q,"replies":1}`, body, b.id.PeerID()),
		http.StatusAccepted, &id)
	var out outgoingView
	net.eventually("A's message is delivered", func() bool {
		net.mustCall(a, http.MethodGet, "/messages/"+id, "", http.StatusOK, &out)
		if out.State == "failed" {
			t.Fatalf("failed: %s", out.Reason)
		}
		return out.State == "delivered"
	})
	if out.Fragments < 18 || out.Acknowledged != out.Fragments {
		t.Fatalf("delivered with %+v", out)
	}
	var kept []inboxView
	net.mustCall(b, http.MethodGet, "/messages", "", http.StatusOK, &kept)
	if len(kept) != 1 || kept[0].Body != body || kept[0].RepliesLeft != 1 || kept[0].Reply {
		t.Fatalf("B keeps %d messages: %+v", len(kept), kept)
	}
	// The relayers keep nothing of it.
	for _, r := range []*Node{r1, r2} {
		var none []inboxView
		net.mustCall(r, http.MethodGet, "/messages", "", http.StatusOK, &none)
		if len(none) != 0 {
			t.Fatalf("a relayer keeps %d messages", len(none))
		}
	}

	var answered struct {
		ID          string
		RepliesLeft int
	}
	net.mustCall(b, http.MethodPost, fmt.Sprintf("/messages/inbox/%d/reply", kept[0].Seq), `{"body":"thanks, got it"}`,
		http.StatusAccepted, &answered)
	if answered.RepliesLeft != 0 {
		t.Fatalf("answer: %+v", answered)
	}
	var errBody struct{ Status string }
	if s := net.call(b, http.MethodPost, fmt.Sprintf("/messages/inbox/%d/reply", kept[0].Seq), `{"body":"again"}`, &errBody); s != http.StatusConflict {
		t.Fatalf("a second answer on a used block: %d %+v", s, errBody)
	}
	var answers []inboxView
	net.eventually("A receives the answer", func() bool {
		net.mustCall(a, http.MethodGet, "/messages", "", http.StatusOK, &answers)
		return len(answers) == 1
	})
	if answers[0].Body != "thanks, got it" || !answers[0].Reply || answers[0].InReplyTo != id {
		t.Fatalf("answer %+v (our message %s)", answers[0], id)
	}
}
