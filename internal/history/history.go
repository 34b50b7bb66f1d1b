// Package history keeps the node's own history (docs/COCKPIT.md): balances, what it earned and
// spent in tokens, messages sent and received, tickets won and redeemed, and each peer's traffic
// and heartbeat quality, sampled every 15 seconds and kept at three resolutions in bounded
// rings (the last hour at 15 s, the last day at 5 min, the last week at 1 h), at most MaxPeers
// peers by name per point and the rest summed. Every sample is written through a Store (the
// node's store: store.History) in one transaction, so the history survives a restart and a kill
// -9. It reads the node's values through the funcs of Sources, which the node wires. It imports
// internal/peers and internal/token of relayd's packages and nothing else (no transport, no
// store, no chain).
package history

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"math"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/token"
)

// Resolution names a ring of the history.
type Resolution string

// The resolutions: what each ring covers, at which step.
const (
	Hour Resolution = "hour" // the last hour at 15 s (240 points)
	Day  Resolution = "day"  // the last day at 5 min (288 points)
	Week Resolution = "week" // the last week at 1 h (168 points)
)

// ring is the shape of one resolution.
type ring struct {
	res  Resolution
	step time.Duration
	size int
}

// rings are the resolutions, finest first; each step divides the next, and each ring spans at
// least the next one's step (a coarse point is made of the finer ring's points).
var rings = [...]ring{{Hour, 15 * time.Second, 240}, {Day, 5 * time.Minute, 288}, {Week, time.Hour, 168}}

// SampleEvery is how often Run samples by default: the finest ring's step.
var SampleEvery = rings[0].step

// Resolutions lists the resolutions, finest first.
func Resolutions() []Resolution { return []Resolution{Hour, Day, Week} }

// Store keeps the history's records; *store.History implements it.
type Store interface {
	// PutHistory writes the records (key → bytes) in one transaction synced to disk: all or none.
	PutHistory(records map[string][]byte) error
	// LoadHistory reads every record.
	LoadHistory() (map[string][]byte, error)
}

// Tickets are the ledger's cumulative ticket counts (ledger.Statistics).
type Tickets struct {
	Won, Redeemed uint64
	// RedeemedValue is what the contract paid for the redeemed tickets, in the token's smallest
	// unit.
	RedeemedValue uint256.Int
}

// Traffic is what went to and came from one peer since the node started, in bytes (counters:
// they only grow while the node runs).
type Traffic struct{ In, Out uint64 }

// TrafficOf converts a transport's per-peer byte counters (p2p.Host.PeerTraffic's, of a type
// with the same fields) into Sources.Traffic's.
func TrafficOf[T ~struct{ In, Out uint64 }](m map[peer.ID]T) map[peer.ID]Traffic {
	out := make(map[peer.ID]Traffic, len(m))
	for id, t := range m {
		out[id] = Traffic(t)
	}
	return out
}

// Sources are the node's values the history reads; a nil func is a series the node has not
// (a node without a chain has no balances or tickets): its points hold no value.
type Sources struct {
	// Balances reads the native and token balances in their smallest units
	// (ledger.Operations.Balances); a failed read leaves the sample without them.
	Balances func(ctx context.Context) (native, token *big.Int, err error)
	// Tickets reads the ledger's ticket counts.
	Tickets func() (Tickets, error)
	// Metrics is the node's Prometheus registry: messages sent and received, and the tokens
	// spent, are the counters named in Counters.
	Metrics prometheus.Gatherer
	// Peers lists the known peers with their heartbeat quality (p2p.Host.Peers).
	Peers func() []peers.Info
	// Traffic is the bytes each peer sent and received since the node started; nil: no per-peer
	// traffic (the peers are then kept by PeerId, at most MaxPeers).
	Traffic func() map[peer.ID]Traffic
}

// Counters are the Prometheus counters (summed over their labels) the series of Metrics read.
var Counters = map[Series][]string{
	MessagesSent:     {"relayd_courier_messages_accepted_total"},
	MessagesReceived: {"relayd_courier_messages_received_total"},
	Spent:            {"relayd_relay_tokens_spent_total"},
}

