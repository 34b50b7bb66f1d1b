package bench

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Patient is a workload of patient senders (issue 26), what a statistical disclosure attack
// feeds on: each sender writes to one fixed correspondent, drawn once among the recipients, in
// on/off bursts. A sender's on and off periods have exponential durations of means On and Off
// (it starts in either, in proportion to their means), and while on it sends at Rate messages
// per second, at exponential intervals (a Poisson process). Every draw comes from Seed: the
// same Patient, senders and recipients give the same correspondents and the same schedule.
type Patient struct {
	// Rate is each sender's messages per second while on.
	Rate float64 `json:"rate"`
	// On and Off are the mean durations of the on and off periods (nanoseconds in JSON); Off 0
	// is always on.
	On  time.Duration `json:"onNs"`
	Off time.Duration `json:"offNs"`
	// Seed decides the correspondents and the schedule.
	Seed uint64 `json:"seed"`
}

// Validate reports a Patient out of range.
func (p Patient) Validate() error {
	switch {
	case !(p.Rate > 0) || p.Rate > 10_000:
		return fmt.Errorf("burst rate must be above 0 and at most 10,000 messages per second, not %g", p.Rate)
	case p.On <= 0:
		return fmt.Errorf("mean on period must be positive, not %v", p.On)
	case p.Off < 0:
		return fmt.Errorf("mean off period must not be negative, not %v", p.Off)
	}
	return nil
}

// Send is one message of a schedule: At after the start, from Sender to Recipient (node
// indexes).
type Send struct {
	At                time.Duration
	Sender, Recipient int
}

// Correspondents draws each sender's correspondent among recipients: the recipients shuffled
// by the seed, sender i taking the i-th (round robin when there are fewer recipients than
// senders), so senders have distinct correspondents while there are enough.
func (p Patient) Correspondents(senders, recipients []int) map[int]int {
	r := rand.New(rand.NewPCG(p.Seed, 0xc0))
	perm := r.Perm(len(recipients))
	out := make(map[int]int, len(senders))
	for i, s := range senders {
		out[s] = recipients[perm[i%len(perm)]]
	}
	return out
}

// Schedule is the first n messages of the workload, in time order (by sender on a tie).
func (p Patient) Schedule(senders, recipients []int, n int) ([]Send, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(senders) == 0 || len(recipients) == 0 {
		return nil, errors.New("patient senders need a sender and a recipient")
	}
	corr := p.Correspondents(senders, recipients)
	// Each sender's draws come from its own stream, so a longer horizon extends the schedule
	// without changing its beginning: double it until it holds n messages.
	mean := p.Rate * p.On.Seconds() / (p.On + p.Off).Seconds() * float64(len(senders))
	horizon := time.Duration(float64(n)/mean*float64(time.Second)) + p.On + p.Off
	for {
		var out []Send
		for i, s := range senders {
			for _, at := range p.bursts(uint64(i), horizon) {
				out = append(out, Send{At: at, Sender: s, Recipient: corr[s]})
			}
		}
		if len(out) >= n {
			slices.SortStableFunc(out, func(a, b Send) int { return cmp.Compare(a.At, b.At) })
			return out[:n], nil
		}
		horizon *= 2
	}
}

// bursts is the send times of sender i (its own random stream) before horizon.
func (p Patient) bursts(i uint64, horizon time.Duration) []time.Duration {
	r := rand.New(rand.NewPCG(p.Seed, 0xb0+i))
	exp := func(mean time.Duration) time.Duration { return time.Duration(r.ExpFloat64() * float64(mean)) }
	gap := time.Duration(float64(time.Second) / p.Rate)
	on := p.Off == 0 || r.Float64()*float64(p.On+p.Off) < float64(p.On)
	var out []time.Duration
	for t := time.Duration(0); t < horizon; {
		if !on {
			t += exp(p.Off)
			on = true
			continue
		}
		end := t + exp(p.On)
		if p.Off == 0 {
			end = horizon
		}
		for t += exp(gap); t < min(end, horizon); t += exp(gap) {
			out = append(out, t)
		}
		t, on = end, false
	}
	return out
}
