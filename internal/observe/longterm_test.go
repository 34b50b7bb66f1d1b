package observe

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// patientNet is a synthetic network of patient senders: each of the first senders nodes
// writes to one fixed correspondent among the other nodes, in on/off bursts (exponential
// durations of means on and off; Poisson at rate messages per second while on). Every packet
// crosses three random relayers, each holding it for an exponential delay of mean mean;
// the acknowledgements are left out (the counting attacks take only message packets).
//
// With stream 0 a message leaves when it is sent and there is no cover: what the nodes of
// today do without cover, and the counts leak. With stream > 0 every node sends a Poisson
// stream of that rate in which a queued message takes the next slot and a drop packet (to a
// node drawn uniformly) fills every other, and a recipient re-emits a drop packet for every
// message it receives: docs/TRAFFIC.md's design.
type patientNet struct {
	nodes, senders int
	rate           float64
	on, off        time.Duration
	duration       time.Duration
	mean           time.Duration
	stream         float64
}

func (n patientNet) run(seed uint64) ([]Transmission, []Message) {
	r := rand.New(rand.NewPCG(seed, 26))
	exp := func(mean float64) float64 { return r.ExpFloat64() * mean }
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	end := n.duration.Seconds()
	mean := n.mean.Seconds()
	var tx []Transmission
	// packet sends one packet from src at time t over three relayers to dst; it returns when
	// it arrives.
	packet := func(src, dst int, t float64) float64 {
		hops := []int{src}
		for len(hops) < 4 {
			h := r.IntN(n.nodes)
			if h != src && h != dst && !slices.Contains(hops, h) {
				hops = append(hops, h)
			}
		}
		hops = append(hops, dst)
		for i := 0; i+1 < len(hops); i++ {
			if i > 0 {
				t += exp(mean) + 0.0005
			}
			tx = append(tx, Transmission{Time: at(t), From: hops[i], To: hops[i+1], Size: 1520})
			t += 0.0002
		}
		return t
	}
	uniform := func(not int) int {
		for {
			if d := r.IntN(n.nodes); d != not {
				return d
			}
		}
	}
	corr := r.Perm(n.nodes - n.senders)
	var truth []Message
	var deliveries []Message
	for s := range n.senders {
		rc := n.senders + corr[s%len(corr)]
		var times []float64
		on := r.Float64() < n.on.Seconds()/(n.on.Seconds()+n.off.Seconds())
		for t := 0.0; t < end; {
			if !on {
				t += exp(n.off.Seconds())
				on = true
				continue
			}
			stop := t + exp(n.on.Seconds())
			for t += exp(1 / n.rate); t < min(stop, end); t += exp(1 / n.rate) {
				times = append(times, t)
			}
			t, on = stop, false
		}
		if n.stream == 0 {
			for _, t := range times {
				d := packet(s, rc, t)
				truth = append(truth, Message{Sender: s, Recipient: rc, Sent: at(t), Delivered: at(d)})
			}
			continue
		}
		next := 0
		for t := exp(1 / n.stream); t < end; t += exp(1 / n.stream) {
			if next < len(times) && times[next] <= t {
				d := packet(s, rc, t)
				m := Message{Sender: s, Recipient: rc, Sent: at(times[next]), Delivered: at(d)}
				truth = append(truth, m)
				deliveries = append(deliveries, m)
				next++
				continue
			}
			packet(s, uniform(s), t)
		}
	}
	if n.stream > 0 {
		for v := n.senders; v < n.nodes; v++ {
			for t := exp(1 / n.stream); t < end; t += exp(1 / n.stream) {
				packet(v, uniform(v), t)
			}
		}
		for _, m := range deliveries {
			t := m.Delivered.Sub(t0).Seconds() + exp(mean)
			packet(m.Recipient, uniform(m.Recipient), t)
		}
	}
	slices.SortFunc(truth, func(a, b Message) int { return a.Sent.Compare(b.Sent) })
	return tx, truth
}

