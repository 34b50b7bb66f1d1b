package observe

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// MinMessageSize is the smallest flight a learned MessageSize may be: below it a flight is an
// acknowledgement or transport chatter.
const MinMessageSize = 1000

// maxFrontier bounds the packets the tracing follows per step (the heaviest ones).
const maxFrontier = 16384

// flight is a run of transmissions on one link direction, taken as one burst.
type flight struct {
	t        time.Time
	from, to int
	bytes    int
}

// event is a flight that carries message packets.
type event struct {
	t        int64 // unix nanoseconds
	from, to int
	n        float64 // message packets it carries
	class    int     // size class; -1: unknown (several packets)
}

// Analyze runs the attacks on what the observer saw (tx, in any order) and scores them against
// the ground truth msgs: the per-message trace (timing and size) and the patient observer's
// counting attacks (LongTerm).
func Analyze(tx []Transmission, msgs []Message, opts Options) (Report, error) {
	if len(tx) == 0 || len(msgs) == 0 {
		return Report{}, ErrNoInput
	}
	if opts.Groups != nil && len(opts.Groups) != len(msgs) {
		return Report{}, fmt.Errorf("observe: %d groups for %d messages", len(opts.Groups), len(msgs))
	}
	if opts.ThreeRelayerShare < 0 || opts.ThreeRelayerShare > 1 {
		return Report{}, fmt.Errorf("observe: ThreeRelayerShare %v outside [0, 1]", opts.ThreeRelayerShare)
	}
	senders := candidateSenders(msgs, opts.Senders)
	if len(senders) < 2 {
		return Report{}, fmt.Errorf("%w: fewer than two candidate senders", ErrNoInput)
	}
	flights := joinFlights(tx, opts.FlightGap)
	size := opts.MessageSize
	if size == 0 {
		size = learnMessageSize(flights)
	}
	if size == 0 {
		return Report{}, fmt.Errorf("%w: no flight of a message's size (%d bytes or more)", ErrNoInput, MinMessageSize)
	}
	classes := learnClasses(flights, size)
	events := messageEvents(flights, size, classes)
	if len(events) == 0 {
		return Report{}, fmt.Errorf("%w: no message packets on the wire", ErrNoInput)
	}
	lt := longTerm(events, msgs, opts.LongTerm)
	ix := newIndex(events)
	k := newKernel(opts.Delay)
	p3 := opts.ThreeRelayerShare

	rep := Report{Senders: len(senders), MessageSize: size, MessageClasses: classes, SizeClasses: sizeClasses(flights),
		LongTerm: lt}
	targets := ix.targets(msgs)
	scored := sample(targets, opts.MaxScored)
	isSender := make(map[int]bool, len(senders))
	for _, s := range senders {
		isSender[s] = true
	}
	var maxH, guess float64
	groups := newGrouping(opts.Groups)
	for _, i := range scored {
		m := msgs[i]
		cands := len(senders)
		if isSender[m.Recipient] {
			cands--
		}
		maxH += math.Log2(float64(cands))
		guess += 1 / float64(cands)
		var scores map[int]float64
		for a, useClass := range []bool{false, true} {
			if a == 0 || len(classes) > 1 {
				// With one class or none every event matches every class (messageEvents): the
				// size attack's trace is the timing attack's, and is not made twice.
				scores = ix.trace(targets[i], k, p3, useClass)
			}
			h, top := score(scores, isSender, m.Recipient, m.Sender, cands)
			res := &rep.Timing
			if a == 1 {
				res = &rep.Size
			} else {
				groups.add(i, m, distribution(scores, senders, m.Recipient), senders)
			}
			res.PerMessage = append(res.PerMessage, MessageScore{Index: i, Entropy: h, Top1: top})
		}
	}
	n := float64(len(scored))
	rep.Messages = len(scored)
	if n == 0 {
		return rep, fmt.Errorf("%w: no delivered message has its packet on the wire", ErrNoInput)
	}
	rep.MaxEntropy, rep.RandomGuess = maxH/n, guess/n
	for _, res := range []*AttackResult{&rep.Timing, &rep.Size} {
		for _, s := range res.PerMessage {
			res.MeanEntropy += s.Entropy
			res.Top1 += s.Top1
		}
		res.MeanEntropy /= n
		res.Top1 /= n
		res.EntropyShare = res.MeanEntropy / rep.MaxEntropy
		res.Top1OverRandom = res.Top1 / rep.RandomGuess
	}
	groups.score(&rep, senders)
	return rep, nil
}

