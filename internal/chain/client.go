package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/relayd/relayd/internal/channels"
)

// Defaults of Config's optional fields.
const (
	DefaultReceiptPoll = 25 * time.Millisecond
	DefaultCallTimeout = 10 * time.Second
	// DefaultStallTimeout is how long a transaction may stay unmined before it is replaced with
	// higher fees: five Ethereum blocks.
	DefaultStallTimeout = time.Minute
)

// Config configures a Client. ProviderURL, Key and Channels are required; the rest have
// defaults.
type Config struct {
	// ProviderURL is the JSON-RPC endpoint: http(s):// or ws(s)://.
	ProviderURL string
	// Key signs the node's transactions; its address is the node's account.
	Key *ecdsa.PrivateKey
	// Channels is the RelayChannels contract's address.
	Channels common.Address
	// Token is the RelayToken address. When zero it is read from the channels contract's
	// token() view.
	Token common.Address
	// ReceiptPoll is how often a transaction's receipt is polled (DefaultReceiptPoll).
	ReceiptPoll time.Duration
	// CallTimeout bounds each JSON-RPC call; a call that takes longer fails with
	// ErrProviderUnavailable (DefaultCallTimeout).
	CallTimeout time.Duration
	// StallTimeout is how long a sent transaction may stay unmined before the client replaces
	// it with the same nonce at higher fees, and fills nonces below it that a previous run
	// left stuck (DefaultStallTimeout). See tx_stall.go.
	StallTimeout time.Duration
	// Logger receives the client's logs (slog.Default() when nil). Keys are never logged, nor
	// the provider URL's path, query or user info (API keys live there).
	Logger *slog.Logger
}

// Client is a connection to a chain with the channels contract deployed, acting as one account.
// It is safe for concurrent use; transactions from one Client are serialised only while they are
// signed and sent, not while they are mined.
type Client struct {
	eth           *ethclient.Client
	key           *ecdsa.PrivateKey
	addr          common.Address
	chainID       *big.Int
	signer        types.Signer
	channels      common.Address
	token         common.Address
	closurePeriod time.Duration
	symbol        string
	ws            bool
	poll          time.Duration
	callTimeout   time.Duration
	stall         time.Duration
	log           *slog.Logger
	red           *redactor // every error from the provider passes through it

	mu         sync.Mutex // guards nonce, nonceKnown; held while a transaction is signed and sent
	nonce      uint64
	nonceKnown bool

	sentMu sync.Mutex              // guards sent and the fields of its values marked so
	sent   map[common.Hash]*sentTx // transactions sent and waited for, by first hash

	firstFees func(fees) fees // tests: the fees of a transaction's first version
}

// Dial connects to cfg.ProviderURL and reads the chain id, the contracts' immutable parameters
// (token address, closure period, token symbol). It fails with ErrProviderUnavailable when the
// provider cannot be reached, ErrNoContract when there is no code at cfg.Channels. No error the
// Client returns, here or later, contains the provider URL's path, query or user info: only its
// scheme and host (see ProviderDisplay).
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	switch {
	case cfg.ProviderURL == "":
		return nil, fmt.Errorf("%w: provider URL is required", ErrBadConfig)
	case cfg.Key == nil:
		return nil, fmt.Errorf("%w: key is required", ErrBadConfig)
	case cfg.Channels == (common.Address{}):
		return nil, fmt.Errorf("%w: channels contract address is required", ErrBadConfig)
	}
	c := &Client{
		key:         cfg.Key,
		addr:        crypto.PubkeyToAddress(cfg.Key.PublicKey),
		channels:    cfg.Channels,
		token:       cfg.Token,
		ws:          strings.HasPrefix(cfg.ProviderURL, "ws://") || strings.HasPrefix(cfg.ProviderURL, "wss://"),
		poll:        cfg.ReceiptPoll,
		callTimeout: cfg.CallTimeout,
		stall:       cfg.StallTimeout,
		log:         cfg.Logger,
		red:         newRedactor(cfg.ProviderURL),
	}
	if c.poll <= 0 {
		c.poll = DefaultReceiptPoll
	}
	if c.callTimeout <= 0 {
		c.callTimeout = DefaultCallTimeout
	}
	if c.stall <= 0 {
		c.stall = DefaultStallTimeout
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	dctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	eth, err := ethclient.DialContext(dctx, cfg.ProviderURL)
	if err != nil {
		return nil, fmt.Errorf("dial chain provider %s: %w", c.red.display, classifyDial(ctx, c.red.err(err)))
	}
	c.eth = eth
	if err := c.init(ctx); err != nil {
		eth.Close()
		return nil, fmt.Errorf("chain provider %s: %w", c.red.display, err)
	}
	c.log.Info("chain provider connected", "provider", c.red.display, "chainId", c.chainID.Uint64(), "token", c.symbol)
	return c, nil
}

