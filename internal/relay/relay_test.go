package relay

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/relayd/relayd/internal/token"

	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

func TestUnpaidDelivery(t *testing.T) {
	nodes := newNet(t, netOptions{}, "A", "R1", "R2", "B") // default mixing delay 0–20 ms
	a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]

	for i, tc := range []struct {
		name string
		hops []*testNode
	}{
		{"direct", []*testNode{b}},
		{"two relayers", []*testNode{r1, r2, b}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "hello " + tc.name
			before := time.Now().Truncate(time.Millisecond)
			challenge, err := ackOf(a.relay.Send(t.Context(), ids(tc.hops...), text))
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "delivery", func() bool { return len(b.deliveries()) == i+1 })
			got := b.deliveries()[i]
			if got.Text != text {
				t.Fatalf("text %q, want %q", got.Text, text)
			}
			if got.SentAt.Before(before) || got.SentAt.After(time.Now()) || got.ReceivedAt.Before(got.SentAt) {
				t.Fatalf("timestamps sent %v received %v, test started %v", got.SentAt, got.ReceivedAt, before)
			}
			waitAck(t, a, challenge)
		})
	}
	for _, n := range []*testNode{a, r1, r2} {
		if d := n.deliveries(); len(d) != 0 {
			t.Fatalf("%s delivered %d messages", n.name, len(d))
		}
	}
	if f := counter(r1.relay.m.forwarded) + counter(r2.relay.m.forwarded); f != 2 {
		t.Fatalf("relayers forwarded %v packets, want 2", f)
	}
}

