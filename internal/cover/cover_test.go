package cover

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/wait"
)

// testCover is a Cover over fakes: the timer is the test's.
func testCover(t *testing.T, rate *atomic.Value, kick chan struct{}, timer func(time.Duration) (<-chan time.Time, func() bool)) *Cover {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Key: key, Rate: func() float64 { return rate.Load().(float64) }, Kick: kick, Timer: timer,
		Rand: rand.New(rand.NewChaCha8([32]byte{7})), Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// counterValue reads a counter.
func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func rateOf(r float64) *atomic.Value {
	var v atomic.Value
	v.Store(r)
	return &v
}

// TestCoverText: a node recognises its own cover texts and nothing else: not another node's,
// not a changed one, not one of another length; the key is the same for the same private key
// (after a restart).
func TestCoverText(t *testing.T) {
	a := testCover(t, rateOf(0), make(chan struct{}), nil)
	b := testCover(t, rateOf(0), make(chan struct{}), nil)
	text, err := a.text()
	if err != nil {
		t.Fatal(err)
	}
	if len(text) != TextLen || !a.isCover(text) {
		t.Fatalf("own cover text of %d bytes not recognised", len(text))
	}
	other, _ := b.text()
	again, _ := a.text()
	if again == text {
		t.Fatal("two cover texts are equal: the nonce is not random")
	}
	raw, _ := encoding.DecodeString(text)
	flipped := append([]byte(nil), raw...)
	flipped[nonceLen+3] ^= 1
	nonceFlipped := append([]byte(nil), raw...)
	nonceFlipped[0] ^= 1
	for name, s := range map[string]string{
		"another node's": other, "changed MAC": encoding.EncodeToString(flipped), "changed nonce": encoding.EncodeToString(nonceFlipped),
		"raw bytes": string(raw), "padded": encoding.EncodeToString(raw) + "==",
		"truncated": text[:TextLen-1], "longer": text + "x", "empty": "", "a message": strings.Repeat("a", TextLen),
	} {
		if a.isCover(s) {
			t.Errorf("%s text taken for cover", name)
		}
	}

	priv, _ := crypto.GenerateKey()
	k1, err1 := key(priv)
	k2, err2 := key(priv)
	other2, _ := crypto.GenerateKey()
	k3, _ := key(other2)
	if err1 != nil || err2 != nil || string(k1) != string(k2) || string(k1) == string(k3) || len(k1) != 32 {
		t.Fatalf("cover key not a function of the private key alone: %x %x %x", k1, k2, k3)
	}
}

// TestCoverRate: the cover ticks form a Poisson process of the set rate: over a virtual 400 s
// at 5 per second the count is within 4 standard deviations of 2,000; a changed rate takes
// effect on the settings' kick.
func TestCoverRate(t *testing.T) {
	const (
		rate    = 5.0
		horizon = 400 * time.Second
	)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var (
		mu      sync.Mutex
		virtual time.Duration
		sends   atomic.Int64
	)
	fired := make(chan time.Time, 1)
	fired <- time.Time{}
	timer := func(d time.Duration) (<-chan time.Time, func() bool) {
		mu.Lock()
		defer mu.Unlock()
		if virtual += d; virtual >= horizon {
			cancel()
			return nil, func() bool { return true }
		}
		c := make(chan time.Time, 1)
		c <- time.Time{} // the virtual wait is over at once
		return c, func() bool { return false }
	}
	send := func(context.Context, string) (relay.Sent, error) { sends.Add(1); return relay.Sent{}, nil }
	c := testCover(t, rateOf(rate), make(chan struct{}), timer)
	if err := c.Run(ctx, send); err != nil {
		t.Fatal(err)
	}
	ticks := float64(sends.Load()) + counterValue(c.m.skipped.WithLabelValues(reasonBusy))
	want := rate * horizon.Seconds()
	if math.Abs(ticks-want) > 4*math.Sqrt(want) {
		t.Fatalf("%v cover ticks in %v at %v/s, want %v ± %.0f", ticks, horizon, rate, want, 4*math.Sqrt(want))
	}
	if got := counterValue(c.m.sent); got != float64(sends.Load()) || got == 0 {
		t.Fatalf("sent metric %v, sends %d", got, sends.Load())
	}
	if got := counterValue(c.m.bytes); got != float64(sends.Load()*relay.MsgFrameLen) {
		t.Fatalf("bytes metric %v for %d packets", got, sends.Load())
	}

	// Off, then on through the kick.
	r := rateOf(0)
	kick := make(chan struct{}, 1)
	sends.Store(0)
	mu.Lock()
	virtual = 0
	mu.Unlock()
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	c = testCover(t, r, kick, timer)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, send) }()
	r.Store(rate)
	kick <- struct{}{}
	waitFor(t, "cover sends after the rate was set", func() bool { return sends.Load() > 0 })
	cancel()
	waitFor(t, "Run to return", func() bool { return len(done) == 1 })

	// Off, then on without a kick (a relayer's loops when the layers are drawn): Run reads the
	// rate again after at most ratePoll.
	r = rateOf(0)
	var polls atomic.Int64
	polled := func(d time.Duration) (<-chan time.Time, func() bool) {
		if d > ratePoll {
			t.Errorf("a wait of %v, longer than ratePoll", d)
		}
		polls.Add(1)
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c, func() bool { return false }
	}
	<-done // the previous Run has returned: its goroutine reads nothing below
	sends.Store(0)
	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	c2 := testCover(t, r, make(chan struct{}), polled)
	done2 := make(chan error, 1)
	go func() { done2 <- c2.Run(ctx2, send) }()
	waitFor(t, "polls while off", func() bool { return polls.Load() >= 3 })
	if sends.Load() != 0 {
		t.Fatalf("%d sends at rate 0", sends.Load())
	}
	r.Store(rate)
	waitFor(t, "cover sends after the rate was set without a kick", func() bool { return sends.Load() > 0 })
	cancel2()
	waitFor(t, "Run to return", func() bool { return len(done2) == 1 })
}

