package relayload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/devfund"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// Defaults of Config's optional fields.
const (
	DefaultScrapeInterval = 250 * time.Millisecond
	DefaultDrainTimeout   = 30 * time.Second
	DefaultTextSize       = 100
	// pushQueue is G's outbound queue for the relayer, in frames: deep enough that the writer
	// always has a batch at the rates a relayer can take.
	pushQueue = 8192
	// queueFullWait is how long the push waits when G's queue is full before it retries the
	// same frame (frames are never skipped: the relayer takes ticket indexes in order only).
	queueFullWait = 500 * time.Microsecond
	// windowWait is how long the push waits when Config.Window frames are unacknowledged.
	windowWait = 100 * time.Microsecond
)

// Config configures Run. Env, Relayer, Recipient and Packets are required.
type Config struct {
	// Env is the network (cluster.env).
	Env bench.Env
	// Relayer and Recipient are 1-based node indexes of Env: the path is [Relayer, Recipient],
	// so the relayer must have an open channel to the recipient.
	Relayer, Recipient int
	// Packets is how many packets are pushed in the measured window (one more is sent before
	// it to open the connection).
	Packets int
	// Rate is packets per second; 0 pushes as fast as G's transport takes them.
	Rate float64
	// Window, when positive, keeps at most Window frames pushed and not yet acknowledged by the
	// relayer: a closed loop that pushes as fast as the relayer takes packets without
	// overflowing its queues (with Rate 0), so that its capacity shows without drops.
	Window int
	// Prebuild is the number of goroutines that build packets (default 1).
	Prebuild int
	// TextSize is each message's length in bytes (default DefaultTextSize).
	TextSize int
	// Drop makes every packet drop cover (relay.SendDrop): the recipient peels it, keeps its
	// ticket and acknowledges it like a message, but delivers nothing, so that the recipient's
	// share of a machine it shares with the relayer is its relay work only (Report.Delivered
	// stays 0).
	Drop bool
	// ScrapeInterval is how often the relayer's metrics are read (default
	// DefaultScrapeInterval).
	ScrapeInterval time.Duration
	// DrainTimeout bounds the wait, after the push, for the relayer and the recipient to finish
	// (default DefaultDrainTimeout).
	DrainTimeout time.Duration
	// WatchCPU says the relayer is pinned to CPU CPU of this machine: the report says how busy
	// that CPU was in all (Linux /proc/stat), so that what other processes took shows.
	WatchCPU bool
	CPU      int
	// Clock paces the push (default bench.SystemClock).
	Clock bench.Clock
	// HTTP is the client for the nodes' REST APIs (default: one with a 10 s timeout).
	HTTP *http.Client
	// Progress receives one line per step. Optional.
	Progress io.Writer
}

func (c *Config) check() error {
	switch {
	case c.Packets < 1:
		return errors.New("packets must be at least 1")
	case c.Rate < 0:
		return errors.New("rate must not be negative")
	case c.Window < 0:
		return errors.New("window must not be negative")
	case c.Prebuild < 0 || c.TextSize < 0 || c.TextSize > packet.MaxMessageSize:
		return fmt.Errorf("prebuild must not be negative and the text size must be 0 to %d", packet.MaxMessageSize)
	case c.Relayer == c.Recipient:
		return errors.New("the relayer and the recipient must be different nodes")
	case c.WatchCPU && c.CPU < 0:
		return fmt.Errorf("CPU %d is not a CPU", c.CPU)
	}
	if _, err := c.Env.Node(c.Relayer); err != nil {
		return fmt.Errorf("relayer: %w", err)
	}
	if _, err := c.Env.Node(c.Recipient); err != nil {
		return fmt.Errorf("recipient: %w", err)
	}
	if c.Env.ChainRPC == "" {
		return errors.New("the env file has no RELAY_CHAIN_RPC")
	}
	c.Prebuild = max(c.Prebuild, 1)
	if c.TextSize == 0 {
		c.TextSize = DefaultTextSize
	}
	if c.ScrapeInterval <= 0 {
		c.ScrapeInterval = DefaultScrapeInterval
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.Clock == nil {
		c.Clock = bench.SystemClock{}
	}
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// nodeInfo is the part of GET /api/v2/node/info Run reads.
type nodeInfo struct {
	Network            string   `json:"network"`
	ListeningAddresses []string `json:"listeningAddresses"`
	ChainID            uint64   `json:"chainId"`
	ChannelsContract   string   `json:"channelsContract"`
}

// Run funds a fresh identity, opens its channel to the relayer, builds cfg.Packets packets,
// pushes them into the relayer and reports what the relayer and the recipient did with them.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if err := cfg.check(); err != nil {
		return Report{}, err
	}
	r := &run{cfg: cfg, api: restClient{http: cfg.HTTP, token: cfg.Env.APIToken}}
	defer r.close()
	if err := r.resolve(ctx); err != nil {
		return Report{}, err
	}
	if err := r.openChannel(ctx); err != nil {
		return Report{}, err
	}
	if err := r.buildPackets(ctx); err != nil {
		return Report{}, err
	}
	if err := r.connect(ctx); err != nil {
		return Report{}, err
	}
	if err := r.openStream(ctx); err != nil {
		return Report{}, err
	}
	w, err := r.push(ctx)
	if err != nil {
		return Report{}, err
	}
	r.settle(ctx, &w)
	return r.report(w)
}

