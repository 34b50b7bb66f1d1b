package relay

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
)

// TestMixDelayExponential: with a mean, delays are MixDelayMin plus an exponential draw
// (memoryless: as many packets wait more than a further mean at every age), capped at the
// maximum; without one they are uniform between the bounds.
func TestMixDelayExponential(t *testing.T) {
	const n = 200_000
	draw := func(cfg Config) []time.Duration {
		r := &Relay{cfg: cfg, rand: rand.NewChaCha8([32]byte{7})}
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = r.mixDelay()
		}
		return out
	}
	mean := 10 * time.Millisecond
	ds := draw(Config{MixDelayMin: 2 * time.Millisecond, MixDelayMax: 2*time.Millisecond + 10*mean, MixDelayMean: mean})
	var sum time.Duration
	over := map[time.Duration]int{} // packets still waiting at 1, 2, 3 means
	capped := 0
	for _, d := range ds {
		if d < 2*time.Millisecond || d > 102*time.Millisecond {
			t.Fatalf("delay %v outside [2 ms, 102 ms]", d)
		}
		if d == 102*time.Millisecond {
			capped++
		}
		sum += d - 2*time.Millisecond
		for k := time.Duration(1); k <= 3; k++ {
			if d-2*time.Millisecond > k*mean {
				over[k]++
			}
		}
	}
	if got := float64(sum) / n / float64(mean); math.Abs(got-1) > 0.02 {
		t.Errorf("mean %.3f × the configured mean, want 1 (±2 %%)", got)
	}
	// Memoryless: P(wait > k·mean) = e^-k, so each further mean keeps the same share e^-1.
	for k := time.Duration(1); k <= 3; k++ {
		want := math.Exp(-float64(k))
		if got := float64(over[k]) / n; math.Abs(got-want) > 0.01 {
			t.Errorf("P(wait > %d means) = %.4f, want %.4f", k, got, want)
		}
	}
	if want := math.Exp(-10) * n; float64(capped) > 5*want+10 {
		t.Errorf("%d draws capped, want about %.0f", capped, want)
	}

	uni := draw(Config{MixDelayMin: 0, MixDelayMax: 20 * time.Millisecond})
	sum = 0
	for _, d := range uni {
		if d < 0 || d > 20*time.Millisecond {
			t.Fatalf("uniform delay %v outside [0, 20 ms]", d)
		}
		sum += d
	}
	if got := float64(sum) / n / float64(10*time.Millisecond); math.Abs(got-1) > 0.02 {
		t.Errorf("uniform mean %.3f × 10 ms, want 1", got)
	}
}

func TestMixDelayConfig(t *testing.T) {
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	base := func() Config {
		return Config{Key: key, Transport: nopTransport{}, Replay: NewMemoryReplay(), Deliver: func(Received) {}}
	}
	c := base()
	c.MixDelayMean = 5 * time.Millisecond
	r, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if r.cfg.MixDelayMax != 50*time.Millisecond {
		t.Fatalf("cap %v, want 10 × the mean", r.cfg.MixDelayMax)
	}
	c = base()
	c.MixDelayMean = -time.Millisecond
	if _, err := New(c); err == nil {
		t.Fatal("a negative mean was accepted")
	}
}

// TestSetMixing: a new mixing delay applies to the next draws; an inconsistent one is refused
// and leaves the current one in place.
func TestSetMixing(t *testing.T) {
	r := &Relay{cfg: Config{MixDelayMin: 0, MixDelayMax: 0, AckTimeout: DefaultAckTimeout}, rand: rand.NewChaCha8([32]byte{9})}
	if d := r.mixDelay(); d != 0 {
		t.Fatalf("no mixing: delay %v, want 0", d)
	}
	m, err := MixingFor(0, 30*time.Millisecond, 0)
	if err != nil || m.Max != 300*time.Millisecond {
		t.Fatalf("MixingFor(0, 30ms, 0) = %+v, %v; want a cap of 300 ms", m, err)
	}
	if err := r.SetMixing(m); err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	const n = 20_000
	for range n {
		sum += r.mixDelay()
	}
	if mean := sum / n; mean < 27*time.Millisecond || mean > 33*time.Millisecond {
		t.Errorf("mean delay %v after SetMixing(mean 30 ms)", mean)
	}
	for _, bad := range []Mixing{{Min: -1}, {Min: 10, Max: 5}, {Mean: 10 * time.Millisecond, Max: 5 * time.Millisecond}} {
		if err := r.SetMixing(bad); err == nil {
			t.Errorf("SetMixing(%+v) accepted", bad)
		}
	}
	if got := r.Mixing(); got != m {
		t.Errorf("after refused changes Mixing() = %+v, want %+v", got, m)
	}
}

// TestMixingCapTiedToAckTimeout: no packet waits longer than half the acknowledgement timeout:
// the default cap of a long mean stops at MaxMixDelay, a larger cap is refused by MixingFor,
// New and SetMixing (else a relayer's own ticket would be neglected before the packet left while
// it still paid the next hop).
func TestMixingCapTiedToAckTimeout(t *testing.T) {
	m, err := MixingFor(0, 10*time.Second, 0)
	if err != nil || m.Max != MaxMixDelay || 2*MaxMixDelay != DefaultAckTimeout {
		t.Fatalf("MixingFor(0, 10s, 0) = %+v, %v; want the cap %v", m, err, MaxMixDelay)
	}
	if _, err := MixingFor(0, time.Second, MaxMixDelay+time.Second); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a cap above MaxMixDelay: %v", err)
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	c := Config{Key: key, Transport: nopTransport{}, Replay: NewMemoryReplay(), Deliver: func(Received) {}}
	c.AckTimeout, c.MixDelayMax = 10*time.Second, 6*time.Second
	if _, err := New(c); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New with a cap above half the ack timeout: %v", err)
	}
	c.MixDelayMax = 5 * time.Second
	r, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetMixing(Mixing{Mean: time.Second, Max: 6 * time.Second}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("SetMixing with a cap above half the ack timeout: %v", err)
	}
}
