package observe

import (
	"math"
	"time"
)

// DefaultJitter is the processing time the observer assumes when Delay.Jitter is 0.
const DefaultJitter = 2 * time.Millisecond

// kernel is the density of a relayer's delay between receiving a packet and sending it on:
// Min, plus the mixing delay (exponential of mean Mean, or uniform in [Min, Max] without a
// mean), plus a processing time taken as exponential of mean Jitter (a tail, never a hard
// cut-off, so queueing under load does not break the trace).
type kernel struct {
	min     float64 // seconds
	mean    float64 // mixing mean, seconds; 0: uniform of width span
	span    float64 // uniform mixing width, seconds
	proc    float64 // processing mean, seconds
	window  time.Duration
	uniform bool
}

func newKernel(d Delay) kernel {
	j := d.Jitter
	if j <= 0 {
		j = DefaultJitter
	}
	k := kernel{min: d.Min.Seconds(), mean: d.Mean.Seconds(), proc: j.Seconds()}
	switch {
	case d.Mean > 0:
		k.window = d.Min + 12*d.Mean + 12*j
	case d.Max > d.Min:
		k.uniform = true
		k.span = (d.Max - d.Min).Seconds()
		k.window = d.Max + 12*j
	default:
		k.window = d.Min + 12*j
	}
	return k
}

// density is the kernel's probability density at delay d (per second).
func (k kernel) density(d time.Duration) float64 {
	x := d.Seconds() - k.min
	if x < 0 {
		return 0
	}
	p := k.proc
	switch {
	case k.uniform:
		// uniform [0, span] convolved with exponential of mean p
		if x <= k.span {
			return (1 - math.Exp(-x/p)) / k.span
		}
		return (math.Exp(-(x-k.span)/p) - math.Exp(-x/p)) / k.span
	case k.mean <= 0:
		return math.Exp(-x/p) / p
	case math.Abs(k.mean-p) < 1e-12:
		return x * math.Exp(-x/p) / (p * p)
	default:
		// hypoexponential: the sum of two exponentials of means mean and p
		return (math.Exp(-x/k.mean) - math.Exp(-x/p)) / (k.mean - p)
	}
}