func TestSendRefusesBadInput(t *testing.T) {
	nodes := newNet(t, netOptions{}, "A", "B")
	a, b := nodes["A"], nodes["B"]
	long := strings.Repeat("x", packet.MaxMessageSize+1)
	if _, err := a.relay.Send(t.Context(), ids(b), long); !errors.Is(err, packet.ErrMessageTooLarge) {
		t.Fatalf("long text: %v", err)
	}
	for name, hops := range map[string][]*testNode{
		"no hops": nil, "self": {a, b}, "twice in a row": {b, b}, "five hops": {b, a, b, a, b},
	} {
		if _, err := a.relay.Send(t.Context(), ids(hops...), "hi"); !errors.Is(err, ErrBadRoute) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got := counter(b.relay.m.received); got != 0 {
		t.Fatalf("refused sends reached B: %v frames", got)
	}
	if err := a.relay.WaitAck(t.Context(), por.AckChallenge{2}); !errors.Is(err, ErrUnknownAck) {
		t.Fatalf("WaitAck of unknown challenge: %v", err)
	}
}

// paidNet starts A, R1, R2, B with channels A→R1, R1→R2, R2→B of one token each.
func paidNet(t *testing.T, edit func(string, *Config)) (map[string]*testNode, *channelstest.Map) {
	t.Helper()
	chans := channelstest.New()
	nodes := newNet(t, netOptions{channels: chans, edit: func(name string, cfg *Config) {
		cfg.NoMixDelay = true
		if edit != nil {
			edit(name, cfg)
		}
	}}, "A", "R1", "R2", "B")
	chans.Open(nodes["A"].addr, nodes["R1"].addr, oneToken)
	chans.Open(nodes["R1"].addr, nodes["R2"].addr, oneToken)
	chans.Open(nodes["R2"].addr, nodes["B"].addr, oneToken)
	return nodes, chans
}

func TestPaidRelay(t *testing.T) {
	nodes, _ := paidNet(t, nil)
	a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
	route := ids(r1, r2, b)

	var costs []uint256.Int // what Send said each message's first ticket cost
	for msg := 1; msg <= 2; msg++ {
		sent, err := a.relay.Send(t.Context(), route, "paid")
		if err != nil {
			t.Fatal(err)
		}
		challenge := sent.Ack
		costs = append(costs, sent.Cost)
		eventually(t, 10*time.Second, "delivery", func() bool { return len(b.deliveries()) == msg })
		waitAck(t, a, challenge)
		for _, n := range []*testNode{r1, r2} {
			eventually(t, 10*time.Second, n.name+" acknowledged tickets", func() bool {
				// The store shows a batch a moment before the ledger's
				// pending count drops: wait for both.
				ts, err := n.ledger.Tickets()
				st, serr := n.ledger.Statistics()
				return err == nil && serr == nil && len(ts) == msg && st.Pending == 0
			})
		}
	}

	// R1's tickets are worth 0.02 plus the sender's padding, R2's 0.01 less: each relayer nets
	// 0.01. The rest reaches B, which stores it when it is more than 0.
	r1ts, _ := r1.ledger.Tickets()
	r2ts, _ := r2.ledger.Tickets()
	lo, hi := tickets.AmountFor(2), tickets.PaddedAmount(2, tickets.PadMax)
	var padded []uint256.Int
	for i := range r1ts {
		in, out := r1ts[i].Ticket.Amount, r2ts[i].Ticket.Amount
		var net uint256.Int
		net.Sub(&in, &out)
		if in.Lt(&lo) || hi.Lt(&in) || net != ledger.PricePerHop {
			t.Fatalf("message %d: R1's ticket %s, R2's %s: want 0.02 to 0.09, and 0.01 less", i+1, in.Dec(), out.Dec())
		}
		if costs[i] != in {
			t.Fatalf("message %d: Send reported a cost of %s, R1's ticket is worth %s", i+1, costs[i].Dec(), in.Dec())
		}
		if out != ledger.PricePerHop {
			var pad uint256.Int
			padded = append(padded, *pad.Sub(&out, &ledger.PricePerHop))
		}
	}
	for n, from := range map[*testNode]*testNode{r1: a, r2: r1} {
		ts, _ := n.ledger.Tickets()
		var value uint256.Int
		for i, at := range ts {
			if at.Source != from.addr {
				t.Fatalf("%s ticket source %s, want %s", n.name, at.Source, from.addr)
			}
			if at.Ticket.Index != uint64(i+1) {
				t.Fatalf("%s ticket %d has index %d", n.name, i, at.Ticket.Index)
			}
			c, err := por.ChallengeOf(por.Scalar(at.Response))
			if err != nil || c != por.Challenge(at.Ticket.Challenge) {
				t.Fatalf("%s: response does not open the ticket's challenge (%v)", n.name, err)
			}
			value.Add(&value, &at.Ticket.Amount)
		}
		st, err := n.ledger.Statistics()
		if err != nil {
			t.Fatal(err)
		}
		if st.Unredeemed != 2 || st.UnredeemedValue != value || st.Pending != 0 || st.Rejected != 0 {
			t.Fatalf("%s statistics %+v, want 2 tickets worth %s", n.name, st, value.Dec())
		}
	}
	// B accepted R2's tickets, with increasing indexes, and stored those worth more than 0.
	got := b.payments.acceptedTickets()
	if len(got) != 2 || got[1].Index <= got[0].Index {
		t.Fatalf("recipient's tickets: %+v", got)
	}
	eventually(t, 10*time.Second, "B stores its padded tickets", func() bool {
		ts, err := b.ledger.Tickets()
		st, serr := b.ledger.Statistics()
		return err == nil && serr == nil && len(ts) == len(padded) && st.Pending == 0
	})
	bts, _ := b.ledger.Tickets()
	for i, at := range bts {
		if at.Source != r2.addr || at.Ticket.Amount != padded[i] || !opens(at.Response, at.Ticket.Challenge) {
			t.Fatalf("B's ticket %d: %+v, want %s from R2 with a response that opens it", i, at, padded[i].Dec())
		}
	}
	if ts, _ := a.ledger.Tickets(); len(ts) != 0 {
		t.Fatalf("sender stored %d tickets", len(ts))
	}
	// What the sender paid is counted in tokens (relayd_relay_tokens_spent_total), the
	// relayers' forwarding is not.
	var paid uint256.Int
	for _, c := range costs {
		paid.Add(&paid, &c)
	}
	if got, want := testutil.ToFloat64(a.relay.m.spent), token.FromUint256(&paid).Float64(); math.Abs(got-want) > 1e-12 {
		t.Fatalf("sender's tokens_spent_total %v, want %v (its first tickets)", got, want)
	}
	for _, n := range []*testNode{r1, r2, b} {
		if got := testutil.ToFloat64(n.relay.m.spent); got != 0 {
			t.Fatalf("%s counted %v tokens spent for packets it only forwarded or received", n.name, got)
		}
	}
}

func TestPaidDirectMessageCarriesNoTicket(t *testing.T) {
	nodes, _ := paidNet(t, nil)
	a, b := nodes["A"], nodes["B"] // no channel A→B: a direct message needs none
	challenge, err := ackOf(a.relay.Send(t.Context(), ids(b), "direct"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "delivery", func() bool { return len(b.deliveries()) == 1 })
	waitAck(t, a, challenge)
	if len(a.payments.issued) != 0 || len(b.payments.acceptedTickets()) != 0 {
		t.Fatal("a direct message carried a ticket")
	}
}

func TestRelayerWithoutAckHasNoTicket(t *testing.T) {
	nodes, _ := paidNet(t, func(name string, cfg *Config) {
		cfg.AckTimeout = 300 * time.Millisecond
	})
	a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
	b.transport.mu.Lock()
	b.transport.dropAcks = true // B receives but never acknowledges
	b.transport.mu.Unlock()

	if _, err := a.relay.Send(t.Context(), ids(r1, r2, b), "no ack"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "delivery", func() bool { return len(b.deliveries()) == 1 })
	eventually(t, 10*time.Second, "R1's ticket", func() bool { ts, _ := r1.ledger.Tickets(); return len(ts) == 1 })
	eventually(t, 10*time.Second, "R2's ticket neglected", func() bool {
		st, err := r2.ledger.Statistics()
		return err == nil && st.Neglected == 1 && st.Pending == 0
	})
	if ts, _ := r2.ledger.Tickets(); len(ts) != 0 {
		t.Fatalf("R2 holds %d redeemable tickets without an acknowledgement", len(ts))
	}
}

func TestReplayedPacketDropped(t *testing.T) {
	nodes := newNet(t, netOptions{edit: func(_ string, c *Config) { c.NoMixDelay = true }}, "A", "R1", "B")
	a, r1, b := nodes["A"], nodes["R1"], nodes["B"]
	if _, err := a.relay.Send(t.Context(), ids(r1, b), "once"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "delivery", func() bool { return len(b.deliveries()) == 1 })
	a.transport.mu.Lock()
	frame := a.transport.sent[0]
	a.transport.mu.Unlock()
	if err := a.host.Send(t.Context(), r1.id(), p2p.ProtocolMsg, frame); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "replay drop", func() bool { return dropped(r1, reasonReplay) == 1 })
	if got := counter(r1.relay.m.forwarded); got != 1 {
		t.Fatalf("R1 forwarded %v packets, want 1", got)
	}
	if len(b.deliveries()) != 1 {
		t.Fatal("replayed message delivered")
	}
}

func TestGarbageFramesDropped(t *testing.T) {
	nodes := newNet(t, netOptions{edit: func(_ string, c *Config) { c.NoMixDelay = true }}, "A", "R1", "B")
	a, r1, b := nodes["A"], nodes["R1"], nodes["B"]
	random := make([]byte, MsgFrameLen)
	for i := range random {
		random[i] = byte(i*7 + 3)
	}
	random[0] = FrameVersion
	badVersion := append([]byte{9}, random[1:]...)
	for _, f := range [][]byte{{1}, make([]byte, 100), random, badVersion, make([]byte, MsgFrameLen+5)} {
		if err := a.host.Send(t.Context(), r1.id(), p2p.ProtocolMsg, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range [][]byte{{1, 2}, make([]byte, AckFrameLen), append([]byte{FrameVersion}, make([]byte, AckFrameLen-1)...)} {
		if err := a.host.Send(t.Context(), r1.id(), p2p.ProtocolAck, f); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "drops counted", func() bool {
		return dropped(r1, reasonFrameSize) == 3 && dropped(r1, reasonBadPoint)+dropped(r1, reasonMAC) == 1 &&
			dropped(r1, reasonFrameVersion) == 1 &&
			ackDropped(r1, reasonFrameSize) == 1 && ackDropped(r1, reasonFrameVersion) == 1 && ackDropped(r1, reasonUnknownAck) == 1
	})
	// The node still relays.
	if _, err := a.relay.Send(t.Context(), ids(r1, b), "still alive"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "delivery", func() bool { return len(b.deliveries()) == 1 })
	if len(r1.deliveries()) != 0 {
		t.Fatal("garbage reached Deliver")
	}
}

func TestInvalidTicketRejected(t *testing.T) {
	wrongKey, _ := newKeyPair(t)
	tests := []struct {
		name   string
		mutate func(*tickets.Ticket)
		wrong  bool // sign with another key
		setup  func(*channelstest.Map, *testNode, *testNode)
		reason string
		second bool // the first message passes, the second is rejected
	}{
		{name: "wrong signer", wrong: true, reason: reasonTicketSigner},
		{name: "stale epoch", mutate: func(t *tickets.Ticket) { t.Epoch = 1 },
			setup: func(c *channelstest.Map, a, r *testNode) {
				c.Set(a.addr, r.addr, func(s *channels.Channel) { s.Epoch = 2 })
			},
			reason: reasonTicketEpoch},
		{name: "reused index", mutate: func(t *tickets.Ticket) { t.Index = 1 }, reason: reasonTicketIndex, second: true},
		{name: "index at or below redeemed", mutate: func(t *tickets.Ticket) { t.Index = 5 },
			setup: func(c *channelstest.Map, a, r *testNode) {
				c.Set(a.addr, r.addr, func(s *channels.Channel) { s.TicketIndex = 5 })
			},
			reason: reasonTicketIndex},
		{name: "over balance", // R1 sees just under 0.01 in the channel; A's first ticket over one relayer is worth 0.01 plus a padding of 0 to 0.07
			setup: func(c *channelstest.Map, a, r *testNode) {
				c.Set(a.addr, r.addr, func(s *channels.Channel) {
					b := tickets.AmountFor(1)
					b.SubUint64(&b, 1)
					s.Balance = b.ToBig()
				})
			},
			reason: reasonTicketBalance},
		{name: "under price", mutate: func(t *tickets.Ticket) { t.Amount = *uint256.NewInt(1) }, reason: reasonTicketAmount},
		{name: "over the largest amount", // within the balance, more than any sender pays
			mutate: func(t *tickets.Ticket) { t.Amount = tickets.PaddedAmount(packet.MaxHops, tickets.PadMax) },
			reason: reasonTicketAmount},
		{name: "wrong challenge", mutate: func(t *tickets.Ticket) { t.Challenge[0] ^= 1 }, reason: reasonTicketPoR},
		{name: "closed channel",
			setup: func(c *channelstest.Map, a, r *testNode) {
				c.Set(a.addr, r.addr, func(s *channels.Channel) { s.Status = channels.Closed })
			},
			reason: reasonChannelClosed},
		{name: "pending to close",
			setup: func(c *channelstest.Map, a, r *testNode) {
				c.Set(a.addr, r.addr, func(s *channels.Channel) { s.Status = channels.PendingToClose })
			},
			reason: reasonChannelClosed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chans := channelstest.New()
			nodes := newNet(t, netOptions{channels: chans, edit: func(_ string, c *Config) { c.NoMixDelay = true }},
				"A", "R1", "B")
			a, r1, b := nodes["A"], nodes["R1"], nodes["B"]
			chans.Open(a.addr, r1.addr, oneToken)
			chans.Open(r1.addr, b.addr, oneToken)
			if tc.setup != nil {
				// A issues against an honest view of its channel; R1 sees the edited one.
				issue := channelstest.New()
				issue.Open(a.addr, r1.addr, tickets.AmountFor(300))
				l, err := ledger.New(ledger.Config{Key: a.key, ChainID: testChainID, Contract: testContract,
					Channels: issue, Store: a.db})
				if err != nil {
					t.Fatal(err)
				}
				a.ledger, a.payments.Payments, a.payments.split = l, l, l
				tc.setup(chans, a, r1)
			}
			a.payments.signKey = a.key
			if tc.wrong {
				a.payments.signKey = wrongKey
			}
			mutate := tc.mutate
			if mutate == nil {
				mutate = func(*tickets.Ticket) {}
			}
			if tc.second {
				if _, err := a.relay.Send(t.Context(), ids(r1, b), "first"); err != nil {
					t.Fatal(err)
				}
				eventually(t, 10*time.Second, "first delivery", func() bool { return len(b.deliveries()) == 1 })
			}
			a.payments.mu.Lock()
			a.payments.mutate = mutate
			a.payments.mu.Unlock()
			if _, err := a.relay.Send(t.Context(), ids(r1, b), "bad ticket"); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "rejection "+tc.reason, func() bool { return dropped(r1, tc.reason) == 1 })
			wantFwd := 0.0
			if tc.second {
				wantFwd = 1
			}
			if got := counter(r1.relay.m.forwarded); got != wantFwd {
				t.Fatalf("R1 forwarded %v packets, want %v", got, wantFwd)
			}
			st, err := r1.ledger.Statistics()
			if err != nil {
				t.Fatal(err)
			}
			if tc.reason != reasonTicketPoR && st.Rejected != 1 {
				t.Fatalf("R1 counted %d rejected tickets", st.Rejected)
			}
			if len(b.deliveries()) != int(wantFwd) {
				t.Fatal("the packet with the invalid ticket was delivered")
			}
		})
	}
}

func TestDepletedChannel(t *testing.T) {
	t.Run("sender refuses up front", func(t *testing.T) {
		nodes, chans := paidNet(t, nil)
		a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
		chans.Open(a.addr, r1.addr, tickets.AmountFor(1)) // needs AmountFor(2)
		_, err := a.relay.Send(t.Context(), ids(r1, r2, b), "too poor")
		if !errors.Is(err, ledger.ErrNotEnoughBalance) {
			t.Fatalf("Send: %v, want ledger.ErrNotEnoughBalance", err)
		}
		chans.Set(a.addr, r1.addr, func(s *channels.Channel) { s.Status = channels.Closed })
		if _, err := a.relay.Send(t.Context(), ids(r1, r2, b), "closed"); !errors.Is(err, ledger.ErrChannelNotOpen) {
			t.Fatalf("Send over a closed channel: %v", err)
		}
		if _, err := a.relay.Send(t.Context(), ids(r2, r1, b), "none"); !errors.Is(err, ledger.ErrChannelNotFound) {
			t.Fatalf("Send without a channel: %v", err)
		}
		if got := counter(r1.relay.m.received) + counter(r2.relay.m.received); got != 0 {
			t.Fatalf("%v frames left A", got)
		}
	})
	t.Run("sender counts what it signed", func(t *testing.T) {
		nodes, chans := paidNet(t, nil)
		a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
		// The first message always fits; each one takes at least 0.02 of what is left, drawn
		// with its padding: the sender signs while the channel can pay, and not beyond.
		balance := tickets.PaddedAmount(2, tickets.PadMax)
		floor := tickets.AmountFor(2)
		balance.Add(&balance, &floor)
		chans.Open(a.addr, r1.addr, balance)
		sent := 0
		for ; sent < 20; sent++ {
			_, err := a.relay.Send(t.Context(), ids(r1, r2, b), "paid for")
			if errors.Is(err, ledger.ErrNotEnoughBalance) {
				break
			}
			if err != nil {
				t.Fatalf("message %d: %v", sent+1, err)
			}
		}
		var signed uint256.Int
		for _, tk := range a.payments.issued {
			signed.Add(&signed, &tk.Amount)
		}
		var left uint256.Int
		left.Sub(&balance, &signed) // wraps when overdrawn, which the check reports
		if sent == 0 || sent == 20 || len(a.payments.issued) != sent || balance.Lt(&signed) || !left.Lt(&ledger.MaxTicketValue) {
			t.Fatalf("%d messages sent, %d tickets worth %s signed on a channel of %s: want the channel used up, never overdrawn",
				sent, len(a.payments.issued), signed.Dec(), balance.Dec())
		}
		eventually(t, 10*time.Second, "every paid message delivered", func() bool { return len(b.deliveries()) == sent })
		if got := counter(r1.relay.m.received); got != float64(sent) {
			t.Fatalf("R1 received %v packets, want %d", got, sent)
		}
	})
	t.Run("relayer drops", func(t *testing.T) {
		nodes, chans := paidNet(t, nil)
		a, r1, r2, b := nodes["A"], nodes["R1"], nodes["R2"], nodes["B"]
		chans.Open(r1.addr, r2.addr, uint256.Int{}) // depleted
		if _, err := a.relay.Send(t.Context(), ids(r1, r2, b), "stuck"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "R1 drops", func() bool { return dropped(r1, reasonNoBalance) == 1 })
		eventually(t, 10*time.Second, "R1 neglects its ticket", func() bool {
			st, _ := r1.ledger.Statistics()
			return st.Neglected == 1 && st.Pending == 0
		})
		if got := counter(r2.relay.m.received); got != 0 {
			t.Fatalf("R2 received %v frames", got)
		}
		if len(b.deliveries()) != 0 {
			t.Fatal("delivered over a depleted channel")
		}
	})
}

func TestWaitAckReportsAckAndTimeout(t *testing.T) {
	nodes := newNet(t, netOptions{edit: func(_ string, c *Config) {
		c.NoMixDelay = true
		c.AckTimeout = 300 * time.Millisecond
	}}, "A", "B")
	a, b := nodes["A"], nodes["B"]
	acked, err := ackOf(a.relay.Send(t.Context(), ids(b), "acknowledged"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "acknowledgement", func() bool { return counter(a.relay.m.acksReceived) == 1 })
	// Asked after the acknowledgement came: still known, and acknowledged.
	if err := a.relay.WaitAck(t.Context(), acked); err != nil {
		t.Fatalf("WaitAck after the acknowledgement: %v", err)
	}

	b.transport.mu.Lock()
	b.transport.dropAcks = true
	b.transport.mu.Unlock()
	lost, err := ackOf(a.relay.Send(t.Context(), ids(b), "never acknowledged"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := a.relay.WaitAck(ctx, lost); !errors.Is(err, ErrAckTimeout) {
		t.Fatalf("WaitAck of an unacknowledged message: %v, want ErrAckTimeout", err)
	}
}

// ackOf is Send's result as the ack challenge alone.
func ackOf(s Sent, err error) (por.AckChallenge, error) { return s.Ack, err }
