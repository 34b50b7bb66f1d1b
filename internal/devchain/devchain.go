// Package devchain is relayd's embedded development chain: go-ethereum's simulated backend (an
// in-process Ethereum node with chain id 1337) serving JSON-RPC over HTTP and WebSocket on
// 127.0.0.1, with the RelayToken and RelayChannels contracts deployed at start and a pre-funded
// deployer. `relayd devchain` runs it alone; `relayd cluster` and tests embed it.
//
// Block production. By default a block is sealed as soon as a transaction enters the pool (the
// chain subscribes to its own pending transactions), so a receipt waits for one seal (a few
// milliseconds), not for a block interval. With Config.BlockTime set, blocks come only at that
// interval, as on a real chain: a transaction waits in the pool for the next block. When idle, an empty block is sealed every
// BlockInterval (default 1 s) so that block time follows the wall clock, which closure periods
// are measured in. The simulated beacon gives every block a timestamp of at least its parent's
// plus one second, so a burst of transactions moves chain time ahead of the wall clock by about
// one second per block; idle blocks are only sealed once the wall clock has caught up again, so
// the lead shrinks back to zero.
//
// The package imports go-ethereum's ethclient/simulated, which pulls in a whole Ethereum node:
// only cmd/relayd, internal/cluster and tests may import devchain, never the node's own
// packages. The deployer key is DEV-ONLY (see DevKeyHex): it is public.
package devchain

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/devfund"
	"github.com/relayd/relayd/internal/tickets"
)

// DevKeyHex is the dev chain's default deployer key. DEV-ONLY: it is published here, so anything
// it holds on a real chain is anybody's. Its address is DevAddress.
const DevKeyHex = devfund.DevKeyHex

// ChainID is the simulated backend's chain id.
const ChainID = 1337

// Defaults of Config's optional fields.
const (
	DefaultBlockInterval = time.Second
	DefaultClosurePeriod = 60 * time.Second
)

var (
	// DefaultSupply is the token supply minted to the deployer: 10^9 tokens of 10^18 units.
	DefaultSupply = new(big.Int).Mul(big.NewInt(1_000_000_000), big.NewInt(1e18))
	// DefaultDeployerEther is the deployer's native balance at genesis: 10^9 ether.
	DefaultDeployerEther = new(big.Int).Mul(big.NewInt(1_000_000_000), big.NewInt(1e18))
)

// Config configures a Chain; every field is optional.
type Config struct {
	// Host is the address the JSON-RPC server listens on (127.0.0.1); `relayd cluster --netns`
	// sets the bridge's, where the nodes' namespaces reach it.
	Host string
	// Port is the JSON-RPC port on Host for both HTTP and WebSocket; 0 picks a free one.
	Port int
	// BlockInterval is how often an empty block is sealed while no transaction arrives
	// (DefaultBlockInterval).
	BlockInterval time.Duration
	// NoInstantSeal switches off sealing on every new transaction: blocks come only every
	// BlockInterval, as on a real chain. For latency measurements.
	NoInstantSeal bool
	// BlockTime, when positive, makes the chain behave like a real one: a block is sealed every
	// BlockTime, empty or not, and a transaction waits in the pool for the next block (it sets
	// BlockInterval and NoInstantSeal). 0, the default, seals every transaction at once.
	// `relayd devchain --blockTime 2s`.
	BlockTime time.Duration
	// MinWinProb is the network minimum win probability the channels contract is deployed with
	// (the tickets' 56-bit field; 0: tickets.MaxWinProb, every ticket wins).
	MinWinProb uint64
	// ClosurePeriod is the channels contract's closure period, whole seconds
	// (DefaultClosurePeriod).
	ClosurePeriod time.Duration
	// DeployerKey deploys the contracts and holds the supply (DevKeyHex when nil).
	DeployerKey *ecdsa.PrivateKey
	// Supply is the token supply minted to the deployer (DefaultSupply).
	Supply *big.Int
	// Alloc pre-funds further accounts with native currency at genesis.
	Alloc map[common.Address]*big.Int
	// Logger receives the chain's own logs (slog.Default() when nil).
	Logger *slog.Logger
}