// classifyDial treats every dial failure other than the caller's cancellation as the provider's.
func classifyDial(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: %w", ErrProviderUnavailable, err)
}

func (c *Client) init(ctx context.Context) error {
	var err error
	if c.chainID, err = withTimeout(ctx, c, c.eth.ChainID); err != nil {
		return fmt.Errorf("read chain id: %w", err)
	}
	c.signer = types.LatestSignerForChainID(c.chainID)
	code, err := withTimeout(ctx, c, func(ctx context.Context) ([]byte, error) { return c.eth.CodeAt(ctx, c.channels, nil) })
	if err != nil {
		return fmt.Errorf("read channels contract code: %w", err)
	}
	if len(code) == 0 {
		return fmt.Errorf("channels contract %s on chain %s: %w", c.channels, c.chainID, ErrNoContract)
	}
	if c.token == (common.Address{}) {
		if c.token, err = callView(ctx, c, c.channels, channelsABI.PackToken(), channelsABI.UnpackToken); err != nil {
			return c.notChannels(ctx, "token()", err)
		}
	}
	period, err := callView(ctx, c, c.channels, channelsABI.PackClosurePeriod(), channelsABI.UnpackClosurePeriod)
	if err != nil {
		return c.notChannels(ctx, "closurePeriod()", err)
	}
	c.closurePeriod = time.Duration(period) * time.Second
	if c.symbol, err = callView(ctx, c, c.token, tokenABI.PackSymbol(), tokenABI.UnpackSymbol); err != nil {
		return fmt.Errorf("read token symbol: %w", err)
	}
	return nil
}

// notChannels turns a failed view of the channels contract into a *notChannelsError (which
// matches ErrNoContract) unless the provider failed: the address holds code, but code that
// reverts, answers nothing or answers something else is not a RelayChannels contract. It asks
// the contract for an ERC-20 symbol, to say so when it is a token (the token's address given for
// the channels contract's, the usual mistake).
func (c *Client) notChannels(ctx context.Context, view string, err error) error {
	if errors.Is(err, ErrProviderUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e := &notChannelsError{address: c.channels, chainID: c.chainID.Uint64(), view: view, err: err}
	if sym, serr := callView(ctx, c, c.channels, tokenABI.PackSymbol(), tokenABI.UnpackSymbol); serr == nil && sym != "" {
		e.token = sym
	}
	return e
}

// notChannelsError is a channels address that holds a contract which is not RelayChannels: a
// view every RelayChannels contract has failed on it. It matches ErrNoContract with errors.Is,
// and unwraps to why the view failed.
type notChannelsError struct {
	address common.Address
	chainID uint64
	view    string // the view that failed, e.g. "token()"
	token   string // the contract's ERC-20 symbol, when it answers one
	err     error
}

func (e *notChannelsError) Error() string {
	msg := fmt.Sprintf("%s on chain %d is a contract, but it is not a RelayChannels contract: it has no %s", e.address.Hex(), e.chainID, e.view)
	if e.token != "" {
		return msg + fmt.Sprintf("; it is the token %s: did you pass the token's address instead of the RelayChannels contract's?", e.token)
	}
	return msg + "; did you pass the token's or another contract's address instead of the RelayChannels contract's?"
}

func (e *notChannelsError) Is(target error) bool { return target == ErrNoContract }
func (e *notChannelsError) Unwrap() error        { return e.err }

// Close closes the connection to the provider.
func (c *Client) Close() { c.eth.Close() }

// Address returns the account the client signs for.
func (c *Client) Address() common.Address { return c.addr }

// ChainID returns the chain's id, read at Dial.
func (c *Client) ChainID() uint64 { return c.chainID.Uint64() }

// ChannelsAddress returns the RelayChannels contract's address.
func (c *Client) ChannelsAddress() common.Address { return c.channels }

// TokenAddress returns the RelayToken contract's address.
func (c *Client) TokenAddress() common.Address { return c.token }

// ClosurePeriod returns the channels contract's closure period, read at Dial.
func (c *Client) ClosurePeriod() time.Duration { return c.closurePeriod }

// TokenSymbol returns the token's symbol, read at Dial.
func (c *Client) TokenSymbol() string { return c.symbol }

// BlockNumber returns the number of the provider's latest block.
func (c *Client) BlockNumber(ctx context.Context) (uint64, error) {
	n, err := withTimeout(ctx, c, c.eth.BlockNumber)
	if err != nil {
		return 0, fmt.Errorf("block number: %w", err)
	}
	return n, nil
}

// HeaderHash returns the hash of block n, and ethereum.NotFound when the chain has no such block.
func (c *Client) HeaderHash(ctx context.Context, n uint64) (common.Hash, error) {
	h, err := withTimeout(ctx, c, func(ctx context.Context) (*types.Header, error) {
		return c.eth.HeaderByNumber(ctx, new(big.Int).SetUint64(n))
	})
	if err != nil {
		return common.Hash{}, fmt.Errorf("header %d: %w", n, err)
	}
	return h.Hash(), nil
}

// FilterLogs returns the logs matching q (ethereum.FilterQuery semantics).
func (c *Client) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	logs, err := withTimeout(ctx, c, func(ctx context.Context) ([]types.Log, error) { return c.eth.FilterLogs(ctx, q) })
	if err != nil {
		return nil, fmt.Errorf("filter logs: %w", err)
	}
	return logs, nil
}

