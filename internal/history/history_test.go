package history

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/token"
	"github.com/relayd/relayd/internal/wait"
)

// memStore is a Store in memory that counts its writes.
type memStore struct {
	mu     sync.Mutex
	m      map[string][]byte
	writes int
	fail   error
}

func (s *memStore) PutHistory(r map[string][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	maps.Copy(s.m, r)
	s.writes++
	return nil
}

func (s *memStore) LoadHistory() (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.m), nil
}

// clock is a clock tests move.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// node is a fake node whose values tests set.
type node struct {
	mu             sync.Mutex
	native, tok    float64 // whole units
	won, redeemed  uint64
	redeemedTokens uint64
	sent, received prometheus.Counter
	spent          prometheus.Counter
	reg            *prometheus.Registry
	peers          []peers.Info
	traffic        map[peer.ID]Traffic
	balancesFail   bool
}

func newNode() *node {
	n := &node{reg: prometheus.NewRegistry(), traffic: map[peer.ID]Traffic{}}
	n.sent = prometheus.NewCounter(prometheus.CounterOpts{Name: "relayd_courier_messages_accepted_total"})
	n.received = prometheus.NewCounter(prometheus.CounterOpts{Name: "relayd_courier_messages_received_total"})
	n.spent = prometheus.NewCounter(prometheus.CounterOpts{Name: "relayd_relay_tokens_spent_total"})
	n.reg.MustRegister(n.sent, n.received, n.spent)
	return n
}

func tokens(f float64) *big.Int {
	v, _ := new(big.Float).Mul(big.NewFloat(f), new(big.Float).SetInt(token.One.Big())).Int(nil)
	return v
}

