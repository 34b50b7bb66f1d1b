package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/ws"
)

// The courier implements the console's Mail.
var _ Mail = (*courier.Courier)(nil)

// mailFake plays the courier for the console: Send keeps what it got (id 0x5e…01, …), Status
// knows one message, the inbox holds what the test put there, Reply takes a block per 460 bytes.
type mailFake struct {
	sent    []courier.Request
	sendErr error
	outbox  map[[16]byte]store.OutboxMessage
	inbox   []store.InboxMessage
	replies []string
}

func (m *mailFake) Send(req courier.Request) ([16]byte, error) {
	if m.sendErr != nil {
		return [16]byte{}, m.sendErr
	}
	m.sent = append(m.sent, req)
	return [16]byte{0x5e, 15: byte(len(m.sent))}, nil
}

func (m *mailFake) Status(id [16]byte) (store.OutboxMessage, error) {
	o, ok := m.outbox[id]
	if !ok {
		return o, fmt.Errorf("%w: %w", courier.ErrNotFound, store.ErrNotFound)
	}
	return o, nil
}

func (m *mailFake) Reply(_ context.Context, seq uint64, body []byte) ([16]byte, int, error) {
	i := slices.IndexFunc(m.inbox, func(x store.InboxMessage) bool { return x.Seq == seq })
	if i < 0 {
		return [16]byte{}, 0, fmt.Errorf("%w: %w", courier.ErrNotFound, store.ErrNotFound)
	}
	left, need := len(m.inbox[i].ReplyBlocks), (len(body)+459)/460
	switch {
	case left == 0:
		return [16]byte{}, 0, courier.ErrNoReplyBlock
	case need > left:
		return [16]byte{}, left, fmt.Errorf("%w: the answer needs %d packets, %d reply blocks are left", courier.ErrReplyTooLarge, need, left)
	}
	m.inbox[i].ReplyBlocks = m.inbox[i].ReplyBlocks[need:]
	m.replies = append(m.replies, string(body))
	return [16]byte{0x7e, 15: byte(len(m.replies))}, left - need, nil
}

func (m *mailFake) Inbox(since uint64, limit int) ([]store.InboxMessage, int, error) {
	var out []store.InboxMessage
	for _, x := range m.inbox {
		if x.Seq > since && len(out) < limit {
			out = append(out, x)
		}
	}
	return out, len(m.inbox), nil
}

// sendMessenger records what the router was asked to send.
type sendMessenger struct{ texts []string }

func (s *sendMessenger) Send(_ context.Context, to peer.ID, text string) (router.Sent, error) {
	if len(text) > 500 {
		return router.Sent{}, router.ErrMessageTooLarge
	}
	s.texts = append(s.texts, text)
	return router.Sent{Relayers: 2}, nil
}

func (s *sendMessenger) SendPath(_ context.Context, hops []peer.ID, text string) (router.Sent, error) {
	return s.Send(context.Background(), hops[len(hops)-1], text)
}

// resolvePeers resolves "me", PeerIds and the alias bob.
type resolvePeers struct {
	Peers
	self, bob peer.ID
}

func (p resolvePeers) Resolve(name string) (peer.ID, error) {
	switch name {
	case "me":
		return p.self, nil
	case "bob":
		return p.bob, nil
	}
	if id, err := identity.ParsePeerID(name); err == nil {
		return id, nil
	}
	return "", peers.ErrUnknownName
}

// fixedSettings are the defaults.
type fixedSettings struct{ Settings }

func (fixedSettings) Get() settings.Values { return settings.Defaults() }

// fakeSelf is a node's identity.
type fakeSelf struct{ id peer.ID }

func (s fakeSelf) Address() common.Address            { return common.Address{1} }
func (s fakeSelf) PeerID() peer.ID                    { return s.id }
func (s fakeSelf) SignMessage(string) (string, error) { return "", errors.New("no key") }

// mailConsole is a console with the courier (nil: without it), its messenger and bob's PeerId.
func mailConsole(t *testing.T, mail Mail) (*Commands, *sendMessenger, peer.ID) {
	t.Helper()
	self, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	bob, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	m := &sendMessenger{}
	cfg := Config{Version: "9.9.9", Self: fakeSelf{self.PeerID()}, Peers: resolvePeers{self: self.PeerID(), bob: bob.PeerID()},
		Transport: nil, Settings: fixedSettings{}, Messenger: m}
	if mail != nil {
		cfg.Mail = mail
	}
	c := &console{cfg: cfg}
	cmds, err := NewCommands(slices.Concat(c.nodeCommands(), c.mailCommands())...)
	if err != nil {
		t.Fatal(err)
	}
	return cmds, m, bob.PeerID()
}

