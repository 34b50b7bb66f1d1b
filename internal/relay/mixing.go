package relay

import (
	"fmt"
	"time"
)

// Mixing is how long a relayed packet waits before it is forwarded: Min plus an exponential
// draw of mean Mean (Poisson mixing: memoryless, so how long a packet has waited says nothing
// about when it leaves), capped at Max so that one packet cannot stall for seconds. Without a
// mean the wait is uniform in [Min, Max]; all zero forwards at once.
type Mixing struct {
	Min, Mean, Max time.Duration
}

// MixingFor returns the mixing of an exponential mean on top of min, capped at max, or at
// min + 10 × mean when max is 0. A mean of 0 and max 0 is no delay beyond min.
func MixingFor(min, mean, max time.Duration) (Mixing, error) {
	if max == 0 && mean > 0 {
		max = min + 10*mean
	}
	if max == 0 {
		max = min
	}
	m := Mixing{Min: min, Mean: mean, Max: max}
	return m, m.validate()
}

func (m Mixing) validate() error {
	switch {
	case m.Min < 0 || m.Mean < 0 || m.Max < 0:
		return fmt.Errorf("%w: mixing delays must not be negative", ErrInvalidConfig)
	case m.Max < m.Min:
		return fmt.Errorf("%w: the mixing delay's cap is below its minimum", ErrInvalidConfig)
	case m.Mean > 0 && m.Max < m.Min+m.Mean:
		return fmt.Errorf("%w: the mixing delay's cap is below its minimum plus its mean", ErrInvalidConfig)
	}
	return nil
}

// SetMixing changes the mixing delay of the packets accepted from now on; packets already
// waiting keep theirs. It refuses an inconsistent m (ErrInvalidConfig) and changes nothing then.
func (r *Relay) SetMixing(m Mixing) error {
	if err := m.validate(); err != nil {
		return err
	}
	r.mixing.Store(&m)
	return nil
}

// Mixing returns the current mixing delay.
func (r *Relay) Mixing() Mixing { return r.currentMixing() }

func (r *Relay) currentMixing() Mixing {
	if m := r.mixing.Load(); m != nil {
		return *m
	}
	return Mixing{Min: r.cfg.MixDelayMin, Mean: r.cfg.MixDelayMean, Max: r.cfg.MixDelayMax}
}
