package observe

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// bursts is traffic of framed messages on a toy network: msgs messages from random senders to
// random recipients, every 4 ms, each as k packets 400 µs apart, each packet over its own two
// random relayers with an exponential mixing delay of mean 20 ms; groups names each packet's
// message.
func bursts(seed uint64, msgs, k int) (tx []Transmission, truth []Message, groups []int) {
	const nodes, senders = 30, 10
	r := rand.New(rand.NewPCG(seed, 2))
	exp := func(m time.Duration) time.Duration { return time.Duration(r.ExpFloat64() * float64(m)) }
	t0 := time.Unix(1_700_000_000, 0)
	for g := range msgs {
		s, rc := r.IntN(senders), senders+r.IntN(nodes-senders)
		for p := range k {
			hops := []int{s}
			for len(hops) < 3 {
				h := r.IntN(nodes)
				if h != s && h != rc && h != hops[len(hops)-1] {
					hops = append(hops, h)
				}
			}
			hops = append(hops, rc)
			sent := t0.Add(time.Duration(g)*4*time.Millisecond + time.Duration(p)*400*time.Microsecond)
			t := sent.Add(exp(time.Millisecond))
			for h := 0; h+1 < len(hops); h++ {
				if h > 0 {
					t = t.Add(exp(20*time.Millisecond) + exp(time.Millisecond))
				}
				tx = append(tx, Transmission{Time: t, From: hops[h], To: hops[h+1], Size: 1520},
					Transmission{Time: t.Add(50 * time.Microsecond), From: hops[h+1], To: hops[h], Size: 49})
			}
			truth = append(truth, Message{Sender: s, Recipient: rc, Sent: sent, Delivered: t.Add(100 * time.Microsecond)})
			groups = append(groups, g)
		}
	}
	return tx, truth, groups
}

// TestGroupedAttack: the packets of one framed message traced together point at their sender
// far more often than one packet alone, every message is scored as one group, and the
// grouping must name every message.
func TestGroupedAttack(t *testing.T) {
	tx, truth, groups := bursts(1, 150, 6)
	opts := Options{Delay: Delay{Mean: 20 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: 2 * time.Millisecond},
		Senders: senders(10), ThreeRelayerShare: 0}
	plain, err := Analyze(tx, truth, opts)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Groups != 0 || len(plain.Grouped.PerMessage) != 0 {
		t.Fatalf("without groups: %d groups scored", plain.Groups)
	}
	opts.Groups = groups
	rep, err := Analyze(tx, truth, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Timing, plain.Timing) {
		t.Fatalf("the grouping changed the per-packet attack: %+v, before %+v", rep.Timing, plain.Timing)
	}
	if rep.Groups != 150 || len(rep.Grouped.PerMessage) != 150 {
		t.Fatalf("%d groups scored, want 150", rep.Groups)
	}
	t.Logf("per packet: top-1 %.3f, entropy %.2f of %.2f bits; per message: top-1 %.3f, entropy %.2f (random %.3f)",
		rep.Timing.Top1, rep.Timing.MeanEntropy, rep.MaxEntropy, rep.Grouped.Top1, rep.Grouped.MeanEntropy, rep.GroupRandomGuess)
	if rep.Grouped.Top1 < rep.Timing.Top1+0.1 || rep.Grouped.MeanEntropy >= rep.Timing.MeanEntropy {
		t.Fatalf("grouped top-1 %.3f entropy %.2f, per packet %.3f %.2f: grouping should sharpen the trace",
			rep.Grouped.Top1, rep.Grouped.MeanEntropy, rep.Timing.Top1, rep.Timing.MeanEntropy)
	}
	if math.Abs(rep.GroupRandomGuess-0.1) > 1e-9 || math.Abs(rep.GroupMaxEntropy-math.Log2(10)) > 1e-9 {
		t.Fatalf("random guess %v, max entropy %v: want 10 candidates", rep.GroupRandomGuess, rep.GroupMaxEntropy)
	}
	opts.Groups = groups[1:]
	if _, err := Analyze(tx, truth, opts); err == nil || errors.Is(err, ErrNoInput) {
		t.Fatalf("groups for one message too few: %v", err)
	}
}
