package history

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Series names a node-wide series (docs/COCKPIT.md).
type Series int

// The node-wide series. Balances are gauges (a bucket shows the last value read in it); the
// others are counts or amounts per bucket (what the node's counters grew by in it).
const (
	NativeBalance    Series = iota // the native balance (gas), in whole units
	TokenBalance                   // the token balance, in whole tokens
	Earned                         // the value of the tickets the contract paid this node, in tokens
	Spent                          // the value of the first tickets this node paid out (every packet of its own), in tokens
	MessagesSent                   // messages this node accepted to send
	MessagesReceived               // messages this node received
	TicketsWon                     // acknowledged tickets that won
	TicketsRedeemed                // tickets the contract paid
	numSeries
)

var seriesNames = [numSeries]string{"nativeBalance", "tokenBalance", "earned", "spent", "messagesSent", "messagesReceived",
	"ticketsWon", "ticketsRedeemed"}

// String is the series' name in the REST API.
func (s Series) String() string {
	if s < 0 || s >= numSeries {
		return fmt.Sprintf("series(%d)", int(s))
	}
	return seriesNames[s]
}

// gauge reports whether s keeps the last value of a bucket rather than a sum.
func (s Series) gauge() bool { return s == NativeBalance || s == TokenBalance }

// AllSeries lists the node-wide series in the order the REST API shows them.
func AllSeries() []Series {
	out := make([]Series, numSeries)
	for i := range out {
		out[i] = Series(i)
	}
	return out
}

// MaxPeers is the most peers a point, and a View, keeps by name: the ones with the most traffic
// (then by PeerId); every other peer is summed into Other.
const MaxPeers = 64

// point is one bucket of a ring: what the samples whose time falls in [start, start+step) read.
type point struct {
	start   time.Time
	samples uint32
	values  [numSeries]float64 // NaN: no value
	peers   []peerPoint        // at most MaxPeers, most traffic first
	other   peerPoint          // the rest, summed (id "")
}

// peerPoint is one peer's traffic and quality in a bucket.
type peerPoint struct {
	id      peer.ID
	in, out float64 // bytes received from and sent to the peer in the bucket
	quality float64 // mean heartbeat quality over qualityN samples (0 when qualityN is 0)
	qn      uint32
}

func (p *peerPoint) traffic() float64 { return p.in + p.out }

// add folds q into p: traffic sums, quality a mean weighted by sample counts.
func (p *peerPoint) add(q peerPoint) {
	p.in += q.in
	p.out += q.out
	if n := p.qn + q.qn; n > 0 {
		p.quality = (p.quality*float64(p.qn) + q.quality*float64(q.qn)) / float64(n)
		p.qn = n
	}
}

