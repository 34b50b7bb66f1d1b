package node

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/settings"
)

// Sessions against the raw paid-packet rate (issue 28, BENCHMARKS.md "Sessions"). The network is
// a line of real nodes in this process: the dev chain, the entry A, relayers R1 … Rk and the exit
// B, with channels both ways between neighbours, so that every forward packet takes A → R1 → … →
// Rk → B and every reply block B → Rk → … → R1 → A. Mixing delay 0 and the stream off (the test
// configuration's defaults) unless a benchmark says otherwise:
//
//	go test -run '^$' -bench 'Session' -benchtime 3x -count 6 ./internal/node
//
// -count runs one benchmark's counts in a row, so each benchmark alternates itself: every
// iteration sends a burst of one-packet messages (the raw rate) and then the session's transfer,
// and the ratios compare measurements seconds apart.

// sessionRelayers is how many relayers the line has: issue 28's targets are at 3.
const sessionRelayers = 3

// Sizes of the transfers.
const (
	downloadSize = 1 << 20
	uploadSize   = 512 << 10
)

// sessionTarget is the exit's target: an HTTP server on the loopback interface. GET /bytes/{n}
// answers n bytes, GET /stream answers until the connection closes, POST /upload reads the body
// and records when it read the last byte.
type sessionTarget struct {
	addr     string
	uploaded chan time.Time
}