// run is one Run: what its stages learn and hold, in the order they set it.
type run struct {
	cfg Config
	api restClient

	// resolve
	relayer, recipient     bench.Node
	relayerID, recipientID peer.ID
	relayerAddr            common.Address
	info                   nodeInfo
	contract               common.Address

	// openChannel
	g          *identity.Identity
	cc         *chain.Client
	minWinProb uint64
	ch         channels.Channel

	// buildPackets, then openStream drops the first frame once it is sent
	frames [][]byte

	// connect
	host *p2p.Host
	acks atomic.Int64 // the relayer's acknowledgements to G, the first packet's included
}

// window is what the measurement saw: the relayer's samples from just before the push to after
// it drained, the recipient's metrics around it and the push's own result.
type window struct {
	relayer                      []Snapshot
	recipientStart, recipientEnd Snapshot
	pushed                       pushed
}

// pushed is the result of the push.
type pushed struct {
	n, fullWaits int
	took         time.Duration
	cpu          time.Duration // this process's CPU (user + system) while it pushed
	err          error
}

// processCPU is the CPU time this process has used, user and system (0 where unknown).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// close releases what the stages opened, the host before the chain client.
func (r *run) close() {
	if r.host != nil {
		r.host.Close()
	}
	if r.cc != nil {
		r.cc.Close()
	}
}

// resolve reads the relayer's and the recipient's identities from the env file (cfg.check
// made sure both nodes exist) and the relayer's node info from its REST API.
func (r *run) resolve(ctx context.Context) error {
	r.relayer, _ = r.cfg.Env.Node(r.cfg.Relayer)
	r.recipient, _ = r.cfg.Env.Node(r.cfg.Recipient)
	var err error
	if r.relayerID, err = identity.ParsePeerID(r.relayer.PeerID); err != nil {
		return fmt.Errorf("relayer's peer id: %w", err)
	}
	if r.recipientID, err = identity.ParsePeerID(r.recipient.PeerID); err != nil {
		return fmt.Errorf("recipient's peer id: %w", err)
	}
	if r.relayerAddr, err = identity.AddressOf(r.relayerID); err != nil {
		return err
	}
	if err := r.api.getJSON(ctx, r.relayer.APIURL+"/api/v2/node/info", &r.info); err != nil {
		return fmt.Errorf("relayer's node info: %w", err)
	}
	if !common.IsHexAddress(r.info.ChannelsContract) || r.info.Network == "" {
		return errors.New("relayer's node info has no channels contract or network")
	}
	r.contract = common.HexToAddress(r.info.ChannelsContract)
	return nil
}

