package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// View is one resolution's series over its window, ending now: a value per point for each
// series, aligned with Times. NaN is a point without that value (a source the node has not, a
// read that failed); a bucket in which no sample was taken (the node was down) has no point.
type View struct {
	Resolution Resolution
	// Step is the points' width, Span the window's (Step × the ring's points).
	Step, Span time.Duration
	// Times are the points' starts, oldest first; Samples how many samples each holds.
	Times   []time.Time
	Samples []int
	// Series are the node-wide series by Series.
	Series map[Series][]float64
	// Peers are the MaxPeers peers with the most traffic over the window (then by PeerId);
	// Other sums every other peer (its ID is empty; its quality is the mean of theirs).
	Peers []PeerSeries
	Other PeerSeries
}

// PeerSeries are one peer's series: bytes received and sent per point, and its mean heartbeat
// quality in [0, 1] (NaN where no sample saw it).
type PeerSeries struct {
	ID      peer.ID
	In, Out []float64
	Quality []float64
	traffic float64
}

// View returns the series of resolution res (ErrUnknownResolution).
func (h *History) View(res Resolution) (View, error) {
	i := slices.IndexFunc(rings[:], func(r ring) bool { return r.res == res })
	if i < 0 {
		return View{}, fmt.Errorf("%w: %q", ErrUnknownResolution, res)
	}
	r := rings[i]
	now := h.cfg.Now()
	to := now.Truncate(r.step).Add(r.step)
	h.mu.Lock()
	ps := h.points(i, to.Add(-time.Duration(r.size)*r.step), to)
	h.mu.Unlock()
	v := View{Resolution: res, Step: r.step, Span: time.Duration(r.size) * r.step, Times: []time.Time{}, Samples: []int{},
		Series: map[Series][]float64{}, Peers: []PeerSeries{}}
	for s := range numSeries {
		v.Series[s] = make([]float64, len(ps))
	}
	// The peers named in the view: the most traffic over the window.
	total := map[peer.ID]*PeerSeries{}
	for _, p := range ps {
		for _, q := range p.peers {
			e := total[q.id]
			if e == nil {
				e = &PeerSeries{ID: q.id}
				total[q.id] = e
			}
			e.traffic += q.traffic()
		}
	}
	list := make([]*PeerSeries, 0, len(total))
	for _, e := range total {
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b *PeerSeries) int {
		if c := cmp.Compare(b.traffic, a.traffic); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(list) > MaxPeers {
		list = list[:MaxPeers]
	}
	named := map[peer.ID]int{}
	for k, e := range list {
		named[e.ID] = k
		v.Peers = append(v.Peers, PeerSeries{ID: e.ID, In: make([]float64, len(ps)), Out: make([]float64, len(ps)), Quality: nanSlice(len(ps))})
	}
	v.Other = PeerSeries{In: make([]float64, len(ps)), Out: make([]float64, len(ps)), Quality: nanSlice(len(ps))}
	for j, p := range ps {
		v.Times = append(v.Times, p.start)
		v.Samples = append(v.Samples, int(p.samples))
		for s := range numSeries {
			v.Series[s][j] = p.values[s]
		}
		other := p.other
		for _, q := range p.peers {
			k, ok := named[q.id]
			if !ok {
				other.add(q)
				continue
			}
			ser := &v.Peers[k]
			ser.In[j], ser.Out[j] = q.in, q.out
			if q.qn > 0 {
				ser.Quality[j] = q.quality
			}
		}
		v.Other.In[j], v.Other.Out[j] = other.in, other.out
		if other.qn > 0 {
			v.Other.Quality[j] = other.quality
		}
	}
	return v, nil
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