// TestSendThroughTheCourier: send hands the courier a message longer than one packet, or one
// with --reliable or --replies, over a path the node picks, and says its id; a short one without
// options, a 0-hop one and one over named relayers go to the router as before.
func TestSendThroughTheCourier(t *testing.T) {
	mail := &mailFake{}
	cmds, router, bob := mailConsole(t, mail)
	long := strings.Repeat("é", 300)
	for _, tc := range []struct {
		line    string
		courier bool
		text    string
		replies int
		out     string
	}{
		{"send bob hello", false, "hello", 0, "Message sent to " + bob.String() + " over 2 relayers"},
		{"send bob " + long, true, long, 0, "Message 0x5e000000000000000000000000000001 accepted for " + bob.String() + ": 600 bytes, 0 reply blocks."},
		{"send --reliable bob hi", true, "hi", 0, "Message 0x5e000000000000000000000000000002 accepted"},
		{"send --replies 4 " + bob.String() + " hi  there", true, "hi  there", 4, "9 bytes, 4 reply blocks"},
		{"send ," + bob.String() + " hi", false, "hi", 0, "Message sent to"},
	} {
		r := cmds.Run(t.Context(), tc.line)
		if r.Failed || len(r.Lines) != 1 || !strings.Contains(r.Lines[0], tc.out) {
			t.Fatalf("%s: %+v, want a line with %q", tc.line, r, tc.out)
		}
		if tc.courier {
			got := mail.sent[len(mail.sent)-1]
			if got.Recipient != bob || string(got.Body) != tc.text || got.Replies != tc.replies {
				t.Fatalf("%s: the courier got %+v", tc.line, got)
			}
			if !strings.Contains(r.Lines[0], "status 0x5e") {
				t.Fatalf("%s: %q does not say how to follow it", tc.line, r.Lines[0])
			}
		} else if router.texts[len(router.texts)-1] != tc.text {
			t.Fatalf("%s: the router got %q", tc.line, router.texts)
		}
	}
	if len(mail.sent) != 3 || len(router.texts) != 2 {
		t.Fatalf("courier %d, router %d messages", len(mail.sent), len(router.texts))
	}
	for line, want := range map[string]string{
		"send --reliable me hi":   "the recipient is this node, which cannot send a message to itself. Usage: send [--replies <n>]",
		"send --replies 17 bob x": "--replies takes a whole number from 0 to 16. Usage: send",
		"send ," + long:           "send needs a peer (or a path) and a message. Usage:",
	} {
		if r := cmds.Run(t.Context(), line); !r.Failed || !strings.HasPrefix(r.Lines[0], want) {
			t.Errorf("%s: %q, want %q…", line, r.Lines, want)
		}
	}
	mail.sendErr = fmt.Errorf("%w: %w", courier.ErrFull, errors.New("write /var/lib/relayd/db: no space left on device"))
	if r := cmds.Run(t.Context(), "send --reliable bob hi"); !r.Failed || r.Lines[0] != "Error: "+courier.ErrFull.Error() {
		t.Errorf("store full: %q", r.Lines)
	}
	mail.sendErr = fmt.Errorf("%w: 70000 bytes, at most 65536", courier.ErrTooLarge)
	if r := cmds.Run(t.Context(), "send bob "+long); !r.Failed || r.Lines[0] != "Error: the message body is too large: 70000 bytes, at most 65536" {
		t.Errorf("too large: %q", r.Lines)
	}
}

// TestMailCommandsWithoutCourier: on a node without the courier, send keeps what one packet
// carries (a longer text is the router's refusal), refuses the options, and inbox, reply and
// status say the node keeps no inbox.
func TestMailCommandsWithoutCourier(t *testing.T) {
	cmds, _, _ := mailConsole(t, nil)
	for line, want := range map[string]string{
		"send bob " + strings.Repeat("a", 501):     "Error: " + router.ErrMessageTooLarge.Error(),
		"send --reliable bob hi":                   "Error: " + errNoMail.Error(),
		"inbox":                                    "Error: " + errNoMail.Error(),
		"reply 1 thanks":                           "Error: " + errNoMail.Error(),
		"status 0x" + strings.Repeat("ab", 16):     "Error: " + errNoMail.Error(),
		"send --replies 2 " + "bob " + "long text": "Error: " + errNoMail.Error(),
	} {
		if r := cmds.Run(t.Context(), line); !r.Failed || len(r.Lines) != 1 || r.Lines[0] != want {
			t.Errorf("%.40s: %q, want %q", line, r.Lines, want)
		}
	}
}

