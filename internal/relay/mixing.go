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

// MaxMixDelay is the longest a relayed packet may wait, half the default acknowledgement
// timeout: a packet that waited longer could reach the next hop after this hop's own ticket was
// neglected (the previous hop gave up waiting for its acknowledgement), while this hop still pays
// the next one. Relay.New refuses a cap above half its AckTimeout.
const MaxMixDelay = DefaultAckTimeout / 2

// MixingFor returns the mixing of an exponential mean on top of min, capped at max, or, when max
// is 0, at min + 10 × mean but never above MaxMixDelay. A mean of 0 and max 0 is no delay beyond
// min.
func MixingFor(lo, mean, hi time.Duration) (Mixing, error) {
	if hi == 0 && mean > 0 {
		hi = min(lo+10*mean, MaxMixDelay)
	}
	if hi == 0 {
		hi = lo
	}
	m := Mixing{Min: lo, Mean: mean, Max: hi}
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
	case m.Max > MaxMixDelay:
		return fmt.Errorf("%w: the mixing delay's cap %v is above %v, half the acknowledgement timeout", ErrInvalidConfig, m.Max, MaxMixDelay)
	}
	return nil
}

// SetMixing changes the mixing delay of the packets accepted from now on; packets already
// waiting keep theirs. It refuses an inconsistent m, or one whose cap is above half the
// acknowledgement timeout (ErrInvalidConfig), and changes nothing then.
func (r *Relay) SetMixing(m Mixing) error {
	if err := m.validate(); err != nil {
		return err
	}
	if 2*m.Max > r.cfg.AckTimeout {
		return fmt.Errorf("%w: the mixing delay's cap %v is more than half the acknowledgement timeout %v", ErrInvalidConfig, m.Max, r.cfg.AckTimeout)
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
