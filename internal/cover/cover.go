// Package cover is this node's loop cover traffic (docs/PROTOCOL.md, "Cover traffic"): at the
// Poisson rate of the coverRate setting the node sends a packet over a random path of relayers back
// to itself, built, framed and paid exactly like a message, so that an observer of the links
// cannot tell it from one. Its text is a random nonce and an HMAC of it under a key derived from
// the node's private key: the node recognises its own cover when it returns (Returned) and drops
// it, without any state (a restart does not turn cover in flight into messages), and nobody else
// can make a message it swallows. It counts what it sends, what returns and why a tick sent
// nothing.
//
// Of relayd's packages it imports only internal/relay (the frame size and the delivered message's
// type) and internal/router (its sentinels, which say why a loop was not sent) and internal/token.
// It must not import internal/node, internal/api, internal/ws or internal/admin; it never logs the
// paths of its loops.
package cover

import (
	"context"
	"crypto/ecdsa"
	"crypto/hkdf"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/token"
)

const (
	nonceLen = 16
	rawLen   = nonceLen + sha256.Size
	// TextLen is a cover text's length: nonce ‖ HMAC in unpadded base64url, printable like a
	// message's text.
	TextLen = (rawLen*8 + 5) / 6
	// maxInFlight bounds the cover packets being built and handed to the transport at once; a
	// tick that finds them all busy is skipped, so cover never queues up behind a slow channel
	// or store and never holds up messages.
	maxInFlight = 8
	// sendTimeout bounds one cover send (path, ticket, hand-over to the transport).
	sendTimeout = 10 * time.Second
	// maxWait bounds one drawn interval, so that a tiny rate cannot overflow a Duration.
	maxWait = 24 * time.Hour
	// ratePoll is the longest Run waits before it reads the rate again.
	ratePoll = 5 * time.Second
)

// Reasons a cover tick sent nothing (relayd_cover_packets_skipped_total{reason}).
const (
	reasonNoPath    = "no_path"    // no chain, no channels or no loop of open channels yet
	reasonNoBalance = "no_balance" // loops exist, but no channel on them pays the tickets
	reasonBusy      = "busy"       // maxInFlight sends still under way
	reasonFailed    = "send_failed"
)

var reasons = []string{reasonNoPath, reasonNoBalance, reasonBusy, reasonFailed}

// keyInfo separates the cover key from anything else derived from the node's key.
const keyInfo = "relayd loop cover text v1"

// Send sends one loop cover packet with text, paid like a message, and says what its first
// ticket cost; router.Router's SendLoop.
type Send func(ctx context.Context, text string) (relay.Sent, error)

// Config configures a Cover. Key, Rate and Kick are required.
type Config struct {
	// Key is the node's private key, from which the cover texts' HMAC key derives.
	Key *ecdsa.PrivateKey
	// Rate is the current rate in packets per second (the coverRate setting); 0: off.
	Rate func() float64
	// Kick receives when the rate may have changed.
	Kick <-chan struct{}
	// Timer makes the timer of one interval (tests); the system timer when nil.
	Timer func(time.Duration) (<-chan time.Time, func() bool)
	// Rand draws the intervals (Run's goroutine only); a crypto-seeded source when nil.
	Rand   *rand.Rand
	Logger *slog.Logger
	// Registerer, when set, receives the relayd_cover_* metrics.
	Registerer prometheus.Registerer
}

// Cover sends the node's loop cover packets (Run) and recognises them when they return
// (Returned).
type Cover struct {
	mac   []byte // HMAC key of cover texts
	rate  func() float64
	kick  <-chan struct{}
	timer func(time.Duration) (<-chan time.Time, func() bool)
	rng   *rand.Rand
	log   *slog.Logger
	m     metrics
	slots chan struct{}
}

type metrics struct {
	sent, returned, tokens, bytes prometheus.Counter
	skipped                       *prometheus.CounterVec
	rtt                           prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "cover", Name: name, Help: help})
	}
	m := metrics{
		sent:     c("packets_sent_total", "Loop cover packets this node sent."),
		returned: c("packets_returned_total", "Loop cover packets of this node that came back to it (dropped silently)."),
		tokens:   c("tokens_spent_total", "Tokens the first tickets of this node's cover packets were worth."),
		bytes:    c("bytes_sent_total", "Bytes of the msg frames this node sent as the first hop of its cover packets."),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "cover", Name: "packets_skipped_total",
			Help: "Cover ticks that sent nothing, by reason."}, []string{"reason"}),
		rtt: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "relayd", Subsystem: "cover", Name: "round_trip_seconds",
			Help:    "Time from sending a cover packet to its return, over its whole loop.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}),
	}
	for _, r := range reasons {
		m.skipped.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.sent, m.returned, m.tokens, m.bytes, m.skipped, m.rtt)
	}
	return m
}

