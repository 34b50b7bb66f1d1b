package node

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/wait"
)

// testCover is a coverTraffic over fakes: send and timer are the test's.
func testCover(t *testing.T, rate *atomic.Value, kick chan struct{}, send func(context.Context, string) (coverSent, error),
	timer func(time.Duration) (<-chan time.Time, func() bool)) *coverTraffic {
	t.Helper()
	key, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	mac, err := coverKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCoverTraffic(coverTraffic{
		mac: mac, rate: func() float64 { return rate.Load().(float64) }, kick: kick, send: send, timer: timer,
		rng: rand.New(rand.NewChaCha8([32]byte{7})),
	}, prometheus.NewRegistry())
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
	send := func(context.Context, string) (coverSent, error) { return coverSent{}, nil }
	a := testCover(t, rateOf(0), make(chan struct{}), send, nil)
	b := testCover(t, rateOf(0), make(chan struct{}), send, nil)
	text, err := a.text()
	if err != nil {
		t.Fatal(err)
	}
	if len(text) != coverTextLen || !a.isCover(text) {
		t.Fatalf("own cover text of %d bytes not recognised", len(text))
	}
	other, _ := b.text()
	again, _ := a.text()
	if again == text {
		t.Fatal("two cover texts are equal: the nonce is not random")
	}
	raw, _ := coverEncoding.DecodeString(text)
	flipped := append([]byte(nil), raw...)
	flipped[coverNonceLen+3] ^= 1
	nonceFlipped := append([]byte(nil), raw...)
	nonceFlipped[0] ^= 1
	for name, s := range map[string]string{
		"another node's": other, "changed MAC": coverEncoding.EncodeToString(flipped), "changed nonce": coverEncoding.EncodeToString(nonceFlipped),
		"raw bytes": string(raw), "padded": coverEncoding.EncodeToString(raw) + "==",
		"truncated": text[:coverTextLen-1], "longer": text + "x", "empty": "", "a message": strings.Repeat("a", coverTextLen),
	} {
		if a.isCover(s) {
			t.Errorf("%s text taken for cover", name)
		}
	}

	key, _ := crypto.GenerateKey()
	k1, err1 := coverKey(key)
	k2, err2 := coverKey(key)
	other2, _ := crypto.GenerateKey()
	k3, _ := coverKey(other2)
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
	send := func(context.Context, string) (coverSent, error) { sends.Add(1); return coverSent{}, nil }
	c := testCover(t, rateOf(rate), make(chan struct{}), send, timer)
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	ticks := float64(sends.Load()) + counterValue(c.m.skipped.WithLabelValues(coverBusy))
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
	c = testCover(t, r, kick, send, timer)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	r.Store(rate)
	kick <- struct{}{}
	waitFor(t, "cover sends after the rate was set", func() bool { return sends.Load() > 0 })
	cancel()
	waitFor(t, "Run to return", func() bool { return len(done) == 1 })
}

// TestCoverBoundedAndStops: sends that hang never pile up beyond maxCoverInFlight (further
// ticks are skipped as busy), and Run returns once its context ends, after the sends under way.
func TestCoverBoundedAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var inFlight, most atomic.Int64
	send := func(ctx context.Context, _ string) (coverSent, error) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-ctx.Done() // a send stuck until shutdown
		inFlight.Add(-1)
		return coverSent{}, ctx.Err()
	}
	timer := func(time.Duration) (<-chan time.Time, func() bool) {
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c, func() bool { return false }
	}
	c := testCover(t, rateOf(100), make(chan struct{}), send, timer)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	waitFor(t, "every slot busy", func() bool { return most.Load() >= maxCoverInFlight })
	busy := counterValue(c.m.skipped.WithLabelValues(coverBusy))
	waitFor(t, "busy skips", func() bool { return counterValue(c.m.skipped.WithLabelValues(coverBusy)) >= busy+100 })
	if most.Load() != maxCoverInFlight {
		t.Fatalf("%d sends at once, want at most %d", most.Load(), maxCoverInFlight)
	}
	cancel()
	waitFor(t, "Run to return", func() bool { return len(done) == 1 })
	if err := <-done; err != nil || inFlight.Load() != 0 {
		t.Fatalf("Run: %v with %d sends under way", err, inFlight.Load())
	}
	if got := counterValue(c.m.skipped.WithLabelValues(coverFailed)); got != 0 {
		t.Fatalf("sends cut by the shutdown counted as failed: %v", got)
	}
}

// TestCoverReason: why a send failed, as the skipped metric names it.
func TestCoverReason(t *testing.T) {
	for err, want := range map[error]string{
		errNoChainPath:             coverNoPath,
		path.ErrNoPath:             coverNoPath,
		ledger.ErrChannelNotOpen:   coverNoPath,
		path.ErrNotEnoughBalance:   coverNoBalance,
		ledger.ErrNotEnoughBalance: coverNoBalance,
		errors.New("boom"):         coverFailed,
	} {
		if got := coverReason(err); got != want {
			t.Errorf("%v: %s, want %s", err, got, want)
		}
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, cond, 10*time.Second, what)
}