// candidateSenders is opts.Senders, or every sender of the ground truth, sorted and distinct.
func candidateSenders(msgs []Message, given []int) []int {
	var s []int
	if len(given) > 0 {
		s = slices.Clone(given)
	} else {
		for _, m := range msgs {
			s = append(s, m.Sender)
		}
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// joinFlights sorts tx by time and joins, per link direction, transmissions less than gap
// apart.
func joinFlights(tx []Transmission, gap time.Duration) []flight {
	sorted := slices.Clone(tx)
	slices.SortStableFunc(sorted, func(a, b Transmission) int { return a.Time.Compare(b.Time) })
	type link struct{ from, to int }
	open := map[link]int{} // the link's current flight, an index into out
	last := map[link]time.Time{}
	var out []flight
	for _, t := range sorted {
		if t.Size <= 0 {
			continue
		}
		l := link{t.From, t.To}
		if i, ok := open[l]; ok && gap > 0 && t.Time.Sub(last[l]) < gap {
			out[i].bytes += t.Size
			last[l] = t.Time
			continue
		}
		open[l] = len(out)
		last[l] = t.Time
		out = append(out, flight{t: t.Time, from: t.From, to: t.To, bytes: t.Size})
	}
	return out
}

// learnMessageSize is the most common flight size of at least MinMessageSize bytes (the
// smallest such size on a tie), 0 if there is none.
func learnMessageSize(fs []flight) int {
	counts := map[int]int{}
	for _, f := range fs {
		if f.bytes >= MinMessageSize {
			counts[f.bytes]++
		}
	}
	best, bestN := 0, 0
	for s, n := range counts {
		if n > bestN || (n == bestN && s < best) {
			best, bestN = s, n
		}
	}
	return best
}

// classGap is how far apart two message sizes must be to count as two size classes (a frame
// that also opens a stream is a few dozen bytes longer, and says nothing about the message).
const classGap = 64

// classShare is the least share of the single-packet message flights a size class must have.
const classShare = 0.05

// learnClasses returns the message sizes that are size classes: sizes of at least a
// classShare of the single-packet message flights, sizes closer than classGap to a more
// common one merged into it. One class means every message packet looks alike.
func learnClasses(fs []flight, size int) []int {
	counts := map[int]int{}
	total := 0
	first := firstOnLink(fs, size)
	for i, f := range fs {
		if (f.bytes+size/3)/size == 1 && !first[i] {
			counts[f.bytes]++
			total++
		}
	}
	type sc struct{ size, n int }
	var all []sc
	for s, n := range counts {
		all = append(all, sc{s, n})
	}
	slices.SortFunc(all, func(a, b sc) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(a.size, b.size)
	})
	var classes []int
	for _, c := range all {
		if float64(c.n) < classShare*float64(total) {
			break
		}
		near := false
		for _, k := range classes {
			if abs(c.size-k) < classGap {
				near = true
				break
			}
		}
		if !near {
			classes = append(classes, c.size)
		}
	}
	slices.Sort(classes)
	return classes
}

// firstOnLink marks the first message flight of each link direction: it also carries the
// transport's stream negotiation, a size of its own that says nothing about the message.
func firstOnLink(fs []flight, size int) map[int]bool {
	type link struct{ from, to int }
	seen := map[link]bool{}
	out := map[int]bool{}
	for i, f := range fs {
		if (f.bytes+size/3)/size == 0 {
			continue
		}
		l := link{f.from, f.to}
		if !seen[l] {
			seen[l] = true
			out[i] = true
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// messageEvents turns the flights that carry message packets into events (a flight of about
// n × size bytes carries n packets; acknowledgements and stream headers that share it do not
// add one). A single-packet flight within classGap/2 of a size class has that class; any
// other flight matches every class.
func messageEvents(fs []flight, size int, classes []int) []event {
	var out []event
	first := firstOnLink(fs, size)
	for i, f := range fs {
		n := (f.bytes + size/3) / size
		if n == 0 {
			continue
		}
		class := -1
		if n == 1 && len(classes) > 1 && !first[i] {
			for i, k := range classes {
				if abs(f.bytes-k) <= classGap/2 {
					class = i
				}
			}
		}
		out = append(out, event{t: f.t.UnixNano(), from: f.from, to: f.to, n: float64(n), class: class})
	}
	return out
}

// sizeClasses counts flights by size, the 16 most common first.
func sizeClasses(fs []flight) []SizeCount {
	counts := map[int]int{}
	for _, f := range fs {
		counts[f.bytes]++
	}
	out := make([]SizeCount, 0, len(counts))
	for s, n := range counts {
		out = append(out, SizeCount{Size: s, Count: n})
	}
	slices.SortFunc(out, func(a, b SizeCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Size, b.Size)
	})
	return out[:min(len(out), 16)]
}

// sample returns the indexes of the scored messages: every target, or max of them spread
// evenly.
func sample(targets map[int]int, max int) []int {
	idx := make([]int, 0, len(targets))
	for i := range targets {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	if max <= 0 || len(idx) <= max {
		return idx
	}
	out := make([]int, 0, max)
	for j := range max {
		out = append(out, idx[j*len(idx)/max])
	}
	return out
}

// score turns the tracing's mass per node into the observer's distribution over the
// candidate senders (never the recipient) and returns its entropy and the top-1 outcome.
// No mass on any candidate leaves the uniform distribution.
func score(mass map[int]float64, isSender map[int]bool, recipient, sender, cands int) (float64, float64) {
	var total, best float64
	keys := sortedKeys(mass)
	for _, s := range keys {
		w := mass[s]
		if isSender[s] && s != recipient && w > 0 {
			total += w
			best = max(best, w)
		}
	}
	if total == 0 {
		return math.Log2(float64(cands)), 1 / float64(cands)
	}
	var h float64
	ties := 0
	for _, s := range keys {
		w := mass[s]
		if !isSender[s] || s == recipient || w <= 0 {
			continue
		}
		p := w / total
		h -= p * math.Log2(p)
		if w >= best*(1-1e-9) {
			ties++
		}
	}
	if w := mass[sender]; isSender[sender] && w >= best*(1-1e-9) && w > 0 {
		return h, 1 / float64(ties)
	}
	return h, 0
}

// distribution is the observer's distribution over the candidate senders (never the
// recipient) from the tracing's mass: uniform where no mass reached a candidate. It is indexed
// like senders (0 for the recipient).
func distribution(mass map[int]float64, senders []int, recipient int) []float64 {
	p := make([]float64, len(senders))
	var total float64
	for j, s := range senders {
		if s != recipient && mass[s] > 0 {
			p[j] = mass[s]
			total += p[j]
		}
	}
	if total == 0 {
		n := 0
		for _, s := range senders {
			if s != recipient {
				n++
			}
		}
		for j, s := range senders {
			if s != recipient {
				p[j] = 1 / float64(n)
			}
		}
		return p
	}
	for j := range p {
		p[j] /= total
	}
	return p
}

// groupSmoothing is the share of the uniform distribution mixed into each packet's before the
// grouped attack multiplies them.
const groupSmoothing = 0.01

// grouping collects the timing distributions of the scored packets of each group.
type grouping struct {
	of      []int // Options.Groups
	order   []int // groups in the order of their first scored packet
	members map[int]*group
}

type group struct {
	first, sender, recipient int
	logp                     []float64 // sum over the packets of log(smoothed p)
}

func newGrouping(of []int) *grouping {
	return &grouping{of: of, members: map[int]*group{}}
}

// add takes scored message i's distribution p over the candidates senders.
func (g *grouping) add(i int, m Message, p []float64, senders []int) {
	if g.of == nil || g.of[i] < 0 {
		return
	}
	gr := g.members[g.of[i]]
	if gr == nil {
		gr = &group{first: i, sender: m.Sender, recipient: m.Recipient, logp: make([]float64, len(p))}
		g.members[g.of[i]] = gr
		g.order = append(g.order, g.of[i])
	}
	n := 0
	for _, s := range senders {
		if s != m.Recipient {
			n++
		}
	}
	for j, x := range p {
		if senders[j] == m.Recipient {
			gr.logp[j] = math.Inf(-1)
			continue
		}
		gr.logp[j] += math.Log((1-groupSmoothing)*x + groupSmoothing/float64(n))
	}
}

// score fills rep.Grouped from the groups collected over the candidates senders (the
// recipient excluded by its -Inf).
func (g *grouping) score(rep *Report, senders []int) {
	if len(g.order) == 0 {
		return
	}
	res := &rep.Grouped
	for _, id := range g.order {
		gr := g.members[id]
		top := math.Inf(-1)
		for _, l := range gr.logp {
			top = max(top, l)
		}
		var total float64
		p := make([]float64, len(gr.logp))
		cands := 0
		for j, l := range gr.logp {
			if !math.IsInf(l, -1) {
				p[j] = math.Exp(l - top)
				total += p[j]
				cands++
			}
		}
		var h float64
		ties, trueBest := 0, false
		for j := range p {
			p[j] /= total
			if p[j] > 0 {
				h -= p[j] * math.Log2(p[j])
			}
			if !math.IsInf(gr.logp[j], -1) && gr.logp[j] >= top-1e-9 {
				ties++
				if senders[j] == gr.sender {
					trueBest = true
				}
			}
		}
		t := 0.0
		if trueBest {
			t = 1 / float64(ties)
		}
		res.PerMessage = append(res.PerMessage, MessageScore{Index: gr.first, Entropy: h, Top1: t})
		res.MeanEntropy += h
		res.Top1 += t
		rep.GroupMaxEntropy += math.Log2(float64(cands))
		rep.GroupRandomGuess += 1 / float64(cands)
	}
	n := float64(len(g.order))
	rep.Groups = len(g.order)
	res.MeanEntropy /= n
	res.Top1 /= n
	rep.GroupMaxEntropy /= n
	rep.GroupRandomGuess /= n
	res.EntropyShare = res.MeanEntropy / rep.GroupMaxEntropy
	res.Top1OverRandom = res.Top1 / rep.GroupRandomGuess
}

// index holds the message events by receiving host, in time order.
type index struct {
	events []event
	into   map[int][]int // host → indexes into events, by time
}

func newIndex(events []event) *index {
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.t, b.t) })
	ix := &index{events: events, into: map[int][]int{}}
	for i, e := range events {
		ix.into[e.to] = append(ix.into[e.to], i)
	}
	return ix
}

// targets picks, for every delivered message, the packet that brought it: the latest message
// event into its recipient at or before the delivery and not before the send, each event used
// once (messages taken in delivery order). Messages without one are left out.
func (ix *index) targets(msgs []Message) map[int]int {
	order := make([]int, 0, len(msgs))
	for i, m := range msgs {
		if !m.Delivered.IsZero() {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return msgs[a].Delivered.Compare(msgs[b].Delivered) })
	used := map[int]float64{}
	out := map[int]int{}
	for _, i := range order {
		m := msgs[i]
		in := ix.into[m.Recipient]
		hi := sort.Search(len(in), func(j int) bool { return ix.events[in[j]].t > m.Delivered.UnixNano() })
		for j := hi - 1; j >= 0; j-- {
			e := in[j]
			if ix.events[e].t < m.Sent.UnixNano() {
				break
			}
			if used[e] < ix.events[e].n {
				used[e]++
				out[i] = e
				break
			}
		}
	}
	return out
}

// trace follows the packet of event target back through the hosts: at each host, every packet
// that entered it earlier is a candidate predecessor, weighted by the hop-delay density k of
// the time between them (and, with useClass, only of the same size class). The mass reaching
// the first link of a two-relayer path (depth 3) goes to its source as the sender, with
// probability 1-p3; the rest goes one link further (three relayers).
func (ix *index) trace(target int, k kernel, p3 float64, useClass bool) map[int]float64 {
	mass := map[int]float64{}
	frontier := map[int]float64{target: 1}
	for depth := 1; depth <= 4 && len(frontier) > 0; depth++ {
		if depth == 3 {
			for _, e := range sortedKeys(frontier) {
				w := frontier[e]
				mass[ix.events[e].from] += w * (1 - p3)
				frontier[e] = w * p3
			}
			if p3 == 0 {
				break
			}
		}
		if depth == 4 {
			for _, e := range sortedKeys(frontier) {
				mass[ix.events[e].from] += frontier[e]
			}
			break
		}
		next := map[int]float64{}
		frontier = prune(frontier)
		for _, e := range sortedKeys(frontier) {
			ix.predecessors(e, frontier[e], k, useClass, next)
		}
		frontier = next
	}
	return mass
}

// predecessors spreads mass w of event e over the packets into e's source host that may have
// become it.
func (ix *index) predecessors(e int, w float64, k kernel, useClass bool, next map[int]float64) {
	ev := ix.events[e]
	in := ix.into[ev.from]
	lo := ev.t - int64(k.window)
	start := sort.Search(len(in), func(j int) bool { return ix.events[in[j]].t >= lo })
	type cand struct {
		i int
		f float64
	}
	var cs []cand
	var total float64
	for j := start; j < len(in); j++ {
		c := in[j]
		ce := ix.events[c]
		if ce.t > ev.t {
			break
		}
		if c == e || ce.from == ev.to && ce.to == ev.from && ce.t == ev.t {
			continue
		}
		if useClass && ev.class >= 0 && ce.class >= 0 && ce.class != ev.class {
			continue
		}
		f := k.density(time.Duration(ev.t-ce.t)) * ce.n
		if f > 0 {
			cs = append(cs, cand{c, f})
			total += f
		}
	}
	for _, c := range cs {
		next[c.i] += w * c.f / total
	}
}

// sortedKeys returns m's keys in order, so that sums over m do not depend on map order.
func sortedKeys(m map[int]float64) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// prune keeps the maxFrontier heaviest entries.
func prune(f map[int]float64) map[int]float64 {
	if len(f) <= maxFrontier {
		return f
	}
	type kv struct {
		e int
		w float64
	}
	all := make([]kv, 0, len(f))
	for e, w := range f {
		all = append(all, kv{e, w})
	}
	slices.SortFunc(all, func(a, b kv) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return cmp.Compare(a.e, b.e)
	})
	out := make(map[int]float64, maxFrontier)
	for _, x := range all[:maxFrontier] {
		out[x.e] = x.w
	}
	return out
}