// TestInboxCommand: inbox lists the kept messages after a seq, oldest first, each with when it
// arrived, what it answers or how many answers it can get, and its text shortened past 1000
// bytes; at most 50, then how to go on.
func TestInboxCommand(t *testing.T) {
	mail := &mailFake{}
	cmds, _, _ := mailConsole(t, mail)
	if r := cmds.Run(t.Context(), "inbox"); r.Failed || !slices.Equal(r.Lines, []string{"The inbox is empty."}) {
		t.Fatalf("empty: %+v", r)
	}
	at := time.Date(2026, 11, 24, 8, 0, 0, 123e6, time.UTC)
	mail.inbox = []store.InboxMessage{
		{Seq: 3, Received: at, Body: []byte("hello\x1b[31m"), ReplyBlocks: [][]byte{{1}, {2}}},
		{Seq: 5, Received: at, Body: []byte("an answer"), Reply: true, InReplyTo: [16]byte{0xab}},
		{Seq: 6, Received: at, Body: []byte(strings.Repeat("a", 999) + "é and more")},
	}
	r := cmds.Run(t.Context(), "inbox")
	want := []string{
		"The inbox keeps 3 messages:",
		"#3 2026-11-24T08:00:00.123Z, 2 replies left: hello\x1b[31m", // the log frame escapes it (ws.Escape)
		"#5 2026-11-24T08:00:00.123Z, reply to 0xab000000000000000000000000000000: an answer",
		"#6 2026-11-24T08:00:00.123Z: " + strings.Repeat("a", 999) + "… (1010 bytes)",
	}
	if r.Failed || !slices.Equal(r.Lines, want) {
		t.Fatalf("inbox:\n%q\nwant\n%q", r.Lines, want)
	}
	if r := cmds.Run(t.Context(), "inbox 5"); r.Failed || len(r.Lines) != 2 || !strings.HasPrefix(r.Lines[1], "#6 ") {
		t.Fatalf("inbox 5: %q", r.Lines)
	}
	if r := cmds.Run(t.Context(), "inbox 6"); r.Failed || !slices.Equal(r.Lines, []string{"No message after #6 (the inbox keeps 3)."}) {
		t.Fatalf("inbox 6: %q", r.Lines)
	}
	if r := cmds.Run(t.Context(), "inbox last"); !r.Failed || !strings.HasPrefix(r.Lines[0], "inbox takes the seq after which to list") {
		t.Fatalf("inbox last: %q", r.Lines)
	}
	mail.inbox = nil
	for i := range 60 {
		mail.inbox = append(mail.inbox, store.InboxMessage{Seq: uint64(i + 1), Received: at, Body: []byte("m")})
	}
	r = cmds.Run(t.Context(), "inbox")
	if len(r.Lines) != 52 || r.Lines[0] != "The inbox keeps 60 messages:" || r.Lines[51] != "More follow: inbox 50" {
		t.Fatalf("60 messages: %d lines, %q … %q", len(r.Lines), r.Lines[0], r.Lines[len(r.Lines)-1])
	}
}

// TestReplyCommand: reply answers a kept message on its reply blocks and says how many are left;
// it says so when none is left, when the answer needs more, and when there is no such message.
func TestReplyCommand(t *testing.T) {
	mail := &mailFake{inbox: []store.InboxMessage{{Seq: 4, ReplyBlocks: [][]byte{{1}, {2}}}, {Seq: 5}}}
	cmds, _, _ := mailConsole(t, mail)
	for _, tc := range []struct {
		line, want string
		failed     bool
	}{
		{"reply 4 " + strings.Repeat("a", 921), "Error: the answer needs more reply blocks than are left: the answer needs 3 packets, 2 reply blocks are left", true},
		{"reply 4 thanks,  truly ", "Reply 0x7e000000000000000000000000000001 sent on message #4's reply blocks; 1 left.", false},
		{"reply 4 again", "Reply 0x7e000000000000000000000000000002 sent on message #4's reply blocks; 0 left.", false},
		{"reply 4 once more", "Error: message #4 has no reply block left to answer on", true},
		{"reply 5 hi", "Error: message #5 has no reply block left to answer on", true},
		{"reply 9 hi", "Error: no message #9 in the inbox", true},
		{"reply 4", "reply needs a message's seq (see inbox) and the answer. Usage: reply <seq> <message>", true},
		{"reply x hi", "reply needs a message's seq (see inbox) and the answer. Usage: reply <seq> <message>", true},
	} {
		if r := cmds.Run(t.Context(), tc.line); r.Failed != tc.failed || len(r.Lines) != 1 || r.Lines[0] != tc.want {
			t.Errorf("%.30s: %+v, want %q", tc.line, r, tc.want)
		}
	}
	if !slices.Equal(mail.replies, []string{"thanks,  truly", "again"}) {
		t.Fatalf("answers %q", mail.replies)
	}
}