func newSessionTarget(tb testing.TB) *sessionTarget {
	tb.Helper()
	chunk := make([]byte, 32<<10)
	if _, err := rand.Read(chunk); err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	t := &sessionTarget{addr: ln.Addr().String(), uploaded: make(chan time.Time, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bytes/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n < 0 {
			http.Error(w, "bad size", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		for n > 0 {
			k, err := w.Write(chunk[:min(n, len(chunk))])
			if err != nil {
				return
			}
			n -= k
		}
	})
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		for {
			if _, err := w.Write(chunk[:4<<10]); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		select {
		case t.uploaded <- time.Now():
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Close() })
	return t
}

// newLineNet starts the dev chain and the line A, R1 … R<relayers>, B (each node's relayers
// setting at relayers) with channels both ways between neighbours, half a node's tokens each,
// after edit changed the configs (the entry's first, the exit's last). The result is a benchNet with A and B
// as the other node benchmarks have them, so its bursts measure the raw rate over the same path.
func newLineNet(tb testing.TB, relayers int, edit func(cfgs []config.Config)) *benchNet {
	tb.Helper()
	ctx := tb.Context()
	ch := startDevChain(tb)
	var cfgs []config.Config
	for range relayers + 2 {
		cfg := fundedNodeConfig(tb, ch, benchTokens)
		cfg.Network, cfg.HeartbeatInterval, cfg.Relayers = "bench", 2*time.Second, relayers
		cfgs = append(cfgs, cfg)
	}
	edit(cfgs)
	var nodes []*Node
	for _, cfg := range cfgs {
		nodes = append(nodes, startBenchNode(tb, cfg))
	}
	last := len(nodes) - 1
	net := &benchNet{tb: tb, nodes: nodes, a: nodes[0], b: nodes[last], recipient: nodes[last].id.PeerID().String(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	tb.Cleanup(net.client.CloseIdleConnections)
	poll(tb, "every node sees every announcement", func() bool {
		for _, n := range nodes {
			if nodeInfo(n).PeersAnnounced != len(nodes) {
				return false
			}
		}
		return true
	})
	funding := new(big.Int).Sub(benchTokens, tokens(1))
	funding.Rsh(funding, 1)
	var pairs [][2]int
	for i := range last {
		pairs = append(pairs, [2]int{i, i + 1}, [2]int{i + 1, i})
	}
	for _, p := range pairs {
		from, to := nodes[p[0]], nodes[p[1]]
		body := fmt.Sprintf(`{"peerId":%q,"amount":%q}`, to.id.PeerID(), funding.String())
		if status, raw := net.post(ctx, from, "/channels", body); status != http.StatusCreated {
			tb.Fatalf("open channel %d → %d: %d %s", p[0], p[1], status, raw)
		}
	}
	poll(tb, "every node indexed every channel", func() bool {
		for _, n := range nodes {
			for _, p := range pairs {
				if c, ok := n.chain.graph.Channel(nodes[p[0]].id.Address(), nodes[p[1]].id.Address()); !ok || c.Balance.Cmp(funding) != 0 {
					return false
				}
			}
		}
		return true
	})
	net.watchB()
	return net
}

// openSession opens a TCP session from A to B's target over REST and returns its local address.
func (net *benchNet) openSession(target string) string {
	status, raw := net.post(net.tb.Context(), net.a, "/sessions",
		fmt.Sprintf(`{"destination":%q,"protocol":"tcp","target":%q}`, net.recipient, target))
	var s sessionView
	if status != http.StatusCreated || json.Unmarshal(raw, &s) != nil {
		net.tb.Fatalf("POST /sessions: %d %s", status, raw)
	}
	return s.Listen
}

// rawRate sends one burst of rawBurst one-packet messages from A's router to B (as
// BenchmarkRawPaidPackets/router) and returns its packets per second; B's inbox takes them all
// and they are deleted before it returns (untimed).
func (net *benchNet) rawRate(b *testing.B, at *arrivals, seq *atomic.Int64) float64 {
	first := int(seq.Load()) + 1
	start := time.Now()
	if err := net.burst(b.Context(), seq, rawBurst, true); err != nil {
		b.Fatal(err)
	}
	rate := rawBurst / time.Since(start).Seconds()
	net.settle(b, at, first, int(seq.Load()))
	return rate
}

// BenchmarkSessionGoodput: per iteration a raw burst (one-packet messages from A's router to B),
// then a download of downloadSize bytes (B's target → A, the answer direction, on reply blocks)
// and an upload of uploadSize (A → B, forward packets), each over a new connection to a REST
// session's local port (one transport session each, as curl would open). It reports the raw
// packet rate and text rate (× 500 bytes), the goodputs, and their ratios to the raw text rate:
// over all iterations and the median of the per-iteration ratios.
func BenchmarkSessionGoodput(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and several nodes")
	}
	target := newSessionTarget(b)
	net := newLineNet(b, sessionRelayers, func(c []config.Config) { c[len(c)-1].ExitAllow = []string{target.addr} })
	at := &arrivals{}
	net.watchApp(net.b, at)
	listen := net.openSession(target.addr)
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	base := "http://" + listen
	var (
		seq                  atomic.Int64
		rawPkts              int
		rawTime, down, up    time.Duration
		pairedDown, pairedUp []float64
		answers, blocks      uint64 // in the downloads: B's frames sent, A's reply blocks
		forward              uint64 // and A's frames (acknowledgements)
		upSegs, upBlocks     uint64 // in the uploads: A's frames and reply blocks
		upAcks               uint64 // and B's frames (acknowledgements)
	)
	body := make([]byte, uploadSize)
	for b.Loop() {
		rate := net.rawRate(b, at, &seq)
		rawPkts += rawBurst
		rawTime += time.Duration(float64(rawBurst) / rate * float64(time.Second))
		text := rate * rawText

		a0, b0 := net.a.sessions.Carrier.Stats(), net.b.sessions.Carrier.Stats()
		start := time.Now()
		resp, err := client.Get(base + fmt.Sprintf("/bytes/%d", downloadSize))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != downloadSize {
			b.Fatalf("downloaded %d of %d bytes: %v", n, downloadSize, err)
		}
		d := time.Since(start)
		down += d
		a1, b1 := net.a.sessions.Carrier.Stats(), net.b.sessions.Carrier.Stats()
		answers += b1.FramesSent - b0.FramesSent
		blocks += a1.BlocksSent - a0.BlocksSent
		forward += a1.FramesSent - a0.FramesSent
		pairedDown = append(pairedDown, downloadSize/d.Seconds()/text)

		a0, b0 = net.a.sessions.Carrier.Stats(), net.b.sessions.Carrier.Stats()
		start = time.Now()
		resp, err = client.Post(base+"/upload", "application/octet-stream", strings.NewReader(string(body)))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			b.Fatalf("upload: %s", resp.Status)
		}
		u := (<-target.uploaded).Sub(start)
		a1, b1 = net.a.sessions.Carrier.Stats(), net.b.sessions.Carrier.Stats()
		upSegs += a1.FramesSent - a0.FramesSent
		upBlocks += a1.BlocksSent - a0.BlocksSent
		upAcks += b1.FramesSent - b0.FramesSent
		up += u
		pairedUp = append(pairedUp, uploadSize/u.Seconds()/text)
	}
	raw := float64(rawPkts) / rawTime.Seconds()
	downRate := float64(len(pairedDown)*downloadSize) / down.Seconds()
	upRate := float64(len(pairedUp)*uploadSize) / up.Seconds()
	b.ReportMetric(raw, "raw-pkts/s")
	b.ReportMetric(raw*rawText, "raw-text-B/s")
	b.ReportMetric(downRate, "down-B/s")
	b.ReportMetric(upRate, "up-B/s")
	b.ReportMetric(downRate/(raw*rawText), "down/raw")
	b.ReportMetric(upRate/(raw*rawText), "up/raw")
	b.ReportMetric(median(pairedDown), "paired-p50-down/raw")
	b.ReportMetric(median(pairedUp), "paired-p50-up/raw")
	b.ReportMetric(float64(answers)/float64(len(pairedDown)), "down-answers/op")
	b.ReportMetric(float64(blocks)/float64(answers), "down-blocks/answer")
	b.ReportMetric(float64(forward)/float64(answers), "down-acks/answer")
	b.ReportMetric(float64(upSegs)/float64(len(pairedUp)), "up-frames/op")
	b.ReportMetric(float64(upBlocks)/float64(upSegs), "up-blocks/frame")
	b.ReportMetric(float64(upAcks)/float64(upSegs), "up-acks/frame")
}

// BenchmarkSessionRamp: per iteration a raw burst, then a download of GET /stream over a new
// connection to a REST session's port for rampFor, the bytes received sampled every 50 ms. The
// plateau is the rate over the second half; the ramp is the time from the connection's dial to
// the first sample at which the rate over the last rampSmooth samples (fewer at the start)
// reaches half the plateau.
func BenchmarkSessionRamp(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and several nodes")
	}
	const (
		rampFor    = 8 * time.Second
		sampleStep = 50 * time.Millisecond
		rampSmooth = 4 // samples: 200 ms
	)
	target := newSessionTarget(b)
	net := newLineNet(b, sessionRelayers, func(c []config.Config) { c[len(c)-1].ExitAllow = []string{target.addr} })
	at := &arrivals{}
	net.watchApp(net.b, at)
	listen := net.openSession(target.addr)
	var (
		seq                        atomic.Int64
		ramps, firsts              []time.Duration
		plateaus, ratios, rawRates []float64
	)
	for b.Loop() {
		rate := net.rawRate(b, at, &seq)
		rawRates = append(rawRates, rate)

		start := time.Now()
		conn, err := (&netDialer{}).dial(listen)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Write([]byte("GET /stream HTTP/1.1\r\nHost: target\r\n\r\n")); err != nil {
			b.Fatal(err)
		}
		var got, firstAt atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 64<<10)
			for {
				n, err := conn.Read(buf)
				if n > 0 && got.Add(int64(n)) == int64(n) {
					firstAt.Store(int64(time.Since(start)))
				}
				if err != nil {
					return
				}
			}
		}()
		tick := time.NewTicker(sampleStep)
		samples := []int64{0}
		for len(samples) <= int(rampFor/sampleStep) {
			<-tick.C
			samples = append(samples, got.Load())
		}
		tick.Stop()
		conn.Close()
		<-done
		half := len(samples) / 2
		plateau := float64(samples[len(samples)-1]-samples[half]) / (float64(len(samples)-1-half) * sampleStep.Seconds())
		ramp := rampFor
		for i := 1; i < len(samples); i++ {
			j := max(i-rampSmooth, 0)
			if float64(samples[i]-samples[j])/(float64(i-j)*sampleStep.Seconds()) >= plateau/2 {
				ramp = time.Duration(i) * sampleStep
				break
			}
		}
		ramps = append(ramps, ramp)
		firsts = append(firsts, time.Duration(firstAt.Load()))
		plateaus = append(plateaus, plateau)
		ratios = append(ratios, plateau/(rate*rawText))
	}
	slices.Sort(ramps)
	slices.Sort(firsts)
	b.ReportMetric(bench.Percentile(ramps, 50).Seconds(), "half-plateau-s")
	b.ReportMetric(ramps[len(ramps)-1].Seconds(), "half-plateau-max-s")
	b.ReportMetric(float64(bench.Percentile(firsts, 50))/1e6, "first-byte-ms")
	b.ReportMetric(median(plateaus), "plateau-B/s")
	b.ReportMetric(median(rawRates)*rawText, "raw-text-B/s")
	b.ReportMetric(median(ratios), "plateau/raw")
}

