package observe

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Defaults of LongTermOptions.
const (
	// DefaultSDAWindow is the statistical disclosure attack's counting window.
	DefaultSDAWindow = time.Second
	// DefaultSDALag is how long after a window the recipient side still counts a message sent
	// in it (a message's delivery takes about 0.3 s at the defaults, 1 s at its 99th percentile).
	DefaultSDALag = time.Second
	// DefaultActivityWindow is the activity-detection attack's window.
	DefaultActivityWindow = 5 * time.Second
)

// DefaultKs are the messages per target after which the SDA is scored.
var DefaultKs = []int{25, 50, 100, 200}

// LongTermOptions tune the attacks of a patient observer (LongTerm); zero values take the
// defaults.
type LongTermOptions struct {
	// Window is the SDA's counting window (DefaultSDAWindow); Lag how long after a window the
	// recipient-side counts are still taken to follow it (DefaultSDALag; 0 takes the
	// default, a negative Lag is none).
	Window, Lag time.Duration
	// ActivityWindow is the activity detection's window (DefaultActivityWindow).
	ActivityWindow time.Duration
	// Ks are the numbers of messages per target after which the SDA is scored (DefaultKs).
	Ks []int
	// Nodes are the hosts the SDA ranks (the network, public); empty: every host seen on the
	// wire or named in the ground truth.
	Nodes []int
}

func (o LongTermOptions) withDefaults() LongTermOptions {
	if o.Window <= 0 {
		o.Window = DefaultSDAWindow
	}
	switch {
	case o.Lag == 0:
		o.Lag = DefaultSDALag
	case o.Lag < 0:
		o.Lag = 0
	}
	if o.ActivityWindow <= 0 {
		o.ActivityWindow = DefaultActivityWindow
	}
	if len(o.Ks) == 0 {
		o.Ks = DefaultKs
	}
	return o
}

// LongTermReport is what a patient observer that only counts message packets learned.
type LongTermReport struct {
	// Nodes is the number of hosts ranked; Random is a random guess's chance of naming one
	// given correspondent, 1/(Nodes−1).
	Nodes  int     `json:"nodes"`
	Random float64 `json:"random"`
	// Window, Lag and ActivityWindow are the windows the attacks used (nanoseconds in JSON).
	Window         time.Duration `json:"windowNs"`
	Lag            time.Duration `json:"lagNs"`
	ActivityWindow time.Duration `json:"activityWindowNs"`
	// SenderSDA ranks each sender's correspondents, RecipientSDA each recipient's senders: one
	// result per K.
	SenderSDA    []SDAResult `json:"senderSDA"`
	RecipientSDA []SDAResult `json:"recipientSDA"`
	// SenderActivity tells whether each sender sent a message in each activity window;
	// RecipientActivity whether each recipient received one.
	SenderActivity    ActivityResult `json:"senderActivity"`
	RecipientActivity ActivityResult `json:"recipientActivity"`
}

// SDAResult is the statistical disclosure attack after K messages per target.
type SDAResult struct {
	K int `json:"k"`
	// Scored is the number of targets with at least K messages.
	Scored int `json:"scored"`
	// Random is a uniform guess's top-1 rate over those targets (a target's true
	// correspondents over the candidates, averaged).
	Random float64 `json:"random"`
	// Classic and Residual are the shares of the targets whose top-ranked candidate is a true
	// correspondent (ties split), by the classic counts and by the out − in residuals.
	Classic  float64 `json:"classic"`
	Residual float64 `json:"residual"`
}

// Best is the better of the two formulations' top-1 rates.
func (r SDAResult) Best() float64 { return max(r.Classic, r.Residual) }

// ActivityResult is the activity-detection attack over the scored (target, window) pairs.
type ActivityResult struct {
	// Windows is the number of (target, window) pairs scored (the second half of the
	// traffic's windows); Active the share of them in which the target was active.
	Windows int     `json:"windows"`
	Active  float64 `json:"active"`
	// Count decides by the target's count alone (packets out of a sender, into a recipient),
	// Residual by out − in (sender) or in − out (recipient).
	Count    Detection `json:"count"`
	Residual Detection `json:"residual"`
}

