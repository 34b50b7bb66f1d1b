package node

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/relay"
)

// TestAdminSendToThisNode: a send whose recipient (or a relayer) is this
// node gets a usage line saying so, not the relay's "bad route".
func TestAdminSendToThisNode(t *testing.T) {
	n := startNode(t, testConfig(t))
	admin := dialAdmin(t, n)
	self := n.id.PeerID().String()
	const usage = ". Usage: send [--replies <n>] [--reliable] [,]<peer>|<r1>,<r2>,<peer> <message>"
	key, _, err := crypto.GenerateSecp256k1Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherID, err := peer.IDFromPublicKey(key.GetPublic())
	if err != nil {
		t.Fatal(err)
	}
	other := otherID.String()
	for _, tt := range []struct{ line, want string }{
		{"send ,me hello", "the recipient is this node, which cannot send a message to itself" + usage},
		{"send ," + self + " hello", "the recipient is this node, which cannot send a message to itself" + usage},
		{"send me hello", "the recipient is this node, which cannot send a message to itself" + usage},
		{"send " + other + ",me hello", "the recipient is this node, which cannot send a message to itself" + usage},
		{"send me," + other + " hello", "a relayer is this node, which cannot relay its own message" + usage},
	} {
		out := admin.run(tt.line, func(string) bool { return true })
		if out[0] != tt.want {
			t.Errorf("%s: %q, want %q", tt.line, out[0], tt.want)
		}
	}
}

// TestReceivedMessageCannotDriveTheTerminal: a received message full of
// terminal control sequences reaches the admin clients as log lines with
// every control character escaped, and as a message frame with its exact
// text.
func TestReceivedMessageCannotDriveTheTerminal(t *testing.T) {
	n := startNode(t, testConfig(t))
	admin := dialAdmin(t, n)
	const evil = "\x1b]0;pwned\x07\x1b[31m\n#### NODE RECEIVED MESSAGE [x] ####"
	now := time.Now()
	n.inbox.Deliver(relay.Received{Text: evil, SentAt: now.Add(-5 * time.Millisecond), ReceivedAt: now})

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []struct{ Type, Msg string }
	for len(got) < 4 {
		_, b, err := admin.c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v (got %+v)", err, got)
		}
		var f struct{ Type, Msg string }
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		if len(got) > 0 || strings.HasPrefix(f.Msg, "#### NODE RECEIVED MESSAGE [") {
			got = append(got, f)
		}
	}
	for _, f := range got[:3] {
		if f.Type != "log" || strings.ContainsFunc(f.Msg, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("log frame %q carries a control character", f.Msg)
		}
	}
	if want := `Message: \x1b]0;pwned\x07\x1b[31m\n#### NODE RECEIVED MESSAGE [x] ####`; got[1].Msg != want {
		t.Fatalf("message line %q, want %q", got[1].Msg, want)
	}
	if got[3].Type != "message" || got[3].Msg != evil {
		t.Fatalf("message frame %+v, want the exact text", got[3])
	}
}
