package sim

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/relayd/relayd/internal/observe"
)

// Traffic shapes of docs/TRAFFIC.md and the patient senders of issue 26: the workload
// (Config.Fixed), the constant-rate stream (Config.SendRate), drop cover (the stream's filler,
// or Config.DropRate) and the recipients' re-emissions (Config.Reemit).

// pending is a message waiting in its sender's stream queue.
type pending struct {
	to    int
	asked time.Duration
	// msg is the framed message the packet belongs to (nil: a message of one packet); back
	// makes it the acknowledgement or answer of kind to msg.
	msg  *framedMsg
	back bool
	kind backKind
}

// Shape names a traffic shape, for the privacy table of `relaysim --privacy --shapes`.
type Shape string

// The shapes: today's and each defence of docs/TRAFFIC.md alone, then all of them.
const (
	// ShapeToday: a message leaves when it is sent; loops at CoverRate.
	ShapeToday Shape = "today"
	// ShapeDrop: today's, plus drop cover at the send rate, beside the messages.
	ShapeDrop Shape = "drop"
	// ShapeLoopStream: a constant-rate stream whose ticks without a message send loops.
	ShapeLoopStream Shape = "loopstream"
	// ShapeStream: a constant-rate stream whose ticks without a message send drop cover.
	ShapeStream Shape = "stream"
	// ShapeReemit: today's, plus the recipients' re-emissions.
	ShapeReemit Shape = "reemit"
	// ShapeFull: the stream with drop cover and re-emissions (and loops at CoverRate):
	// docs/TRAFFIC.md's design.
	ShapeFull Shape = "full"
)

// Shapes lists every shape, in the table's order.
var Shapes = []Shape{ShapeToday, ShapeDrop, ShapeLoopStream, ShapeStream, ShapeReemit, ShapeFull}

// Streams reports whether the shape runs a constant-rate stream (or, for ShapeDrop, drop
// cover at the send rate): whether the send rate matters to it.
func (sh Shape) Streams() bool { return sh != ShapeToday && sh != ShapeReemit }

// WithShape returns c with the shape's traffic at sendRate packets per second per node (the
// stream's rate, or ShapeDrop's drop cover rate); loops stay at c.CoverRate.
func (c Config) WithShape(sh Shape, sendRate float64) (Config, error) {
	c.SendRate, c.StreamLoops, c.DropRate, c.Reemit = 0, false, 0, false
	switch sh {
	case ShapeToday:
	case ShapeDrop:
		c.DropRate = sendRate
	case ShapeLoopStream:
		c.SendRate, c.StreamLoops = sendRate, true
	case ShapeStream:
		c.SendRate = sendRate
	case ShapeReemit:
		c.Reemit = true
	case ShapeFull:
		c.SendRate, c.Reemit = sendRate, true
	default:
		return c, fmt.Errorf("%w: shape %q: want one of %v", ErrBadConfig, sh, Shapes)
	}
	if sh.Streams() && !(sendRate > 0) {
		return c, fmt.Errorf("%w: shape %q needs a send rate above 0", ErrBadConfig, sh)
	}
	return c, nil
}

// correspondents draws each patient sender's correspondent among the recipients: the
// recipients shuffled, sender i taking the i-th (round robin when there are fewer).
func (s *Sim) correspondents() []int {
	perm := s.workRng.Perm(s.cfg.Recipients)
	out := make([]int, s.cfg.Senders)
	for i := range out {
		out[i] = s.cfg.Senders + perm[i%len(perm)]
	}
	return out
}

// patient schedules every message of the patient senders: each sender's bursts over the
// traffic, each message offered at its time to the sender's correspondent.
func (s *Sim) patient() {
	c := s.cfg
	exp := func(mean time.Duration) time.Duration { return time.Duration(s.workRng.ExpFloat64() * float64(mean)) }
	gap := time.Duration(float64(time.Second) / c.BurstRate)
	for i, to := range s.correspondents() {
		on := c.BurstOff == 0 || s.workRng.Float64()*float64(c.BurstOn+c.BurstOff) < float64(c.BurstOn)
		for t := c.Warmup; t < s.trafficTo; {
			if !on {
				t += exp(c.BurstOff)
				on = true
				continue
			}
			end := t + exp(c.BurstOn)
			if c.BurstOff == 0 {
				end = s.trafficTo
			}
			for t += exp(gap); t < min(end, s.trafficTo); t += exp(gap) {
				s.at(t, func() {
					s.sent++
					s.offer(i, to)
				})
			}
			t, on = end, false
		}
	}
}