// Best is the higher of the two statistics' balanced accuracies.
func (r ActivityResult) Best() float64 { return max(r.Count.Balanced, r.Residual.Balanced) }

// Detection is how often a thresholded statistic told activity right.
type Detection struct {
	// Accuracy is the share of pairs told right; Balanced the mean of the shares of active and
	// of inactive pairs told right (a guess, or always the same answer, scores 0.5).
	Accuracy float64 `json:"accuracy"`
	Balanced float64 `json:"balanced"`
}

// LongTerm runs the attacks of a patient global passive observer on what it saw (tx) and
// scores them against the ground truth msgs, which the attacks themselves never read: only the
// scoring does (a target's true correspondents, when it sent its k-th message, when it was
// active). The observer counts message packets (flights of about a message's size, taken as
// Analyze takes them) into and out of every host, and from those counts alone it runs:
//
//   - the statistical disclosure attack (SDA), on senders: for a target sender s, each host v
//     gets the mean of v's recipient-side count over the windows, weighted by s's sender-side
//     count, minus v's mean (the classic SDA's average of the rounds in which the target sends
//     minus the background); a window's recipient-side count includes the windows of the next
//     Lag. Equivalently it ranks by the covariance of s's sending and v's receiving. "Classic"
//     takes the sender-side count as packets out and the recipient-side count as packets in;
//     "residual" takes out − in and in − out, in which relayed packets and loops cancel. Each
//     target is scored with the windows up to its k-th message (plus Lag), for each k of Ks: is
//     its true correspondent ranked first among the other Nodes−1 hosts?
//   - the same on recipients: for a target recipient r, each host u gets the covariance of u's
//     sending and r's receiving, after r's k-th message;
//   - activity detection: per ActivityWindow, was a sender sending (a recipient receiving)
//     messages? The observer thresholds the target's count, or its residual, with a threshold
//     per target calibrated (for the best balanced accuracy) on the first half of the
//     traffic's windows, and is scored on the second half.
func LongTerm(tx []Transmission, msgs []Message, opts Options) (LongTermReport, error) {
	if len(tx) == 0 || len(msgs) == 0 {
		return LongTermReport{}, ErrNoInput
	}
	flights := joinFlights(tx, opts.FlightGap)
	size := opts.MessageSize
	if size == 0 {
		size = learnMessageSize(flights)
	}
	if size == 0 {
		return LongTermReport{}, fmt.Errorf("%w: no flight of a message's size (%d bytes or more)", ErrNoInput, MinMessageSize)
	}
	events := messageEvents(flights, size, nil)
	if len(events) == 0 {
		return LongTermReport{}, fmt.Errorf("%w: no message packets on the wire", ErrNoInput)
	}
	return longTerm(events, msgs, opts.LongTerm), nil
}

// longTerm runs LongTerm's attacks on the message events.
func longTerm(events []event, msgs []Message, o LongTermOptions) LongTermReport {
	o = o.withDefaults()
	nodes := longTermNodes(events, msgs, o.Nodes)
	rep := LongTermReport{Nodes: len(nodes), Window: o.Window, Lag: o.Lag, ActivityWindow: o.ActivityWindow}
	if len(nodes) < 2 {
		return rep
	}
	rep.Random = 1 / float64(len(nodes)-1)

	t0 := events[0].t
	t1 := events[0].t
	for _, e := range events {
		t0, t1 = min(t0, e.t), max(t1, e.t)
	}
	w := int64(o.Window)
	c := newCounts(events, nodes, t0, w, int((t1-t0)/w)+1)
	lag := int((int64(o.Lag) + w - 1) / w)
	var sig [2]series
	for f, residual := range []bool{false, true} {
		sig[f] = c.signals(residual)
	}
	bySender, byRecipient := groupTruth(msgs)
	for _, k := range o.Ks {
		rep.SenderSDA = append(rep.SenderSDA, c.sda(sig, bySender, k, lag, int64(o.Lag), true))
		rep.RecipientSDA = append(rep.RecipientSDA, c.sda(sig, byRecipient, k, lag, int64(o.Lag), false))
	}
	rep.SenderActivity = activityAttack(events, nodes, msgs, int64(o.ActivityWindow), true)
	rep.RecipientActivity = activityAttack(events, nodes, msgs, int64(o.ActivityWindow), false)
	return rep
}