// openChannel generates G, funds it from the deployer's key, opens its channel to the relayer
// with room for every packet (the first one included) and waits, up to 60 s, until the
// relayer's REST API shows the channel open; then it reads the channel from the chain.
func (r *run) openChannel(ctx context.Context) error {
	g, err := identity.Generate()
	if err != nil {
		return err
	}
	r.g = g
	fmt.Fprintf(r.cfg.Progress, "load: sender G %s\n", g.PeerID())
	quiet := slog.New(slog.DiscardHandler)
	cc, err := chain.Dial(ctx, chain.Config{ProviderURL: r.cfg.Env.ChainRPC, Key: g.PrivateKey(), Channels: r.contract, Logger: quiet})
	if err != nil {
		return err
	}
	r.cc = cc
	if r.minWinProb, err = cc.MinWinProb(ctx); err != nil {
		return err
	}
	funding, err := ChannelFunding(r.cfg.Packets+1, r.minWinProb)
	if err != nil {
		return err
	}
	if _, err := devfund.FundAccount(ctx, devfund.FundConfig{RPCURL: r.cfg.Env.ChainRPC, Channels: r.contract, Logger: quiet}, g.Address(), token.One.Big(), funding); err != nil {
		return fmt.Errorf("fund G: %w", err)
	}
	if _, err := cc.FundChannel(ctx, r.relayerAddr, funding); err != nil {
		return fmt.Errorf("open G's channel to the relayer: %w", err)
	}
	fmt.Fprintf(r.cfg.Progress, "load: channel G -> node %d open with %s tokens (win probability %s); waiting for the relayer to see it\n",
		r.cfg.Relayer, token.Of(funding).String(), tickets.FormatWinProb(r.minWinProb))
	chID := channels.IDOf(g.Address(), r.relayerAddr)
	if err := waitChannel(ctx, r.api, r.relayer.APIURL, "0x"+common.Bytes2Hex(chID[:]), funding, 60*time.Second); err != nil {
		return err
	}
	r.ch, err = cc.Channel(ctx, g.Address(), r.relayerAddr)
	return err
}

// buildPackets builds cfg.Packets+1 frames over [relayer, recipient] with G's own relay and
// ledger (build).
func (r *run) buildPackets(ctx context.Context) error {
	t0 := time.Now()
	frames, err := build(ctx, r.cfg, r.g, r.ch, r.info.ChainID, r.contract, r.minWinProb, []peer.ID{r.relayerID, r.recipientID})
	if err != nil {
		return err
	}
	r.frames = frames
	fmt.Fprintf(r.cfg.Progress, "load: built %d packets in %.1f s\n", len(frames), time.Since(t0).Seconds())
	return nil
}

// connect starts G's libp2p host, counting the relayer's acknowledgements in r.acks, and
// connects it to the relayer's listening addresses.
func (r *run) connect(ctx context.Context) error {
	host, err := p2p.New(p2p.Config{PrivKey: r.g.P2PKey(), ListenAddrs: []ma.Multiaddr{ma.StringCast("/ip4/127.0.0.1/tcp/0")},
		Network: r.info.Network, QueueSize: pushQueue})
	if err != nil {
		return err
	}
	r.host = host
	if err := host.Handle(p2p.ProtocolAck, func(peer.ID, []byte) { r.acks.Add(1) }); err != nil {
		return err
	}
	addrs, err := p2pAddrs(r.info.ListeningAddresses)
	if err != nil {
		return fmt.Errorf("relayer's p2p addresses: %w", err)
	}
	if err := host.AddPeer(peer.AddrInfo{ID: r.relayerID, Addrs: addrs}); err != nil {
		return err
	}
	if _, err := host.Ping(ctx, r.relayerID); err != nil {
		return fmt.Errorf("connect to the relayer: %w", err)
	}
	return nil
}

// openStream sends the first frame, which opens the msg stream, and waits up to 10 s for the
// relayer to acknowledge it; the measured window starts after it, with the frames left.
func (r *run) openStream(ctx context.Context) error {
	if err := r.host.Send(ctx, r.relayerID, p2p.ProtocolMsg, r.frames[0]); err != nil {
		return fmt.Errorf("first packet: %w", err)
	}
	if !poll(ctx, 10*time.Second, func() bool { return r.acks.Load() >= 1 }) {
		return errors.New("the relayer did not acknowledge the first packet within 10 s (see its log)")
	}
	r.frames = r.frames[1:]
	return nil
}

