// Package stream is this node's constant-rate packet stream (docs/TRAFFIC.md): at the Poisson
// rate of the sendRate setting it sends one packet a tick, the oldest real packet waiting (Do) or
// else drop cover, so that an observer counting the frames a node sends learns neither when nor
// how much it sends; and for every real packet this node receives as its recipient it sends one
// drop after a mixing delay (Reemit), so that what a node receives does not show in what enters
// it minus what leaves it either. With the rate at 0 the stream is off: Do sends at once, and
// there is no drop cover and no re-emission.
//
// Of relayd's packages it imports internal/relay (what a send did), internal/router (its
// sentinels, which say why a drop was not sent) and internal/token. It must not import
// internal/node, internal/api, internal/ws or internal/admin; it never logs paths or texts.
package stream

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/token"
)

const (
	// QueueSize bounds the real packets waiting for their slot; Do refuses more (ErrQueueFull).
	QueueSize = 1024
	// maxInFlight bounds the sends under way at once (path, ticket, hand-over to the
	// transport); a tick that finds them all busy sends nothing and is counted: the stream never
	// queues up behind a slow channel or store.
	maxInFlight = 16
	// maxReemits bounds the re-emissions waiting for their delay; beyond it a received packet
	// is not re-emitted (counted).
	maxReemits = 4096
	// sendTimeout bounds one drop's send.
	sendTimeout = 10 * time.Second
	// maxWait bounds one drawn interval, so that a tiny rate cannot overflow a Duration.
	maxWait = 24 * time.Hour
	// slowTicks: a real packet that waited longer than this many mean intervals says the rate
	// is too low for this node's traffic (a warning, at most once a minute).
	slowTicks = 10
	warnEvery = time.Minute
)

// ErrQueueFull: QueueSize real packets already wait for their slot; the packet is not sent. It
// is a router.ErrBusy.
var ErrQueueFull = fmt.Errorf("%w: the send queue is full: this node sends more than its sendRate setting carries", router.ErrBusy)

// Kinds of packet the stream sends (relayd_stream_packets_sent_total{kind}).
const (
	kindReal   = "real"
	kindDrop   = "drop"
	kindReemit = "reemit"
)

// Reasons a drop was not sent (relayd_stream_drops_skipped_total{reason}).
const (
	reasonNoPath    = "no_path"
	reasonNoBalance = "no_balance"
	reasonBusy      = "busy"
	reasonFailed    = "send_failed"
	reasonReemits   = "reemit_backlog"
)

// Config configures a Stream. Rate, Kick and Drop are required.
type Config struct {
	// Rate is the current rate in packets per second (the sendRate setting); 0: off.
	Rate func() float64
	// Kick receives when the rate may have changed.
	Kick <-chan struct{}
	// Drop sends one drop cover packet (router.Router's SendDrop).
	Drop func(ctx context.Context) (relay.Sent, error)
	// ReemitDelay is the mean delay before a re-emission (the mixing mean: like a relayed
	// packet's); 0 or nil: at once.
	ReemitDelay func() time.Duration
	// Timer makes the timer of one interval (tests); the system timer when nil.
	Timer func(time.Duration) (<-chan time.Time, func() bool)
	// Rand draws the intervals; a crypto-seeded source when nil.
	Rand   *rand.Rand
	Logger *slog.Logger
	// Registerer, when set, receives the relayd_stream_* metrics.
	Registerer prometheus.Registerer
}

// job is a real packet waiting for its slot.
type job struct {
	ctx    context.Context
	send   func(context.Context) error
	done   chan error // receives send's result; buffered
	queued time.Time
}

// Stream is the node's constant-rate stream. Do and Reemit are safe for concurrent use; Run
// runs once.
type Stream struct {
	cfg   Config
	log   *slog.Logger
	m     metrics
	slots chan struct{}

	mu       sync.Mutex
	rng      *rand.Rand
	queue    []*job
	reemits  int
	lastWarn time.Time
	wg       sync.WaitGroup  // re-emissions and sends under way
	run      context.Context // Run's, while it runs: re-emissions end with it
	stopped  bool
}