// key derives the HMAC key of a node's cover texts from its private key with HKDF-SHA256: the
// same key after a restart, and one nobody without the private key can compute.
func key(priv *ecdsa.PrivateKey) ([]byte, error) {
	k, err := hkdf.Key(sha256.New, crypto.FromECDSA(priv), nil, keyInfo, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("cover key: %w", err)
	}
	return k, nil
}

// New checks cfg and returns a Cover; it sends nothing until Run.
func New(cfg Config) (*Cover, error) {
	if cfg.Key == nil || cfg.Rate == nil || cfg.Kick == nil {
		return nil, errors.New("cover: Key, Rate and Kick are required")
	}
	mac, err := key(cfg.Key)
	if err != nil {
		return nil, err
	}
	c := &Cover{mac: mac, rate: cfg.Rate, kick: cfg.Kick, timer: cfg.Timer, rng: cfg.Rand, log: cfg.Logger}
	if c.rng == nil {
		var seed [32]byte
		if _, err := crand.Read(seed[:]); err != nil {
			return nil, fmt.Errorf("cover: seed: %w", err)
		}
		c.rng = rand.New(rand.NewChaCha8(seed))
	}
	if c.timer == nil {
		c.timer = func(d time.Duration) (<-chan time.Time, func() bool) {
			t := time.NewTimer(d)
			return t.C, t.Stop
		}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.m = newMetrics(cfg.Registerer)
	c.slots = make(chan struct{}, maxInFlight)
	return c, nil
}

// Run sends cover packets through send at the current rate until ctx ends, then waits for the
// sends under way (they end with ctx). Intervals are exponential (a Poisson process), drawn again
// when the rate changes: the process is memoryless, so a new draw biases nothing.
func (c *Cover) Run(ctx context.Context, send Send) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var (
			tick <-chan time.Time
			stop = func() bool { return false }
		)
		// A wait is at most ratePoll: the rate may change without a kick (a relayer's own loops
		// start when the layers are drawn), and a draw cut short is drawn again (memoryless).
		wait, fire := ratePoll, false
		if r := c.rate(); r > 0 {
			if d := c.interval(r); d < ratePoll {
				wait, fire = d, true
			}
		}
		tick, stop = c.timer(wait)
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-c.kick:
			stop()
			continue
		case <-tick:
			if !fire {
				continue
			}
		}
		select {
		case c.slots <- struct{}{}:
		default:
			c.m.skipped.WithLabelValues(reasonBusy).Inc()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-c.slots }()
			c.sendOne(ctx, send)
		}()
	}
}

// interval draws the wait before the next packet at rate packets per second.
func (c *Cover) interval(rate float64) time.Duration {
	s := c.rng.ExpFloat64() / rate
	if s >= maxWait.Seconds() {
		return maxWait
	}
	return time.Duration(s * float64(time.Second))
}

func (c *Cover) sendOne(ctx context.Context, send Send) {
	text, err := c.text()
	if err != nil {
		c.m.skipped.WithLabelValues(reasonFailed).Inc()
		c.log.Error("cover text", "err", err)
		return
	}
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	sent, err := send(sctx, text)
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		reason := router.Reason(err)
		c.m.skipped.WithLabelValues(reason).Inc()
		// Not the error itself: it may name the peers of the path.
		c.log.Debug("cover packet not sent", "reason", reason)
		return
	}
	c.m.sent.Inc()
	c.m.bytes.Add(relay.MsgFrameLen)
	c.m.tokens.Add(token.FromUint256(&sent.Cost).Float64())
}

// text makes a new cover text: a random nonce and its HMAC, in base64url.
func (c *Cover) text() (string, error) {
	b := make([]byte, nonceLen, rawLen)
	if _, err := crand.Read(b); err != nil {
		return "", err
	}
	return encoding.EncodeToString(c.sum(b)), nil
}

var encoding = base64.RawURLEncoding

// sum appends the HMAC of nonce to it.
func (c *Cover) sum(nonce []byte) []byte {
	h := hmac.New(sha256.New, c.mac)
	h.Write(nonce)
	return h.Sum(nonce)
}

// isCover reports whether text is a cover text of this node.
func (c *Cover) isCover(text string) bool {
	if len(text) != TextLen {
		return false
	}
	raw, err := encoding.Strict().DecodeString(text)
	if err != nil || len(raw) != rawLen {
		return false
	}
	want := c.sum(raw[:nonceLen:nonceLen])
	return hmac.Equal(want[nonceLen:], raw[nonceLen:])
}

// Busy is how many cover sends are under way now.
func (c *Cover) Busy() int { return len(c.slots) }

// Text makes a fresh cover text of this node, as Run sends them: another node's Returned does
// not take it for its own.
func (c *Cover) Text() (string, error) { return c.text() }

// Returned reports whether r is this node's own cover packet back from its loop, and counts it
// (router.InboxConfig.Own).
func (c *Cover) Returned(r relay.Received) bool {
	if !c.isCover(r.Text) {
		return false
	}
	c.m.returned.Inc()
	c.m.rtt.Observe(max(r.ReceivedAt.Sub(r.SentAt), 0).Seconds())
	return true
}
