package courier

import (
	"bytes"
	"context"
	"errors"
	mrand "math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/fragment"
	"github.com/relayd/relayd/internal/store"
)

// body is n bytes of seeded text.
func body(n int, seed uint64) []byte {
	r := mrand.New(mrand.NewPCG(seed, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return b
}

// inbox lists everything n's inbox keeps.
func inbox(t *testing.T, n *testNode) []store.InboxMessage {
	t.Helper()
	var all []store.InboxMessage
	var since uint64
	for {
		msgs, total, err := n.c.Inbox(since, 1000)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, msgs...)
		if len(msgs) == 0 || len(all) >= total {
			if total != len(all) {
				t.Fatalf("inbox total %d, listed %d", total, len(all))
			}
			return all
		}
		since = msgs[len(msgs)-1].Seq
	}
}

func TestLongMessagesArriveOnceOverALossyNetwork(t *testing.T) {
	for _, loss := range []float64{0, 0.05, 0.2} {
		t.Run(strconv.FormatFloat(loss, 'f', -1, 64), func(t *testing.T) {
			net := newTestNet(loss, 7)
			a := startNode(t, net, newPeer(t), t.TempDir(), nil)
			b := startNode(t, net, newPeer(t), t.TempDir(), nil)
			sizes := []int{1, 499, 500, 501, 4000, 64 << 10}
			want := map[string]bool{}
			ids := map[[16]byte]bool{}
			for i, n := range sizes {
				msg := body(n, uint64(i))
				want[string(msg)] = true
				id, err := a.c.Send(Request{Recipient: b.id, Body: msg})
				if err != nil {
					t.Fatal(err)
				}
				ids[id] = true
			}
			waitFor(t, 60*time.Second, "every message delivered", func() bool {
				return len(a.eventsOf(StateDelivered)) == len(sizes)
			})
			for id := range ids {
				m, err := a.c.Status(id)
				if err != nil || m.State != StateDelivered {
					t.Fatalf("status %+v, %v", m, err)
				}
			}
			got := inbox(t, b)
			if len(got) != len(sizes) {
				t.Fatalf("inbox holds %d messages, want %d (no duplicates)", len(got), len(sizes))
			}
			for _, m := range got {
				if !want[string(m.Body)] {
					t.Fatalf("a %d-byte body arrived that was not sent", len(m.Body))
				}
				delete(want, string(m.Body))
			}
			if len(b.eventsOf("received")) != len(sizes) {
				t.Fatalf("%d received events", len(b.eventsOf("received")))
			}
			if loss == 0.2 && testutilCounter(a.c.m.resent) == 0 {
				t.Fatal("nothing was resent at 20 % loss")
			}
			if len(a.eventsOf(StateFailed)) != 0 {
				t.Fatal("a message failed")
			}
		})
	}
}

func TestAnswersComeBackOnReplyBlocks(t *testing.T) {
	net := newTestNet(0, 1)
	a := startNode(t, net, newPeer(t), t.TempDir(), nil)
	b := startNode(t, net, newPeer(t), t.TempDir(), nil)
	id, err := a.c.Send(Request{Recipient: b.id, Body: []byte("question?"), Replies: 2})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the question kept", func() bool { return len(inbox(t, b)) == 1 })
	q := inbox(t, b)[0]
	if len(q.ReplyBlocks) != 2 || string(q.Body) != "question?" {
		t.Fatalf("kept %q with %d blocks", q.Body, len(q.ReplyBlocks))
	}
	long := body(700, 9) // two reply packets
	if _, left, err := b.c.Reply(context.Background(), q.Seq, []byte("short answer")); err != nil || left != 1 {
		t.Fatalf("reply: left %d, %v", left, err)
	}
	if _, _, err := b.c.Reply(context.Background(), q.Seq, long); !errors.Is(err, ErrReplyTooLarge) {
		t.Fatalf("a two-packet answer on one block: %v", err)
	}
	if _, left, err := b.c.Reply(context.Background(), q.Seq, []byte("second")); err != nil || left != 0 {
		t.Fatalf("second reply: left %d, %v", left, err)
	}
	if _, _, err := b.c.Reply(context.Background(), q.Seq, []byte("third")); !errors.Is(err, ErrNoReplyBlock) {
		t.Fatalf("third reply: %v", err)
	}
	waitFor(t, 20*time.Second, "both answers", func() bool { return len(inbox(t, a)) == 2 })
	for _, m := range inbox(t, a) {
		if !m.Reply || m.InReplyTo != id {
			t.Fatalf("answer %+v does not name our message", m)
		}
	}
	if net.reused != 0 {
		t.Fatalf("%d reply blocks used twice", net.reused)
	}
}

func TestFailsAfterItsRounds(t *testing.T) {
	net := newTestNet(1, 1) // everything is lost
	a := startNode(t, net, newPeer(t), t.TempDir(), func(c *Config) {
		c.Rounds = 3
		c.MinTimeout, c.MaxTimeout = 20*time.Millisecond, 50*time.Millisecond
	})
	b := startNode(t, net, newPeer(t), t.TempDir(), nil)
	id, err := a.c.Send(Request{Recipient: b.id, Body: body(2000, 1)})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the message failed", func() bool { return len(a.eventsOf(StateFailed)) == 1 })
	m, err := a.c.Status(id)
	if err != nil || m.State != StateFailed || m.Reason == "" || m.Attempts != 3 || m.Fragments != 5 {
		t.Fatalf("status %+v, %v", m, err)
	}
}

func TestResumesAfterRestart(t *testing.T) {
	net := newTestNet(0, 1)
	dir := t.TempDir()
	a := startNode(t, net, newPeer(t), dir, nil)
	bid := newPeer(t) // not on the network yet: every send fails
	id, err := a.c.Send(Request{Recipient: bid, Body: body(3000, 3)})
	if err != nil {
		t.Fatal(err)
	}
	a.stop()
	b := startNode(t, net, bid, t.TempDir(), nil)
	a = startNode(t, net, a.id, dir, nil)
	waitFor(t, 60*time.Second, "delivered after the restart", func() bool {
		m, err := a.c.Status(id)
		return err == nil && m.State == StateDelivered
	})
	if got := inbox(t, b); len(got) != 1 || !bytes.Equal(got[0].Body, body(3000, 3)) {
		t.Fatalf("recipient kept %d messages", len(got))
	}
}

func TestRefusals(t *testing.T) {
	net := newTestNet(0, 1)
	a := startNode(t, net, newPeer(t), t.TempDir(), func(c *Config) { c.MaxBody = func() int { return 1000 } })
	b := newPeer(t)
	for _, tc := range []struct {
		req  Request
		want error
	}{
		{Request{Recipient: b}, ErrEmpty},
		{Request{Recipient: b, Body: body(1001, 1)}, ErrTooLarge},
		{Request{Recipient: b, Body: []byte("x"), Replies: MaxReplies + 1}, ErrInvalid},
		{Request{Recipient: b, Body: []byte("x"), Replies: -1}, ErrInvalid},
	} {
		if _, err := a.c.Send(tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%d bytes, %d replies: %v, want %v", len(tc.req.Body), tc.req.Replies, err, tc.want)
		}
	}
	if list, err := a.db.ListOutbox(); err != nil || len(list) != 0 {
		t.Fatalf("refused requests stored: %d, %v", len(list), err)
	}
	if _, err := a.c.Status([16]byte{1}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestForgedFramesChangeNothing(t *testing.T) {
	net := newTestNet(0, 1)
	a := startNode(t, net, newPeer(t), t.TempDir(), nil)
	// An acknowledgement that did not come on a reply block, an answer to no message of ours,
	// garbage: all dropped, nothing kept.
	ack, _ := fragment.Ack{ID: fragment.ID{1}, Total: 1, Complete: true}.Encode()
	a.c.Receive(Received{Text: ack})
	texts, _ := fragment.SplitReply(fragment.ID{2}, 0, []byte("hello"), 460)
	a.c.Receive(Received{Text: texts[0], Reply: true})
	a.c.Receive(Received{Text: []byte("\x11garbage")})
	waitFor(t, 5*time.Second, "three refusals", func() bool { return testutilCounter(a.c.m.rxMalformed) == 3 })
	if got := inbox(t, a); len(got) != 0 {
		t.Fatalf("kept %d", len(got))
	}
}

// TestPlainMessagesKeptInOrder: one-packet messages of today's kind are kept in the inbox in
// the order they came, each once, also when many arrive at once (batched transactions).
func TestPlainMessagesKeptInOrder(t *testing.T) {
	net := newTestNet(0, 1)
	a := startNode(t, net, newPeer(t), t.TempDir(), nil)
	const n = 2000
	now := time.Now()
	for i := range n {
		a.c.Keep([]byte("message "+strconv.Itoa(i)), now, now)
	}
	waitFor(t, 30*time.Second, "every message kept", func() bool { return len(a.eventsOf("received")) == n })
	got := inbox(t, a)
	if len(got) != n {
		t.Fatalf("kept %d", len(got))
	}
	for i, m := range got {
		if string(m.Body) != "message "+strconv.Itoa(i) || m.Seq != uint64(i+1) {
			t.Fatalf("message %d: seq %d %q", i, m.Seq, m.Body)
		}
	}
	if testutilCounter(a.c.m.rxDropped) != 0 {
		t.Fatal("messages dropped")
	}
}

// TestRecipientRestartAfterAPartialAck: the recipient acknowledges part of a message, then
// restarts and forgets the fragments it held in memory. The sender must not count them as
// delivered: it goes by the newest acknowledgement, sends again what that lacks, and says
// delivered only when the recipient keeps the whole message.
func TestRecipientRestartAfterAPartialAck(t *testing.T) {
	net := newTestNet(0, 1)
	a := startNode(t, net, newPeer(t), t.TempDir(), nil)
	bdir := t.TempDir()
	b := startNode(t, net, newPeer(t), bdir, nil)
	dropped := false
	net.dropFrame = func(text []byte) bool { // lose fragment 3 of the first round
		f, err := fragment.Decode(text)
		if frag, ok := f.(fragment.Fragment); err == nil && ok && frag.Index == 3 && !dropped {
			dropped = true
			return true
		}
		return false
	}
	partial := make(chan struct{})
	var once bool
	net.onReply = func() { // B's first (partial) acknowledgement: B goes down before A hears it
		net.mu.Lock()
		defer net.mu.Unlock()
		if !once {
			once = true
			net.down[b.id] = true
			close(partial)
		}
	}
	msg := body(4000, 5) // 9 fragments
	id, err := a.c.Send(Request{Recipient: b.id, Body: msg})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-partial:
	case <-time.After(20 * time.Second):
		t.Fatal("no partial acknowledgement")
	}
	b.stop()
	b = startNode(t, net, b.id, bdir, nil) // its reassembly starts empty
	net.mu.Lock()
	net.down[b.id] = false
	net.mu.Unlock()
	waitFor(t, 60*time.Second, "delivered", func() bool {
		m, err := a.c.Status(id)
		if err == nil && m.State == StateDelivered {
			return true
		}
		if err == nil && m.State == StateFailed {
			t.Fatalf("failed: %s", m.Reason)
		}
		return false
	})
	if got := inbox(t, b); len(got) != 1 || !bytes.Equal(got[0].Body, msg) {
		t.Fatalf("A says delivered; B keeps %d messages", len(got))
	}
}