// longTermNodes is the given hosts, or every host of the events and the ground truth, sorted.
func longTermNodes(events []event, msgs []Message, given []int) []int {
	var nodes []int
	if len(given) > 0 {
		nodes = slices.Clone(given)
	} else {
		for _, e := range events {
			nodes = append(nodes, e.from, e.to)
		}
		for _, m := range msgs {
			nodes = append(nodes, m.Sender, m.Recipient)
		}
	}
	slices.Sort(nodes)
	return slices.Compact(nodes)
}

// target is one attacked host: the times of its messages (sent, in order) and its true
// correspondents (the recipients of a sender, the senders of a recipient).
type target struct {
	host  int
	times []int64
	truth map[int]bool
}

// groupTruth groups the messages by sender and by recipient, each in host order.
func groupTruth(msgs []Message) (bySender, byRecipient []target) {
	group := func(key, other func(Message) int) []target {
		idx := map[int]int{}
		var out []target
		for _, m := range msgs {
			h := key(m)
			i, ok := idx[h]
			if !ok {
				i = len(out)
				idx[h] = i
				out = append(out, target{host: h, truth: map[int]bool{}})
			}
			out[i].times = append(out[i].times, m.Sent.UnixNano())
			out[i].truth[other(m)] = true
		}
		for i := range out {
			slices.Sort(out[i].times)
		}
		slices.SortFunc(out, func(a, b target) int { return cmp.Compare(a.host, b.host) })
		return out
	}
	sender := func(m Message) int { return m.Sender }
	recipient := func(m Message) int { return m.Recipient }
	return group(sender, recipient), group(recipient, sender)
}

// counts are the message packets into and out of every host, per window.
type counts struct {
	t0, width int64
	nodes     []int
	row       map[int]int // host → index into nodes
	in, out   [][]float64 // [row][window]
}

func newCounts(events []event, nodes []int, t0, width int64, windows int) *counts {
	c := &counts{t0: t0, width: width, nodes: nodes, row: make(map[int]int, len(nodes))}
	c.in, c.out = make([][]float64, len(nodes)), make([][]float64, len(nodes))
	for i, h := range nodes {
		c.row[h] = i
		c.in[i], c.out[i] = make([]float64, windows), make([]float64, windows)
	}
	for _, e := range events {
		if e.t < t0 {
			continue
		}
		w := int((e.t - t0) / width)
		if w >= windows {
			continue
		}
		if i, ok := c.row[e.from]; ok {
			c.out[i][w] += e.n
		}
		if i, ok := c.row[e.to]; ok {
			c.in[i][w] += e.n
		}
	}
	return c
}

// series are every host's sender-side and recipient-side counts per window ([row][window]) in
// one formulation.
type series struct{ send, recv [][]float64 }

// signals returns the series of a formulation: packets out and in (classic), or out − in and
// in − out (residual).
func (c *counts) signals(residual bool) series {
	if !residual {
		return series{c.out, c.in}
	}
	sr := series{make([][]float64, len(c.nodes)), make([][]float64, len(c.nodes))}
	for i := range c.nodes {
		sr.send[i], sr.recv[i] = make([]float64, len(c.out[i])), make([]float64, len(c.out[i]))
		for w := range sr.send[i] {
			sr.send[i][w] = c.out[i][w] - c.in[i][w]
			sr.recv[i][w] = -sr.send[i][w]
		}
	}
	return sr
}

