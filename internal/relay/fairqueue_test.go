package relay

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/por"
)

// TestFairQueue: due forwards first, then the lines in turn, each in its own order; a full line
// refuses while the others take jobs; once the queue is half full a line holds at most its share
// (forwards are not held to it); the queue as a whole holds at most its size; a drained flow lets
// its memory go.
func TestFairQueue(t *testing.T) {
	q := newFairQueue(8, 4)
	push := func(flow int, place uint64) error { return q.push(flow, job{kind: jobMsg, place: place}) }
	for i := range 6 {
		err := push(1, uint64(i))
		if want := i >= 4; want != errors.Is(err, ErrOverloaded) {
			t.Fatalf("push %d on flow 1: %v", i, err)
		}
	}
	// Half full: a line's share is 8 / (2 × (lines with jobs + 1)).
	if err := push(7, 100); err != nil { // share 2
		t.Fatal(err)
	}
	if err := push(7, 101); !errors.Is(err, ErrOverloaded) { // share 1
		t.Fatalf("a second job on flow 7 beyond its share: %v", err)
	}
	for _, p := range []uint64{200, 201} {
		if err := push(forwardFlow, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := push(9, 300); err != nil { // share 1, none held yet
		t.Fatal(err)
	}
	if err := push(forwardFlow, 202); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("push beyond the queue's size: %v", err)
	}
	var got []uint64
	for range 8 {
		<-q.ready
		got = append(got, q.pop().place)
	}
	if want := []uint64{200, 201, 0, 100, 300, 1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("served %v, want %v", got, want)
	}
	if q.len() != 0 || len(q.ready) != 0 {
		t.Fatalf("%d jobs and %d tokens left", q.len(), len(q.ready))
	}

	big := newFairQueue(2000, 1000)
	for i := range 1000 {
		if err := big.push(3, job{place: uint64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		<-big.ready
		if p := big.pop().place; p != uint64(i) {
			t.Fatalf("pop %d: place %d", i, p)
		}
	}
	if c := cap(big.flows[3].buf); c != 0 {
		t.Fatalf("a drained flow keeps %d jobs' room", c)
	}
}

// TestFloodFromOnePeerIsBounded: a peer that floods a relayer (its workers not started, so
// nothing drains) fills only its own share of the queue, QueueSize: the rest of its frames are
// dropped as overload and counted, and another peer's packets are still queued and served next,
// not behind the flood. (With one FIFO for all, the flood filled the whole queue and the other
// peer's packets were dropped.)
func TestFloodFromOnePeerIsBounded(t *testing.T) {
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	const size = 16
	r, err := New(Config{Key: key, Transport: nopTransport{}, Replay: NewMemoryReplay(), NoMixDelay: true,
		Deliver: func(Received) {}, Workers: 1, QueueSize: size, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	r.running.Store(true)
	flood, other := peer.ID("flooding peer"), otherLine(r, "flooding peer")
	const floodN = 10 * size
	for range floodN {
		r.onMsg(flood, make([]byte, MsgFrameLen))
	}
	if got := counter(r.m.dropped.WithLabelValues(reasonOverload)); got != floodN-size {
		t.Fatalf("flood frames dropped as overload: %v, want %d", got, floodN-size)
	}
	const otherN = 4
	for range otherN {
		r.onMsg(other, make([]byte, MsgFrameLen))
	}
	if got := counter(r.m.dropped.WithLabelValues(reasonOverload)); got != floodN-size {
		t.Fatalf("the other peer's frames were dropped: %v dropped, want %d", got, floodN-size)
	}
	if n := r.queue.len(); n != size+otherN {
		t.Fatalf("queued %d, want %d", n, size+otherN)
	}
	var order []peer.ID
	for range 2 * otherN {
		<-r.queue.ready
		j := r.queue.pop()
		order = append(order, j.from)
		r.bufs.Put(j.buf)
	}
	if n := slices.Index(order, other); n < 0 || n > 1 || countOf(order, other) != otherN {
		t.Fatalf("served %v: the other peer's %d packets not taken in turn with the flood", order, otherN)
	}
}

// TestTwoFloodsLeaveRoom: two peers flood a relayer at once (workers not started); a third
// peer's packets are still queued. (With each FIFO at half the queue and nothing else, the two
// floods filled it and the third peer's packets were dropped.)
func TestTwoFloodsLeaveRoom(t *testing.T) {
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	const size = 16
	r, err := New(Config{Key: key, Transport: nopTransport{}, Replay: NewMemoryReplay(), NoMixDelay: true,
		Deliver: func(Received) {}, Workers: 2, QueueSize: size, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	r.running.Store(true)
	x := peer.ID("flooding peer")
	y := otherLine(r, x)
	z := peer.ID("")
	for i := 0; z == ""; i++ {
		if o := peer.ID(fmt.Sprintf("third peer %d", i)); r.laneOf(o) != r.laneOf(x) && r.laneOf(o) != r.laneOf(y) {
			z = o
		}
	}
	for _, from := range []peer.ID{x, y} {
		for range 10 * size {
			r.onMsg(from, make([]byte, MsgFrameLen))
		}
	}
	before := counter(r.m.dropped.WithLabelValues(reasonOverload))
	const zN = 3
	for range zN {
		r.onMsg(z, make([]byte, MsgFrameLen))
	}
	if got := counter(r.m.dropped.WithLabelValues(reasonOverload)); got != before {
		t.Fatalf("the third peer's frames were dropped: %v of %d (queued %d of %d)", got-before, zN, r.queue.len(), r.queue.size)
	}
	if n := r.queue.len(); n > r.queue.size {
		t.Fatalf("queued %d, more than %d", n, r.queue.size)
	}
}

// otherLine returns a peer ID whose line (turns.go's stripe) differs from id's.
func otherLine(r *Relay, id peer.ID) peer.ID {
	for i := 0; ; i++ {
		o := peer.ID(fmt.Sprintf("other peer %d", i))
		if r.laneOf(o) != r.laneOf(id) {
			return o
		}
	}
}

func countOf(s []peer.ID, id peer.ID) int {
	n := 0
	for _, x := range s {
		if x == id {
			n++
		}
	}
	return n
}

// TestFloodLeavesOthersFlowing: while peer A floods relayer R with packets for R (real packets,
// built beforehand and pushed round and round as fast as R's host takes them, far faster than R
// peels; R delivers each once and drops its repeats as replays, after the same work), peer C
// sends messages one at a time over R to B. R's queue stays within its bound, A's excess is
// dropped as overload and counted, and every one of C's messages passes after at most a few of
// A's packets that R peeled between its arrival and its forwarding, not after A's backlog (with
// one FIFO for all, A's flood kept the queue full and C's packets were dropped, or waited behind
// all of A's queued before them). The measure counts packets, not time, so that a loaded machine
// does not change it.
func TestFloodLeavesOthersFlowing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds thousands of packets")
	}
	const queueSize = 256 // per worker, and A's share
	var (
		floodDone atomic.Int64 // A's packets R delivered to itself (see processed)
		mu        sync.Mutex
		arrivedAt []int64      // floodDone when each of C's frames reached R
		passedAt  []int64      // and when R forwarded it
		backlog   []int        // R's queue when it arrived
		cID       atomic.Value // C's peer.ID, once known
		rp        atomic.Pointer[Relay]
	)
	nodes := newNet(t, netOptions{edit: func(name string, cfg *Config) {
		if name != "R" {
			return
		}
		cfg.QueueSize, cfg.NoMixDelay = queueSize, true
		cfg.Deliver = func(Received) { floodDone.Add(1) }
		cfg.Transport = &watchTransport{Transport: cfg.Transport,
			onMsg: func(from peer.ID) {
				if id, _ := cID.Load().(peer.ID); id != "" && from == id {
					mu.Lock()
					arrivedAt = append(arrivedAt, processed(rp.Load(), &floodDone))
					backlog = append(backlog, rp.Load().queue.len())
					mu.Unlock()
				}
			},
			onSend: func(peer.ID) { // only C's packets go on from R
				mu.Lock()
				passedAt = append(passedAt, processed(rp.Load(), &floodDone))
				mu.Unlock()
			}}
	}}, "A", "C", "R", "B")
	a, c, rn, b := nodes["A"], nodes["C"], nodes["R"], nodes["B"]
	r := rn.relay
	rp.Store(r)
	cID.Store(c.id())
	ctx := t.Context()

	// A's flood: packets for R, built with A's frames held back.
	const floodN = 2000
	a.transport.mu.Lock()
	a.transport.hold = true
	a.transport.mu.Unlock()
	for range floodN {
		if _, err := a.relay.Send(ctx, []peer.ID{r.ID()}, "flood"); err != nil {
			t.Fatal(err)
		}
	}
	a.transport.mu.Lock()
	frames := a.transport.sent
	a.transport.mu.Unlock()

	// The first of C's messages opens the streams C → R → B before anything is measured.
	if _, err := c.relay.Send(ctx, ids(rn, b), "warm-up"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the warm-up delivered", func() bool { return len(b.deliveries()) == 1 })
	mu.Lock()
	arrivedAt, passedAt, backlog = nil, nil, nil
	mu.Unlock()

	pushed := make(chan struct{})
	stop := make(chan struct{})
	var maxQueued atomic.Int64
	go func() {
		defer close(pushed)
		for i := 0; ; {
			select {
			case <-stop:
				return
			default:
			}
			if n := int64(r.queue.len()); n > maxQueued.Load() {
				maxQueued.Store(n)
			}
			err := a.host.Send(ctx, r.ID(), p2p.ProtocolMsg, frames[i])
			switch {
			case err == nil:
				i = (i + 1) % len(frames)
			case errors.Is(err, p2p.ErrQueueFull):
				time.Sleep(50 * time.Microsecond) // let A's writer drain: pacing, not synchronisation
			default:
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); <-pushed }()
	eventually(t, 30*time.Second, "A's flood backlogged at R", func() bool { return r.queue.len() >= queueSize/2 })

	const messages = 10
	for i := range messages {
		if _, err := c.relay.Send(ctx, ids(rn, b), fmt.Sprintf("message %d", i)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, fmt.Sprintf("R forwarded C's message %d (dropped as overload: %v)", i, dropped(rn, reasonOverload)), func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(passedAt) == i+1
		})
	}
	eventually(t, 30*time.Second, "C's messages delivered", func() bool { return len(b.deliveries()) == 1+messages })
	mu.Lock()
	defer mu.Unlock()
	if len(arrivedAt) != messages || len(passedAt) != messages {
		t.Fatalf("C's packets: %d reached R, %d left it, want %d", len(arrivedAt), len(passedAt), messages)
	}
	var overtaken []int64
	var during int
	for i := range messages {
		if backlog[i] < queueSize/4 {
			continue // the flood had ebbed: this one says nothing
		}
		during++
		overtaken = append(overtaken, passedAt[i]-arrivedAt[i])
	}
	if during < messages/2 {
		t.Fatalf("only %d of C's %d packets came while A's flood was backlogged (backlogs %v)", during, messages, backlog)
	}
	slices.Sort(overtaken)
	// Round robin: A's packets in the workers' hands and about one more per worker while C's is
	// peeled. A FIFO: every one of A's packets queued before it, at least queueSize/4 here.
	if med := overtaken[len(overtaken)/2]; med > queueSize/16 {
		t.Fatalf("C's packets passed R after a median of %d of A's flood packets (all %v; backlogs %v), want at most %d",
			med, overtaken, backlog, queueSize/16)
	}
	if m := maxQueued.Load(); m > int64(queueSize*max(r.cfg.Workers, 2)) {
		t.Fatalf("R queued %d packets, more than its bound %d", m, queueSize*max(r.cfg.Workers, 2))
	}
	if got := dropped(rn, reasonOverload); got == 0 {
		t.Fatalf("R dropped none of A's flood as overload (queue at most %d)", maxQueued.Load())
	}
	t.Logf("C's packets overtaken by %v of A's (backlogs at arrival %v); R queued at most %d; dropped as overload %v",
		overtaken, backlog, maxQueued.Load(), dropped(rn, reasonOverload))
}

// TestPendingSharePerPreviousHop: the packets relayed for one previous hop take at most half the
// pending table (a flood whose next hops never acknowledge stays there for AckTimeout); another
// previous hop's, and this node's own, still fit; an entry that leaves (acknowledged, dropped or
// expired) makes room for its hop again.
func TestPendingSharePerPreviousHop(t *testing.T) {
	p := newPendingTable(8)
	now := time.Now()
	flood, other := common.Address{1}, common.Address{2}
	id := func(i int) packetID { var x packetID; x[0], x[1] = byte(i), byte(i>>8); return x }
	var entries []*pendingEntry
	for i := range 4 {
		e := newRelayedEntry("next", now.Add(time.Duration(i+1)*time.Second), por.Scalar{}, flood)
		if err := p.add(id(i), e); err != nil {
			t.Fatalf("flood entry %d: %v", i, err)
		}
		entries = append(entries, e)
	}
	if err := p.add(id(4), newRelayedEntry("next", now.Add(time.Minute), por.Scalar{}, flood)); !errors.Is(err, ErrOverloaded) {
		t.Fatalf("a fifth entry of one previous hop in a table of 8: %v", err)
	}
	if err := p.add(id(5), newRelayedEntry("next", now.Add(time.Minute), por.Scalar{}, other)); err != nil {
		t.Fatalf("another previous hop's entry: %v", err)
	}
	if err := p.add(id(6), newSentEntry("next", now.Add(time.Minute), por.AckChallenge{6}, por.Scalar{})); err != nil {
		t.Fatalf("this node's own entry: %v", err)
	}
	if !p.remove(id(0), entries[0]) {
		t.Fatal("remove")
	}
	if err := p.add(id(7), newRelayedEntry("next", now.Add(time.Minute), por.Scalar{}, flood)); err != nil {
		t.Fatalf("after one left: %v", err)
	}
	if got := len(p.expire(now.Add(3500 * time.Millisecond))); got != 2 { // ids 1 and 2
		t.Fatalf("expired %d, want 2", got)
	}
	if n := p.byPrev[flood]; n != 2 {
		t.Fatalf("the flood's count after expiry: %d, want 2", n)
	}
}
