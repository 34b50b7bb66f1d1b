package node

import (
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/tickets"
)

var ackChallenge = regexp.MustCompile(`^0x0[23][0-9a-f]{64}$`)

// expectMessage reads the four receive frames of text from f.
func expectMessage(t *testing.T, f *frames, text string) {
	t.Helper()
	for {
		typ, msg := f.next()
		if !strings.HasPrefix(msg, "#### NODE RECEIVED MESSAGE [") {
			continue // other logs before the message
		}
		if !regexp.MustCompile(`^#### NODE RECEIVED MESSAGE \[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] ####$`).MatchString(msg) || typ != "log" {
			t.Fatalf("header frame %s %q", typ, msg)
		}
		break
	}
	if typ, msg := f.next(); typ != "log" || msg != "Message: "+text {
		t.Fatalf("message line %s %q", typ, msg)
	}
	if typ, msg := f.next(); typ != "log" || !regexp.MustCompile(`^Latency: \d+ ms$`).MatchString(msg) {
		t.Fatalf("latency line %s %q", typ, msg)
	}
	if typ, msg := f.next(); typ != "message" || msg != text {
		t.Fatalf("message frame %s %q", typ, msg)
	}
}

type ticketView struct {
	ChannelID, Counterparty, Amount, Index, ChannelEpoch, WinProb, Challenge, Signature string
}