// New checks cfg and returns a Stream; it sends nothing until Run.
func New(cfg Config) (*Stream, error) {
	if cfg.Rate == nil || cfg.Kick == nil || cfg.Drop == nil {
		return nil, errors.New("stream: Rate, Kick and Drop are required")
	}
	s := &Stream{cfg: cfg, log: cfg.Logger, rng: cfg.Rand, slots: make(chan struct{}, maxInFlight)}
	if s.rng == nil {
		var seed [32]byte
		if _, err := crand.Read(seed[:]); err != nil {
			return nil, fmt.Errorf("stream: seed: %w", err)
		}
		s.rng = rand.New(rand.NewChaCha8(seed))
	}
	if s.cfg.Timer == nil {
		s.cfg.Timer = func(d time.Duration) (<-chan time.Time, func() bool) {
			t := time.NewTimer(d)
			return t.C, t.Stop
		}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.m = newMetrics(cfg.Registerer, s.queued)
	return s, nil
}

// Do sends a real packet in the stream: send runs in the next tick's slot (at once when the
// stream is off), and Do returns its result. When ctx ends first the packet leaves the queue
// unsent and Do returns ctx's error. It refuses a packet when QueueSize wait (ErrQueueFull).
func (s *Stream) Do(ctx context.Context, send func(context.Context) error) error {
	if s.cfg.Rate() <= 0 {
		return send(ctx)
	}
	j := &job{ctx: ctx, send: send, done: make(chan error, 1), queued: time.Now()}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return send(ctx) // the node is stopping: nothing paces any more
	}
	if len(s.queue) >= QueueSize {
		s.mu.Unlock()
		return ErrQueueFull
	}
	s.queue = append(s.queue, j)
	s.mu.Unlock()
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		s.mu.Lock()
		for i, q := range s.queue {
			if q == j {
				s.queue = append(s.queue[:i], s.queue[i+1:]...)
				s.mu.Unlock()
				return ctx.Err()
			}
		}
		s.mu.Unlock()
		return <-j.done // its slot came meanwhile: the send runs with ctx and ends
	}
}

// queued is how many real packets wait now.
func (s *Stream) queued() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return float64(len(s.queue))
}

// Run sends the stream until ctx ends: at every tick of a Poisson process at the current rate
// the oldest waiting real packet, or else a drop. Intervals are drawn again when the rate
// changes (the process is memoryless: a new draw biases nothing). When ctx ends, the packets
// still waiting are sent at once (the stream no longer paces them), and Run waits for the sends
// and re-emissions under way.
func (s *Stream) Run(ctx context.Context) error {
	s.mu.Lock()
	s.run = ctx
	s.mu.Unlock()
	defer s.wg.Wait()
	defer s.stop()
	for {
		var (
			tick <-chan time.Time
			stop = func() bool { return false }
		)
		rate := s.cfg.Rate()
		if rate > 0 {
			tick, stop = s.cfg.Timer(s.interval(rate))
		} else {
			s.flush() // off: whatever waits goes now
		}
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-s.cfg.Kick:
			stop()
			continue
		case <-tick:
		}
		s.tick(ctx, rate)
	}
}

// tick fills one slot.
func (s *Stream) tick(ctx context.Context, rate float64) {
	select {
	case s.slots <- struct{}{}:
	default:
		s.m.skipped.WithLabelValues(reasonBusy).Inc()
		return
	}
	j := s.next()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.slots }()
		if j == nil {
			s.drop(ctx, kindDrop)
			return
		}
		s.runJob(j, rate)
	}()
}

// next takes the oldest waiting real packet, nil when none waits.
func (s *Stream) next() *job {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return nil
	}
	j := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[1:]
	return j
}

func (s *Stream) runJob(j *job, rate float64) {
	waited := time.Since(j.queued)
	s.m.wait.Observe(waited.Seconds())
	if rate > 0 && waited > time.Duration(slowTicks/rate*float64(time.Second)) {
		s.warnSlow(waited, rate)
	}
	err := j.send(j.ctx)
	if err == nil {
		s.m.sent.WithLabelValues(kindReal).Inc()
	}
	j.done <- err
}

