package observe

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// toyNet is a small synthetic network for the attacks: messages over two random relayers, each
// hop delayed by min + exponential(mean) + exponential(proc), every frame acknowledged.
type toyNet struct {
	nodes, senders int
	mean, proc     time.Duration
	sizeOf         func(msg int) int // a message's frame size; nil: one size
}

func (n toyNet) run(seed uint64, msgs int, gap time.Duration) ([]Transmission, []Message) {
	r := rand.New(rand.NewPCG(seed, 1))
	exp := func(m time.Duration) time.Duration {
		if m <= 0 {
			return 0
		}
		return time.Duration(r.ExpFloat64() * float64(m))
	}
	t0 := time.Unix(1_700_000_000, 0)
	var tx []Transmission
	var truth []Message
	for i := range msgs {
		s := r.IntN(n.senders)
		rc := n.senders + r.IntN(n.nodes-n.senders)
		hops := []int{s}
		for len(hops) < 3 {
			h := r.IntN(n.nodes)
			if h != s && h != rc && h != hops[len(hops)-1] {
				hops = append(hops, h)
			}
		}
		hops = append(hops, rc)
		size := 1520
		if n.sizeOf != nil {
			size = n.sizeOf(i)
		}
		sent := t0.Add(time.Duration(i) * gap)
		t := sent.Add(exp(n.proc))
		for h := 0; h+1 < len(hops); h++ {
			if h > 0 {
				t = t.Add(exp(n.mean) + exp(n.proc))
			}
			tx = append(tx, Transmission{Time: t, From: hops[h], To: hops[h+1], Size: size})
			tx = append(tx, Transmission{Time: t.Add(50 * time.Microsecond), From: hops[h+1], To: hops[h], Size: 49})
		}
		truth = append(truth, Message{Sender: s, Recipient: rc, Sent: sent, Delivered: t.Add(100 * time.Microsecond)})
	}
	return tx, truth
}

