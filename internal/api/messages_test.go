package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/store"
)

// BenchmarkPostMessage is the API's own cost of POST /api/v2/messages with a 100-byte text to
// a PeerId, as relayctl bench sends it: authentication, validation against the OpenAPI
// document, decoding, the recipient's PeerId and the answer; the node's Send is the fake's,
// which does nothing.
func BenchmarkPostMessage(b *testing.B) {
	n := newFakeNode(b)
	to, err := identity.Generate()
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(n.config(false))
	if err != nil {
		b.Fatal(err)
	}
	body := `{"body":"` + strings.Repeat("x", 100) + `","recipient":"` + to.PeerID().String() + `"}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, Prefix+"/messages", strings.NewReader(body))
		r.Header.Set("x-auth-token", testToken)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted {
			b.Fatalf("HTTP %d: %s", w.Code, w.Body)
		}
	}
}

// TestMessageAck: a sent message is answered 202 with the first hop's ack challenge, 0x and
// 66 hexadecimal digits.
func TestMessageAck(t *testing.T) {
	n := newFakeNode(t)
	to := newPeerID(t)
	var gotTo peer.ID
	var gotText string
	n.messenger.send = func(_ context.Context, id peer.ID, text string) (router.Sent, error) {
		gotTo, gotText = id, text
		return router.Sent{Ack: ack(0x03, 0x5e), Relayers: 3}, nil
	}
	srv, _ := serve(t, n, false)
	status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, `{"body":"hi there","recipient":"`+to.String()+`"}`)
	if want := `"0x03` + strings.Repeat("5e", 32) + `"` + "\n"; status != http.StatusAccepted || body != want {
		t.Fatalf("got %d %s, want 202 %s", status, body, want)
	}
	if gotTo != to || gotText != "hi there" {
		t.Fatalf("sent %q to %s", gotText, gotTo)
	}
}

// TestMessageRouterErrors: each of the router's sentinels is answered with its row of the error
// table, whose message is the sentinel's own sentence: the cause the router wraps (a relay,
// path or transport error, which may name peers, addresses or channels) stays in the log.
func TestMessageRouterErrors(t *testing.T) {
	const cause = "dial 16Uiu2HAmSecretRelay at /ip4/10.9.8.7/tcp/9091: connection refused"
	for _, tc := range []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{router.ErrNoChain, 422, CodePathNotFound, router.ErrNoChain.Error()},
		{router.ErrNoPath, 422, CodePathNotFound, router.ErrNoPath.Error()},
		{router.ErrNotEnoughBalance, 422, CodeNotEnoughBalance, router.ErrNotEnoughBalance.Error()},
		{router.ErrUnreachable, 422, CodePathNotFound, router.ErrUnreachable.Error()},
		{router.ErrMessageTooLarge, 400, CodeMessageTooLarge, "message is longer than 500 bytes"},
		{router.ErrBadRoute, 400, CodeInvalidInput, router.ErrBadRoute.Error()},
		{router.ErrSelf, 400, CodeInvalidPeerID, router.ErrSelf.Error()},
		{router.ErrBusy, 503, CodeUnknownFailure, router.ErrBusy.Error()},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			n := newFakeNode(t)
			n.messenger.send = func(context.Context, peer.ID, string) (router.Sent, error) {
				return router.Sent{}, fmt.Errorf("send message: %w: %w", tc.err, errors.New(cause))
			}
			srv, _ := serve(t, n, false)
			status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, `{"body":"hi","recipient":"`+newPeerID(t).String()+`"}`)
			var e ErrorBody
			if status != tc.status || json.Unmarshal([]byte(body), &e) != nil || e.Status != tc.code || e.Error != tc.msg {
				t.Fatalf("got %d %s, want %d %s %q", status, body, tc.status, tc.code, tc.msg)
			}
			if strings.Contains(body, "10.9.8.7") || strings.Contains(body, "SecretRelay") {
				t.Fatalf("the answer carries the cause: %s", body)
			}
		})
	}
}

// TestMessageGoesToTheCourier: a body longer than one packet, replies above 0 or reliable take
// the courier: 202 with the message's id as a JSON string and a Location naming its state; the
// courier gets the recipient, the body's bytes and the reply blocks asked for. The original
// interface's request still goes to the router.
func TestMessageGoesToTheCourier(t *testing.T) {
	long := strings.Repeat("é", 250) + "a" // 501 bytes, 251 characters
	for _, tc := range []struct {
		name, body string
		courier    bool
		text       string
		replies    int
	}{
		{"500 bytes", `"` + strings.Repeat("a", 500) + `"`, false, strings.Repeat("a", 500), 0},
		{"501 bytes", `"` + long + `"`, true, long, 0},
		{"replies", `"hi","replies":3`, true, "hi", 3},
		{"replies 0, not reliable", `"hi","replies":0,"reliable":false`, false, "hi", 0},
		{"reliable", `"hi","reliable":true`, true, "hi", 0},
		{"escaped", `"\u00e9\ud83d\ude00\u0000"`, false, "é😀\x00", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newFakeNode(t)
			to := newPeerID(t)
			var routed string
			n.messenger.send = func(_ context.Context, _ peer.ID, text string) (router.Sent, error) {
				routed = text
				return router.Sent{Ack: ack(0x02, 0x11), Relayers: 2}, nil
			}
			srv, _ := serve(t, n, false)
			status, h, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, `{"body":`+tc.body+`,"recipient":"`+to.String()+`"}`)
			if status != http.StatusAccepted {
				t.Fatalf("got %d %s", status, body)
			}
			if !tc.courier {
				if want := `"0x02` + strings.Repeat("11", 32) + `"` + "\n"; body != want || routed != tc.text || h.Get("Location") != "" || len(n.mail.sent) != 0 {
					t.Fatalf("got %s (Location %q), routed %q, courier %d", body, h.Get("Location"), routed, len(n.mail.sent))
				}
				return
			}
			var id string
			if err := json.Unmarshal([]byte(body), &id); err != nil || !regexp.MustCompile(`^0x[0-9a-f]{32}$`).MatchString(id) {
				t.Fatalf("answer %s is not a message id", body)
			}
			if h.Get("Location") != Prefix+"/messages/"+id || routed != "" {
				t.Fatalf("Location %q, routed %q", h.Get("Location"), routed)
			}
			if len(n.mail.sent) != 1 || n.mail.sent[0].Recipient != to || string(n.mail.sent[0].Body) != tc.text || n.mail.sent[0].Replies != tc.replies {
				t.Fatalf("courier got %+v", n.mail.sent)
			}
			// The id names the message's state.
			status, _, body = do(t, http.MethodGet, srv.URL+h.Get("Location"), auth)
			if status != http.StatusOK || !strings.Contains(body, `"state":"queued"`) || !strings.Contains(body, `"id":"`+id+`"`) {
				t.Fatalf("its state: %d %s", status, body)
			}
		})
	}
}

// TestMessageWithoutCourier: a node without the courier answers the original interface as it
// always did (a long body is 400 MESSAGE_TOO_LARGE, from the router) and refuses what only the
// courier does with 503; its inbox operations are 503.
func TestMessageWithoutCourier(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(false)
	cfg.Mail = nil
	srv := serveConfig(t, cfg)
	to := newPeerID(t).String()
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"body":"` + strings.Repeat("a", 501) + `","recipient":"` + to + `"}`, 400, CodeMessageTooLarge},
		{`{"body":"hi","recipient":"` + to + `","replies":1}`, 503, CodeUnknownFailure},
		{`{"body":"hi","recipient":"` + to + `","reliable":true}`, 503, CodeUnknownFailure},
		{`{"body":"hi","recipient":"` + to + `","reliable":false}`, 202, ""},
	} {
		status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, tc.body)
		var e ErrorBody
		if status != tc.status || (tc.code != "" && (json.Unmarshal([]byte(body), &e) != nil || e.Status != tc.code)) {
			t.Errorf("%.60s: got %d %s, want %d %s", tc.body, status, body, tc.status, tc.code)
		}
	}
	for _, op := range []struct{ method, path, body string }{
		{"GET", "/messages", ""}, {"GET", "/messages/" + messageID(fakeDelivered), ""}, {"POST", "/messages/pop", ""},
		{"DELETE", "/messages/inbox/1", ""}, {"POST", "/messages/inbox/1/reply", `{"body":"x"}`},
	} {
		if status, _, body := doBody(t, op.method, srv.URL+Prefix+op.path, auth, op.body); status != 503 || !strings.Contains(body, "without its courier") {
			t.Errorf("%s %s: %d %s", op.method, op.path, status, body)
		}
	}
	// GET /node/info says so, so that a page need not ask and be refused.
	if status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/info", auth); status != 200 || !strings.Contains(body, `"inbox":false`) {
		t.Errorf("info: %d %s", status, body)
	}
}