func emptyValues() (v [numSeries]float64) {
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// bound sorts peers by traffic (then PeerId) and keeps MaxPeers of them, folding the rest into
// other.
func bound(peers []peerPoint, other peerPoint) ([]peerPoint, peerPoint) {
	slices.SortFunc(peers, func(a, b peerPoint) int {
		if c := cmp.Compare(b.traffic(), a.traffic()); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	if len(peers) > MaxPeers {
		for _, p := range peers[MaxPeers:] {
			other.add(p)
		}
		peers = slices.Clip(peers[:MaxPeers])
	}
	other.id = ""
	return peers, other
}

// aggregate is the bucket starting at start made of the finer points ps (oldest first): counts
// sum, balances are the last value read, peers' traffic sums and their quality is a mean.
func aggregate(start time.Time, ps []point) point {
	out := point{start: start, values: emptyValues()}
	byID := map[peer.ID]*peerPoint{}
	for _, p := range ps {
		out.samples += p.samples
		for s := range numSeries {
			v := p.values[s]
			switch {
			case math.IsNaN(v):
			case s.gauge() || math.IsNaN(out.values[s]):
				out.values[s] = v
			default:
				out.values[s] += v
			}
		}
		for _, q := range p.peers {
			if e := byID[q.id]; e != nil {
				e.add(q)
			} else {
				c := q
				byID[q.id] = &c
			}
		}
		out.other.add(p.other)
	}
	list := make([]peerPoint, 0, len(byID))
	for _, p := range byID {
		list = append(list, *p)
	}
	out.peers, out.other = bound(list, out.other)
	return out
}

// The record of a point, version 1: version (1) ‖ start (8, unix seconds) ‖ samples (4) ‖ the
// number of series n (1) ‖ n float64s (8 each, IEEE 754 bits; NaN: no value) ‖ the number of
// peers (2) ‖ each peer: id length (1) ‖ id ‖ in ‖ out ‖ quality (8 each) ‖ quality samples (4)
// ‖ other: in ‖ out ‖ quality ‖ quality samples. A later version may add series at the end: a
// reader takes the ones it knows.
const (
	pointVersion = 1
	maxIDLen     = 128
)

func appendFloat(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
}

func appendPeer(b []byte, p peerPoint) []byte {
	b = appendFloat(b, p.in)
	b = appendFloat(b, p.out)
	b = appendFloat(b, p.quality)
	return binary.BigEndian.AppendUint32(b, p.qn)
}

func encodePoint(p point) []byte {
	b := make([]byte, 0, 16+8*int(numSeries)+len(p.peers)*80+28)
	b = append(b, pointVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(p.start.Unix()))
	b = binary.BigEndian.AppendUint32(b, p.samples)
	b = append(b, byte(numSeries))
	for _, v := range p.values {
		b = appendFloat(b, v)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(p.peers)))
	for _, q := range p.peers {
		b = append(b, byte(len(q.id)))
		b = append(b, q.id...)
		b = appendPeer(b, q)
	}
	return appendPeer(b, p.other)
}

// reader reads a record, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = fmt.Errorf("%w: short record", ErrCorrupt)
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() byte     { return r.take(1)[0] }
func (r *reader) u16() uint16  { return binary.BigEndian.Uint16(r.take(2)) }
func (r *reader) u32() uint32  { return binary.BigEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64  { return binary.BigEndian.Uint64(r.take(8)) }
func (r *reader) f64() float64 { return math.Float64frombits(r.u64()) }
func (r *reader) peer(p *peerPoint) {
	p.in, p.out, p.quality, p.qn = r.f64(), r.f64(), r.f64(), r.u32()
	if r.err == nil && (!finite(p.in) || !finite(p.out) || !finite(p.quality) || p.in < 0 || p.out < 0) {
		r.err = fmt.Errorf("%w: peer values", ErrCorrupt)
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// decodePoint reads a record of encodePoint (ErrCorrupt when it does not decode).
func decodePoint(b []byte) (point, error) {
	r := &reader{b: b}
	if v := r.u8(); r.err == nil && v != pointVersion {
		return point{}, fmt.Errorf("%w: point version %d", ErrCorrupt, v)
	}
	p := point{values: emptyValues()}
	p.start = time.Unix(int64(r.u64()), 0).UTC()
	p.samples = r.u32()
	n := int(r.u8())
	for i := range n {
		v := r.f64()
		if i < int(numSeries) {
			p.values[i] = v
		}
	}
	peers := int(r.u16())
	if r.err == nil && peers > MaxPeers {
		return point{}, fmt.Errorf("%w: %d peers", ErrCorrupt, peers)
	}
	for range peers {
		l := int(r.u8())
		if r.err == nil && (l == 0 || l > maxIDLen) {
			return point{}, fmt.Errorf("%w: peer id of %d bytes", ErrCorrupt, l)
		}
		q := peerPoint{id: peer.ID(r.take(l))}
		r.peer(&q)
		p.peers = append(p.peers, q)
	}
	r.peer(&p.other)
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d bytes after the record", ErrCorrupt, len(r.b))
	}
	if r.err != nil {
		return point{}, r.err
	}
	return p, nil
}