// BenchmarkSessionTTFB: per iteration a GET on a kept-alive connection to a REST session (open,
// stocked with reply blocks: a request and its answer only), one one-packet message from A's REST API to B's admin
// stream (as BenchmarkMessageEndToEnd: the one-way latency), then an HTTP GET of one byte
// through A's SOCKS5 entry (socks5h, a new connection, as curl makes it: the CONNECT opens a
// session to the exit, which dials the target; then the request goes and the answer comes back),
// timed to the response's first byte. Connections are paced at most 8 a second (the exit's
// default limit is 10 new connections a second).
func BenchmarkSessionTTFB(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and several nodes")
	}
	benchTTFB(b, func(*config.Config) {}, 16)
}

// BenchmarkSessionDefaults: BenchmarkSessionTTFB at the default privacy settings (mixing delay
// mean 100 ms a hop, the stream at 10 packets a second, cover loops at 1 a second), and a
// download of defaultsDownload bytes through the SOCKS5 entry, timed to the last byte.
func BenchmarkSessionDefaults(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and several nodes")
	}
	d := settings.Defaults()
	benchTTFB(b, func(c *config.Config) {
		c.MixDelayMean, c.MixDelayMax, c.SendRate, c.CoverRate = d.MixDelayMean, 0, d.SendRate, d.CoverRate
	}, defaultsDownload)
}