// offer is a message asked of node from now: sent at once, or queued for its stream.
func (s *Sim) offer(from, to int) {
	if s.cfg.SendRate <= 0 {
		s.send(from, to)
		return
	}
	if s.cfg.framed() { // each packet of the message takes a tick of its own
		m := s.newFramed(from, to, s.now)
		for range m.left {
			s.enqueue(from, pending{to: to, asked: s.now, msg: m})
		}
		return
	}
	s.enqueue(from, pending{to: to, asked: s.now})
}

// enqueue queues a packet for node from's stream.
func (s *Sim) enqueue(from int, p pending) {
	s.queues[from] = append(s.queues[from], p)
	s.st.maxQueue = max(s.st.maxQueue, len(s.queues[from]))
}

// startShape schedules the streams and the drop cover outside them.
func (s *Sim) startShape() {
	if s.cfg.SendRate > 0 {
		s.at(s.cfg.Warmup+s.merged(s.cfg.SendRate), s.tick)
	}
	if s.cfg.DropRate > 0 {
		s.at(s.cfg.Warmup+s.merged(s.cfg.DropRate), s.dropCover)
	}
}

// merged draws the time to the next event of every node's Poisson process of rate per node:
// their merge, of N times the rate, each event's node drawn uniformly.
func (s *Sim) merged(rate float64) time.Duration {
	return time.Duration(s.shapeRng.ExpFloat64() / (rate * float64(s.cfg.Nodes)) * float64(time.Second))
}

// tick is the next tick of some node's stream (drawn uniformly: the merge of the nodes'
// streams): it sends the node's oldest queued message, or else cover. At the end of the
// traffic the messages still queued are counted unsent.
func (s *Sim) tick() {
	if s.now >= s.trafficTo {
		for _, q := range s.queues {
			s.st.unsent += len(q)
		}
		return
	}
	i := s.shapeRng.IntN(len(s.nodes))
	if n := s.nodes[i]; n.up && n.announced {
		switch q := s.queues[i]; {
		case len(q) > 0:
			m := q[0]
			s.queues[i] = q[1:]
			s.st.queueDelays = append(s.st.queueDelays, s.now-m.asked)
			switch {
			case m.back:
				s.sendBack(m.msg, m.kind)
			case m.msg != nil:
				s.sendPacket(i, m.to, m.asked, m.msg)
			default:
				s.sendAsked(i, m.to, m.asked)
			}
		case s.cfg.StreamLoops:
			s.sendCover(i)
		default:
			s.sendDrop(i)
		}
	}
	s.after(s.merged(s.cfg.SendRate), s.tick)
}

// dropCover sends the next drop packet of some node outside any stream (Config.DropRate).
func (s *Sim) dropCover() {
	if s.now >= s.trafficTo {
		return
	}
	if i := s.shapeRng.IntN(len(s.nodes)); s.nodes[i].up && s.nodes[i].announced {
		s.sendDrop(i)
	}
	s.after(s.merged(s.cfg.DropRate), s.dropCover)
}

// reemit has node i, which processed a message for p, send a drop packet after an
// exponential delay of mean Config.ReemitDelay (the mixing mean when 0).
func (s *Sim) reemit(i int, p time.Duration) {
	mean := s.cfg.ReemitDelay
	if mean == 0 {
		mean = s.mixMean
	}
	d := time.Duration(s.shapeRng.ExpFloat64() * float64(mean))
	s.after(p+d, func() {
		if s.nodes[i].up {
			s.st.reemitted++
			s.sendDrop(i)
		}
	})
}