// issue26 is the workload of issue 26: 20 nodes, 10 senders in bursts of 2 msg/s, about 3,000
// messages in 300 s, 100 ms of mixing per hop.
var issue26 = patientNet{nodes: 20, senders: 10, rate: 2, on: 10 * time.Second, off: 10 * time.Second,
	duration: 300 * time.Second, mean: 100 * time.Millisecond}

// pooled runs net over seeds and pools the SDA at k and the activity detection of the runs.
func pooled(t *testing.T, net patientNet, seeds []uint64, k int) (sender, recipient SDAResult, activity, recvActivity ActivityResult) {
	t.Helper()
	for _, seed := range seeds {
		tx, truth := net.run(seed)
		rep, err := LongTerm(tx, truth, Options{MessageSize: 1520})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(rep.SenderSDA, func(r SDAResult) bool { return r.K == k })
		for _, p := range []struct{ into, from *SDAResult }{{&sender, &rep.SenderSDA[i]}, {&recipient, &rep.RecipientSDA[i]}} {
			n := float64(p.from.Scored)
			p.into.K = k
			p.into.Scored += p.from.Scored
			p.into.Random += p.from.Random * n
			p.into.Classic += p.from.Classic * n
			p.into.Residual += p.from.Residual * n
		}
		for _, p := range []struct{ into, from *ActivityResult }{{&activity, &rep.SenderActivity}, {&recvActivity, &rep.RecipientActivity}} {
			n := float64(p.from.Windows)
			p.into.Windows += p.from.Windows
			p.into.Count.Balanced += p.from.Count.Balanced * n
			p.into.Residual.Balanced += p.from.Residual.Balanced * n
		}
	}
	for _, p := range []*SDAResult{&sender, &recipient} {
		n := float64(max(1, p.Scored))
		p.Random, p.Classic, p.Residual = p.Random/n, p.Classic/n, p.Residual/n
	}
	for _, p := range []*ActivityResult{&activity, &recvActivity} {
		n := float64(max(1, p.Windows))
		p.Count.Balanced, p.Residual.Balanced = p.Count.Balanced/n, p.Residual.Balanced/n
	}
	return sender, recipient, activity, recvActivity
}

// TestLeakyCountsAreLinked: without cover, with fixed correspondents, the counts leak and the
// SDA ranks nearly every sender's correspondent, and every recipient's sender, first after 200
// messages; activity is told right nearly always (the attacks find what is there).
func TestLeakyCountsAreLinked(t *testing.T) {
	s, r, act, ract := pooled(t, issue26, []uint64{1, 2, 3}, 200)
	t.Logf("k=200: sender classic %.2f residual %.2f, recipient classic %.2f residual %.2f (random %.3f, %d/%d scored); activity %.2f/%.2f, recipients %.2f/%.2f",
		s.Classic, s.Residual, r.Classic, r.Residual, s.Random, s.Scored, r.Scored, act.Count.Balanced, act.Residual.Balanced, ract.Count.Balanced, ract.Residual.Balanced)
	if s.Scored < 20 || r.Scored < 20 {
		t.Fatalf("%d senders and %d recipients with 200 messages: the workload is too short", s.Scored, r.Scored)
	}
	if s.Residual <= 0.9 || r.Residual <= 0.9 || s.Classic <= 0.9 || r.Classic <= 0.9 {
		t.Errorf("SDA top-1 after 200 messages: senders %.2f/%.2f, recipients %.2f/%.2f (classic/residual): want > 0.9", s.Classic, s.Residual, r.Classic, r.Residual)
	}
	if act.Residual.Balanced < 0.85 || ract.Residual.Balanced < 0.85 {
		t.Errorf("activity detection %.2f (senders), %.2f (recipients): want >= 0.85", act.Residual.Balanced, ract.Residual.Balanced)
	}
}