// Chain is a running dev chain with the contracts deployed.
type Chain struct {
	cfg        Config
	sim        *simulated.Backend
	host       string
	port       int
	deployment chain.Deployment
	deployer   *chain.Client
	log        *slog.Logger

	pending chan struct{} // a transaction entered the pool; capacity 1, coalescing
	stop    chan struct{}
	done    chan struct{}

	closeOnce sync.Once
	closeErr  error
	sealMu    sync.Mutex // serialises seals: the backend's Commit is not safe for concurrent use
	lastTime  uint64     // timestamp of the last sealed block; guarded by sealMu
}

// DevKey returns the parsed DevKeyHex. DEV-ONLY.
func DevKey() *ecdsa.PrivateKey { return devfund.DevKey() }

// New starts a dev chain: it begins serving JSON-RPC and sealing blocks at once (the contracts
// are deployed before New returns), until Close or the end of Run's context.
func New(ctx context.Context, cfg Config) (*Chain, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.BlockTime < 0 {
		return nil, fmt.Errorf("dev chain: negative block time %s", cfg.BlockTime)
	}
	if cfg.BlockTime > 0 {
		cfg.BlockInterval, cfg.NoInstantSeal = cfg.BlockTime, true
	}
	if cfg.BlockInterval <= 0 {
		cfg.BlockInterval = DefaultBlockInterval
	}
	if cfg.ClosurePeriod == 0 {
		cfg.ClosurePeriod = DefaultClosurePeriod
	}
	if cfg.DeployerKey == nil {
		cfg.DeployerKey = DevKey()
	}
	if cfg.Supply == nil {
		cfg.Supply = DefaultSupply
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Chain{
		cfg:     cfg,
		log:     cfg.Logger,
		pending: make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	alloc := types.GenesisAlloc{crypto.PubkeyToAddress(cfg.DeployerKey.PublicKey): {Balance: DefaultDeployerEther}}
	for a, wei := range cfg.Alloc {
		alloc[a] = types.Account{Balance: wei}
	}
	var err error
	for attempt := 0; ; attempt++ {
		port := cfg.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return nil, err
			}
		}
		c.sim, err = newBackend(alloc, cfg.Host, port)
		if err == nil {
			c.host, c.port = cfg.Host, port
			break
		}
		if cfg.Port != 0 || attempt == 2 {
			return nil, fmt.Errorf("start dev chain on %s: %w", net.JoinHostPort(cfg.Host, strconv.Itoa(port)), err)
		}
	}
	if err := c.start(ctx); err != nil {
		_ = c.sim.Close()
		return nil, err
	}
	return c, nil
}

// newBackend starts the simulated backend; its constructor panics when the node cannot start
// (a port in use), which is turned into an error.
func newBackend(alloc types.GenesisAlloc, host string, port int) (sim *simulated.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("simulated backend: %v", r)
		}
	}()
	return simulated.NewBackend(alloc, func(nc *node.Config, ec *ethconfig.Config) {
		nc.HTTPHost, nc.HTTPPort = host, port
		nc.WSHost, nc.WSPort = host, port
		nc.HTTPModules = []string{"eth", "net", "web3"}
		nc.WSModules = []string{"eth", "net", "web3"}
		nc.HTTPVirtualHosts = []string{"localhost", "127.0.0.1", host}
		nc.WSOrigins = []string{"*"}
		// A genesis of its own: a dev chain started again on the same port deploys the contracts
		// at the same addresses, and only its genesis hash tells a node's indexer that the
		// channels it stored are gone (internal/chain: ErrChainReplaced).
		ec.Genesis.ExtraData = make([]byte, 32)
		_, _ = rand.Read(ec.Genesis.ExtraData)
	}), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start subscribes to pending transactions, starts the sealing loop and deploys the contracts.
