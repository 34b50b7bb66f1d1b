package node

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
	"github.com/holiman/uint256"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/relay"
)

// Loop cover traffic (docs/PROTOCOL.md, "Cover traffic"): at the Poisson rate of the coverRate
// setting a node sends a packet over a random path of relayers back to itself, built, framed and
// paid exactly like a message, so that an observer of the links cannot tell it from one. Its
// text is a random nonce and an HMAC of it under a key derived from the node's private key:
// the node recognises its own cover when it returns and drops it, without any state (a restart
// does not turn cover in flight into messages), and nobody else can make a message it swallows.
const (
	coverNonceLen = 16
	coverRawLen   = coverNonceLen + sha256.Size
	// coverTextLen is a cover text's length: nonce ‖ HMAC in unpadded base64url, printable
	// like a message's text.
	coverTextLen = (coverRawLen*8 + 5) / 6
	// maxCoverInFlight bounds the cover packets being built and handed to the transport at
	// once; a tick that finds them all busy is skipped, so cover never queues up behind a slow
	// channel or store and never holds up messages.
	maxCoverInFlight = 8
	// coverSendTimeout bounds one cover send (path, ticket, hand-over to the transport).
	coverSendTimeout = 10 * time.Second
	// maxCoverWait bounds one drawn interval, so that a tiny rate cannot overflow a Duration.
	maxCoverWait = 24 * time.Hour
)

// Reasons a cover tick sent nothing (relayd_cover_packets_skipped_total{reason}).
const (
	coverNoPath    = "no_path"    // no chain, no channels or no loop of open channels yet
	coverNoBalance = "no_balance" // loops exist, but no channel on them pays the tickets
	coverBusy      = "busy"       // maxCoverInFlight sends still under way
	coverFailed    = "send_failed"
)

var coverReasons = []string{coverNoPath, coverNoBalance, coverBusy, coverFailed}

// coverKeyInfo separates the cover key from anything else derived from the node's key.
const coverKeyInfo = "relayd loop cover text v1"

// coverSent is what one cover send cost: the first ticket's amount (zero without one).
type coverSent struct {
	cost uint256.Int
}

// coverTraffic sends the node's loop cover packets and recognises them when they return.
type coverTraffic struct {
	mac   []byte                                                    // HMAC key of cover texts
	rate  func() float64                                            // packets per second; 0: off
	kick  <-chan struct{}                                           // the rate may have changed
	send  func(ctx context.Context, text string) (coverSent, error) // one loop, paid like a message
	timer func(time.Duration) (<-chan time.Time, func() bool)
	rng   *rand.Rand // intervals; Run's goroutine only
	log   *slog.Logger
	m     coverMetrics
	slots chan struct{}
}

type coverMetrics struct {
	sent, returned, tokens, bytes prometheus.Counter
	skipped                       *prometheus.CounterVec
	rtt                           prometheus.Histogram
}

func newCoverMetrics(reg prometheus.Registerer) coverMetrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "cover", Name: name, Help: help})
	}
	m := coverMetrics{
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
	for _, r := range coverReasons {
		m.skipped.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.sent, m.returned, m.tokens, m.bytes, m.skipped, m.rtt)
	}
	return m
}

// coverKey derives the HMAC key of a node's cover texts from its private key with HKDF-SHA256:
// the same key after a restart, and one nobody without the private key can compute.
func coverKey(priv *ecdsa.PrivateKey) ([]byte, error) {
	k, err := hkdf.Key(sha256.New, crypto.FromECDSA(priv), nil, coverKeyInfo, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("cover key: %w", err)
	}
	return k, nil
}

// buildCover sets up the node's cover traffic: the coverRate setting, loops over the channel
// graph, the relay's Send.
func (n *Node) buildCover() (*coverTraffic, error) {
	key, err := coverKey(n.id.PrivateKey())
	if err != nil {
		return nil, err
	}
	return newCoverTraffic(coverTraffic{
		mac:  key,
		rate: func() float64 { return n.settings.get().CoverRate },
		kick: n.settings.coverKick,
		send: n.msg.sendCover,
		log:  n.log.With("component", "cover"),
	}, n.metrics)
}

// newCoverTraffic completes c (mac, rate, kick and send are required) with a crypto-seeded
// interval generator, the system timer where c has none, and metrics registered in reg.
func newCoverTraffic(c coverTraffic, reg prometheus.Registerer) (*coverTraffic, error) {
	if len(c.mac) == 0 || c.rate == nil || c.kick == nil || c.send == nil {
		return nil, errors.New("cover: mac, rate, kick and send are required")
	}
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
	c.m = newCoverMetrics(reg)
	c.slots = make(chan struct{}, maxCoverInFlight)
	return &c, nil
}