// TestCoverBoundedAndStops: sends that hang never pile up beyond maxInFlight (further
// ticks are skipped as busy), and Run returns once its context ends, after the sends under way.
func TestCoverBoundedAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var inFlight, most atomic.Int64
	send := func(ctx context.Context, _ string) (relay.Sent, error) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-ctx.Done() // a send stuck until shutdown
		inFlight.Add(-1)
		return relay.Sent{}, ctx.Err()
	}
	timer := func(time.Duration) (<-chan time.Time, func() bool) {
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c, func() bool { return false }
	}
	c := testCover(t, rateOf(100), make(chan struct{}), timer)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, send) }()
	waitFor(t, "every slot busy", func() bool { return most.Load() >= maxInFlight })
	busy := counterValue(c.m.skipped.WithLabelValues(reasonBusy))
	waitFor(t, "busy skips", func() bool { return counterValue(c.m.skipped.WithLabelValues(reasonBusy)) >= busy+100 })
	if most.Load() != maxInFlight {
		t.Fatalf("%d sends at once, want at most %d", most.Load(), maxInFlight)
	}
	cancel()
	waitFor(t, "Run to return", func() bool { return len(done) == 1 })
	if err := <-done; err != nil || inFlight.Load() != 0 {
		t.Fatalf("Run: %v with %d sends under way", err, inFlight.Load())
	}
	if got := counterValue(c.m.skipped.WithLabelValues(reasonFailed)); got != 0 {
		t.Fatalf("sends cut by the shutdown counted as failed: %v", got)
	}
}

// TestCoverReason: why a send failed, as the skipped metric names it.
func TestCoverReason(t *testing.T) {
	for err, want := range map[error]string{
		router.ErrNoChain:          reasonNoPath,
		router.ErrNoPath:           reasonNoPath,
		router.ErrNotEnoughBalance: reasonNoBalance,
		errors.New("boom"):         reasonFailed,
	} {
		if got := router.Reason(err); got != want {
			t.Errorf("%v: %s, want %s", err, got, want)
		}
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, cond, 10*time.Second, what)
}

// TestReturned: a returned cover packet is claimed and counted with its round trip; anything
// else is left to the inbox.
func TestReturned(t *testing.T) {
	c := testCover(t, rateOf(0), make(chan struct{}), nil)
	text, _ := c.text()
	now := time.Now()
	if !c.Returned(relay.Received{Text: text, SentAt: now.Add(-time.Second), ReceivedAt: now}) {
		t.Fatal("own cover not claimed")
	}
	if c.Returned(relay.Received{Text: "hello", SentAt: now, ReceivedAt: now}) {
		t.Fatal("a message claimed as cover")
	}
	if counterValue(c.m.returned) != 1 {
		t.Fatalf("returned %v", counterValue(c.m.returned))
	}
}