// Config configures a History. Store is required; every other field is optional.
type Config struct {
	Store   Store
	Sources Sources
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Ticks, when set, makes Run sample at each value received (tests); nil: every SampleEvery.
	Ticks <-chan time.Time
	// ReadTimeout bounds the reads of one sample (default 5 s).
	ReadTimeout time.Duration
	Logger      *slog.Logger
}

// History is the node's history. It is safe for concurrent use.
type History struct {
	cfg Config
	log *slog.Logger

	sampling sync.Mutex // one Sample at a time, so that points reach the store in order
	mu       sync.Mutex
	rings    [len(rings)][]point // by slot; a zero start is an empty slot
	// prev are the counters' last readings (NaN: none yet), prevPeers the peers' traffic.
	prev      [numSeries]float64
	prevPeers map[peer.ID]Traffic
}

// New builds a History and loads what the store keeps (records that do not decode are skipped
// and logged). It starts nothing: Run samples.
func New(cfg Config) (*History, error) {
	if cfg.Store == nil {
		return nil, errors.New("history: Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 5 * time.Second
	}
	h := &History{cfg: cfg, log: cfg.Logger, prev: emptyValues()}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	for i, r := range rings {
		h.rings[i] = make([]point, r.size)
	}
	records, err := cfg.Store.LoadHistory()
	if err != nil {
		return nil, err
	}
	bad := 0
	for k, v := range records {
		i, slot, ok := parseKey(k)
		if !ok {
			bad++
			continue
		}
		p, err := decodePoint(v)
		if err != nil || h.slot(i, p.start) != slot {
			bad++
			continue
		}
		h.rings[i][slot] = p
	}
	if bad > 0 {
		h.log.Warn("history: records skipped", slog.Int("records", bad))
	}
	return h, nil
}

// key is a point's record key: 'h', the ring (1), the slot (2).
func key(i, slot int) string {
	return string(binary.BigEndian.AppendUint16([]byte{'h', byte(i)}, uint16(slot)))
}

func parseKey(k string) (i, slot int, ok bool) {
	if len(k) != 4 || k[0] != 'h' || int(k[1]) >= len(rings) {
		return 0, 0, false
	}
	i, slot = int(k[1]), int(binary.BigEndian.Uint16([]byte(k[2:])))
	return i, slot, slot < rings[i].size
}

// slot is where the point starting at t goes in ring i.
func (h *History) slot(i int, t time.Time) int {
	r := rings[i]
	n := t.Unix() / int64(r.step/time.Second)
	return int(((n % int64(r.size)) + int64(r.size)) % int64(r.size))
}

// Run samples every SampleEvery (or at each of Config.Ticks) until ctx ends; it returns nil
// then. A sample the store refuses is logged and kept in memory.
func (h *History) Run(ctx context.Context) error {
	ticks := h.cfg.Ticks
	if ticks == nil {
		t := time.NewTicker(SampleEvery)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
			if err := h.Sample(ctx); err != nil {
				h.log.Warn("history: sample not stored", slog.Any("err", err))
			}
		}
	}
}

// reading is one sample's values: gauges as read, counters as their cumulative readings.
type reading struct {
	values  [numSeries]float64 // NaN: not read
	peers   []peers.Info
	traffic map[peer.ID]Traffic
}

// read reads the sources.
func (h *History) read(ctx context.Context) reading {
	rd := reading{values: emptyValues()}
	src := h.cfg.Sources
	if src.Balances != nil {
		ctx, cancel := context.WithTimeout(ctx, h.cfg.ReadTimeout)
		native, tok, err := src.Balances(ctx)
		cancel()
		if err == nil && native != nil && tok != nil {
			rd.values[NativeBalance], rd.values[TokenBalance] = token.Of(native).Float64(), token.Of(tok).Float64()
		}
	}
	if src.Tickets != nil {
		if t, err := src.Tickets(); err == nil {
			rd.values[TicketsWon], rd.values[TicketsRedeemed] = float64(t.Won), float64(t.Redeemed)
			rd.values[Earned] = token.FromUint256(&t.RedeemedValue).Float64()
		}
	}
	if src.Metrics != nil {
		if fams, err := src.Metrics.Gather(); err == nil {
			for s, names := range Counters {
				rd.values[s] = sumCounters(fams, names)
			}
		}
	}
	if src.Peers != nil {
		rd.peers = src.Peers()
	}
	if src.Traffic != nil {
		rd.traffic = src.Traffic()
	}
	return rd
}