// push samples the recipient and the relayer, pushes the frames into the relayer at cfg.Rate
// and samples the relayer until it has drained (sample).
func (r *run) push(ctx context.Context) (window, error) {
	var w window
	var err error
	if w.recipientStart, err = r.scrape(ctx, r.recipient); err != nil {
		return window{}, err
	}
	first, err := r.scrape(ctx, r.relayer)
	if err != nil {
		return window{}, err
	}
	fmt.Fprintf(r.cfg.Progress, "load: pushing %d packets into node %d (rate %s)\n", len(r.frames), r.cfg.Relayer, rateText(r.cfg.Rate))
	done := make(chan pushed, 1)
	go func() {
		start, cpu0 := time.Now(), processCPU()
		var sent int64 // frames of r.frames queued; r.acks counts the first packet's too
		acked := func() int64 { return r.acks.Load() - 1 }
		n, waits, err := push(ctx, r.cfg.Clock, r.cfg.Rate, r.frames, func(f []byte) error {
			if err := awaitWindow(ctx, r.cfg.Clock, r.cfg.Window, sent, acked); err != nil {
				return err
			}
			err := r.host.Send(ctx, r.relayerID, p2p.ProtocolMsg, f)
			if err == nil {
				sent++
			}
			return err
		})
		done <- pushed{n: n, fullWaits: waits, took: time.Since(start), cpu: processCPU() - cpu0, err: err}
	}()
	if w.relayer, w.pushed, err = r.sample(ctx, first, done); err != nil {
		return window{}, err
	}
	return w, nil
}

// sample scrapes the relayer every cfg.ScrapeInterval while the push runs and after it ends
// (done), until the relayer has drained or cfg.DrainTimeout has passed since the push ended. It
// returns the relayer's samples, first first, and the push's result; a failed push is an error.
func (r *run) sample(ctx context.Context, first Snapshot, done <-chan pushed) ([]Snapshot, pushed, error) {
	samples := []Snapshot{first}
	var res pushed
	pushing := true
	var deadline time.Time
	var scrapeErr error
	for {
		if err := r.cfg.Clock.Sleep(ctx, r.cfg.ScrapeInterval); err != nil {
			return nil, pushed{}, err
		}
		if pushing {
			select {
			case res = <-done:
				pushing = false
				deadline = time.Now().Add(r.cfg.DrainTimeout)
			default:
			}
		}
		s, err := r.scrape(ctx, r.relayer)
		if err != nil {
			scrapeErr = err
			if !pushing && time.Now().After(deadline) {
				break // the metrics stayed unreadable until the drain deadline
			}
			continue
		}
		samples = append(samples, s)
		if pushing {
			continue
		}
		if res.err != nil {
			return nil, pushed{}, fmt.Errorf("push: %w (after %d packets)", res.err, res.n)
		}
		if drained(samples, res.n) || time.Now().After(deadline) {
			break
		}
	}
	if len(samples) < 2 {
		return nil, pushed{}, fmt.Errorf("relayer's metrics: %w", scrapeErr)
	}
	return samples, res, nil
}

// drained reports whether the relayer, sampled in s (s[0] before the push), has forwarded or
// dropped all n pushed frames and its forwarded count has not moved over the last 4 samples.
func drained(s []Snapshot, n int) bool {
	first, last := s[0], s[len(s)-1]
	handled := (last.Forwarded - first.Forwarded) + (last.DroppedTotal() - first.DroppedTotal())
	return handled >= float64(n) && settled(s, 4)
}

// settle waits, up to cfg.DrainTimeout, until the recipient's deliveries and G's
// acknowledgements, which trail the forwarding, are both still, keeping the recipient's last
// sample; then it samples the relayer once more.
func (r *run) settle(ctx context.Context, w *window) {
	prevDelivered, prevAcks := -1.0, int64(-1)
	poll(ctx, r.cfg.DrainTimeout, func() bool {
		s, err := r.scrape(ctx, r.recipient)
		if err != nil {
			return false
		}
		w.recipientEnd = s
		still := s.Delivered == prevDelivered && r.acks.Load() == prevAcks
		prevDelivered, prevAcks = s.Delivered, r.acks.Load()
		return still
	})
	if last, err := r.scrape(ctx, r.relayer); err == nil {
		w.relayer = append(w.relayer, last)
	}
}

// report computes the Report of w; the first packet's acknowledgement is not in the window.
func (r *run) report(w window) (Report, error) {
	rep, err := Compute(w.relayer, w.recipientStart, w.recipientEnd, w.pushed.n, w.pushed.took, w.pushed.fullWaits, r.acks.Load()-1)
	rep.GeneratorCPU = w.pushed.cpu.Seconds()
	return rep, err
}

// scrape reads node n's metrics and, for the relayer with cfg.WatchCPU, how busy its CPU has
// been.
func (r *run) scrape(ctx context.Context, n bench.Node) (Snapshot, error) {
	s, err := r.api.snapshot(ctx, n.APIURL)
	if err == nil && n.Index == r.cfg.Relayer && r.cfg.WatchCPU {
		s.CPUBusy, s.CPUTotal, err = readProcStat(r.cfg.CPU)
	}
	return s, err
}