// TestCourierErrors: each of the courier's sentinels is answered with its row of the error table;
// the store's cause it wraps stays in the log.
func TestCourierErrors(t *testing.T) {
	const cause = "write /var/lib/relayd/db: no space left on device"
	for _, tc := range []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{courier.ErrEmpty, 400, CodeInvalidInput, "cannot send message: the body is empty"},
		{fmt.Errorf("%w: 17 reply blocks, at most 16", courier.ErrInvalid), 400, CodeInvalidInput, "cannot send message: invalid message request: 17 reply blocks, at most 16"},
		{fmt.Errorf("%w: 70000 bytes, at most 65536", courier.ErrTooLarge), 413, CodePayloadTooLarge, "cannot send message: the message body is too large: 70000 bytes, at most 65536"},
		{fmt.Errorf("%w: %w", courier.ErrFull, errors.New(cause)), 507, CodeStoreFull,
			"cannot send message: the node's message store is full (messages waiting to be sent or read); retry once some are delivered or read"},
		{fmt.Errorf("%w: %w", courier.ErrNotFound, errors.New(cause)), 404, CodeMessageNotFound, "cannot send message: no such message"},
		{errors.New(cause), 500, CodeUnknownFailure, "send message failed because of a fault of the node; its log says more"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			n := newFakeNode(t)
			cfg := n.config(false)
			cfg.Mail = faultyMail{tc.err}
			srv := serveConfig(t, cfg)
			status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, `{"body":"hi","recipient":"`+newPeerID(t).String()+`","reliable":true}`)
			var e ErrorBody
			if status != tc.status || json.Unmarshal([]byte(body), &e) != nil || e.Status != tc.code || e.Error != tc.msg {
				t.Fatalf("got %d %s, want %d %s %q", status, body, tc.status, tc.code, tc.msg)
			}
		})
	}
}