// maxDropDraws bounds the destinations a drop packet tries before it is given up.
const maxDropDraws = 4

// sendDrop sends drop cover from i: over a path, chosen and paid as a message's, to a node
// drawn uniformly among the other announced nodes, which drops it.
func (s *Sim) sendDrop(i int) {
	if len(s.announced) < 2 {
		return
	}
	for range maxDropDraws {
		to := s.announced[s.shapeRng.IntN(len(s.announced))]
		if to == i {
			continue
		}
		hops, err := s.pickPath(i, to)
		if err != nil {
			continue
		}
		first := hops[0]
		if !s.nodes[first].up {
			s.nodes[i].down[first] = true
			return
		}
		if !s.payFirst(i, first, len(hops)-1) {
			return
		}
		s.st.dropSent++
		s.st.coverPaid += len(hops) - 1
		s.forward(hops, 0, i, s.now, flight{kind: dropPacket, truth: -1})
		return
	}
	s.st.dropNoPath++
}

// ShapeResult is what one traffic shape gave over several runs of the same workload (each
// its own seed): the patient observer's attacks pooled over the runs, and the cost.
type ShapeResult struct {
	Shape    Shape   `json:"shape"`
	SendRate float64 `json:"sendRate,omitempty"`
	Trials   int     `json:"trials"`
	// Random is a random guess's chance of naming a given correspondent, 1/(N−1).
	Random float64 `json:"random"`
	// SenderSDA and RecipientSDA pool each K's targets over the runs; SenderActivity and
	// RecipientActivity pool the scored windows.
	SenderSDA         []observe.SDAResult    `json:"senderSDA"`
	RecipientSDA      []observe.SDAResult    `json:"recipientSDA"`
	SenderActivity    observe.ActivityResult `json:"senderActivity"`
	RecipientActivity observe.ActivityResult `json:"recipientActivity"`
	// EntropyShare and Top1OverRandom are the per-message timing trace's, averaged over the
	// runs.
	EntropyShare   float64 `json:"entropyShare"`
	Top1OverRandom float64 `json:"top1OverRandom"`
	// LatencyP50 and LatencyP99 are over every delivered message of the runs, QueueMean over
	// every message's wait for its stream (nanoseconds in JSON); Delivery the share of the
	// accepted messages delivered, Unsent the messages still queued at the end of a run.
	LatencyP50 time.Duration `json:"latencyP50Ns"`
	LatencyP99 time.Duration `json:"latencyP99Ns"`
	QueueMean  time.Duration `json:"queueMeanNs"`
	Delivery   float64       `json:"delivery"`
	Unsent     int           `json:"unsent"`
	// PacketsPerNode and BytesPerNode are what a node puts on its links per second, averaged
	// over the runs.
	PacketsPerNode float64 `json:"packetsPerNode"`
	BytesPerNode   float64 `json:"bytesPerNode"`
}

// shapeRun is one run's figures kept for pooling.
type shapeRun struct {
	privacy     *observe.Report
	latencies   []time.Duration
	queueDelays []time.Duration
	report      Report
}

// RunShape runs cfg with the shape at sendRate once per seed (cfg.Seed, cfg.Seed+1, …,
// trials runs; parallel of them at once), observed, and pools the results. Each run is its own
// Sim: the result is a pure function of the arguments, whatever parallel is.
func RunShape(cfg Config, sh Shape, sendRate float64, trials, parallel int) (ShapeResult, error) {
	cfg, err := cfg.WithShape(sh, sendRate)
	if err != nil {
		return ShapeResult{}, err
	}
	if trials < 1 {
		return ShapeResult{}, fmt.Errorf("%w: trials must be at least 1", ErrBadConfig)
	}
	cfg.Observe = true
	if err := cfg.Validate(); err != nil {
		return ShapeResult{}, err
	}
	runs := make([]shapeRun, trials)
	errs := make([]error, trials)
	sem := make(chan struct{}, max(1, parallel))
	var wg sync.WaitGroup
	for i := range trials {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c := cfg
			c.Seed += uint64(i)
			s, err := New(c)
			if err != nil {
				errs[i] = err
				return
			}
			r, err := s.Run()
			if err != nil {
				errs[i] = fmt.Errorf("seed %d: %w", c.Seed, err)
				return
			}
			runs[i] = shapeRun{privacy: r.Privacy, latencies: s.st.latencies, queueDelays: s.st.queueDelays, report: r}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return ShapeResult{}, err
	}
	res := poolShape(runs)
	res.Shape = sh
	if sh.Streams() {
		res.SendRate = sendRate
	}
	return res, nil
}