// TestPaidMessageOverTwoRelayers: A → R1 → R2 → B over funded channels.
func TestPaidMessageOverTwoRelayers(t *testing.T) {
	net := newTestNet(t, 5)
	a, r1, r2, b, r3 := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3], net.nodes[4]
	net.open(a, r1, tokens(1))
	r1r2 := new(big.Int).Mul(centToken, big.NewInt(1+tickets.PadMax)) // one ticket's worth, with the largest padding
	net.open(r1, r2, r1r2)
	net.open(r2, b, tokens(1))
	bFrames, r1Frames, r2Frames := watch(t, b), watch(t, r1), watch(t, r2)

	r1Wallet, r2Wallet := net.tokenBalance(r1), net.tokenBalance(r2)
	var ack string
	net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"hello private world","recipient":%q}`, b.id.PeerID()), http.StatusAccepted, &ack)
	if !ackChallenge.MatchString(ack) {
		t.Fatalf("ack challenge %q", ack)
	}
	expectMessage(t, bFrames, "hello private world")

	// Each relayer holds one acknowledged ticket: 0.02 plus the sender's padding at R1, 0.01
	// less at R2 (PROTOCOL.md §4.5).
	var paid [2]*big.Int
	for i, c := range []struct {
		n    *Node
		from *Node
	}{{r1, a}, {r2, r1}} {
		var list []ticketView
		net.eventually("the relayer's ticket is acknowledged", func() bool {
			net.mustCall(c.n, http.MethodGet, "/tickets", "", http.StatusOK, &list)
			return len(list) == 1
		})
		paid[i], _ = new(big.Int).SetString(list[0].Amount, 10)
		if paid[i] == nil || list[0].Index != "1" || list[0].Counterparty != c.from.id.PeerID().String() {
			t.Fatalf("ticket %+v", list[0])
		}
		var perChannel []ticketView
		net.mustCall(c.n, http.MethodGet, "/channels/"+c.from.id.PeerID().String()+"/tickets", "", http.StatusOK, &perChannel)
		if len(perChannel) != 1 {
			t.Fatalf("per-channel tickets %+v", perChannel)
		}
	}
	// The relayers saw nothing of the message.
	for _, f := range []*frames{r1Frames, r2Frames} {
		for _, fr := range f.drain() {
			if strings.Contains(fr, "hello private world") || strings.HasPrefix(fr, "message ") {
				t.Fatalf("a relayer's admin frames show the message: %q", fr)
			}
		}
	}

	if lo, hi := new(big.Int).Mul(centToken, big.NewInt(2)), new(big.Int).Mul(centToken, big.NewInt(2+tickets.PadMax)); paid[0].Cmp(lo) < 0 ||
		paid[0].Cmp(hi) > 0 || new(big.Int).Sub(paid[0], paid[1]).Cmp(centToken) != 0 {
		t.Fatalf("R1's ticket %s, R2's %s: want 0.02 to 0.09, and 0.01 less", paid[0], paid[1])
	}

	// Redeem on both relayers: each nets exactly 0.01 (R1 earns its ticket and
	// pays R2's, 0.01 less, through its channel to R2); A's channel paid R1's.
	net.mustCall(r1, http.MethodPost, "/tickets/redeem", "", http.StatusNoContent, nil)
	net.mustCall(r2, http.MethodPost, "/channels/tickets/redeem", "", http.StatusNoContent, nil)
	net.eventually("redemptions are indexed", func() bool {
		c1, _ := net.channel(r1, r2, "outgoing")
		c0, _ := net.channel(a, r1, "outgoing")
		return c1.Balance == new(big.Int).Sub(r1r2, paid[1]).String() && c0.Balance == new(big.Int).Sub(tokens(1), paid[0]).String()
	})
	if got := new(big.Int).Sub(net.tokenBalance(r1), r1Wallet); got.Cmp(paid[0]) != 0 {
		t.Fatalf("R1's wallet rose by %s", got)
	}
	if got := new(big.Int).Sub(net.tokenBalance(r2), r2Wallet); got.Cmp(paid[1]) != 0 {
		t.Fatalf("R2's wallet rose by %s", got)
	}
	var st struct {
		Redeemed      int
		RedeemedValue string
		Unredeemed    int
	}
	net.mustCall(r1, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &st)
	if st.Redeemed != 1 || st.Unredeemed != 0 || st.RedeemedValue != paid[0].String() {
		t.Fatalf("R1 statistics %+v", st)
	}
	if s := net.call(r1, http.MethodGet, "/channels/"+a.id.PeerID().String()+"/tickets", "", nil); s != http.StatusNotFound {
		t.Fatalf("per-channel tickets after redeem: %d", s)
	}

	// R1 → R2 can no longer carry a ticket with the largest padding: no path, nothing
	// forwarded (once A has indexed it too).
	net.eventually("A sees R1 → R2 depleted", func() bool {
		c, ok := a.chain.graph.Channel(r1.id.Address(), r2.id.Address())
		return ok && c.Balance.Cmp(new(big.Int).Sub(r1r2, paid[1])) == 0
	})
	var errBody struct{ Status, Error string }
	if s := net.call(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"again","recipient":%q}`, b.id.PeerID()), &errBody); s != http.StatusUnprocessableEntity || errBody.Status != "NOT_ENOUGH_BALANCE" {
		t.Fatalf("send over a depleted channel: %d %+v", s, errBody)
	}

	// Close R2 → B (B closes its incoming channel at once).
	var closed struct{ Receipt, ChannelStatus string }
	net.mustCall(b, http.MethodDelete, "/channels/"+r2.id.PeerID().String()+"/incoming", "", http.StatusOK, &closed)
	net.eventually("A sees R2 → B closed", func() bool {
		c, ok := a.chain.graph.Channel(r2.id.Address(), b.id.Address())
		return ok && c.Status.String() == "Closed"
	})
	if s := net.call(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"again","recipient":%q}`, b.id.PeerID()), &errBody); s != http.StatusUnprocessableEntity || errBody.Status != "PATH_NOT_FOUND" {
		t.Fatalf("send over a closed channel: %d %+v", s, errBody)
	}

	// An alternative path A → R1 → R3 → B exists once funded: the node routes around.
	net.open(r1, r3, tokens(1))
	net.open(r3, b, tokens(1))
	net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"around","recipient":%q}`, b.id.PeerID()), http.StatusAccepted, &ack)
	expectMessage(t, bFrames, "around")
	var list []ticketView
	net.eventually("R1's second ticket from A is acknowledged with the next index", func() bool {
		net.mustCall(r1, http.MethodGet, "/tickets", "", http.StatusOK, &list)
		return len(list) == 1 && list[0].Index == "2"
	})
}