func readProcStat(cpu int) (busy, total float64, err error) {
	f, err := os.Open(ProcStatPath)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return parseProcStat(f, cpu)
}

// settled reports whether the last n samples show the same forwarded count.
func settled(s []Snapshot, n int) bool {
	if len(s) < n {
		return false
	}
	for _, x := range s[len(s)-n:] {
		if x.Forwarded != s[len(s)-1].Forwarded {
			return false
		}
	}
	return true
}

func rateText(r float64) string {
	if r == 0 {
		return "as fast as possible"
	}
	return fmt.Sprintf("%.0f/s", r)
}

// ChannelFunding is what G's channel to the relayer must hold for packets packets over one
// relayer at win probability winProb: each first ticket is worth at most
// tickets.PaddedAmount(1, tickets.PadMax) in expected value, and every winning ticket stays
// owed until redeemed, so the channel covers the face amount of every ticket.
func ChannelFunding(packets int, winProb uint64) (*big.Int, error) {
	v := tickets.PaddedAmount(1, tickets.PadMax)
	face, err := tickets.FaceAmount(&v, winProb)
	if err != nil {
		return nil, err
	}
	var total uint256.Int
	total.Mul(&face, uint256.NewInt(uint64(packets)))
	return total.ToBig(), nil
}

// push sends frames in order at rate per second (0: as fast as send takes them), timed by
// clock. A full queue (p2p.ErrQueueFull) is waited out and the same frame retried; any other
// error stops the push. It returns the frames sent and the number of waits.
func push(ctx context.Context, clock bench.Clock, rate float64, frames [][]byte, send func([]byte) error) (int, int, error) {
	lim := bench.NewLimiter(rate, max(int(rate/100), 1), clock) // catch up by up to 10 ms of frames
	waits := 0
	for i, f := range frames {
		if err := lim.Wait(ctx); err != nil {
			return i, waits, err
		}
		for {
			err := send(f)
			if err == nil {
				break
			}
			if !errors.Is(err, p2p.ErrQueueFull) {
				return i, waits, err
			}
			waits++
			if err := clock.Sleep(ctx, queueFullWait); err != nil {
				return i, waits, err
			}
		}
	}
	return len(frames), waits, nil
}

// awaitWindow returns once fewer than window of the sent frames are unacknowledged (acked() of
// them are), at once when window is 0, or when ctx ends (its error).
func awaitWindow(ctx context.Context, clock bench.Clock, window int, sent int64, acked func() int64) error {
	for window > 0 && sent-acked() >= int64(window) {
		if err := clock.Sleep(ctx, windowWait); err != nil {
			return err
		}
	}
	return nil
}

// poll calls cond every 200 ms until it holds (true), timeout passes or ctx ends (false).
func poll(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	return true
}

// waitChannel waits until the node at apiURL lists incoming channel id (0x and hex) open and
// holding at least funding.
func waitChannel(ctx context.Context, api restClient, apiURL, id string, funding *big.Int, timeout time.Duration) error {
	var lastErr error
	ok := poll(ctx, timeout, func() bool {
		var chs struct {
			Incoming []struct {
				ID      string `json:"channelId"`
				Status  string `json:"status"`
				Balance string `json:"balance"`
			} `json:"incoming"`
		}
		if lastErr = api.getJSON(ctx, apiURL+"/api/v2/channels", &chs); lastErr != nil {
			return false
		}
		for _, c := range chs.Incoming {
			if !strings.EqualFold(c.ID, id) || c.Status != "Open" {
				continue
			}
			b, ok := new(big.Int).SetString(c.Balance, 10)
			return !ok || b.Cmp(funding) >= 0
		}
		return false
	})
	if !ok {
		return fmt.Errorf("the relayer did not show G's channel open within %s (last error: %v)", timeout, lastErr)
	}
	return nil
}

// p2pAddrs parses a node's listening addresses, without their /p2p suffix, TCP first.
func p2pAddrs(ss []string) ([]ma.Multiaddr, error) {
	var tcp, other []ma.Multiaddr
	for _, s := range ss {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return nil, err
		}
		a, _ = peer.SplitAddr(a)
		if a == nil {
			continue
		}
		if _, err := a.ValueForProtocol(ma.P_TCP); err == nil {
			tcp = append(tcp, a)
		} else {
			other = append(other, a)
		}
	}
	if len(tcp)+len(other) == 0 {
		return nil, errors.New("none")
	}
	return append(tcp, other...), nil
}