// NativeBalance returns addr's balance of the chain's native currency, in wei.
func (c *Client) NativeBalance(ctx context.Context, addr common.Address) (*big.Int, error) {
	b, err := withTimeout(ctx, c, func(ctx context.Context) (*big.Int, error) { return c.eth.BalanceAt(ctx, addr, nil) })
	if err != nil {
		return nil, fmt.Errorf("native balance: %w", err)
	}
	return b, nil
}

// TokenBalance returns addr's token balance, in the token's smallest unit.
func (c *Client) TokenBalance(ctx context.Context, addr common.Address) (*big.Int, error) {
	b, err := callView(ctx, c, c.token, tokenABI.PackBalanceOf(addr), tokenABI.UnpackBalanceOf)
	if err != nil {
		return nil, fmt.Errorf("token balance: %w", err)
	}
	return b, nil
}

// Channel reads the channel from src to dst from the contract (not from an index). A channel
// never opened is returned as Closed with epoch 0.
func (c *Client) Channel(ctx context.Context, src, dst common.Address) (channels.Channel, error) {
	id := channels.IDOf(src, dst)
	out, err := callView(ctx, c, c.channels, channelsABI.PackChannels(id), channelsABI.UnpackChannels)
	if err != nil {
		return channels.Channel{}, fmt.Errorf("read channel: %w", err)
	}
	ch := channels.Channel{
		ID: id, Source: src, Destination: dst, Balance: out.Balance, TicketIndex: out.TicketIndex,
		Epoch: out.Epoch, Status: channels.Status(out.Status),
	}
	if out.ClosureTime != 0 {
		ch.ClosureTime = time.Unix(int64(out.ClosureTime), 0)
	}
	return ch, nil
}

// withTimeout runs one RPC call under the client's call timeout, redacts the provider URL from
// its error and classifies it.
func withTimeout[T any](ctx context.Context, c *Client, f func(context.Context) (T, error)) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, c.callTimeout)
	defer cancel()
	v, err := f(cctx)
	return v, classify(ctx, c.red.err(err))
}

// callView calls a view of the contract at to and unpacks its result.
func callView[T any](ctx context.Context, c *Client, to common.Address, data []byte, unpack func([]byte) (T, error)) (T, error) {
	var zero T
	out, err := withTimeout(ctx, c, func(ctx context.Context) ([]byte, error) {
		return c.eth.CallContract(ctx, ethereum.CallMsg{From: c.addr, To: &to, Data: data}, nil)
	})
	if err != nil {
		if rev := revertFrom(err); rev != nil {
			return zero, rev
		}
		return zero, err
	}
	if len(out) == 0 {
		return zero, fmt.Errorf("empty result from %s: %w", to, ErrNoContract)
	}
	v, err := unpack(out)
	if err != nil {
		return zero, fmt.Errorf("unpack result: %w", err)
	}
	return v, nil
}

// isNotFound reports whether err is the provider's "not found" (receipt or block not there yet).
func isNotFound(err error) bool { return errors.Is(err, ethereum.NotFound) }

// notYet reports whether a receipt query failed only because the receipt is not available yet:
// not mined, or go-ethereum still indexing its transactions.
func notYet(err error) bool {
	return isNotFound(err) || errText(err, "transaction indexing is in progress")
}
