// Package cluster is `relayd cluster`: a whole local relay network in one
// command. Run starts the embedded dev chain in-process (with the contracts
// deployed), creates and funds one identity per node, starts every node as a
// separate relayd process, waits until each has announced itself, opens a
// funded full mesh of channels over the nodes' own REST APIs, waits until
// every node indexed the whole graph, and only then prints a table of the
// nodes and writes cluster.env (DESIGN.md section 8). It stops everything
// when its context ends or when any node exits.
//
// The package talks to the nodes only through their processes and public
// REST API; it must not import internal/node. It may import internal/devchain
// (which pulls in a whole Ethereum node) because only cmd/relayd uses it,
// and the pure internal/config, internal/identity, internal/hostnet and internal/token,
// internal/atomicfile for the env file, and internal/networks for a layered network's entry.
package cluster

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/hostnet"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/token"
)

// pollInterval is how often readiness is polled over REST.
const pollInterval = 50 * time.Millisecond

// Run starts the cluster described by cfg, reports progress to out, and
// blocks until ctx ends (a clean stop: nil) or a node exits or never gets
// ready (a *NodeError with the end of that node's log). Either way it stops
// every node (SIGTERM, then SIGKILL after cfg.StopTimeout) and the chain,
// removes the env file, and removes the data directory when it made it.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := CheckPorts(cfg); err != nil {
		return err
	}
	c := &cluster{cfg: cfg, out: out, start: time.Now(), http: &http.Client{}}
	return c.run(ctx)
}

// member is one node of the cluster.
type member struct {
	NodeInfo
	dir    string
	id     *identity.Identity
	client nodeClient

	mu       sync.Mutex
	proc     *process      // the running (or last) process; replaced by a restart
	stopping bool          // the cluster is stopping: no more restarts
	downFor  time.Duration // set by churn before a kill: restart after this long
}

// process returns the member's current process.
func (m *member) process() *process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc
}

type cluster struct {
	cfg   Config
	out   io.Writer
	start time.Time
	http  *http.Client

	dataDir  string
	hosts    *hostnet.Network // with NetNS
	chain    *devchain.Chain
	chainLog *os.File
	gate     *gate // the chain drill's gate (Config.ChainDrill), or nil
	nodes    []*member
	ready    atomic.Bool // bring-up is over: a node's exit no longer fails the cluster

	outMu sync.Mutex
}

// progress prints one progress line with the time since start.
func (c *cluster) progress(format string, args ...any) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	fmt.Fprintf(c.out, "[%5.1fs] %s\n", time.Since(c.start).Seconds(), fmt.Sprintf(format, args...))
}

func (c *cluster) run(ctx context.Context) (err error) {
	if err := c.prepareDataDir(); err != nil {
		return err
	}
	defer c.cleanup()

	if c.cfg.NetNS {
		if err := c.createHosts(); err != nil {
			return err
		}
	}
	if err := c.createIdentities(); err != nil {
		return err
	}
	if err := c.startChain(ctx); err != nil {
		return err
	}
	if err := c.fund(ctx); err != nil {
		return err
	}
	if c.cfg.Layers != 0 {
		if err := c.writeNetworks(ctx); err != nil {
			return err
		}
	}

	// From here on a node that exits cancels everything with its NodeError.
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if err := c.startNodes(runCtx, cancel); err != nil {
		return err
	}
	err = c.bringUp(runCtx)
	if err == nil {
		if err = WriteEnvFile(c.cfg.EnvFile, c.env()); err == nil {
			c.ready.Store(true)
			c.printReady()
			if c.gate != nil {
				c.drill(runCtx.Done())
			}
			if c.cfg.Churn != nil {
				err = c.runChurn(runCtx)
			} else {
				<-runCtx.Done()
			}
		}
	}
	if cause := context.Cause(runCtx); cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause // a node failed: its error says more than the stage that noticed
	} else if ctx.Err() != nil {
		err = nil // the user stopped the cluster
	}
	return err
}