func (n *node) sources() Sources {
	return Sources{
		Balances: func(context.Context) (*big.Int, *big.Int, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			if n.balancesFail {
				return nil, nil, errors.New("provider down")
			}
			return tokens(n.native), tokens(n.tok), nil
		},
		Tickets: func() (Tickets, error) {
			n.mu.Lock()
			defer n.mu.Unlock()
			t := Tickets{Won: n.won, Redeemed: n.redeemed}
			t.RedeemedValue.Mul(uint256.NewInt(n.redeemedTokens), uint256.MustFromBig(token.One.Big()))
			return t, nil
		},
		Metrics: n.reg,
		Peers:   func() []peers.Info { n.mu.Lock(); defer n.mu.Unlock(); return append([]peers.Info(nil), n.peers...) },
		Traffic: func() map[peer.ID]Traffic { n.mu.Lock(); defer n.mu.Unlock(); return maps.Clone(n.traffic) },
	}
}

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func newHistory(t *testing.T, st Store, n *node, c *clock) *History {
	t.Helper()
	h, err := New(Config{Store: st, Sources: n.sources(), Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func view(t *testing.T, h *History, res Resolution) View {
	t.Helper()
	v, err := h.View(res)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDownsampling: counters become what they grew by in each point, summed into coarser points;
// balances are the last value of a point; the day and week points hold every fine sample.
func TestDownsampling(t *testing.T) {
	n, c := newNode(), &clock{t: t0}
	h := newHistory(t, &memStore{}, n, c)
	ctx := t.Context()
	// 10 minutes at 15 s: 40 samples; every sample after the first sees 2 messages sent, 1
	// received, 0.5 tokens spent, 1 ticket won, and the balance falls by 1.
	for i := range 40 {
		n.mu.Lock()
		n.native, n.tok = 100-float64(i), 50
		n.won += 1
		n.mu.Unlock()
		if i > 0 {
			n.sent.Add(2)
			n.received.Add(1)
			n.spent.Add(0.5)
		}
		if err := h.Sample(ctx); err != nil {
			t.Fatal(err)
		}
		c.Add(15 * time.Second)
	}
	c.Add(-15 * time.Second) // now: the last sample's time
	hour := view(t, h, Hour)
	if len(hour.Times) != 40 || hour.Step != 15*time.Second || hour.Span != time.Hour {
		t.Fatalf("hour: %d points, step %v, span %v", len(hour.Times), hour.Step, hour.Span)
	}
	sent := hour.Series[MessagesSent]
	if sent[0] != 0 || sent[1] != 2 || sent[39] != 2 || hour.Series[NativeBalance][39] != 61 || hour.Series[Spent][5] != 0.5 {
		t.Fatalf("hour: sent %v, native %v", sent, hour.Series[NativeBalance])
	}
	day := view(t, h, Day)
	if len(day.Times) != 2 || !day.Times[0].Equal(t0) || day.Samples[0] != 20 || day.Samples[1] != 20 {
		t.Fatalf("day: %v %v", day.Times, day.Samples)
	}
	// The first 5 minutes: 19 increments of 2 (the first sample is the baseline), the next 20.
	for _, tc := range []struct {
		s    Series
		want [2]float64
	}{{MessagesSent, [2]float64{38, 40}}, {MessagesReceived, [2]float64{19, 20}}, {Spent, [2]float64{9.5, 10}},
		{TicketsWon, [2]float64{19, 20}}, {NativeBalance, [2]float64{81, 61}}, {TokenBalance, [2]float64{50, 50}}} {
		if got := day.Series[tc.s]; got[0] != tc.want[0] || got[1] != tc.want[1] {
			t.Errorf("day %s = %v, want %v", tc.s, got, tc.want)
		}
	}
	week := view(t, h, Week)
	if len(week.Times) != 1 || week.Samples[0] != 40 || week.Series[MessagesSent][0] != 78 || week.Series[NativeBalance][0] != 61 {
		t.Fatalf("week: %v %v sent %v native %v", week.Times, week.Samples, week.Series[MessagesSent], week.Series[NativeBalance])
	}
}

// TestCounterRestarts: a counter that goes down restarted (the node's Prometheus counters start
// at zero); what it reads then is what it grew by.
func TestCounterRestarts(t *testing.T) {
	for _, tc := range []struct{ prev, cur, want float64 }{
		{math.NaN(), 5, 0}, {5, 8, 3}, {8, 2, 2}, {2, math.NaN(), math.NaN()},
	} {
		if got := delta(tc.prev, tc.cur); got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("delta(%v, %v) = %v, want %v", tc.prev, tc.cur, got, tc.want)
		}
	}
}

// TestMissingSources: a node without a chain (no balances, no tickets) and a failed balance read
// give points without those values (NaN), not zeros.
func TestMissingSources(t *testing.T) {
	n, c := newNode(), &clock{t: t0}
	src := n.sources()
	src.Tickets = nil
	h, err := New(Config{Store: &memStore{}, Sources: src, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	n.balancesFail = true
	if err := h.Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	v := view(t, h, Hour)
	for _, s := range []Series{NativeBalance, TokenBalance, TicketsWon, TicketsRedeemed, Earned} {
		if !math.IsNaN(v.Series[s][0]) {
			t.Errorf("%s = %v, want no value", s, v.Series[s][0])
		}
	}
	if v.Series[MessagesSent][0] != 0 {
		t.Errorf("messagesSent = %v, want 0", v.Series[MessagesSent][0])
	}
}

// TestBounds: however long the node runs, each ring keeps its points (the store its records)
// and a view shows only its window.
func TestBounds(t *testing.T) {
	n, c := newNode(), &clock{t: t0}
	st := &memStore{}
	h := newHistory(t, st, n, c)
	// Eight days at one sample every 4 minutes.
	for range 8 * 24 * 15 {
		n.sent.Inc()
		if err := h.Sample(t.Context()); err != nil {
			t.Fatal(err)
		}
		c.Add(4 * time.Minute)
	}
	c.Add(-4 * time.Minute) // now: the last sample's time
	if got, max := len(st.m), 240+288+168; got > max {
		t.Fatalf("%d records stored, at most %d", got, max)
	}
	now := c.Now()
	for _, r := range rings {
		v := view(t, h, r.res)
		if len(v.Times) > r.size {
			t.Errorf("%s: %d points, at most %d", r.res, len(v.Times), r.size)
		}
		if len(v.Times) == 0 || v.Times[0].Before(now.Add(-v.Span)) {
			t.Errorf("%s: oldest point %v before the window (%v)", r.res, v.Times, now.Add(-v.Span))
		}
	}
	if v := view(t, h, Week); len(v.Times) != 168 {
		t.Errorf("week: %d points after eight days, want 168", len(v.Times))
	}
	if _, err := h.View("month"); !errors.Is(err, ErrUnknownResolution) {
		t.Errorf("View(month): %v", err)
	}
}

func testPeer(i int) peer.ID { return peer.ID(fmt.Sprintf("peer-%03d", i)) }

// TestPeerCardinality: with more peers than MaxPeers, a point and a view name the MaxPeers with
// the most traffic and sum every other one into Other; no traffic is lost.
func TestPeerCardinality(t *testing.T) {
	n, c := newNode(), &clock{t: t0}
	h := newHistory(t, &memStore{}, n, c)
	const peersN = 100
	for i := range peersN {
		n.peers = append(n.peers, peers.Info{ID: testPeer(i), Quality: 0.5})
	}
	var total float64
	for round := range 3 {
		for i := range peersN {
			tr := n.traffic[testPeer(i)]
			tr.In += uint64(i * 10)
			tr.Out += uint64(i)
			n.traffic[testPeer(i)] = tr
			if round > 0 {
				total += float64(i * 11)
			}
		}
		if err := h.Sample(t.Context()); err != nil {
			t.Fatal(err)
		}
		c.Add(15 * time.Second)
	}
	for _, res := range Resolutions() {
		v := view(t, h, res)
		if len(v.Peers) != MaxPeers {
			t.Fatalf("%s: %d peers named, want %d", res, len(v.Peers), MaxPeers)
		}
		if v.Peers[0].ID != testPeer(peersN-1) || v.Peers[MaxPeers-1].ID != testPeer(peersN-MaxPeers) {
			t.Errorf("%s: named %s … %s, want the most traffic first", res, v.Peers[0].ID, v.Peers[MaxPeers-1].ID)
		}
		sum := 0.0
		for j := range v.Times {
			for _, p := range v.Peers {
				sum += p.In[j] + p.Out[j]
			}
			sum += v.Other.In[j] + v.Other.Out[j]
		}
		if sum != total {
			t.Errorf("%s: traffic %v, want %v", res, sum, total)
		}
		if q := v.Other.Quality[len(v.Times)-1]; q != 0.5 {
			t.Errorf("%s: other's quality %v, want 0.5", res, q)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range h.rings {
		for _, p := range r {
			if len(p.peers) > MaxPeers {
				t.Fatalf("ring %d: a point keeps %d peers", i, len(p.peers))
			}
		}
	}
}

// TestSurvivesReopen: the history written through the node's store reads back the same after
// the store is closed and opened again, and sampling goes on into the same points.
func TestSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	n, c := newNode(), &clock{t: t0}
	n.peers = []peers.Info{{ID: testPeer(1), Quality: 0.75}}
	h := newHistory(t, db.History(), n, c)
	for range 10 {
		n.sent.Add(3)
		if err := h.Sample(t.Context()); err != nil {
			t.Fatal(err)
		}
		c.Add(15 * time.Second)
	}
	before := map[Resolution]View{}
	for _, res := range Resolutions() {
		before[res] = view(t, h, res)
	}
	db.Close()
	if db, err = store.Open(dir); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h2 := newHistory(t, db.History(), n, c)
	for _, res := range Resolutions() {
		a, b := before[res], view(t, h2, res)
		if fmt.Sprint(a.Times, a.Samples, a.Series, a.Peers) != fmt.Sprint(b.Times, b.Samples, b.Series, b.Peers) {
			t.Fatalf("%s after reopen:\n%v\nwant\n%v", res, b, a)
		}
	}
	n.sent.Add(3)
	if err := h2.Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v := view(t, h2, Day); v.Samples[0] != 11 || v.Series[MessagesSent][0] != 27 {
		t.Fatalf("day after a sample past the restart: samples %v sent %v, want 11 and 27 (the restart's first sample is a baseline)", v.Samples, v.Series[MessagesSent])
	}
}

// TestRun: Run samples at each tick of its clock and stops with its context.
func TestRun(t *testing.T) {
	n, c := newNode(), &clock{t: t0}
	st := &memStore{}
	ticks := make(chan time.Time)
	h, err := New(Config{Store: st, Sources: n.sources(), Now: c.Now, Ticks: ticks})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	for range 3 {
		ticks <- c.Now()
		c.Add(15 * time.Second)
	}
	wait.For(t, func() bool { st.mu.Lock(); defer st.mu.Unlock(); return st.writes == 3 }, 5*time.Second, "three samples stored")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a Store succeeded")
	}
}

// TestCorruptRecordsSkipped: a record that does not decode, or sits in the wrong slot, is
// skipped at load; the rest reads.
func TestCorruptRecordsSkipped(t *testing.T) {
	n, c := newNode(), &clock{t: t0}
	st := &memStore{}
	h := newHistory(t, st, n, c)
	if err := h.Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	good := st.m[key(0, h.slot(0, t0))]
	st.m[key(0, 7)] = good                       // the wrong slot for its time
	st.m[key(1, 3)] = []byte{pointVersion, 1, 2} // short
	st.m["junk"] = []byte("x")
	h2 := newHistory(t, st, n, c)
	if v := view(t, h2, Hour); len(v.Times) != 1 {
		t.Fatalf("%d points, want 1", len(v.Times))
	}
}

// FuzzDecodePoint: a record decodes or is ErrCorrupt, never panics, and what decodes encodes to
// the same bytes.
func FuzzDecodePoint(f *testing.F) {
	p := point{start: t0, samples: 3, values: emptyValues(), peers: []peerPoint{{id: testPeer(1), in: 10, out: 2, quality: 0.5, qn: 3}},
		other: peerPoint{in: 1, out: 1}}
	p.values[MessagesSent] = 4
	f.Add(encodePoint(p))
	f.Add(encodePoint(point{start: t0, values: emptyValues()}))
	f.Add([]byte{pointVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePoint(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if len(p.peers) > MaxPeers {
			t.Fatalf("%d peers", len(p.peers))
		}
		if _, err := decodePoint(encodePoint(p)); err != nil {
			t.Fatalf("re-encoded point: %v", err)
		}
	})
}

// TestTrafficOf: a transport's counters of the same fields convert.
func TestTrafficOf(t *testing.T) {
	type peerBytes struct{ In, Out uint64 }
	got := TrafficOf(map[peer.ID]peerBytes{"a": {In: 1, Out: 2}})
	if len(got) != 1 || got["a"] != (Traffic{In: 1, Out: 2}) {
		t.Fatalf("%v", got)
	}
}