// metricFloat reads a metric of n as a number (0 when absent).
func (net *testNet) metricFloat(n *Node, name string) float64 {
	net.t.Helper()
	s := net.metric(n, name)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		net.t.Fatalf("%s = %q", name, s)
	}
	return v
}

// TestCoverTraffic: on a small network a node with a cover rate sends loop packets over paid
// channels back to itself: without a loop the ticks are skipped and counted; with one the
// packets return, are counted, and reach neither the admin WebSocket nor the message metrics;
// the relayers hold the cover's tickets, whose worth the node reports. A text made like a cover
// text by another node is an ordinary message.
func TestCoverTraffic(t *testing.T) {
	net := newTestNet(t, 4)
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	net.open(a, r1, tokens(10))
	net.open(r1, r2, tokens(10))
	aFrames := watch(t, a)

	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":20}`, http.StatusNoContent, nil)
	net.eventually("cover ticks skipped without a loop", func() bool {
		return net.metricFloat(a, `relayd_cover_packets_skipped_total{reason="no_path"}`) >= 2
	})
	if sent := net.metricFloat(a, "relayd_cover_packets_sent_total"); sent != 0 {
		t.Fatalf("%v cover packets sent without a loop", sent)
	}

	// Off while the loop's last channel is indexed: a node that has indexed it sends over it
	// before the relayer that pays it has, which loses that packet (a fresh channel's race, not
	// the subject here).
	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":0}`, http.StatusNoContent, nil)
	waitFor(t, "cover sends under way to end", func() bool { return len(a.cover.slots) == 0 })
	net.open(r2, a, tokens(10)) // the loop a → r1 → r2 → a
	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":20}`, http.StatusNoContent, nil)
	net.eventually("cover packets back", func() bool { return net.metricFloat(a, "relayd_cover_packets_returned_total") >= 5 })
	net.mustCall(a, http.MethodPut, "/settings/coverRate", `{"settingValue":0}`, http.StatusNoContent, nil)
	var sent float64
	defer func() {
		if t.Failed() {
			for i, n := range net.nodes {
				req, _ := http.NewRequest(http.MethodGet, "http://"+n.APIAddr().String()+"/api/v2/node/metrics", nil)
				req.Header.Set("x-auth-token", testToken)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				for _, l := range strings.Split(string(body), "\n") {
					if (strings.HasPrefix(l, "relayd_relay") || strings.HasPrefix(l, "relayd_cover")) && !strings.HasSuffix(l, " 0") && !strings.Contains(l, "bucket") {
						t.Logf("node %d: %s", i, l)
					}
				}
			}
		}
	}()
	net.eventually("every cover packet sent is back", func() bool {
		sent = net.metricFloat(a, "relayd_cover_packets_sent_total")
		return sent == net.metricFloat(a, "relayd_cover_packets_returned_total")
	})
	if got := net.metricFloat(a, "relayd_cover_bytes_sent_total"); got != sent*relay.MsgFrameLen {
		t.Fatalf("cover bytes %v for %v packets", got, sent)
	}
	if n := net.metricFloat(a, "relayd_cover_round_trip_seconds_count"); n != sent {
		t.Fatalf("%v round trips observed for %v returned packets", n, sent)
	}
	if n := net.metricFloat(a, "relayd_message_latency_seconds_count"); n != 0 {
		t.Fatalf("cover counted as %v received messages", n)
	}
	for _, f := range aFrames.drain() {
		if strings.HasPrefix(f, "message ") || strings.Contains(f, "NODE RECEIVED MESSAGE") {
			t.Fatalf("cover reached the admin WebSocket: %q", f)
		}
	}

	// Paid like messages: r1 holds a ticket from a per cover packet, worth what a reports.
	var list []ticketView
	net.eventually("r1's cover tickets acknowledged", func() bool {
		net.mustCall(r1, http.MethodGet, "/tickets", "", http.StatusOK, &list)
		return float64(len(list)) == sent
	})
	var worth float64
	for _, tk := range list {
		v, _ := strconv.ParseFloat(tk.Amount, 64)
		worth += v / 1e18
		if tk.Counterparty != a.id.PeerID().String() {
			t.Fatalf("r1 holds a ticket from %s", tk.Counterparty)
		}
	}
	if spent := net.metricFloat(a, "relayd_cover_tokens_spent_total"); worth == 0 || math.Abs(spent-worth) > 1e-9 {
		t.Fatalf("cover spent %v tokens, r1's tickets are worth %v", spent, worth)
	}

	// b's cover text is no cover text of a's: a delivers it.
	forged, err := b.cover.text()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.msg.send(t.Context(), []peer.ID{a.id.PeerID()}, forged); err != nil {
		t.Fatal(err)
	}
	expectMessage(t, aFrames, forged)
}