// prepareDataDir makes the data directory: a fresh temporary one, or the
// user's, which must not hold a previous cluster.
func (c *cluster) prepareDataDir() error {
	if c.cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "relayd-cluster-")
		if err != nil {
			return fmt.Errorf("create data directory: %w", err)
		}
		c.dataDir = dir
		return nil
	}
	if _, err := os.Stat(filepath.Join(c.cfg.DataDir, "node-1")); err == nil {
		// Its nodes' stores refer to a chain that no longer exists.
		return &FieldError{"data", fmt.Sprintf("%s holds a previous cluster whose chain is gone; remove it or name another directory", c.cfg.DataDir)}
	}
	if err := os.MkdirAll(c.cfg.DataDir, 0o700); err != nil {
		return &FieldError{"data", err.Error()}
	}
	c.dataDir = c.cfg.DataDir
	return nil
}

// createHosts makes a network namespace per node (hostnet), and a random API token when the
// published default would be refused off loopback.
func (c *cluster) createHosts() error {
	t0 := time.Now()
	if c.cfg.APIToken == config.ClusterDefaultToken {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		c.cfg.APIToken = hex.EncodeToString(b)
	}
	nw, err := hostnet.Create(c.cfg.Nodes, hostnet.Options{LinkRate: c.cfg.LinkRate})
	if err != nil {
		if errors.Is(err, hostnet.ErrBadOptions) && c.cfg.LinkRate != "" {
			return &FieldError{"linkRate", err.Error()}
		}
		return &FieldError{"netns", err.Error()}
	}
	c.hosts = nw
	rate := ""
	if c.cfg.LinkRate != "" {
		rate = ", links limited to " + c.cfg.LinkRate
	}
	c.progress("hosts: %d network namespaces on a bridge at %s%s in %s", c.cfg.Nodes, nw.BridgeAddr(), rate, since(t0))
	return nil
}

// nodeHost is the address node i (from 1) listens on.
func (c *cluster) nodeHost(i int) string {
	if c.hosts == nil {
		return "127.0.0.1"
	}
	return c.hosts.Hosts()[i-1].Addr.String()
}