// sda scores the SDA after k messages per target: senders (rank each sender's recipients)
// or, with senderSide false, recipients (rank each recipient's senders), in both
// formulations (sig: classic, residual).
func (c *counts) sda(sig [2]series, targets []target, k, lag int, lagNs int64, senderSide bool) SDAResult {
	res := SDAResult{K: k}
	cands := len(c.nodes) - 1
	for _, tg := range targets {
		row, ok := c.row[tg.host]
		if !ok || len(tg.times) < k {
			continue
		}
		m := int((tg.times[k-1]+lagNs-c.t0)/c.width) + 1
		m = max(1, min(m, len(c.in[0])))
		res.Scored++
		res.Random += float64(len(tg.truth)) / float64(cands)
		for f, residual := range []bool{false, true} {
			send, recv := sig[f].send, sig[f].recv
			scores := make([]float64, len(c.nodes))
			for j := range c.nodes {
				switch {
				case j == row:
				case senderSide:
					scores[j] = covariance(send[row], recv[j], m, lag)
				default:
					scores[j] = covariance(send[j], recv[row], m, lag)
				}
			}
			top := topOne(scores, row, func(j int) bool { return tg.truth[c.nodes[j]] })
			if residual {
				res.Residual += top
			} else {
				res.Classic += top
			}
		}
	}
	if res.Scored > 0 {
		n := float64(res.Scored)
		res.Random /= n
		res.Classic /= n
		res.Residual /= n
	}
	return res
}

// covariance is the covariance over the first m windows of x with y summed over each window
// and the lag windows after it (within the m).
func covariance(x, y []float64, m, lag int) float64 {
	ys := make([]float64, m)
	for w := range m {
		for l := 0; l <= lag && w+l < m; l++ {
			ys[w] += y[w+l]
		}
	}
	var sx, sy, sxy float64
	for w := range m {
		sx += x[w]
		sy += ys[w]
		sxy += x[w] * ys[w]
	}
	n := float64(m)
	return sxy/n - (sx/n)*(sy/n)
}

// topOne is 1/t when t candidates share the highest score and a true one is among them (the
// share of true ones among the tied, as a uniform pick among them), else 0; skip is the
// target itself.
func topOne(scores []float64, skip int, isTrue func(int) bool) float64 {
	best := math.Inf(-1)
	for j, s := range scores {
		if j != skip {
			best = max(best, s)
		}
	}
	eps := 1e-9 * max(1, math.Abs(best))
	var ties, hits int
	for j, s := range scores {
		if j != skip && best-s <= eps {
			ties++
			if isTrue(j) {
				hits++
			}
		}
	}
	if ties == 0 {
		return 0
	}
	return float64(hits) / float64(ties)
}

