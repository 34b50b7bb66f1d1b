package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/config"
)

// The benchmarks below run a whole network in this process: the dev chain
// and nodes A, R1, R2, B on 127.0.0.1 (libp2p over loopback), funded
// channels A → R1 → R2 → B only (so the path is forced) and no mixing
// delay. A message goes in through A's REST API (POST /api/v2/messages) and
// counts as delivered when its message frame arrives on B's admin
// WebSocket, as `relayctl bench` sees it. Profile with
//
//	go test -run '^$' -bench 'MessageEndToEnd|MessageThroughput' -cpuprofile cpu.out ./internal/node/
//
// (the profile covers all four nodes, the chain and the client).

// benchNet is the four-node network of the benchmarks.
type benchNet struct {
	tb         testing.TB
	nodes      []*Node // A, R1, R2, B
	a, b       *Node
	recipient  string // B's PeerId
	client     *http.Client
	deliveries sync.Map // seq → chan struct{}, closed when the message arrives at B
	late       atomic.Int64
}

// benchTokens is each node's token balance: enough for 0.02 per message
// over a long benchmark.
var benchTokens = tokens(1_000_000)

func newBenchNet(tb testing.TB) *benchNet {
	tb.Helper()
	return newBenchNetWith(tb, false)
}

// newBenchNetWith is newBenchNet; with back it also opens B → R2 → R1 → A
// (each channel then holds half a node's tokens), the return path of
// acknowledgements and answers.
func newBenchNetWith(tb testing.TB, back bool) *benchNet {
	tb.Helper()
	ctx := tb.Context()
	ch := startDevChain(tb)
	var nodes []*Node
	for range 4 {
		cfg := fundedNodeConfig(tb, ch, benchTokens)
		cfg.Network, cfg.HeartbeatInterval = "bench", 2*time.Second
		nodes = append(nodes, startBenchNode(tb, cfg))
	}
	net := &benchNet{tb: tb, nodes: nodes, a: nodes[0], b: nodes[3], recipient: nodes[3].id.PeerID().String(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	// Before the nodes stop: an idle connection that never carried a
	// request holds up a node's graceful shutdown.
	tb.Cleanup(net.client.CloseIdleConnections)
	poll(tb, "every node sees every announcement", func() bool {
		for _, n := range nodes {
			if info := nodeInfo(n); info.PeersAnnounced != len(nodes) {
				return false
			}
		}
		return true
	})
	funding := new(big.Int).Sub(benchTokens, tokens(1))
	pairs := [][2]int{{0, 1}, {1, 2}, {2, 3}}
	if back {
		funding.Rsh(funding, 1)
		pairs = append(pairs, [2]int{3, 2}, [2]int{2, 1}, [2]int{1, 0})
	}
	for _, p := range pairs {
		i, from, to := p[0], nodes[p[0]], nodes[p[1]]
		body := fmt.Sprintf(`{"peerId":%q,"amount":%q}`, to.id.PeerID(), funding.String())
		if status, raw := net.post(ctx, from, "/channels", body); status != http.StatusCreated {
			tb.Fatalf("open channel %d → %d: %d %s", i+1, p[1]+1, status, raw)
		}
		poll(tb, "every node indexed the channel", func() bool {
			for _, n := range nodes {
				if c, ok := n.chain.graph.Channel(from.id.Address(), to.id.Address()); !ok || c.Balance.Cmp(funding) != 0 {
					return false
				}
			}
			return true
		})
	}
	net.watchB()
	return net
}

func startBenchNode(tb testing.TB, cfg config.Config) *Node {
	tb.Helper()
	n, err := New(cfg, os.Stderr, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
	})
	return n
}

// poll checks cond every 20 ms until it holds, for at most 60 s.
func poll(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
}

func (net *benchNet) post(ctx context.Context, n *Node, path, body string) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+n.APIAddr().String()+"/api/v2"+path, bytes.NewReader([]byte(body)))
	if err != nil {
		net.tb.Fatal(err)
	}
	req.Header.Set("x-auth-token", testToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := net.client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// watchB reads B's admin frames and closes the delivery channel of every
// message of the benchmark that arrives.
func (net *benchNet) watchB() {
	u := "ws://" + net.b.AdminAddr().String() + "/?apiToken=" + url.QueryEscape(testToken)
	c, _, err := websocket.Dial(net.tb.Context(), u, nil)
	if err != nil {
		net.tb.Fatal(err)
	}
	c.SetReadLimit(1 << 20)
	// The first frame (the replay) means the server registered us.
	if _, _, err := c.Read(net.tb.Context()); err != nil {
		net.tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	net.tb.Cleanup(func() { cancel(); c.CloseNow(); <-done })
	go func() {
		defer close(done)
		for {
			_, raw, err := c.Read(ctx)
			if err != nil {
				return
			}
			var f struct{ Type, Msg string }
			if json.Unmarshal(raw, &f) != nil || f.Type != "message" {
				continue
			}
			if _, seq, ok := bench.ParseMessageText(f.Msg); ok {
				if d, ok := net.deliveries.Load(seq); ok {
					close(d.(chan struct{}))
					net.deliveries.Delete(seq)
				} else {
					net.late.Add(1)
				}
			}
		}
	}()
}

// send posts message seq from A to B and returns the channel closed on its
// delivery.
func (net *benchNet) send(ctx context.Context, seq int) (<-chan struct{}, error) {
	return net.sendSized(ctx, seq, 100)
}

// sendSized is send with a text of size bytes.
func (net *benchNet) sendSized(ctx context.Context, seq, size int) (<-chan struct{}, error) {
	d := make(chan struct{})
	net.deliveries.Store(seq, d)
	text := bench.MessageText("gobench0", seq, size)
	status, raw := net.post(ctx, net.a, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, text, net.recipient))
	if status != http.StatusAccepted {
		net.deliveries.Delete(seq)
		return nil, fmt.Errorf("message %d: HTTP %d %s", seq, status, raw)
	}
	return d, nil
}

// await waits for a delivery, at most 30 s.
func await(ctx context.Context, d <-chan struct{}) error {
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case <-d:
		return nil
	case <-t.C:
		return fmt.Errorf("not delivered within 30 s")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BenchmarkMessageEndToEnd: one paid message at a time from A's REST API
// over R1 and R2 to B's admin WebSocket; ns/op is the latency of one
// message (p50 and p99 are reported too).
func BenchmarkMessageEndToEnd(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and four nodes")
	}
	net := newBenchNet(b)
	ctx := b.Context()
	var lat []time.Duration
	seq := 0
	for b.Loop() {
		start := time.Now()
		d, err := net.send(ctx, seq)
		if err != nil {
			b.Fatal(err)
		}
		if err := await(ctx, d); err != nil {
			b.Fatalf("message %d: %v", seq, err)
		}
		lat = append(lat, time.Since(start))
		seq++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(bench.Percentile(lat, 50))/1e6, "p50-ms")
	b.ReportMetric(float64(bench.Percentile(lat, 99))/1e6, "p99-ms")
}

// BenchmarkMessageThroughput: paid messages A → R1 → R2 → B pipelined,
// at most `window` undelivered at any time (each of window workers sends
// one, waits for its delivery, sends the next); reports messages/s from
// the first send to the last delivery.
func BenchmarkMessageThroughput(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and four nodes")
	}
	for _, window := range []int{16, 64} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			net := newBenchNet(b)
			ctx := b.Context()
			var next atomic.Int64
			errs := make(chan error, window)
			work := make(chan struct{}, window)
			var wg sync.WaitGroup
			for range window {
				wg.Go(func() {
					for range work {
						seq := int(next.Add(1))
						d, err := net.send(ctx, seq)
						if err == nil {
							err = await(ctx, d)
						}
						if err != nil {
							select {
							case errs <- err:
							default:
							}
							return
						}
					}
				})
			}
			start := time.Now()
			n := 0
			for b.Loop() {
				select {
				case work <- struct{}{}:
					n++
				case err := <-errs:
					b.Fatal(err)
				}
			}
			close(work)
			wg.Wait()
			elapsed := time.Since(start)
			select {
			case err := <-errs:
				b.Fatal(err)
			default:
			}
			b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
		})
	}
}