func (c *Chain) start(ctx context.Context) error {
	// The backend's in-process client hides its rpc.Client, so the chain subscribes to its own
	// pending transactions over its WebSocket endpoint.
	rc, err := rpc.DialContext(ctx, c.WSURL())
	if err != nil {
		return fmt.Errorf("dial own websocket: %w", err)
	}
	txs := make(chan common.Hash, 256)
	sub, err := rc.EthSubscribe(ctx, txs, "newPendingTransactions")
	if err != nil {
		rc.Close()
		return fmt.Errorf("subscribe to pending transactions: %w", err)
	}
	go func() {
		defer rc.Close()
		defer sub.Unsubscribe()
		for {
			select {
			case <-txs:
				if !c.cfg.NoInstantSeal {
					select {
					case c.pending <- struct{}{}:
					default:
					}
				}
			case err := <-sub.Err():
				if err != nil {
					c.log.Warn("dev chain lost its pending-transaction subscription; sealing every block interval only", "err", err)
				}
				return
			case <-c.stop:
				return
			}
		}
	}()
	go c.sealLoop()

	var opts []chain.DeployOption
	if c.cfg.MinWinProb != 0 {
		opts = append(opts, chain.WithMinWinProb(c.cfg.MinWinProb))
	}
	d, err := chain.Deploy(ctx, c.sim.Client(), c.cfg.DeployerKey, c.cfg.ClosurePeriod, c.cfg.Supply, opts...)
	if err != nil {
		c.halt()
		return fmt.Errorf("deploy contracts: %w", err)
	}
	c.deployment = d
	c.deployer, err = chain.Dial(ctx, chain.Config{
		ProviderURL: c.RPCURL(), Key: c.cfg.DeployerKey, Channels: d.Channels, Token: d.Token,
		ReceiptPoll: 5 * time.Millisecond, Logger: c.log,
	})
	if err != nil {
		c.halt()
		return fmt.Errorf("dev chain deployer client: %w", err)
	}
	c.log.Info("dev chain started", "rpc", c.RPCURL(), "chainId", ChainID,
		"token", d.Token.Hex(), "channels", d.Channels.Hex(), "closurePeriod", c.cfg.ClosurePeriod,
		"blockTime", c.cfg.BlockTime, "minWinProb", minWinProbText(c.cfg.MinWinProb))
	return nil
}

// sealLoop seals a block when a transaction is pending, and an empty one every BlockInterval
// once the wall clock has passed the last block's timestamp. With a BlockTime it seals at every
// tick, even while chain time is ahead of the wall clock (after AdjustTime): a real chain does
// not stop producing blocks, and transactions wait only for the next one.
func (c *Chain) sealLoop() {
	defer close(c.done)
	idle := time.NewTicker(c.cfg.BlockInterval)
	defer idle.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.pending:
			c.Seal()
		case <-idle.C:
			c.sealMu.Lock()
			behind := uint64(time.Now().Unix()) > c.lastTime
			c.sealMu.Unlock()
			if behind || c.cfg.BlockTime > 0 {
				c.Seal()
			}
		}
	}
}

// Seal seals a block now with whatever transactions are pending, and returns its hash.
func (c *Chain) Seal() common.Hash {
	c.sealMu.Lock()
	defer c.sealMu.Unlock()
	h := c.sim.Commit()
	if head, err := c.sim.Client().HeaderByHash(context.Background(), h); err == nil {
		c.lastTime = head.Time
	}
	return h
}

// Head is the number of the chain's latest block.
func (c *Chain) Head(ctx context.Context) (uint64, error) { return c.sim.Client().BlockNumber(ctx) }

// Params reads the deployed channels contract's token, closure period and minimum win
// probability, as a node joining the chain reads them.
func (c *Chain) Params(ctx context.Context) (chain.ChannelsParams, error) {
	return chain.ReadChannels(ctx, c.sim.Client(), c.deployment.Channels)
}

// AdjustTime seals an empty block whose timestamp is d after the last one (tests use it to pass
// a closure period). It fails while transactions are pending.
func (c *Chain) AdjustTime(d time.Duration) error {
	c.sealMu.Lock()
	defer c.sealMu.Unlock()
	c.sim.Commit() // lets the pool settle: AdjustTime needs it empty
	if err := c.sim.AdjustTime(d); err != nil {
		return fmt.Errorf("adjust time: %w", err)
	}
	if head, err := c.sim.Client().HeaderByNumber(context.Background(), nil); err == nil {
		c.lastTime = head.Time
	}
	return nil
}