// TestMessageState: GET /messages/{id} shows the outgoing message's state without its body; the
// acknowledged count is the bitmap's bits of the message's fragments only.
func TestMessageState(t *testing.T) {
	n := newFakeNode(t)
	id := [16]byte{0xab, 0xcd}
	created := time.Date(2026, 11, 24, 8, 0, 0, 0, time.FixedZone("CET", 3600))
	n.mail.outbox[id] = store.OutboxMessage{ID: id, Recipient: "16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT", Body: []byte("secret body"),
		Replies: 4, Created: created, Updated: created.Add(1500 * time.Millisecond), State: courier.StateFailed,
		Reason: "no acknowledgement after 8 rounds", Attempts: 8, Fragments: 10, Acked: []byte{0b1011_0111, 0b1111_1110, 0xff}}
	srv, _ := serve(t, n, false)
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/messages/0xABCD"+strings.Repeat("0", 28), auth)
	want := `{"id":"0xabcd0000000000000000000000000000","recipient":"16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT",` +
		`"state":"failed","reason":"no acknowledgement after 8 rounds","fragments":10,"acknowledged":7,"attempts":8,` +
		`"createdAt":"2026-11-24T07:00:00.000Z","updatedAt":"2026-11-24T07:00:01.500Z","replies":4}` + "\n"
	if status != http.StatusOK || body != want {
		t.Fatalf("got %d %s\nwant %s", status, body, want)
	}
}