// defaultsDownload is the size of BenchmarkSessionDefaults' download.
const defaultsDownload = 16 << 10

// benchTTFB runs BenchmarkSessionTTFB's iterations on a line whose every node edit changed,
// with a download of size bytes.
func benchTTFB(b *testing.B, edit func(*config.Config), size int) {
	target := newSessionTarget(b)
	net := newLineNet(b, sessionRelayers, func(c []config.Config) {
		for i := range c {
			edit(&c[i])
		}
		c[len(c)-1].ExitAllow = []string{target.addr}
		c[0].SOCKS5Listen, c[0].SOCKS5Exit = "127.0.0.1:0", "exit"
	})
	if status, raw := net.post(b.Context(), net.a, "/aliases", fmt.Sprintf(`{"alias":"exit","peerId":%q}`, net.recipient)); status != http.StatusCreated {
		b.Fatalf("POST /aliases: %d %s", status, raw)
	}
	proxy := &url.URL{Scheme: "socks5h", Host: net.a.sessions.SOCKS.Addr().String()}
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{Proxy: http.ProxyURL(proxy), DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	// warm keeps one connection to a REST session open: its GETs time a request and its answer
	// over a session that is open and stocked with reply blocks.
	warm := &http.Client{Timeout: 5 * time.Minute}
	defer warm.CloseIdleConnections()
	warmURL := "http://" + net.openSession(target.addr) + "/bytes/16"
	pace := time.NewTicker(125 * time.Millisecond)
	defer pace.Stop()
	var oneWay, connect, ttfb, whole, warmTTFB []time.Duration
	seq := 0
	for b.Loop() {
		var connected, first time.Time
		trace := &httptrace.ClientTrace{
			GotConn:              func(httptrace.GotConnInfo) { connected = time.Now() },
			GotFirstResponseByte: func() { first = time.Now() },
		}
		wreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(b.Context(), trace), http.MethodGet, warmURL, nil)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		resp, err := warm.Do(wreq)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		warmTTFB = append(warmTTFB, first.Sub(start))

		start = time.Now()
		d, err := net.send(b.Context(), seq)
		if err != nil {
			b.Fatal(err)
		}
		if err := await(b.Context(), d); err != nil {
			b.Fatalf("message %d: %v", seq, err)
		}
		oneWay = append(oneWay, time.Since(start))
		seq++

		<-pace.C
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(b.Context(), trace), http.MethodGet,
			fmt.Sprintf("http://%s/bytes/%d", target.addr, size), nil)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		resp, err = client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, bufio.NewReader(resp.Body))
		resp.Body.Close()
		if err != nil || n != int64(size) {
			b.Fatalf("downloaded %d of %d bytes: %v", n, size, err)
		}
		whole = append(whole, time.Since(start))
		connect = append(connect, connected.Sub(start))
		ttfb = append(ttfb, first.Sub(start))
	}
	if len(warmTTFB) > 1 {
		warmTTFB = warmTTFB[1:] // the first opened the session
	}
	for _, s := range [][]time.Duration{oneWay, connect, ttfb, whole, warmTTFB} {
		slices.Sort(s)
	}
	p50 := func(s []time.Duration) float64 { return float64(bench.Percentile(s, 50)) / 1e6 }
	b.ReportMetric(p50(oneWay), "one-way-p50-ms")
	b.ReportMetric(p50(connect), "connect-p50-ms")
	b.ReportMetric(p50(ttfb), "ttfb-p50-ms")
	b.ReportMetric(float64(bench.Percentile(ttfb, 99))/1e6, "ttfb-p99-ms")
	b.ReportMetric(p50(ttfb)/p50(oneWay), "ttfb/one-way")
	b.ReportMetric(p50(warmTTFB), "open-session-ttfb-p50-ms")
	b.ReportMetric(p50(whole), "download-p50-ms")
	b.ReportMetric(float64(size)/bench.Percentile(whole, 50).Seconds(), "download-B/s")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