// activityAttack tells, per window of width ns over the traffic (from the first message sent
// to the last, whole windows only), whether each sender (senderSide) or recipient was active,
// from its counts alone: calibrated on the first half of the windows, scored on the second.
func activityAttack(events []event, nodes []int, msgs []Message, width int64, senderSide bool) ActivityResult {
	var res ActivityResult
	if len(msgs) == 0 {
		return res
	}
	t0, t1 := msgs[0].Sent.UnixNano(), msgs[0].Sent.UnixNano()
	for _, m := range msgs {
		t0, t1 = min(t0, m.Sent.UnixNano()), max(t1, m.Sent.UnixNano())
	}
	windows := int((t1 - t0) / width)
	if windows < 2 {
		return res
	}
	c := newCounts(events, nodes, t0, width, windows)
	active := map[int][]bool{}
	for _, m := range msgs {
		h, at := m.Sender, m.Sent
		if !senderSide {
			if m.Delivered.IsZero() {
				continue
			}
			h, at = m.Recipient, m.Delivered
		}
		if _, ok := c.row[h]; !ok {
			continue
		}
		if active[h] == nil {
			active[h] = make([]bool, windows)
		}
		if w := (at.UnixNano() - t0) / width; at.UnixNano() >= t0 && w < int64(windows) {
			active[h][w] = true
		}
	}
	hosts := make([]int, 0, len(active))
	for h := range active {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	half := windows / 2
	for _, residual := range []bool{false, true} {
		stat := func(h int) []float64 {
			row := c.row[h]
			s := make([]float64, windows)
			for w := range s {
				in, out := c.in[row][w], c.out[row][w]
				switch {
				case senderSide && residual:
					s[w] = out - in
				case senderSide:
					s[w] = out
				case residual:
					s[w] = in - out
				default:
					s[w] = in
				}
			}
			return s
		}
		// A threshold per target from its first half, or one from every target's first
		// half where a target's lacks active or inactive windows.
		var allZ []float64
		var allA []bool
		for _, h := range hosts {
			allZ = append(allZ, stat(h)[:half]...)
			allA = append(allA, active[h][:half]...)
		}
		pooled := calibrate(allZ, allA)
		var tp, fn, tn, fp int
		for _, h := range hosts {
			z, a := stat(h), active[h]
			tau, ok := calibrateBoth(z[:half], a[:half])
			if !ok {
				tau = pooled
			}
			for w := half; w < windows; w++ {
				switch pred := z[w] >= tau; {
				case a[w] && pred:
					tp++
				case a[w]:
					fn++
				case pred:
					fp++
				default:
					tn++
				}
			}
		}
		d := detection(tp, fn, tn, fp)
		if residual {
			res.Residual = d
		} else {
			res.Count = d
		}
		res.Windows = tp + fn + tn + fp
		res.Active = float64(tp+fn) / float64(max(1, res.Windows))
	}
	return res
}

// calibrateBoth is calibrate when the windows hold both active and inactive ones.
func calibrateBoth(z []float64, a []bool) (float64, bool) {
	p := 0
	for _, x := range a {
		if x {
			p++
		}
	}
	if p == 0 || p == len(a) {
		return 0, false
	}
	return calibrate(z, a), true
}

// calibrate picks the threshold τ (active when z ≥ τ) of the best balanced accuracy on the
// windows given, the lowest such τ on a tie; +Inf (never active) when none is active, −Inf
// when all are.
func calibrate(z []float64, a []bool) float64 {
	var p, n int
	for _, x := range a {
		if x {
			p++
		} else {
			n++
		}
	}
	switch {
	case p == 0:
		return math.Inf(1)
	case n == 0:
		return math.Inf(-1)
	}
	order := make([]int, len(z))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(z[i], z[j]) })
	// τ takes each value in turn, from the lowest, then +Inf; below counts the windows under τ.
	best, bestTau := -1.0, math.Inf(1)
	var belowP, belowN int
	for i := 0; ; {
		tau := math.Inf(1)
		if i < len(order) {
			tau = z[order[i]]
		}
		if b := (float64(p-belowP)/float64(p) + float64(belowN)/float64(n)) / 2; b > best+1e-12 {
			best, bestTau = b, tau
		}
		if i == len(order) {
			break
		}
		for ; i < len(order) && z[order[i]] == tau; i++ {
			if a[order[i]] {
				belowP++
			} else {
				belowN++
			}
		}
	}
	return bestTau
}

// detection turns a confusion matrix into a Detection; with one class only, Balanced is that
// class's rate.
func detection(tp, fn, tn, fp int) Detection {
	total := tp + fn + tn + fp
	if total == 0 {
		return Detection{}
	}
	d := Detection{Accuracy: float64(tp+tn) / float64(total)}
	switch p, n := tp+fn, tn+fp; {
	case p == 0:
		d.Balanced = float64(tn) / float64(n)
	case n == 0:
		d.Balanced = float64(tp) / float64(p)
	default:
		d.Balanced = (float64(tp)/float64(p) + float64(tn)/float64(n)) / 2
	}
	return d
}