// TestInbox: GET /messages lists the kept messages after since, oldest first, at most limit
// (100 by default), with how many are kept in X-Total-Count; never the reply blocks. POST
// /messages/pop takes the oldest (204 once empty); DELETE removes one (404 once gone).
func TestInbox(t *testing.T) {
	n := newFakeNode(t)
	n.mail.inbox = nil
	for i := range 150 {
		n.mail.inbox = append(n.mail.inbox, store.InboxMessage{Seq: uint64(i + 1), ID: [16]byte{byte(i)}, Received: fakeReceived,
			Body: []byte("m" + strconv.Itoa(i+1)), ReplyBlocks: [][]byte{[]byte("block-secret")}})
	}
	srv, _ := serve(t, n, false)
	list := func(query string) ([]InboxMessage, string) {
		t.Helper()
		status, h, body := do(t, http.MethodGet, srv.URL+Prefix+"/messages"+query, auth)
		var out []InboxMessage
		if status != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil || strings.Contains(body, "block") {
			t.Fatalf("GET /messages%s: %d %.200s", query, status, body)
		}
		return out, h.Get("X-Total-Count")
	}
	if got, total := list(""); len(got) != 100 || got[0].Seq != 1 || got[99].Seq != 100 || total != "150" || got[0].RepliesLeft != 1 {
		t.Fatalf("default: %d messages from %d, total %s", len(got), got[0].Seq, total)
	}
	if got, _ := list("?since=120&limit=5"); len(got) != 5 || got[0].Seq != 121 || got[0].Body != "m121" {
		t.Fatalf("since 120, limit 5: %+v", got)
	}
	if got, total := list("?since=150"); len(got) != 0 || total != "150" {
		t.Fatalf("since the last: %+v", got)
	}
	status, _, body := do(t, http.MethodPost, srv.URL+Prefix+"/messages/pop", auth)
	var popped InboxMessage
	if status != http.StatusOK || json.Unmarshal([]byte(body), &popped) != nil || popped.Seq != 1 {
		t.Fatalf("pop: %d %s", status, body)
	}
	if got, total := list("?limit=1"); got[0].Seq != 2 || total != "149" {
		t.Fatalf("after the pop: %+v, total %s", got, total)
	}
	if status, _, body := do(t, http.MethodDelete, srv.URL+Prefix+"/messages/inbox/2", auth); status != http.StatusNoContent || body != "" {
		t.Fatalf("delete: %d %s", status, body)
	}
	if status, _, body := do(t, http.MethodDelete, srv.URL+Prefix+"/messages/inbox/2", auth); status != http.StatusNotFound || !strings.Contains(body, CodeMessageNotFound) {
		t.Fatalf("delete again: %d %s", status, body)
	}
	n.mail.inbox = n.mail.inbox[:1]
	do(t, http.MethodPost, srv.URL+Prefix+"/messages/pop", auth)
	if status, h, body := do(t, http.MethodPost, srv.URL+Prefix+"/messages/pop", auth); status != http.StatusNoContent || body != "" || h.Get("Content-Type") != "" {
		t.Fatalf("pop an empty inbox: %d %q %s", status, h.Get("Content-Type"), body)
	}
}