// TestAdminSendDirectAndExplicit: the admin `send` command, 0-hop and over
// named relayers.
func TestAdminSendDirectAndExplicit(t *testing.T) {
	net := newTestNet(t, 4)
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	net.open(a, r1, tokens(1))
	net.open(r1, r2, tokens(1))
	net.open(r2, b, tokens(1))
	bFrames := watch(t, b)
	admin := dialAdmin(t, a)

	out := admin.run("send ,"+b.id.PeerID().String()+" direct hello", func(string) bool { return true })
	if !strings.HasPrefix(out[0], "Message sent to "+b.id.PeerID().String()+" over 0 relayers") {
		t.Fatalf("send 0-hop: %q", out)
	}
	expectMessage(t, bFrames, "direct hello")

	path := r1.id.PeerID().String() + "," + r2.id.PeerID().String() + "," + b.id.PeerID().String()
	out = admin.run("send "+path+" over  two", func(string) bool { return true })
	if !strings.HasPrefix(out[0], "Message sent to "+b.id.PeerID().String()+" over 2 relayers") {
		t.Fatalf("send explicit: %q", out)
	}
	expectMessage(t, bFrames, "over  two")

	// A body longer than one packet goes to the courier, up to maxMessageBytes: beyond it, refused
	// before anything is sent.
	admin.run("settings maxMessageBytes 500", func(string) bool { return true })
	out = admin.run("send "+b.id.PeerID().String()+" "+strings.Repeat("x", 501), func(string) bool { return true })
	if !strings.Contains(out[0], "501 bytes, at most 500") {
		t.Fatalf("too long: %q", out)
	}
	var errBody struct{ Status, Error string }
	if s := net.call(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, strings.Repeat("x", 501), b.id.PeerID()), &errBody); s != http.StatusRequestEntityTooLarge || errBody.Status != "PAYLOAD_TOO_LARGE" || !strings.Contains(errBody.Error, "at most 500") {
		t.Fatalf("REST too long: %d %+v", s, errBody)
	}
	out = admin.run("tickets", func(s string) bool { return strings.HasPrefix(s, "- Rejected Value:") })
	if out[0] != "Tickets:" || out[1] != "- Pending:          0 (awaiting the next hop's acknowledgement)" {
		t.Fatalf("tickets: %q", out)
	}
	out = admin.run("balance", func(s string) bool { return strings.HasPrefix(s, "ETH Balance:") })
	if !strings.HasPrefix(out[0], "RELAY Balance:  99 RELAY") {
		t.Fatalf("balance: %q", out)
	}

	// Metrics: B received two messages; R1 forwarded one packet and holds
	// one unredeemed ticket.
	if got := net.metric(b, "relayd_message_latency_seconds_count"); got != "2" {
		t.Fatalf("B latency count %q", got)
	}
	if got := net.metric(r1, "relayd_relay_packets_forwarded_total"); got != "1" {
		t.Fatalf("R1 forwarded %q", got)
	}
	net.eventually("R1's ticket shows in the metrics", func() bool {
		return net.metric(r1, `relayd_tickets{state="unredeemed"}`) == "1"
	})
	if got := net.metric(a, "process_resident_memory_bytes"); got == "" {
		t.Fatal("no process metrics")
	}

	// includeRecipient: the admin send prefixes the sender's PeerId.
	admin.run("settings includeRecipient true", func(string) bool { return true })
	admin.run("send ,"+b.id.PeerID().String()+" signed hello", func(string) bool { return true })
	expectMessage(t, bFrames, a.id.PeerID().String()+":signed hello")
}

// TestPathAvoidsASpentChannel: once the tickets A signed on A → R1 leave less than a first ticket
// with the largest padding (nothing redeemed, so the chain still shows it full), A routes over R2
// instead of handing R1 a ticket it might refuse, and every message it accepts arrives.
func TestPathAvoidsASpentChannel(t *testing.T) {
	net := newTestNet(t, 5)
	a, r1, r2, r3, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3], net.nodes[4]
	// 0.15: room for at least one message (0.02 to 0.09 each, PROTOCOL.md §4.5), not for ten.
	funding := new(big.Int).Mul(centToken, big.NewInt(15))
	net.open(a, r1, funding)
	net.open(r1, r3, tokens(1))
	net.open(r2, r3, tokens(1))
	net.open(r3, b, tokens(1))
	bFrames := watch(t, b)
	// sendUntilRefused sends until A refuses with NOT_ENOUGH_BALANCE and returns how many it
	// accepted; each of those arrives.
	sendUntilRefused := func(via string) int {
		t.Helper()
		for i := range 10 {
			text := fmt.Sprintf("over %s, %d", via, i)
			var answer any // the ack challenge, or the error envelope
			s := net.call(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, text, b.id.PeerID()), &answer)
			if errBody, _ := answer.(map[string]any); s == http.StatusUnprocessableEntity && errBody["status"] == "NOT_ENOUGH_BALANCE" {
				if i == 0 {
					t.Fatalf("over %s: the first message was refused", via)
				}
				return i
			}
			if s != http.StatusAccepted {
				t.Fatalf("over %s, message %d: %d %v", via, i, s, answer)
			}
			expectMessage(t, bFrames, text)
		}
		t.Fatalf("over %s: 10 messages on a channel of 0.15", via)
		return 0
	}
	held := func(n *Node) int {
		var list []ticketView
		net.mustCall(n, http.MethodGet, "/tickets", "", http.StatusOK, &list)
		return len(list)
	}
	overR1 := sendUntilRefused("R1") // the only path
	// On chain both of A's channels now hold the same; only A → R2 can still pay.
	net.open(a, r2, funding)
	overR2 := sendUntilRefused("R2")
	net.eventually("the relayers hold a ticket per message", func() bool { return held(r1) == overR1 && held(r2) == overR2 })
	var st struct{ Rejected int }
	net.mustCall(r1, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &st)
	if st.Rejected != 0 {
		t.Fatalf("R1 rejected %d of A's tickets", st.Rejected)
	}
}