// TestStatusCommand: status shows the state of an outgoing message.
func TestStatusCommand(t *testing.T) {
	id := [16]byte{0xde, 0xad}
	at := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	mail := &mailFake{outbox: map[[16]byte]store.OutboxMessage{id: {ID: id, Recipient: "16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT",
		State: courier.StateFailed, Reason: "no acknowledgement after 8 rounds", Fragments: 3, Acked: []byte{0b1111_1101}, Attempts: 8, Replies: 1,
		Created: at, Updated: at.Add(time.Minute)}}}
	cmds, _, _ := mailConsole(t, mail)
	want := "Message 0xdead0000000000000000000000000000 to 16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT: failed, 2 of 3 packets acknowledged, " +
		"8 rounds, 1 reply blocks; accepted 2026-11-24T08:00:00.000Z, last change 2026-11-24T08:01:00.000Z; no acknowledgement after 8 rounds"
	if r := cmds.Run(t.Context(), "status 0xDEAD"+strings.Repeat("0", 28)); r.Failed || !slices.Equal(r.Lines, []string{want}) {
		t.Fatalf("status: %q\nwant %q", r.Lines, want)
	}
	if r := cmds.Run(t.Context(), "status 0x"+strings.Repeat("0", 32)); !r.Failed ||
		r.Lines[0] != "Error: this node sent no message 0x00000000000000000000000000000000 through the courier" {
		t.Fatalf("unknown: %q", r.Lines)
	}
	if r := cmds.Run(t.Context(), "status 0x12"); !r.Failed || !strings.HasPrefix(r.Lines[0], "status needs a message id") {
		t.Fatalf("malformed: %q", r.Lines)
	}
}

// noInbox is an empty inbox for the admin stream's AppStreams.
type noInbox struct{}

func (noInbox) Inbox(uint64, int) ([]store.InboxMessage, int, error) { return nil, 0, nil }

// TestMailEvent: what the courier reports reaches the admin connections: a received message as the
// original node showed one (with its latency from the sender's time), delivered, failed and
// incomplete as one log line each; other kinds add nothing.
func TestMailEvent(t *testing.T) {
	at := time.Date(2026, 11, 24, 8, 0, 0, 123e6, time.UTC)
	hub := ws.NewHub(func() time.Time { return at })
	publish := MailEvent(hub)
	publish("received", [16]byte{1}, "", store.InboxMessage{Seq: 1, Received: at, SentAt: uint64(at.UnixMilli() - 40), Body: []byte("hi\x1b")})
	publish("sent", [16]byte{2}, "", store.InboxMessage{})
	publish(courier.StateDelivered, [16]byte{3}, "", store.InboxMessage{})
	publish(courier.StateFailed, [16]byte{4}, "no acknowledgement after 8 rounds", store.InboxMessage{})
	publish("incomplete", [16]byte{5}, "arrived incomplete: 2 of 3 fragments", store.InboxMessage{})

	streams, err := ws.NewAppStreams(hub, noInbox{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { streams.ServeAdmin(w, r, true) }))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	var got []string
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var f ws.Frame
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(f.Msg, "ws client connected") {
			break
		}
		got = append(got, f.Type+" "+f.Msg)
	}
	want := []string{
		"log #### NODE RECEIVED MESSAGE [2026-11-24T08:00:00.123Z] ####",
		`log Message: hi\x1b`,
		"log Latency: 40 ms",
		"message hi\x1b",
		"log Message 0x03000000000000000000000000000000 delivered",
		"log Message 0x04000000000000000000000000000000 failed: no acknowledgement after 8 rounds",
		"log A message to this node (0x05000000000000000000000000000000) was given up: arrived incomplete: 2 of 3 fragments",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("frames:\n%q\nwant\n%q", got, want)
	}
}