// TestInboxMessageView: the JSON of a kept message: the sender's time when it claims one, the
// message it answers when it is a reply, the body exactly (HTML-escaped by JSON, bytes that are
// not UTF-8 as U+FFFD).
func TestInboxMessageView(t *testing.T) {
	m := store.InboxMessage{Seq: 9, ID: [16]byte{0x01, 0x02}, Received: fakeReceived.In(time.FixedZone("X", -7200)), SentAt: uint64(fakeReceived.UnixMilli() - 40),
		Body: []byte("<b>\x1b\xff"), Reply: true, InReplyTo: [16]byte{0xff}, ReplyBlocks: [][]byte{{1}, {2}}}
	b, err := json.Marshal(inboxView(m))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":9,"id":"0x01020000000000000000000000000000","body":"\u003cb\u003e\u001b\ufffd","sentAt":"2026-11-24T08:00:00.083Z",` +
		`"receivedAt":"2026-11-24T08:00:00.123Z","reply":true,"inReplyTo":"0xff000000000000000000000000000000","repliesLeft":2}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	m.SentAt, m.Reply = 0, false
	if b, _ := json.Marshal(inboxView(m)); strings.Contains(string(b), "sentAt") || strings.Contains(string(b), "inReplyTo") {
		t.Fatalf("without a claimed time, not a reply: %s", b)
	}
}

// TestReply: an answer takes one reply block per packet; the answer's id and the blocks left come
// back; once none is left the message answers 409, and an answer needing more blocks than are
// left 413, taking none.
func TestReply(t *testing.T) {
	n := newFakeNode(t)
	srv, _ := serve(t, n, false)
	reply := func(seq, text string) (int, string) {
		status, _, body := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages/inbox/"+seq+"/reply", auth, `{"body":"`+text+`"}`)
		return status, body
	}
	if status, body := reply("1", strings.Repeat("a", 2*fakeReplyCapacity+1)); status != http.StatusRequestEntityTooLarge ||
		!strings.Contains(body, "the answer needs 3 packets, 2 reply blocks are left") {
		t.Fatalf("too large: %d %s", status, body)
	}
	status, body := reply("1", "thanks")
	var got ReplyAccepted
	if status != http.StatusAccepted || json.Unmarshal([]byte(body), &got) != nil || got.RepliesLeft != 1 || !regexp.MustCompile(`^0x[0-9a-f]{32}$`).MatchString(got.ID) {
		t.Fatalf("reply: %d %s", status, body)
	}
	if status, body := reply("1", "again"); status != http.StatusAccepted || !strings.Contains(body, `"repliesLeft":0`) {
		t.Fatalf("second reply: %d %s", status, body)
	}
	if status, body := reply("1", "once more"); status != http.StatusConflict || !strings.Contains(body, CodeNoReplyBlock) {
		t.Fatalf("no block left: %d %s", status, body)
	}
	if len(n.mail.replies) != 2 || n.mail.replies[0] != "thanks" {
		t.Fatalf("sent %q", n.mail.replies)
	}
}

// TestMessageBodyLimit: a message request may be 6 times the maxMessageBytes setting and 4096
// bytes (a body written with a \u escape for every byte), never less than MaxBodyBytes; a larger
// one is a clean 413 in the envelope, also when much larger. Other operations keep their 65536
// bytes, and their 400.
func TestMessageBodyLimit(t *testing.T) {
	n := newFakeNode(t)
	if _, err := n.settings.Update(map[string]json.RawMessage{"maxMessageBytes": json.RawMessage("20000")}); err != nil {
		t.Fatal(err)
	}
	n.mail.maxBody = 20000
	srv, _ := serve(t, n, false)
	to := newPeerID(t).String()
	msg := func(body string) string { return `{"body":"` + body + `","recipient":"` + to + `"}` }
	// padded is an empty message padded with spaces to n bytes.
	padded := func(n int) string { return msg("") + strings.Repeat(" ", n-len(msg(""))) }
	const limit = 6*20000 + 4096
	for _, tc := range []struct {
		name   string
		body   string
		status int
		msg    string
	}{
		{"20000 bytes as escapes", msg(strings.Repeat(`\u0001`, 20000)), 202, ""},
		{"20001 bytes", msg(strings.Repeat("a", 20001)), 413, "the message body is too large: 20001 bytes, at most 20000"},
		{"at the limit", padded(limit), 400, "body must be a non-empty message text"},
		{"over the limit", padded(limit + 1), 413, "request body larger than " + strconv.Itoa(limit) + " bytes"},
		{"4 MiB", msg(strings.Repeat("a", 4<<20)), 413, "request body larger than " + strconv.Itoa(limit) + " bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, got := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, tc.body)
			var e ErrorBody
			if status != tc.status || (tc.msg != "" && (json.Unmarshal([]byte(got), &e) != nil || !strings.Contains(e.Error, tc.msg))) {
				t.Fatalf("got %d %.200s, want %d %q", status, got, tc.status, tc.msg)
			}
			if status == 413 && e.Status != CodePayloadTooLarge {
				t.Fatalf("code %s", e.Status)
			}
		})
	}
	// The floor: with the smallest setting, a message request may still be 65536 bytes.
	if _, err := n.settings.Update(map[string]json.RawMessage{"maxMessageBytes": json.RawMessage("500")}); err != nil {
		t.Fatal(err)
	}
	if status, _, got := doBody(t, http.MethodPost, srv.URL+Prefix+"/messages", auth, padded(MaxBodyBytes+1)); status != 413 ||
		!strings.Contains(got, "larger than 65536 bytes") {
		t.Fatalf("over the floor: %d %s", status, got)
	}
	status, _, got := doBody(t, http.MethodPost, srv.URL+Prefix+"/node/ping", auth, `{"peerId":"`+strings.Repeat("a", MaxBodyBytes)+`"}`)
	if status != http.StatusBadRequest || !strings.Contains(got, "larger than 65536 bytes") {
		t.Fatalf("another operation: %d %s", status, got)
	}
}