// createIdentities makes node-N/identity.json for every node with light
// scrypt parameters and the published cluster Password.
func (c *cluster) createIdentities() error {
	t0 := time.Now()
	for i := 1; i <= c.cfg.Nodes; i++ {
		dir := filepath.Join(c.dataDir, fmt.Sprintf("node-%d", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		id, err := identity.Generate()
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		if err := id.Save(filepath.Join(dir, "identity.json"), Password, identity.LightScrypt); err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		m := &member{
			NodeInfo: NodeInfo{
				Index:         i,
				PeerID:        id.PeerID().String(),
				NativeAddress: id.Address().Hex(),
				APIURL:        "http://" + net.JoinHostPort(c.nodeHost(i), strconv.Itoa(c.cfg.APIPortBase+i-1)),
				WSURL:         "ws://" + net.JoinHostPort(c.nodeHost(i), strconv.Itoa(c.cfg.AdminPortBase+i-1)),
			},
			dir: dir,
			id:  id,
		}
		m.client = nodeClient{base: m.APIURL, token: c.cfg.APIToken, http: c.http}
		c.nodes = append(c.nodes, m)
	}
	c.progress("identities: %d created in %s (%s)", c.cfg.Nodes, since(t0), c.dataDir)
	return nil
}

// startChain starts the dev chain; every node's native balance is set at
// genesis (no transaction needed). The chain logs to <data>/chain.log.
func (c *cluster) startChain(ctx context.Context) error {
	t0 := time.Now()
	logFile, err := os.OpenFile(filepath.Join(c.dataDir, "chain.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("chain log: %w", err)
	}
	alloc := make(map[common.Address]*big.Int, len(c.nodes))
	for _, m := range c.nodes {
		alloc[m.id.Address()] = new(big.Int).Set(NativeFunding)
	}
	host := "127.0.0.1"
	if c.hosts != nil {
		host = c.hosts.BridgeAddr().String()
	}
	chainPort := c.cfg.ChainPort
	if c.cfg.ChainDrill {
		chainPort = 0 // the gate takes ChainPort
	}
	ch, err := devchain.New(ctx, devchain.Config{
		Host:          host,
		Port:          chainPort,
		ClosurePeriod: c.cfg.ClosurePeriod,
		BlockTime:     c.cfg.BlockTime,
		MinWinProb:    c.cfg.MinWinProb,
		Alloc:         alloc,
		Logger:        slog.New(slog.NewTextHandler(logFile, nil)),
	})
	if err != nil {
		logFile.Close()
		return &FieldError{"chainPort", fmt.Sprintf("dev chain did not start: %v", err)}
	}
	c.chain = ch
	c.chainLog = logFile
	if c.cfg.ChainDrill {
		u, _ := url.Parse(ch.RPCURL())
		if c.gate, err = newGate(net.JoinHostPort(host, strconv.Itoa(c.cfg.ChainPort)), u.Host); err != nil {
			return &FieldError{"chainPort", err.Error()}
		}
	}
	c.progress("chain: dev chain at %s, contracts deployed (channels %s) in %s", c.rpcURL(), ch.ChannelsAddress().Hex(), since(t0))
	return nil
}

// rpcURL is the chain's JSON-RPC URL as the nodes and the env file know it: the drill's gate
// when there is one.
func (c *cluster) rpcURL() string {
	if c.gate != nil {
		return "http://" + c.gate.addr
	}
	return c.chain.RPCURL()
}

// tokensPerNode is what each node receives: its channels' funding and
// SpareTokens, or one channel's funding when that is more (a node can always
// open one more channel like its others).
func (c *cluster) tokensPerNode() *big.Int {
	t := new(big.Int).Mul(c.cfg.ChannelFunding, big.NewInt(int64(c.cfg.channelsPerNode())))
	if c.cfg.ChannelFunding.Cmp(SpareTokens) > 0 {
		return t.Add(t, c.cfg.ChannelFunding)
	}
	return t.Add(t, SpareTokens)
}

// fund sends every node its tokens, all transfers in flight at once.
func (c *cluster) fund(ctx context.Context) error {
	t0 := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	amount := c.tokensPerNode()
	for _, m := range c.nodes {
		g.Go(func() error {
			if err := c.chain.Fund(gctx, m.id.Address(), nil, amount); err != nil {
				return fmt.Errorf("node %d: %w", m.Index, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("fund nodes: %w", err)
	}
	c.progress("funding: each node holds %s native coins and %s tokens (%s per channel) in %s",
		token.Of(NativeFunding), token.Of(amount), token.Of(c.cfg.ChannelFunding), since(t0))
	return nil
}

// nodeArgs returns node m's command line. The token and the password go
// through the environment (RELAYD_API_TOKEN, RELAYD_PASSWORD), never on the
// command line, where any local user could read them.
func (c *cluster) nodeArgs(m *member) []string {
	args := []string{
		"--data", m.dir,
		"--identity", filepath.Join(m.dir, "identity.json"),
		"--init",
		"--testUseWeakCrypto",
		"--apiHost", c.nodeHost(m.Index),
		"--apiPort", strconv.Itoa(c.cfg.APIPortBase + m.Index - 1),
		"--adminHost", c.nodeHost(m.Index),
		"--adminPort", strconv.Itoa(c.cfg.AdminPortBase + m.Index - 1),
		"--host", net.JoinHostPort(c.nodeHost(m.Index), strconv.Itoa(c.cfg.P2PPortBase+m.Index-1)),
		"--provider", c.rpcURL(),
		"--channelsContract", c.chain.ChannelsAddress().Hex(),
		"--mixDelayMean", c.cfg.MixDelayMean.String(),
		"--mixDelayMax", c.cfg.MixDelayMax.String(),
		"--coverRate", strconv.FormatFloat(c.cfg.CoverRate, 'f', -1, 64),
		"--sendRate", strconv.FormatFloat(c.cfg.SendRate, 'f', -1, 64),
		"--relayers", strconv.Itoa(cmp.Or(c.cfg.Relayers, settings.Defaults().Relayers)),
		// What the strategy opens channels with and what autoFund tops them up to.
		"--channelFunding", token.Of(c.cfg.ChannelFunding).String(),
		"--autoRedeem=" + strconv.FormatBool(c.cfg.AutoRedeem), "--autoFund=" + strconv.FormatBool(c.cfg.AutoFund),
	}
	if c.cfg.Layers != 0 {
		args = append(args, "--networksFile", c.networksFile()) // the entry names the same contract
	}
	if c.cfg.ProfilePortBase != 0 {
		args = append(args, "--profileAddress", "127.0.0.1:"+strconv.Itoa(c.cfg.ProfilePortBase+m.Index-1))
	}
	if c.cfg.SOCKS5PortBase != 0 {
		args = append(args, "--socks5Listen", "127.0.0.1:"+strconv.Itoa(c.cfg.SOCKS5PortBase+m.Index-1), "--socks5Exit", "exit")
	}
	if c.cfg.Topology == Sparse {
		args = append(args, "--strategy", "promiscuous", "--maxChannels", strconv.Itoa(c.cfg.MaxChannels),
			"--strategyInterval", DefaultStrategyInterval.String(),
			"--heartbeatInterval", DefaultStrategyInterval.String())
	}
	return args
}

// nodeEnv is the environment of every node: the cluster's own without any
// RELAYD_* variable (they would change the nodes' configuration), plus the
// token and the keystore password.
func (c *cluster) nodeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RELAYD_") {
			env = append(env, kv)
		}
	}
	return append(env, config.EnvName("apiToken")+"="+c.cfg.APIToken, config.EnvName("password")+"="+Password)
}

// startNodes starts every node process and a watcher per node. A node that
// exits before the cluster is ready cancels ctx with a NodeError; once it is
// ready, the exit is reported, the other nodes keep running, and with
// RestartNodes the node starts again on its data after RestartDelay.
func (c *cluster) startNodes(ctx context.Context, cancel context.CancelCauseFunc) error {
	t0 := time.Now()
	env := c.nodeEnv()
	for _, m := range c.nodes {
		p, err := c.startNode(m, env)
		if err != nil {
			return err
		}
		m.proc = p
		go c.watch(ctx, cancel, m, env)
	}
	c.progress("nodes: %d relayd processes started in %s (logs: %s/node-N/relayd.log)", len(c.nodes), since(t0), c.dataDir)
	return nil
}

func (c *cluster) startNode(m *member, env []string) (*process, error) {
	start := (*exec.Cmd).Start
	if c.hosts != nil {
		start = c.hosts.Hosts()[m.Index-1].Start
	}
	return startProcess(m.Index, c.cfg.Executable, c.nodeArgs(m), env, filepath.Join(m.dir, "relayd.log"), start)
}

// watch follows member m's processes until ctx ends.
func (c *cluster) watch(ctx context.Context, cancel context.CancelCauseFunc, m *member, env []string) {
	for {
		p := m.process()
		select {
		case <-p.done:
		case <-ctx.Done():
			return
		}
		nerr := p.nodeError(fmt.Errorf("exited unexpectedly: %v", exitText(p.err)))
		if !c.ready.Load() {
			cancel(nerr)
			return
		}
		m.mu.Lock()
		delay, churned := m.downFor, m.downFor > 0
		m.downFor = 0
		m.mu.Unlock()
		switch {
		case churned:
			c.progress("churn: node %d killed; restarting it on its data in %s", m.Index, delay)
		case !c.cfg.RestartNodes:
			c.progress("node %d exited (%s); the other nodes keep running. Its log: %s", m.Index, exitText(p.err), p.logPath)
			return
		default:
			delay = c.cfg.RestartDelay
			c.progress("node %d exited (%s); restarting it on its data in %s", m.Index, exitText(p.err), delay)
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		m.mu.Lock()
		if m.stopping || ctx.Err() != nil {
			m.mu.Unlock()
			return
		}
		next, err := c.startNode(m, env)
		if err == nil {
			m.proc = next
		}
		m.mu.Unlock()
		if err != nil {
			c.progress("node %d: restart failed: %v", m.Index, err)
			return
		}
		c.progress("node %d restarted", m.Index)
	}
}

// exitText describes how a process ended.
func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// bringUp waits for the announcements, opens the mesh and waits until every
// node sees all of it.
func (c *cluster) bringUp(ctx context.Context) error {
	n := len(c.nodes)
	t0 := time.Now()
	if err := c.waitAll(ctx, "announced itself and sees all announcements", func(ctx context.Context, m *member) (bool, error) {
		i, err := m.client.info(ctx)
		return err == nil && i.PeersAnnounced == n, nil
	}); err != nil {
		return err
	}
	c.progress("announce: every node is up and sees %d announced nodes (%s)", n, since(t0))
	if c.cfg.Layers != 0 {
		if err := c.reachFirstDraw(ctx); err != nil {
			return err
		}
	}
	if c.cfg.Topology == Sparse {
		return c.awaitStrategies(ctx)
	}

	t0 = time.Now()
	g, gctx := errgroup.WithContext(ctx)
	amount := c.cfg.ChannelFunding.String()
	for _, m := range c.nodes {
		g.Go(func() error {
			t1 := time.Now()
			for _, peer := range c.nodes {
				if peer == m {
					continue
				}
				if err := m.client.openChannel(gctx, peer.PeerID, amount); err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					return m.process().nodeError(fmt.Errorf("open channel to node %d: %w", peer.Index, err))
				}
			}
			c.progress("channels: node %d opened %d channels in %s", m.Index, n-1, since(t1))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	c.progress("channels: full mesh of %d channels opened in %s", n*(n-1), since(t0))

	t0 = time.Now()
	if err := c.waitAll(ctx, "indexed every channel and lists every peer", func(ctx context.Context, m *member) (bool, error) {
		i, err := m.client.info(ctx)
		if err != nil || i.ChannelsIndexed != n*(n-1) {
			return false, nil
		}
		peers, err := m.client.peers(ctx)
		if err != nil {
			return false, nil
		}
		for _, o := range c.nodes {
			if o != m && !peers[o.PeerID] {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return err
	}
	c.progress("ready: every node sees %d channels and its %d peers (%s)", n*(n-1), n-1, since(t0))
	return nil
}

// awaitStrategies waits until every node's promiscuous strategy has opened
// its channels.
func (c *cluster) awaitStrategies(ctx context.Context) error {
	t0 := time.Now()
	want := c.cfg.channelsPerNode()
	if c.cfg.Layers != 0 {
		want = 1 // into the first layer at least; how many depends on the draw
	}
	if err := c.waitAll(ctx, fmt.Sprintf("opened %d channels by its strategy", want), func(ctx context.Context, m *member) (bool, error) {
		open, err := m.client.openOutgoing(ctx)
		return err == nil && open >= want, nil
	}); err != nil {
		return err
	}
	c.progress("ready: every node opened %d channels of %s tokens by its promiscuous strategy (%s)", want, token.Of(c.cfg.ChannelFunding), since(t0))
	return nil
}

// waitAll polls ready for every node in parallel until each holds, bounded
// by cfg.StageTimeout; a node that is not ready in time fails with its log.
func (c *cluster) waitAll(ctx context.Context, what string, ready func(context.Context, *member) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StageTimeout)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	for _, m := range c.nodes {
		g.Go(func() error {
			t := time.NewTicker(pollInterval)
			defer t.Stop()
			for {
				ok, err := ready(gctx, m)
				if err != nil {
					return m.process().nodeError(err)
				}
				if ok {
					return nil
				}
				select {
				case <-gctx.Done():
					if errors.Is(gctx.Err(), context.DeadlineExceeded) && ctx.Err() != nil {
						return m.process().nodeError(fmt.Errorf("not ready within %s: it has not %s", c.cfg.StageTimeout, what))
					}
					return gctx.Err()
				case <-t.C:
				}
			}
		})
	}
	return g.Wait()
}

// env is the content of cluster.env.
func (c *cluster) env() Env {
	e := Env{APIToken: c.cfg.APIToken, ChainRPC: c.rpcURL(), Channels: c.chain.ChannelsAddress().Hex(), Token: c.chain.TokenAddress().Hex()}
	for _, m := range c.nodes {
		e.Nodes = append(e.Nodes, m.NodeInfo)
	}
	return e
}

// printReady prints the table and how to use the cluster. The token is
// printed only when it is the published local default.
func (c *cluster) printReady() {
	var infos []NodeInfo
	for _, m := range c.nodes {
		infos = append(infos, m.NodeInfo)
	}
	c.outMu.Lock()
	defer c.outMu.Unlock()
	shape := fmt.Sprintf("a full mesh of %d channels", len(c.nodes)*(len(c.nodes)-1))
	if c.cfg.Topology == Sparse {
		shape = fmt.Sprintf("a sparse network of %d channels per node opened by the nodes' strategies", c.cfg.channelsPerNode())
	}
	if c.cfg.Layers != 0 {
		shape = c.cfg.layeredShape(shape)
	}
	fmt.Fprintf(c.out, "\nrelayd cluster ready in %s: %d nodes, %s of %s tokens each, chain %s\n\n",
		since(c.start), len(c.nodes), shape, token.Of(c.cfg.ChannelFunding), c.rpcURL())
	fmt.Fprint(c.out, RenderTable(infos))
	if c.cfg.APIToken == config.ClusterDefaultToken {
		fmt.Fprintf(c.out, "\nAPI token: %s (the published local default; nodes accept it only on 127.0.0.1)\n", c.cfg.APIToken)
	} else if c.hosts != nil {
		fmt.Fprintf(c.out, "\nAPI token: a random one, in %s as RELAY_API_TOKEN (unless --apiToken named one)\n", c.cfg.EnvFile)
	} else {
		fmt.Fprintf(c.out, "\nAPI token: the one given with --apiToken (also in %s)\n", c.cfg.EnvFile)
	}
	fmt.Fprintf(c.out, "Wrote %s: `source %s` to use it. Data and logs: %s\nCtrl-C stops the cluster.\n", c.cfg.EnvFile, c.cfg.EnvFile, c.dataDir)
}

// cleanup removes the env file (it would be stale), stops every node in
// parallel and the chain, and removes a temporary data directory.
func (c *cluster) cleanup() {
	if err := os.Remove(c.cfg.EnvFile); err == nil {
		c.progress("stop: removed %s", c.cfg.EnvFile)
	}
	t0 := time.Now()
	var wg sync.WaitGroup
	var killed []int
	var mu sync.Mutex
	running := 0
	for _, m := range c.nodes {
		m.mu.Lock()
		m.stopping = true
		p := m.proc
		m.mu.Unlock()
		if p == nil {
			continue
		}
		running++
		wg.Go(func() {
			if p.stop(c.cfg.StopTimeout) {
				mu.Lock()
				killed = append(killed, m.Index)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if running > 0 {
		if len(killed) > 0 {
			c.progress("stop: %d nodes stopped in %s; killed after %s: nodes %v", running, since(t0), c.cfg.StopTimeout, killed)
		} else {
			c.progress("stop: %d nodes stopped in %s", running, since(t0))
		}
	}
	if c.gate != nil {
		c.gate.shut()
	}
	if c.chain != nil {
		c.chain.Close()
		c.chainLog.Close()
		c.progress("stop: chain stopped")
	}
	if c.hosts != nil {
		if err := c.hosts.Close(); err != nil {
			c.progress("stop: removing the network namespaces: %v", err)
		} else {
			c.progress("stop: network namespaces and bridge removed")
		}
	}
	if c.cfg.DataDir == "" && c.dataDir != "" {
		os.RemoveAll(c.dataDir)
	} else if c.dataDir != "" {
		c.progress("stop: data and logs kept in %s", c.dataDir)
	}
}

// since formats the time since t for progress lines.
func since(t time.Time) string { return time.Since(t).Round(10 * time.Millisecond).String() }