// Reorg replaces every block after ancestor (a block of the canonical chain) with a new branch
// one block longer, as a reorganisation on a real chain does, and returns the new head's hash.
// With drop set, the transactions of the removed blocks are dropped from the pool too, so that
// they are not mined again (a competing branch that never saw them); without it, they go back
// to the pool and into the new branch. It fails while transactions are pending (the simulated
// backend's Fork requires an empty pool). Tests use it; a real chain does it by itself.
func (c *Chain) Reorg(ctx context.Context, ancestor common.Hash, drop bool) (common.Hash, error) {
	c.sealMu.Lock()
	defer c.sealMu.Unlock()
	eth := c.sim.Client()
	base, err := eth.HeaderByHash(ctx, ancestor)
	if err != nil {
		return common.Hash{}, fmt.Errorf("reorg: ancestor %s: %w", ancestor.Hex(), err)
	}
	head, err := eth.HeaderByNumber(ctx, nil)
	if err != nil {
		return common.Hash{}, fmt.Errorf("reorg: head: %w", err)
	}
	if head.Number.Cmp(base.Number) <= 0 {
		return common.Hash{}, fmt.Errorf("reorg: ancestor %s is the head", ancestor.Hex())
	}
	if err := c.sim.Fork(ancestor); err != nil {
		return common.Hash{}, fmt.Errorf("reorg: %w", err)
	}
	if drop {
		c.sim.Rollback() // the pool has taken the removed blocks' transactions back: drop them
	}
	var h common.Hash
	for range head.Number.Uint64() - base.Number.Uint64() + 1 {
		h = c.sim.Commit()
	}
	if hd, err := eth.HeaderByHash(ctx, h); err == nil {
		c.lastTime = hd.Time
	}
	return h, nil
}

// Run blocks until ctx ends, then closes the chain.
func (c *Chain) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case <-c.done:
	}
	return c.Close()
}

func (c *Chain) halt() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

// Close stops sealing and shuts the node down; the RPC endpoint goes away. It is idempotent.
func (c *Chain) Close() error {
	c.closeOnce.Do(func() {
		c.halt()
		if c.deployer != nil {
			c.deployer.Close()
		}
		c.closeErr = c.sim.Close()
	})
	return c.closeErr
}

// RPCURL returns the HTTP JSON-RPC URL, e.g. http://127.0.0.1:8545.
func (c *Chain) RPCURL() string { return "http://" + net.JoinHostPort(c.host, strconv.Itoa(c.port)) }

// WSURL returns the WebSocket JSON-RPC URL, e.g. ws://127.0.0.1:8545.
func (c *Chain) WSURL() string { return "ws://" + net.JoinHostPort(c.host, strconv.Itoa(c.port)) }

// ChainID returns the chain id, always ChainID.
func (c *Chain) ChainID() uint64 { return ChainID }

// Deployment returns the contracts' addresses and the block they were deployed in.
func (c *Chain) Deployment() chain.Deployment { return c.deployment }

// TokenAddress returns the RelayToken contract's address.
func (c *Chain) TokenAddress() common.Address { return c.deployment.Token }

// ChannelsAddress returns the RelayChannels contract's address.
func (c *Chain) ChannelsAddress() common.Address { return c.deployment.Channels }

// DeployerAddress returns the deployer's address, which holds the token supply.
func (c *Chain) DeployerAddress() common.Address {
	return crypto.PubkeyToAddress(c.cfg.DeployerKey.PublicKey)
}

// DeployerKey returns the deployer's key. DEV-ONLY: print it only with a warning.
func (c *Chain) DeployerKey() *ecdsa.PrivateKey { return c.cfg.DeployerKey }

// Fund sends addr nativeWei of the native currency and tokenWei tokens from the deployer; a nil
// or zero amount is skipped. It returns once both transfers are mined.
func (c *Chain) Fund(ctx context.Context, addr common.Address, nativeWei, tokenWei *big.Int) error {
	if nativeWei != nil && nativeWei.Sign() > 0 {
		if _, err := c.deployer.TransferNative(ctx, addr, nativeWei); err != nil {
			return fmt.Errorf("fund %s: %w", addr, err)
		}
	}
	if tokenWei != nil && tokenWei.Sign() > 0 {
		if _, err := c.deployer.TransferToken(ctx, addr, tokenWei); err != nil {
			return fmt.Errorf("fund %s: %w", addr, err)
		}
	}
	return nil
}

// minWinProbText renders Config.MinWinProb as the probability it encodes.
func minWinProbText(w uint64) string {
	if w == 0 {
		w = tickets.MaxWinProb
	}
	return tickets.FormatWinProb(w)
}