// TestConstantRateIsNearRandom: when every node sends a constant-rate stream with drop cover
// and recipients re-emit what they receive, the SDA ranks the true correspondent first about
// as often as a random guess and activity detection is about chance.
func TestConstantRateIsNearRandom(t *testing.T) {
	net := issue26
	net.stream = 5
	s, r, act, ract := pooled(t, net, []uint64{1, 2, 3, 4, 5, 6, 7, 8}, 200)
	t.Logf("k=200: sender classic %.3f residual %.3f, recipient classic %.3f residual %.3f (random %.3f, %d/%d scored); activity %.2f/%.2f, recipients %.2f/%.2f",
		s.Classic, s.Residual, r.Classic, r.Residual, s.Random, s.Scored, r.Scored, act.Count.Balanced, act.Residual.Balanced, ract.Count.Balanced, ract.Residual.Balanced)
	if s.Scored < 50 || r.Scored < 50 {
		t.Fatalf("%d senders and %d recipients with 200 messages: the workload is too short", s.Scored, r.Scored)
	}
	for name, top := range map[string]float64{"sender classic": s.Classic, "sender residual": s.Residual, "recipient classic": r.Classic, "recipient residual": r.Residual} {
		if top > 3*s.Random {
			t.Errorf("%s SDA top-1 %.3f after 200 messages: want near random (%.3f)", name, top, s.Random)
		}
	}
	if act.Best() > 0.6 || act.Best() < 0.4 {
		t.Errorf("sender activity detection %.2f/%.2f: want about chance", act.Count.Balanced, act.Residual.Balanced)
	}
}

// TestSDARanksByCovariance: a hand-made count series where host 2's receiving follows host
// 0's sending one window later, and host 3's follows nothing.
func TestSDARanksByCovariance(t *testing.T) {
	t0 := time.Unix(0, 0)
	var events []event
	add := func(w int, from, to int) {
		events = append(events, event{t: t0.Add(time.Duration(w)*time.Second + 100*time.Millisecond).UnixNano(), from: from, to: to, n: 1})
	}
	var msgs []Message
	for w := range 40 {
		if w%4 < 2 { // 0 sends in bursts of two windows; relayer 1 passes it to 2 a window later
			add(w, 0, 1)
			add(w+1, 1, 2)
			msgs = append(msgs, Message{Sender: 0, Recipient: 2, Sent: t0.Add(time.Duration(w)*time.Second + 100*time.Millisecond)})
		}
		add(w, 3, 1) // 3's loop, every window
		add(w, 1, 3)
	}
	rep := longTerm(events, msgs, LongTermOptions{Ks: []int{10, 20}})
	if rep.Nodes != 4 || math.Abs(rep.Random-1.0/3) > 1e-12 {
		t.Fatalf("nodes %d random %v", rep.Nodes, rep.Random)
	}
	for _, r := range append(rep.SenderSDA, rep.RecipientSDA...) {
		if r.Scored != 1 || r.Residual != 1 || r.Random != 1.0/3 {
			t.Errorf("k=%d: %+v: want the one target's correspondent first by the residual", r.K, r)
		}
	}
}

// TestCalibrate: the threshold separates the classes where it can, and a target without one
// class gets the threshold of every target's windows.
func TestCalibrate(t *testing.T) {
	z := []float64{0, 1, 5, 6, 2, 7, 0, 1}
	a := []bool{false, false, true, true, false, true, false, false}
	if tau := calibrate(z, a); tau != 5 {
		t.Errorf("threshold %v, want 5", tau)
	}
	if tau := calibrate(z, make([]bool, len(z))); !math.IsInf(tau, 1) {
		t.Errorf("nothing active: threshold %v, want +Inf", tau)
	}
	if _, ok := calibrateBoth(z, make([]bool, len(z))); ok {
		t.Error("calibrateBoth accepted windows of one class")
	}
	if d := detection(3, 1, 5, 5); math.Abs(d.Balanced-(0.75+0.5)/2) > 1e-12 || math.Abs(d.Accuracy-8.0/14) > 1e-12 {
		t.Errorf("detection %+v", d)
	}
}