// poolShape pools the runs of one shape.
func poolShape(runs []shapeRun) ShapeResult {
	res := ShapeResult{Trials: len(runs)}
	var lat, queue []time.Duration
	var accepted, delivered int
	for i, r := range runs {
		lt := r.privacy.LongTerm
		res.Random = lt.Random
		if i == 0 {
			res.SenderSDA = make([]observe.SDAResult, len(lt.SenderSDA))
			res.RecipientSDA = make([]observe.SDAResult, len(lt.RecipientSDA))
		}
		for j := range lt.SenderSDA {
			addSDA(&res.SenderSDA[j], lt.SenderSDA[j])
			addSDA(&res.RecipientSDA[j], lt.RecipientSDA[j])
		}
		addActivity(&res.SenderActivity, lt.SenderActivity)
		addActivity(&res.RecipientActivity, lt.RecipientActivity)
		n := float64(len(runs))
		res.EntropyShare += r.privacy.Timing.EntropyShare / n
		res.Top1OverRandom += r.privacy.Timing.Top1OverRandom / n
		res.PacketsPerNode += r.report.PacketsPerNode / n
		res.BytesPerNode += r.report.BytesPerNode / n
		res.Unsent += r.report.Unsent
		accepted += r.report.Accepted
		delivered += r.report.Delivered
		lat = append(lat, r.latencies...)
		queue = append(queue, r.queueDelays...)
	}
	for j := range res.SenderSDA {
		divSDA(&res.SenderSDA[j])
		divSDA(&res.RecipientSDA[j])
	}
	divActivity(&res.SenderActivity)
	divActivity(&res.RecipientActivity)
	slices.Sort(lat)
	res.LatencyP50, res.LatencyP99 = percentile(lat, 0.5), percentile(lat, 0.99)
	var sum time.Duration
	for _, d := range queue {
		sum += d
	}
	if len(queue) > 0 {
		res.QueueMean = sum / time.Duration(len(queue))
	}
	res.Delivery = share(delivered, accepted)
	return res
}

// addSDA adds r's results to a pool, weighted by its targets (divSDA ends the pooling).
func addSDA(pool *observe.SDAResult, r observe.SDAResult) {
	n := float64(r.Scored)
	pool.K = r.K
	pool.Scored += r.Scored
	pool.Random += r.Random * n
	pool.Classic += r.Classic * n
	pool.Residual += r.Residual * n
}

func divSDA(pool *observe.SDAResult) {
	if n := float64(pool.Scored); n > 0 {
		pool.Random, pool.Classic, pool.Residual = pool.Random/n, pool.Classic/n, pool.Residual/n
	}
}

// addActivity adds r's results to a pool, weighted by its windows (divActivity ends it).
func addActivity(pool *observe.ActivityResult, r observe.ActivityResult) {
	n := float64(r.Windows)
	pool.Windows += r.Windows
	pool.Active += r.Active * n
	for _, d := range []struct{ into, from *observe.Detection }{{&pool.Count, &r.Count}, {&pool.Residual, &r.Residual}} {
		d.into.Accuracy += d.from.Accuracy * n
		d.into.Balanced += d.from.Balanced * n
	}
}

func divActivity(pool *observe.ActivityResult) {
	n := float64(pool.Windows)
	if n == 0 {
		return
	}
	pool.Active /= n
	for _, d := range []*observe.Detection{&pool.Count, &pool.Residual} {
		d.Accuracy /= n
		d.Balanced /= n
	}
}