// TestBenchToolOnDevChain runs the bench library (relayctl bench) against
// an in-process network: every message the API accepts arrives, matched by
// its id, and every node's metrics are read.
func TestBenchToolOnDevChain(t *testing.T) {
	net := newTestNet(t, 4)
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	net.open(a, r1, tokens(10))
	net.open(r1, r2, tokens(10))
	net.open(r2, b, tokens(10))
	env := bench.Env{APIToken: testToken}
	for i, n := range net.nodes {
		env.Nodes = append(env.Nodes, bench.Node{Index: i + 1, PeerID: n.id.PeerID().String(), NativeAddress: n.id.Address().Hex(),
			APIURL: "http://" + n.APIAddr().String(), WSURL: "ws://" + n.AdminAddr().String()})
	}
	rep, err := bench.Run(t.Context(), bench.Config{Env: env, Senders: []int{1}, Recipient: 4, Messages: 60, Rate: 0,
		Concurrency: 8, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 60 || rep.Delivered != 60 || rep.Lost != 0 || rep.Rejected != 0 {
		t.Fatalf("sent %d delivered %d lost %d rejected %d %v", rep.Sent, rep.Delivered, rep.Lost, rep.Rejected, rep.Rejections)
	}
	if rep.NodeLatency.Count != 60 || rep.Latency.P50Ms <= 0 {
		t.Fatalf("latency %+v, node latency %+v", rep.Latency, rep.NodeLatency)
	}
	for _, n := range rep.Nodes {
		// All four nodes share this process, so each reads the same
		// process metrics.
		if n.Scrapes < 2 || n.ScrapeErrors != 0 || n.CPUSeconds <= 0 || n.PeakRSSBytes <= 0 {
			t.Fatalf("node usage %+v", n)
		}
	}
	// A message over a depleted channel is rejected with its code.
	rep, err = bench.Run(t.Context(), bench.Config{Env: env, Senders: []int{4}, Recipient: 1, Messages: 3, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rejected != 3 || rep.Rejections["HTTP 422 PATH_NOT_FOUND"] != 3 {
		t.Fatalf("rejections %v", rep.Rejections)
	}
}
