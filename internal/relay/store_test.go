package relay

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// failingStore is Payments whose Acknowledge fails while fail is set, as a full disk would.
type failingStore struct {
	Payments
	fail  atomic.Bool
	tries atomic.Int64
}

var errDiskFull = errors.New("write: no space left on device")

func (f *failingStore) Acknowledge(ctx context.Context, acks []ledger.AckedTicket) error {
	f.tries.Add(1)
	if f.fail.Load() {
		return errDiskFull
	}
	return f.Payments.Acknowledge(ctx, acks)
}

// jumpClock is the system clock moved ahead by an offset the test sets.
type jumpClock struct {
	realClock
	ahead atomic.Int64
}

func (c *jumpClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// relayOnce sends one packet a → r → n and hands it to r; it returns n's acknowledgement frame
// for it, and whether r forwarded it.
func relayOnce(t *testing.T, a, r, n *benchNode) (ack [AckFrameLen]byte, forwarded bool) {
	t.Helper()
	r.tr.mu.Lock()
	r.tr.last = nil
	r.tr.mu.Unlock()
	if _, err := a.relay.Send(t.Context(), []peer.ID{r.id, n.id}, "store test"); err != nil {
		t.Fatal(err)
	}
	r.relay.handleMsg(t.Context(), a.id, append([]byte(nil), a.tr.last...))
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	if r.tr.last == nil {
		return ack, false
	}
	next := r.tr.last[1:ticketOffset]
	pn, err := packet.Peel(n.key, next, time.Now(), NewMemoryReplay())
	if err != nil {
		t.Fatal(err)
	}
	s, err := por.DeriveAck(pn.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return ackFrame(idOf(next), s), true
}

// TestStoreFailingKeepsTicketsAndRefusesPaidPackets: while the store refuses acknowledged
// tickets (a full disk), the relayer keeps them and retries, reports itself not ready, and drops
// new paid packets (it could not record what they earn, and forwarding them pays the next hop);
// once the store takes writes again, the kept tickets are recorded, readiness returns and paid
// packets are relayed again.
func TestStoreFailingKeepsTicketsAndRefusesPaidPackets(t *testing.T) {
	chans := channelstest.New()
	a, r, n := newBenchNode(t, chans, true), newBenchNode(t, chans, true), newBenchNode(t, chans, true)
	many := tickets.AmountFor(1 << 40)
	chans.Open(a.relay.addr, r.relay.addr, many)
	chans.Open(r.relay.addr, n.relay.addr, many)
	store := &failingStore{Payments: r.relay.cfg.Payments}
	r.relay.cfg.Payments = store
	l := store.Payments.(*ledger.Ledger)

	ctx, cancel := context.WithCancel(t.Context())
	committed := make(chan struct{})
	go func() { defer close(committed); r.relay.runCommitter(ctx) }()
	t.Cleanup(func() { cancel(); r.relay.acked.close(); <-committed })

	store.fail.Store(true)
	ack, ok := relayOnce(t, a, r, n)
	if !ok {
		t.Fatal("the first packet was not forwarded")
	}
	r.relay.handleAck(n.id, ack[:])
	eventually(t, 5*time.Second, "the relay to notice the failing store", r.relay.StoreFailing)
	if c := r.relay.Checks(t.Context()); len(c) != 1 || c[0].Ready {
		t.Fatalf("checks while the store fails: %+v, want one not ready", c)
	}
	before := store.tries.Load()
	eventually(t, 5*time.Second, "a retry", func() bool { return store.tries.Load() > before })

	if _, ok := relayOnce(t, a, r, n); ok {
		t.Fatal("a paid packet was forwarded while the store refuses its ticket")
	}
	if got := counter(r.relay.m.dropped.WithLabelValues(reasonStoreFailing)); got != 1 {
		t.Fatalf("%v packets dropped as store_failing, want 1", got)
	}
	if ts, _ := l.Tickets(); len(ts) != 0 {
		t.Fatalf("%d tickets recorded while the store fails", len(ts))
	}

	store.fail.Store(false)
	eventually(t, 10*time.Second, "the kept ticket to be recorded", func() bool {
		ts, err := l.Tickets()
		return err == nil && len(ts) == 1
	})
	eventually(t, time.Second, "the relay to accept paid packets again", func() bool { return !r.relay.StoreFailing() })
	if c := r.relay.Checks(t.Context()); len(c) != 1 || !c[0].Ready {
		t.Fatalf("checks after the store recovered: %+v, want ready", c)
	}
	ack, ok = relayOnce(t, a, r, n)
	if !ok {
		t.Fatal("a paid packet was not forwarded after the store recovered")
	}
	r.relay.handleAck(n.id, ack[:])
	eventually(t, 5*time.Second, "the second ticket to be recorded", func() bool {
		ts, err := l.Tickets()
		return err == nil && len(ts) == 2
	})
}

// TestStoppedRelayGivesUpFailingStore: a relay stopping while the store refuses its tickets
// goes on retrying for commitGrace (the store may come back: the disk freed), then gives up, so
// that a node with a dead disk still stops.
func TestStoppedRelayGivesUpFailingStore(t *testing.T) {
	chans := channelstest.New()
	a, r, n := newBenchNode(t, chans, true), newBenchNode(t, chans, true), newBenchNode(t, chans, true)
	many := tickets.AmountFor(1 << 40)
	chans.Open(a.relay.addr, r.relay.addr, many)
	chans.Open(r.relay.addr, n.relay.addr, many)
	store := &failingStore{Payments: r.relay.cfg.Payments}
	r.relay.cfg.Payments = store
	clock := &jumpClock{}
	r.relay.clock = clock
	store.fail.Store(true)

	ack, ok := relayOnce(t, a, r, n)
	if !ok {
		t.Fatal("the packet was not forwarded")
	}
	r.relay.handleAck(n.id, ack[:])
	r.relay.acked.close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the relay has stopped
	committed := make(chan struct{})
	go func() { defer close(committed); r.relay.runCommitter(ctx) }()

	// Within the grace it keeps trying.
	eventually(t, 5*time.Second, "retries after stop", func() bool { return store.tries.Load() >= 3 })
	select {
	case <-committed:
		t.Fatal("the committer gave up within the grace period")
	default:
	}
	clock.ahead.Store(int64(commitGrace + time.Second))
	select {
	case <-committed:
	case <-time.After(commitRetryMax + 5*time.Second):
		t.Fatal("the committer did not give up after the grace period")
	}
}