// delta is what a counter grew by since its previous reading: 0 for the first reading, the
// reading itself when it went down (the counter restarted).
func delta(prev, cur float64) float64 {
	switch {
	case math.IsNaN(cur):
		return math.NaN()
	case math.IsNaN(prev):
		return 0
	case cur < prev:
		return cur
	}
	return cur - prev
}

// Sample reads the sources once, adds the sample to the current point of each ring and writes
// the three points in one transaction.
func (h *History) Sample(ctx context.Context) error {
	h.sampling.Lock()
	defer h.sampling.Unlock()
	rd := h.read(ctx)
	now := h.cfg.Now()
	records := h.add(rd, now)
	return h.cfg.Store.PutHistory(records) // outside mu: a View does not wait for the disk
}

// add adds a sample read at now to the rings and returns the records of the points it changed.
func (h *History) add(rd reading, now time.Time) map[string][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	fine := point{start: now.Truncate(rings[0].step).UTC(), samples: 1, values: emptyValues()}
	for s := range numSeries {
		if s.gauge() {
			fine.values[s] = rd.values[s]
		} else {
			fine.values[s] = delta(h.prev[s], rd.values[s])
			h.prev[s] = rd.values[s]
		}
	}
	var list []peerPoint
	seen := map[peer.ID]bool{}
	for _, info := range rd.peers {
		if len(info.ID) == 0 || len(info.ID) > maxIDLen { // no PeerId is; the record could not hold it
			continue
		}
		q := peerPoint{id: info.ID, quality: info.Quality, qn: 1}
		if t, ok := rd.traffic[info.ID]; ok {
			q.in, q.out = h.peerDelta(info.ID, t)
		}
		seen[info.ID] = true
		list = append(list, q)
	}
	for id, t := range rd.traffic { // traffic of a peer the transport no longer lists
		if !seen[id] && len(id) > 0 && len(id) <= maxIDLen {
			q := peerPoint{id: id}
			q.in, q.out = h.peerDelta(id, t)
			list = append(list, q)
		}
	}
	for id := range h.prevPeers {
		if _, ok := rd.traffic[id]; !ok {
			delete(h.prevPeers, id)
		}
	}
	fine.peers, fine.other = bound(list, peerPoint{})
	// The sample joins the fine point of its bucket, if one was already taken.
	if cur := h.rings[0][h.slot(0, fine.start)]; cur.start.Equal(fine.start) {
		fine = aggregate(fine.start, []point{cur, fine})
	}
	records := map[string][]byte{}
	h.put(0, fine, records)
	for i := 1; i < len(rings); i++ {
		start := now.Truncate(rings[i].step).UTC()
		h.put(i, aggregate(start, h.points(i-1, start, start.Add(rings[i].step))), records)
	}
	return records
}

// peerDelta is what a peer's traffic counters grew by since the last sample.
func (h *History) peerDelta(id peer.ID, t Traffic) (in, out float64) {
	if h.prevPeers == nil {
		h.prevPeers = map[peer.ID]Traffic{}
	}
	prev, ok := h.prevPeers[id]
	h.prevPeers[id] = t
	if !ok {
		return 0, 0
	}
	return delta(float64(prev.In), float64(t.In)), delta(float64(prev.Out), float64(t.Out))
}

func (h *History) put(i int, p point, records map[string][]byte) {
	slot := h.slot(i, p.start)
	h.rings[i][slot] = p
	records[key(i, slot)] = encodePoint(p)
}

// points are ring i's points starting in [from, to), oldest first.
func (h *History) points(i int, from, to time.Time) []point {
	var out []point
	for _, p := range h.rings[i] {
		if !p.start.IsZero() && !p.start.Before(from) && p.start.Before(to) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b point) int { return a.start.Compare(b.start) })
	return out
}

// sumCounters sums the counters (and untyped values) of the named families over their labels.
func sumCounters(fams []*dto.MetricFamily, names []string) float64 {
	sum, found := 0.0, false
	for _, f := range fams {
		if !slices.Contains(names, f.GetName()) {
			continue
		}
		for _, m := range f.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
				found = true
			case m.GetUntyped() != nil:
				sum += m.GetUntyped().GetValue()
				found = true
			}
		}
	}
	if !found {
		return math.NaN()
	}
	return sum
}