// build makes every frame with G's own relay and ledger, in ticket index order.
func build(ctx context.Context, cfg Config, g *identity.Identity, ch channels.Channel, chainID uint64, contract common.Address,
	minWinProb uint64, hops []peer.ID) ([][]byte, error) {
	dir, err := os.MkdirTemp("", "relayload-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	graph := channels.NewGraph()
	graph.Apply(ch)
	led, err := ledger.New(ledger.Config{Key: g.PrivateKey(), ChainID: chainID, Contract: contract, Channels: graph, Store: db,
		MinWinProb: minWinProb})
	if err != nil {
		return nil, err
	}
	// Run stores what the channel owes; it must end (waiting for the ledger's background
	// writes) before the store closes.
	lctx, stop := context.WithCancel(ctx)
	ledgerDone := make(chan error, 1)
	go func() { ledgerDone <- led.Run(lctx) }()
	defer func() { stop(); <-ledgerDone }()
	n := cfg.Packets + 1
	capt := &capture{frames: make([][]byte, 0, n)}
	r, err := relay.New(relay.Config{Key: g.PrivateKey(), Transport: capt, Payments: led, Replay: noReplay{},
		Deliver: func(relay.Received) {}, NoMixDelay: true, MaxPending: n + 1})
	if err != nil {
		return nil, err
	}
	text := strings.Repeat("x", cfg.TextSize)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Prebuild)
	for range cfg.Prebuild {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				var err error
				if cfg.Drop {
					_, err = r.SendDrop(ctx, hops)
				} else {
					_, err = r.Send(ctx, hops, text)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, fmt.Errorf("build a packet: %w", err)
	}
	if err := checkOrder(capt.frames); err != nil {
		return nil, err
	}
	return capt.frames, nil
}

// checkOrder checks that every frame carries a ticket and that their indexes increase: the
// relayer accepts a channel's tickets in index order only.
func checkOrder(frames [][]byte) error {
	var prev uint64
	for i, f := range frames {
		if len(f) != relay.MsgFrameLen {
			return fmt.Errorf("frame %d: %d bytes, want %d", i, len(f), relay.MsgFrameLen)
		}
		var t tickets.Ticket
		if err := t.UnmarshalBinary(f[len(f)-tickets.EncodedLen:]); err != nil {
			return fmt.Errorf("frame %d: ticket: %w", i, err)
		}
		if i > 0 && t.Index <= prev {
			return fmt.Errorf("frame %d: ticket index %d after %d", i, t.Index, prev)
		}
		prev = t.Index
	}
	return nil
}

// capture is a relay.Transport that keeps every msg frame, in the order the relay sends them
// (the relay sends a first hop's frames in ticket index order, under that hop's lock).
type capture struct {
	mu     sync.Mutex
	frames [][]byte
}

func (c *capture) Send(_ context.Context, _ peer.ID, proto p2p.Protocol, frame []byte) error {
	if proto != p2p.ProtocolMsg {
		return nil
	}
	f := append([]byte(nil), frame...)
	c.mu.Lock()
	c.frames = append(c.frames, f)
	c.mu.Unlock()
	return nil
}

func (c *capture) Handle(p2p.Protocol, p2p.Handler) error { return nil }

// noReplay is the replay store of a relay that never peels.
type noReplay struct{}

func (noReplay) CheckAndAdd(uint32, [packet.TagSize]byte) (bool, error) { return true, nil }

// restClient reads a node's REST API with its token.
type restClient struct {
	http  *http.Client
	token string
}

func (c restClient) get(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-auth-token", c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", req.URL.Path, resp.Status)
	}
	return resp, nil
}

func (c restClient) getJSON(ctx context.Context, url string, v any) error {
	resp, err := c.get(ctx, url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(v)
}

func (c restClient) snapshot(ctx context.Context, apiURL string) (Snapshot, error) {
	resp, err := c.get(ctx, apiURL+"/api/v2/node/metrics")
	if err != nil {
		return Snapshot{}, err
	}
	defer resp.Body.Close()
	return ParseSnapshot(io.LimitReader(resp.Body, 16<<20), time.Now())
}
