package relay

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// TestRelayerChecksEveryAck drives one relayer in-process: of many forwarded packets, the next
// hop acknowledges one with a wrong scalar (another packet's ack, a shifted ack, and a pair of
// acks that err by +d and -d, which a batch check of the sum alone would pass), and another from
// the wrong peer. Each bad acknowledgement is dropped and attributed, its packet stays pending,
// and only correct acknowledgements become acknowledged tickets, all with responses that open
// their challenges.
func TestRelayerChecksEveryAck(t *testing.T) {
	chans := channelstest.New()
	a, r, n := newBenchNode(t, chans, true), newBenchNode(t, chans, true), newBenchNode(t, chans, true)
	many := tickets.AmountFor(1 << 40)
	chans.Open(a.relay.addr, r.relay.addr, many)
	chans.Open(r.relay.addr, n.relay.addr, many)

	const count = 12
	ids := make([]packetID, count)
	acks := make([]por.Scalar, count)
	dryN := NewMemoryReplay()
	for i := range count {
		if _, err := a.relay.Send(t.Context(), []peer.ID{r.id, n.id}, "ack test"); err != nil {
			t.Fatal(err)
		}
		r.relay.handleMsg(t.Context(), a.id, append([]byte(nil), a.tr.last...))
		next := r.tr.last[1:ticketOffset]
		pn, err := packet.Peel(n.key, next, time.Now(), dryN)
		if err != nil {
			t.Fatal(err)
		}
		if acks[i], err = por.DeriveAck(pn.Secret); err != nil {
			t.Fatal(err)
		}
		ids[i] = idOf(next)
	}
	if got := counter(r.relay.m.forwarded); got != count {
		t.Fatalf("forwarded %v of %d", got, count)
	}
	shift := func(s por.Scalar, d int64) por.Scalar { // s + d mod n, for small d
		var k, e por.Scalar
		if d >= 0 {
			e[31] = byte(d)
			k = por.Scalar(por.Response(s, e))
		} else {
			// s - |d| = s + (n - |d|)
			e = por.Scalar{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
				0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41}
			e[31] -= byte(-d)
			k = por.Scalar(por.Response(s, e))
		}
		return k
	}
	bad := map[int]struct {
		from   peer.ID
		ack    por.Scalar
		reason string
	}{
		2:  {n.id, acks[3], reasonBadAck},            // another packet's ack
		5:  {n.id, shift(acks[5], 1), reasonBadAck},  // off by one
		7:  {n.id, shift(acks[7], 5), reasonBadAck},  // +d ...
		8:  {n.id, shift(acks[8], -5), reasonBadAck}, // ... and -d: the sum is right
		10: {a.id, acks[10], reasonWrongPeer},        // right ack, wrong peer
	}
	for i := range count {
		if b, ok := bad[i]; ok {
			f := ackFrame(ids[i], b.ack)
			r.relay.handleAck(b.from, f[:])
			continue
		}
		f := ackFrame(ids[i], acks[i])
		r.relay.handleAck(n.id, f[:])
	}
	if got := counter(r.relay.m.acksDropped.WithLabelValues(reasonBadAck)); got != 4 {
		t.Fatalf("%v acks dropped as bad, want 4", got)
	}
	if got := counter(r.relay.m.acksDropped.WithLabelValues(reasonWrongPeer)); got != 1 {
		t.Fatalf("%v acks dropped from the wrong peer, want 1", got)
	}
	if got := r.relay.pend.len(); got != len(bad) {
		t.Fatalf("%d packets still pending, want %d", got, len(bad))
	}
	// The bad ones can still be acknowledged correctly.
	for i := range bad {
		f := ackFrame(ids[i], acks[i])
		r.relay.handleAck(n.id, f[:])
	}
	r.relay.acked.close()
	r.relay.runCommitter(context.Background())
	ts, err := r.relay.cfg.Payments.(*ledger.Ledger).Tickets()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != count {
		t.Fatalf("%d acknowledged tickets, want %d", len(ts), count)
	}
	for _, at := range ts {
		c, err := por.ChallengeOf(por.Scalar(at.Response))
		if err != nil || c != por.Challenge(at.Ticket.Challenge) {
			t.Fatalf("ticket %d: response does not open its challenge", at.Ticket.Index)
		}
	}
}