// TestThreeRelayersWhereTwoCannotReach: in a sparse graph with no path of 2 relayers to the
// recipient, POST /messages takes a path of 3 (the most a packet carries) instead of refusing:
// A → R1 → R2 → R3 → B, R1's ticket worth 0.03 plus the sender's padding (0 to 0.07).
func TestThreeRelayersWhereTwoCannotReach(t *testing.T) {
	net := newTestNet(t, 5)
	a, r1, r2, r3, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3], net.nodes[4]
	net.open(a, r1, tokens(1))
	net.open(r1, r2, tokens(1))
	net.open(r2, r3, tokens(1))
	net.open(r3, b, tokens(1))
	bFrames := watch(t, b)
	net.mustCall(a, http.MethodPost, "/messages", fmt.Sprintf(`{"body":"the long way","recipient":%q}`, b.id.PeerID()), http.StatusAccepted, nil)
	expectMessage(t, bFrames, "the long way")
	var tks []ticketView
	net.eventually("R1 holds the first ticket", func() bool {
		net.mustCall(r1, http.MethodGet, "/tickets", "", http.StatusOK, &tks)
		return len(tks) == 1
	})
	if got, _ := new(big.Int).SetString(tks[0].Amount, 10); got == nil || got.Cmp(new(big.Int).Mul(centToken, big.NewInt(3))) < 0 ||
		got.Cmp(new(big.Int).Mul(centToken, big.NewInt(3+tickets.PadMax))) > 0 {
		t.Fatalf("R1's ticket is worth %s, want 0.03 to 0.10 (three relayers ahead, and the padding)", tks[0].Amount)
	}
	out := dialAdmin(t, a).run("send "+b.id.PeerID().String()+" again the long way", func(string) bool { return true })
	if !strings.HasPrefix(out[0], "Message sent to "+b.id.PeerID().String()+" over 3 relayers") {
		t.Fatalf("admin send: %q", out)
	}
	expectMessage(t, bFrames, "again the long way")
}

// TestRelayersSetting: the node's own messages take three relayers by default where such a
// path exists, two once the relayers setting says so; 4 is refused. (Where no path of the
// preferred count exists the node takes the other: TestPaidMessageOverTwoRelayers, whose
// network has no path of three.)
func TestRelayersSetting(t *testing.T) {
	net := newTestNet(t, 5)
	a, r1, r2, r3, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3], net.nodes[4]
	net.open(a, r1, tokens(1))
	net.open(r1, r2, tokens(1))
	net.open(r2, b, tokens(1))
	net.open(r2, r3, tokens(1))
	net.open(r3, b, tokens(1))
	bFrames := watch(t, b)
	admin := dialAdmin(t, a)
	send := func(text string, relayers int) {
		t.Helper()
		out := admin.run("send "+b.id.PeerID().String()+" "+text, func(string) bool { return true })
		if want := fmt.Sprintf("Message sent to %s over %d relayers", b.id.PeerID(), relayers); !strings.HasPrefix(out[0], want) {
			t.Fatalf("send %q: %q, want %q", text, out, want)
		}
		expectMessage(t, bFrames, text)
	}
	send("three by default", 3)
	net.mustCall(a, http.MethodPut, "/settings/relayers", `{"settingValue":2}`, http.StatusNoContent, nil)
	send("now two", 2)
	var e struct{ Status string }
	if s := net.call(a, http.MethodPut, "/settings/relayers", `{"settingValue":4}`, &e); s != http.StatusBadRequest || e.Status != "INVALID_SETTING_VALUE" {
		t.Fatalf("relayers 4: %d %+v", s, e)
	}
	net.mustCall(a, http.MethodPut, "/settings/relayers", `{"settingValue":3}`, http.StatusNoContent, nil)
	send("three again", 3)
}
