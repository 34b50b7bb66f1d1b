package session

import (
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/wait"
)

// netem is what a memLink does to the frames it carries: each is lost with probability loss,
// else sent twice with probability dup, and each copy arrives after delay plus up to jitter
// (which reorders them). The zero netem delivers every frame at once, in order, on the
// sender's goroutine.
type netem struct {
	loss, dup     float64
	delay, jitter time.Duration
}

// memLink is an in-memory Link to a peer Mux. Every frame sent must decode and fit max; tap, if
// set, sees each one (before any loss), and drop, if set, loses those it says.
type memLink struct {
	t    testing.TB
	max  int
	em   netem
	peer *Mux
	tap  func(Frame)
	drop func(Frame) bool              // drops the frames it says (after tap)
	cut  atomic.Bool                   // drop everything: a dead peer
	hold atomic.Pointer[chan struct{}] // Send blocks until it is closed
	held atomic.Int64                  // Sends that blocked on hold
	sent atomic.Int64

	mu  sync.Mutex
	rng *rand.Rand
}

func newLink(t testing.TB, max int, em netem, seed uint64) *memLink {
	return &memLink{t: t, max: max, em: em, rng: rand.New(rand.NewPCG(seed, 7))}
}

func (l *memLink) MaxFrame() int { return l.max }

func (l *memLink) Send(_ context.Context, frame []byte) error {
	f, err := Decode(frame)
	if err != nil {
		l.t.Errorf("a session sent a malformed frame %x: %v", frame, err)
		return err
	}
	if len(frame) > l.max {
		l.t.Errorf("a session sent %d bytes over a link of %d", len(frame), l.max)
	}
	l.sent.Add(1)
	if h := l.hold.Load(); h != nil {
		l.held.Add(1)
		<-*h
	}
	if l.tap != nil {
		l.tap(f)
	}
	if l.cut.Load() || (l.drop != nil && l.drop(f)) {
		return nil
	}
	var delays []time.Duration
	l.mu.Lock()
	copies := 1
	if l.rng.Float64() < l.em.loss {
		copies = 0
	} else if l.rng.Float64() < l.em.dup {
		copies = 2
	}
	for range copies {
		d := l.em.delay
		if l.em.jitter > 0 {
			d += time.Duration(l.rng.Int64N(int64(l.em.jitter)))
		}
		delays = append(delays, d)
	}
	l.mu.Unlock()
	for _, d := range delays {
		if d == 0 {
			_ = l.peer.Receive(frame)
		} else {
			time.AfterFunc(d, func() { _ = l.peer.Receive(frame) })
		}
	}
	return nil
}

// fastConfig has timers short enough for tests over links of a few milliseconds.
func fastConfig() Config {
	return Config{
		InitialRTO:    100 * time.Millisecond,
		MinRTO:        20 * time.Millisecond,
		MaxRTO:        time.Second,
		MaxRetries:    30,
		AckDelay:      5 * time.Millisecond,
		KeepAliveIdle: -1,
		Linger:        200 * time.Millisecond,
	}
}

// pair is an entry Mux a and an exit Mux b, running, joined by links ab (500 bytes) and ba
// (472 bytes).
type pair struct {
	a, b         *Mux
	ab, ba       *memLink
	stopA, stopB func()
}

func newPair(t testing.TB, cfg Config, ab, ba netem) *pair {
	t.Helper()
	return newPairOf(t, cfg, cfg, ab, ba)
}

// newPairOf is newPair with a config for each side.
func newPairOf(t testing.TB, cfgA, cfgB Config, ab, ba netem) *pair {
	t.Helper()
	p := &pair{ab: newLink(t, 500, ab, 1), ba: newLink(t, 472, ba, 2)}
	var err error
	if p.a, err = NewMux(cfgA); err != nil {
		t.Fatal(err)
	}
	cfgB.AcceptLink = func(ID) Link { return p.ba }
	if p.b, err = NewMux(cfgB); err != nil {
		t.Fatal(err)
	}
	p.ab.peer, p.ba.peer = p.b, p.a
	p.stopA, p.stopB = runMux(t, p.a), runMux(t, p.b)
	return p
}

// runMux runs m until the test ends or stop is called; stop returns once Run did.
func runMux(t testing.TB, m *Mux) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := m.Run(ctx); err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	wait.For(t, func() bool { return running(m) }, 5*time.Second, "the mux runs")
	return stop
}

func running(m *Mux) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state == 1
}

// connect opens a session from a to b and returns both ends, the exit's confirmed.
func (p *pair) connect(t testing.TB, mode Mode) (entry, exit *Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := p.b.Accept(ctx)
		if err != nil {
			t.Errorf("accept: %v", err)
			close(accepted)
			return
		}
		if string(c.Request()) != "example.org:443" || c.Mode() != mode {
			t.Errorf("accepted a %v session asking for %q", c.Mode(), c.Request())
		}
		if err := c.Confirm(); err != nil {
			t.Errorf("confirm: %v", err)
		}
		accepted <- c
	}()
	entry, err := p.a.Dial(ctx, p.ab, mode, []byte("example.org:443"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	exit = <-accepted
	if exit == nil {
		t.FailNow()
	}
	if entry.ID() != exit.ID() {
		t.Fatalf("entry %v, exit %v", entry.ID(), exit.ID())
	}
	return entry, exit
}

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// sendAll writes data to c and ends its direction, in the background.
func sendAll(c *Conn, data []byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		if _, err := c.Write(data); err != nil {
			done <- err
			return
		}
		done <- c.CloseWrite()
	}()
	return done
}

// readAll reads c to its end, in the background, and returns the sha256 of what it read.
func readAll(c *Conn) <-chan result {
	done := make(chan result, 1)
	go func() {
		h := sha256.New()
		n, err := io.Copy(h, c)
		done <- result{n, [32]byte(h.Sum(nil)), err}
	}()
	return done
}

type result struct {
	n   int64
	sum [32]byte
	err error
}