// TestSenderChecksAck: the sender compares the first hop's ack scalar with the one it derived.
func TestSenderChecksAck(t *testing.T) {
	chans := channelstest.New()
	a, r, n := newBenchNode(t, chans, false), newBenchNode(t, chans, false), newBenchNode(t, chans, false)
	challenge, err := ackOf(a.relay.Send(t.Context(), []peer.ID{r.id, n.id}, "sender ack"))
	if err != nil {
		t.Fatal(err)
	}
	pkt := a.tr.last[1:ticketOffset]
	pr, err := packet.Peel(r.key, pkt, time.Now(), NewMemoryReplay())
	if err != nil {
		t.Fatal(err)
	}
	ack, err := por.DeriveAck(pr.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := por.AckChallengeOf(ack); want != challenge {
		t.Fatal("Send's challenge is not the first hop's ack·G")
	}
	wrong := ack
	wrong[31] ^= 1
	f := ackFrame(idOf(pkt), wrong)
	a.relay.handleAck(r.id, f[:])
	if got := counter(a.relay.m.acksDropped.WithLabelValues(reasonBadAck)); got != 1 {
		t.Fatalf("%v bad acks dropped, want 1", got)
	}
	f = ackFrame(idOf(pkt), ack)
	a.relay.handleAck(r.id, f[:])
	if err := a.relay.WaitAck(t.Context(), challenge); err != nil {
		t.Fatalf("WaitAck: %v", err)
	}
}

// TestAckQueue: a full queue blocks its producer until the committer takes a batch; close lets
// the committer drain what is queued; nothing is lost or reordered.
func TestAckQueue(t *testing.T) {
	q := newAckQueue(4)
	done := make(chan []uint64)
	go func() {
		var got []uint64
		batch := make([]ledger.AckedTicket, 0, 3)
		for {
			var closed bool
			batch, closed = q.take(batch, 3)
			if len(batch) == 0 {
				if closed {
					done <- got
					return
				}
				<-q.wake
				continue
			}
			for _, a := range batch {
				got = append(got, a.Ticket.Index)
			}
		}
	}()
	for i := range 100 {
		q.push(ledger.AckedTicket{Ticket: tickets.Ticket{Index: uint64(i + 1)}})
	}
	q.close()
	got := <-done
	if len(got) != 100 {
		t.Fatalf("committer got %d tickets, want 100", len(got))
	}
	for i, idx := range got {
		if idx != uint64(i+1) {
			t.Fatalf("ticket %d has index %d", i, idx)
		}
	}
}

// TestAckQueueOneBatchPerWindow: tickets trickling in (one a millisecond) while each commit
// takes 3 ms are handed out at most once per window, not as soon as the previous commit ends
// (which committed back to back, ~3 tickets at a time); every ticket arrives once, in order.
func TestAckQueueOneBatchPerWindow(t *testing.T) {
	const window = 20 * time.Millisecond
	q := newAckQueue(1024)
	type result struct {
		got     []uint64
		batches int
	}
	done := make(chan result)
	go func() {
		var res result
		batch := make([]ledger.AckedTicket, 0, 256)
		for {
			var closed bool
			batch, closed = q.next(batch, 256, window)
			if len(batch) == 0 && closed {
				done <- res
				return
			}
			res.batches++
			for _, a := range batch {
				res.got = append(res.got, a.Ticket.Index)
			}
			time.Sleep(3 * time.Millisecond) // the commit's fsync: work, not synchronisation
		}
	}()
	const count = 300
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	for i := range count {
		<-tick.C
		q.push(ledger.AckedTicket{Ticket: tickets.Ticket{Index: uint64(i + 1)}})
	}
	tick.Stop()
	elapsed := time.Since(start)
	q.close()
	res := <-done
	if len(res.got) != count {
		t.Fatalf("committer got %d tickets, want %d", len(res.got), count)
	}
	for i, idx := range res.got {
		if idx != uint64(i+1) {
			t.Fatalf("ticket %d has index %d", i, idx)
		}
	}
	if most := int(elapsed/window) + 2; res.batches > most {
		t.Fatalf("%d batches in %v, want at most %d (one per %v window)", res.batches, elapsed, most, window)
	}
	t.Logf("%d tickets in %d batches over %v", count, res.batches, elapsed.Round(time.Millisecond))
}

// TestAckQueueNextFullOrLone: a full batch is handed out at once, without waiting for the
// window; a lone ticket waits for the window, and no longer than it plus scheduling.
func TestAckQueueNextFullOrLone(t *testing.T) {
	q := newAckQueue(64)
	for i := range 8 {
		q.push(ledger.AckedTicket{Ticket: tickets.Ticket{Index: uint64(i + 1)}})
	}
	start := time.Now()
	batch, closed := q.next(nil, 8, time.Hour)
	if len(batch) != 8 || closed {
		t.Fatalf("full batch: %d tickets, closed %v; want 8, false", len(batch), closed)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a full batch waited %v for an hour's window", d)
	}

	const window = 30 * time.Millisecond
	q.push(ledger.AckedTicket{Ticket: tickets.Ticket{Index: 9}})
	start = time.Now()
	batch, _ = q.next(batch, 8, window)
	d := time.Since(start)
	if len(batch) != 1 || batch[0].Ticket.Index != 9 {
		t.Fatalf("lone ticket: got %d tickets", len(batch))
	}
	if d < window/2 || d > 10*time.Second {
		t.Fatalf("a lone ticket was handed out after %v, want about the %v window", d, window)
	}
	q.close()
	if batch, closed = q.next(batch, 8, window); len(batch) != 0 || !closed {
		t.Fatalf("after close: %d tickets, closed %v; want 0, true", len(batch), closed)
	}
}