func senders(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestNoMixingOneAtATimeIsLinked: with no mixing delay and one message at a time, the observer
// finds every sender (it can find what is there).
func TestNoMixingOneAtATimeIsLinked(t *testing.T) {
	net := toyNet{nodes: 30, senders: 20, proc: time.Millisecond}
	tx, truth := net.run(1, 300, 200*time.Millisecond)
	rep, err := Analyze(tx, truth, Options{Senders: senders(20), Delay: Delay{Jitter: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Messages != 300 || rep.Timing.Top1 < 0.9 {
		t.Fatalf("scored %d messages, top-1 %.3f; want 300 and >= 0.9", rep.Messages, rep.Timing.Top1)
	}
	if rep.Timing.MeanEntropy > 0.3 {
		t.Errorf("mean entropy %.2f bits with nothing to hide behind", rep.Timing.MeanEntropy)
	}
	if rep.MessageSize != 1520 || len(rep.MessageClasses) != 1 {
		t.Errorf("message size %d, classes %v; want 1520 and one class", rep.MessageSize, rep.MessageClasses)
	}
}

// TestMixingHidesSenders: busy traffic with Poisson mixing leaves the observer close to a
// random guess, and more mixing hides more.
func TestMixingHidesSenders(t *testing.T) {
	var prevH, prevTop float64 = -1, 2
	for _, mean := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond} {
		net := toyNet{nodes: 30, senders: 20, mean: mean, proc: time.Millisecond}
		tx, truth := net.run(2, 3000, 5*time.Millisecond) // 200 msg/s
		rep, err := Analyze(tx, truth, Options{Senders: senders(20), Delay: Delay{Mean: mean, Jitter: time.Millisecond}, MaxScored: 600})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("mean %v: entropy %.2f of %.2f bits, top-1 %.3f (random %.3f)", mean, rep.Timing.MeanEntropy, rep.MaxEntropy, rep.Timing.Top1, rep.RandomGuess)
		if rep.Timing.MeanEntropy <= prevH || rep.Timing.Top1 >= prevTop {
			t.Errorf("mean %v: entropy %.2f, top-1 %.3f do not improve on %.2f, %.3f", mean, rep.Timing.MeanEntropy, rep.Timing.Top1, prevH, prevTop)
		}
		prevH, prevTop = rep.Timing.MeanEntropy, rep.Timing.Top1
		if mean == 100*time.Millisecond && (rep.Timing.EntropyShare < 0.7 || rep.Timing.Top1OverRandom > 5) {
			t.Errorf("100 ms mixing at 200 msg/s: entropy share %.2f, top-1 %.1f× random", rep.Timing.EntropyShare, rep.Timing.Top1OverRandom)
		}
	}
}

// TestSizeLeakIsFound: when a message's frames keep a size of their own hop to hop, the size
// attack uses it and beats the timing attack; with one size both agree.
func TestSizeLeakIsFound(t *testing.T) {
	mean := 50 * time.Millisecond
	leaky := toyNet{nodes: 30, senders: 20, mean: mean, proc: time.Millisecond, sizeOf: func(i int) int { return 1520 + 64*(i%8) }}
	tx, truth := leaky.run(3, 2000, 5*time.Millisecond)
	opts := Options{Senders: senders(20), Delay: Delay{Mean: mean, Jitter: time.Millisecond}, MessageSize: 1520, MaxScored: 400}
	rep, err := Analyze(tx, truth, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Size.Top1 < rep.Timing.Top1+0.1 || rep.Size.MeanEntropy > rep.Timing.MeanEntropy-0.5 {
		t.Errorf("size leak: size attack top-1 %.3f entropy %.2f vs timing %.3f %.2f", rep.Size.Top1, rep.Size.MeanEntropy, rep.Timing.Top1, rep.Timing.MeanEntropy)
	}
	if len(rep.SizeClasses) < 9 || len(rep.MessageClasses) != 8 {
		t.Errorf("flight sizes %v, message classes %v: want the 8 message sizes and the ack", rep.SizeClasses, rep.MessageClasses)
	}
	one := toyNet{nodes: 30, senders: 20, mean: mean, proc: time.Millisecond}
	tx, truth = one.run(3, 2000, 5*time.Millisecond)
	rep, err = Analyze(tx, truth, opts)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.Size.Top1-rep.Timing.Top1) > 1e-9 || math.Abs(rep.Size.MeanEntropy-rep.Timing.MeanEntropy) > 1e-9 {
		t.Errorf("one size: size attack %.3f/%.2f differs from timing %.3f/%.2f", rep.Size.Top1, rep.Size.MeanEntropy, rep.Timing.Top1, rep.Timing.MeanEntropy)
	}
}

// TestFlightsJoinSegments: a frame split into IP packets less than FlightGap apart counts as
// one message packet; the learned message size is the joined size.
func TestFlightsJoinSegments(t *testing.T) {
	net := toyNet{nodes: 12, senders: 6, proc: time.Millisecond}
	tx, truth := net.run(4, 100, 100*time.Millisecond)
	var split []Transmission
	for _, x := range tx {
		if x.Size > 1000 {
			split = append(split, Transmission{Time: x.Time, From: x.From, To: x.To, Size: 1448},
				Transmission{Time: x.Time.Add(20 * time.Microsecond), From: x.From, To: x.To, Size: x.Size + 30 - 1448})
			continue
		}
		split = append(split, x)
	}
	rep, err := Analyze(split, truth, Options{Senders: senders(6), FlightGap: 200 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.MessageSize != 1550 || rep.Timing.Top1 < 0.9 {
		t.Errorf("message size %d, top-1 %.3f; want 1550 and >= 0.9", rep.MessageSize, rep.Timing.Top1)
	}
}

func TestAnalyzeRefusesNothing(t *testing.T) {
	if _, err := Analyze(nil, []Message{{}}, Options{}); !errors.Is(err, ErrNoInput) {
		t.Errorf("no transmissions: %v", err)
	}
	tx := []Transmission{{Time: time.Unix(1, 0), From: 0, To: 1, Size: 49}}
	msgs := []Message{{Sender: 0, Recipient: 1, Sent: time.Unix(0, 0), Delivered: time.Unix(2, 0)}, {Sender: 2, Recipient: 1}}
	if _, err := Analyze(tx, msgs, Options{}); !errors.Is(err, ErrNoInput) {
		t.Errorf("only acknowledgements: %v", err)
	}
	if _, err := Analyze(tx, msgs, Options{ThreeRelayerShare: 2}); err == nil {
		t.Error("ThreeRelayerShare 2 accepted")
	}
}

// TestKernelIsADensity: every kernel integrates to about 1 over its window.
func TestKernelIsADensity(t *testing.T) {
	for _, d := range []Delay{{}, {Jitter: time.Millisecond}, {Mean: 20 * time.Millisecond}, {Min: 5 * time.Millisecond, Mean: 2 * time.Millisecond, Jitter: 2 * time.Millisecond}, {Max: 20 * time.Millisecond}} {
		k := newKernel(d)
		const steps = 200_000
		dt := k.window / steps
		var sum float64
		for i := range steps {
			sum += k.density(time.Duration(i)*dt+dt/2) * dt.Seconds()
		}
		if math.Abs(sum-1) > 0.01 {
			t.Errorf("%+v: integrates to %.4f", d, sum)
		}
	}
}

// TestAnalyzeIsDeterministic: the same input gives the same report to the last bit.
func TestAnalyzeIsDeterministic(t *testing.T) {
	net := toyNet{nodes: 30, senders: 20, mean: 30 * time.Millisecond, proc: time.Millisecond}
	tx, truth := net.run(5, 1500, 5*time.Millisecond)
	opts := Options{Senders: senders(20), Delay: Delay{Mean: 30 * time.Millisecond, Jitter: time.Millisecond}, MaxScored: 300}
	a, err := Analyze(tx, truth, opts)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, err := Analyze(tx, truth, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("two analyses of the same input differ: %+v vs %+v", a.Timing.MeanEntropy, b.Timing.MeanEntropy)
		}
	}
}