// warnSlow tells the operator, at most once a minute, that real packets wait long for a slot.
func (s *Stream) warnSlow(waited time.Duration, rate float64) {
	s.mu.Lock()
	now := time.Now()
	if now.Sub(s.lastWarn) < warnEvery {
		s.mu.Unlock()
		return
	}
	s.lastWarn = now
	waiting := len(s.queue)
	s.mu.Unlock()
	s.log.Warn("stream: messages wait for their slot: this node sends more than its sendRate setting carries; raise sendRate",
		"waited", waited.Round(time.Millisecond), "waiting", waiting, "sendRate", rate)
}

// flush sends every waiting real packet at once (the stream is off or stopping).
func (s *Stream) flush() {
	for j := s.next(); j != nil; j = s.next() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.runJob(j, 0)
		}()
	}
}

// stop ends the pacing: Do sends at once from now on, and what waits goes now.
func (s *Stream) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.flush()
}

// Reemit sends one drop after an exponential delay of mean ReemitDelay: called for every real
// packet this node received over relayers as its recipient, so that on the wire the node relayed
// it. Nothing when the stream is off or not running.
func (s *Stream) Reemit() {
	if s.cfg.Rate() <= 0 {
		return
	}
	s.mu.Lock()
	ctx := s.run
	if ctx == nil || s.stopped {
		s.mu.Unlock()
		return
	}
	if s.reemits >= maxReemits {
		s.mu.Unlock()
		s.m.skipped.WithLabelValues(reasonReemits).Inc()
		return
	}
	s.reemits++
	var d time.Duration
	if s.cfg.ReemitDelay != nil {
		if mean := s.cfg.ReemitDelay(); mean > 0 {
			d = time.Duration(min(s.rng.ExpFloat64()*float64(mean), float64(maxWait)))
		}
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			s.reemits--
			s.mu.Unlock()
		}()
		if d > 0 {
			tick, stop := s.cfg.Timer(d)
			select {
			case <-ctx.Done():
				stop()
				return
			case <-tick:
			}
		}
		s.drop(ctx, kindReemit)
	}()
}

// drop sends one drop and counts it as kind.
func (s *Stream) drop(ctx context.Context, kind string) {
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	sent, err := s.cfg.Drop(sctx)
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		reason := router.Reason(err)
		s.m.skipped.WithLabelValues(reason).Inc()
		s.log.Debug("stream: drop not sent", "kind", kind, "reason", reason) // not err: it may name peers
		return
	}
	s.m.sent.WithLabelValues(kind).Inc()
	s.m.tokens.WithLabelValues(kind).Add(token.FromUint256(&sent.Cost).Float64())
}

// interval draws the wait before the next tick at rate packets per second.
func (s *Stream) interval(rate float64) time.Duration {
	s.mu.Lock()
	x := s.rng.ExpFloat64()
	s.mu.Unlock()
	sec := x / rate
	if sec >= maxWait.Seconds() {
		return maxWait
	}
	return time.Duration(sec * float64(time.Second))
}

type metrics struct {
	sent, tokens, skipped *prometheus.CounterVec
	wait                  prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, queued func() float64) metrics {
	m := metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "stream", Name: "packets_sent_total",
			Help: "Packets the stream sent: real ones in their slot, drop cover in an empty slot, re-emissions of received packets."}, []string{"kind"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "stream", Name: "tokens_spent_total",
			Help: "Tokens the first tickets of the stream's drop cover and re-emissions were worth."}, []string{"kind"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "stream", Name: "drops_skipped_total",
			Help: "Slots and re-emissions that sent nothing, by reason."}, []string{"reason"}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "relayd", Subsystem: "stream", Name: "queue_seconds",
			Help:    "How long real packets waited for their slot in the stream.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}),
	}
	for _, k := range []string{kindReal, kindDrop, kindReemit} {
		m.sent.WithLabelValues(k)
	}
	for _, k := range []string{kindDrop, kindReemit} {
		m.tokens.WithLabelValues(k)
	}
	for _, r := range []string{reasonNoPath, reasonNoBalance, reasonBusy, reasonFailed, reasonReemits} {
		m.skipped.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.sent, m.tokens, m.skipped, m.wait, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "relayd", Subsystem: "stream", Name: "queue_length", Help: "Real packets waiting for their slot."}, queued))
	}
	return m
}