// Run sends cover packets at the current rate until ctx ends, then waits for the sends under
// way (they end with ctx). Intervals are exponential (a Poisson process), drawn again when the
// rate changes: the process is memoryless, so a new draw biases nothing.
func (c *coverTraffic) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		var (
			tick <-chan time.Time
			stop = func() bool { return false }
		)
		if r := c.rate(); r > 0 {
			tick, stop = c.timer(c.interval(r))
		}
		select {
		case <-ctx.Done():
			stop()
			return nil
		case <-c.kick:
			stop()
			continue
		case <-tick:
		}
		select {
		case c.slots <- struct{}{}:
		default:
			c.m.skipped.WithLabelValues(coverBusy).Inc()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-c.slots }()
			c.sendOne(ctx)
		}()
	}
}

// interval draws the wait before the next packet at rate packets per second.
func (c *coverTraffic) interval(rate float64) time.Duration {
	s := c.rng.ExpFloat64() / rate
	if s >= maxCoverWait.Seconds() {
		return maxCoverWait
	}
	return time.Duration(s * float64(time.Second))
}

func (c *coverTraffic) sendOne(ctx context.Context) {
	text, err := c.text()
	if err != nil {
		c.m.skipped.WithLabelValues(coverFailed).Inc()
		c.log.Error("cover text", "err", err)
		return
	}
	sctx, cancel := context.WithTimeout(ctx, coverSendTimeout)
	defer cancel()
	sent, err := c.send(sctx, text)
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		reason := coverReason(err)
		c.m.skipped.WithLabelValues(reason).Inc()
		// Not the error itself: it may name the peers of the path.
		c.log.Debug("cover packet not sent", "reason", reason)
		return
	}
	c.m.sent.Inc()
	c.m.bytes.Add(relay.MsgFrameLen)
	c.m.tokens.Add(tokensFloat(&sent.cost))
}

// coverReason names why a cover send failed.
func coverReason(err error) string {
	switch {
	case errors.Is(err, errNoChainPath), errors.Is(err, path.ErrNoPath), errors.Is(err, path.ErrUnknownNode),
		errors.Is(err, ledger.ErrChannelNotOpen), errors.Is(err, ledger.ErrChannelNotFound):
		return coverNoPath
	case errors.Is(err, path.ErrNotEnoughBalance), errors.Is(err, ledger.ErrNotEnoughBalance):
		return coverNoBalance
	}
	return coverFailed
}

// text makes a new cover text: a random nonce and its HMAC, in base64url.
func (c *coverTraffic) text() (string, error) {
	b := make([]byte, coverNonceLen, coverRawLen)
	if _, err := crand.Read(b); err != nil {
		return "", err
	}
	return coverEncoding.EncodeToString(c.sum(b)), nil
}

var coverEncoding = base64.RawURLEncoding

// sum appends the HMAC of nonce to it.
func (c *coverTraffic) sum(nonce []byte) []byte {
	h := hmac.New(sha256.New, c.mac)
	h.Write(nonce)
	return h.Sum(nonce)
}

// isCover reports whether text is a cover text of this node.
func (c *coverTraffic) isCover(text string) bool {
	if len(text) != coverTextLen {
		return false
	}
	raw, err := coverEncoding.Strict().DecodeString(text)
	if err != nil || len(raw) != coverRawLen {
		return false
	}
	want := c.sum(raw[:coverNonceLen:coverNonceLen])
	return hmac.Equal(want[coverNonceLen:], raw[coverNonceLen:])
}

// returned reports whether r is this node's own cover packet back from its loop, and counts it.
func (c *coverTraffic) returned(r relay.Received) bool {
	if !c.isCover(r.Text) {
		return false
	}
	c.m.returned.Inc()
	c.m.rtt.Observe(max(r.ReceivedAt.Sub(r.SentAt), 0).Seconds())
	return true
}

// sendCover sends text over a loop of relayers from this node back to itself, paid like a
// message, and reports what its first ticket was worth.
func (m *messaging) sendCover(ctx context.Context, text string) (coverSent, error) {
	var sent coverSent
	s := m.n.chain
	if s == nil {
		return sent, errNoChainPath
	}
	hops, err := m.pathTo(s, m.n.id.Address())
	if err != nil {
		return sent, err
	}
	r, err := m.relay.Send(ctx, hops, text)
	sent.cost = r.Cost
	return sent, err
}

// relayTransport is the transport the relay uses: the p2p host, wrapped in tests.
func (n *Node) relayTransport() relay.Transport {
	if n.wrapTransport != nil {
		return n.wrapTransport(n.host)
	}
	return n.host
}

// tokensFloat converts an amount in the smallest unit to tokens, for metrics.
func tokensFloat(a *uint256.Int) float64 { return a.Float64() / 1e18 }
