package chain

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
)

// RPC is a plain JSON-RPC connection to a provider, for what needs no account of its own:
// deploying the contracts (it is a DeployBackend) and checking a deployment before a node starts
// (it is a ContractReader; internal/networks.Verify). Each call is bounded by DefaultCallTimeout,
// and every error it returns is classified like a Client's (ErrProviderUnavailable,
// ErrInsufficientFunds) and has the provider URL's path, query and user info removed: only its
// scheme and host remain (ProviderDisplay). It is safe for concurrent use.
type RPC struct {
	eth     *ethclient.Client
	red     *redactor
	timeout time.Duration
}

// DialRPC connects to the JSON-RPC provider at url (http(s):// or ws(s)://). A provider that
// cannot be reached fails with ErrProviderUnavailable.
func DialRPC(ctx context.Context, url string) (*RPC, error) {
	if url == "" {
		return nil, fmt.Errorf("%w: provider URL is required", ErrBadConfig)
	}
	r := &RPC{red: newRedactor(url), timeout: DefaultCallTimeout}
	dctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	eth, err := ethclient.DialContext(dctx, url)
	if err != nil {
		return nil, fmt.Errorf("dial chain provider %s: %w", r.red.display, classifyDial(ctx, r.red.err(err)))
	}
	r.eth = eth
	return r, nil
}

// Display is what may be shown of the provider's URL: its scheme and host.
func (r *RPC) Display() string { return r.red.display }

// Close closes the connection.
func (r *RPC) Close() { r.eth.Close() }

// call runs one RPC call under the call timeout, redacts and classifies its error.
func rpcCall[T any](ctx context.Context, r *RPC, f func(context.Context) (T, error)) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	v, err := f(cctx)
	return v, classify(ctx, r.red.err(err))
}

// ChainID returns the chain id the provider serves.
func (r *RPC) ChainID(ctx context.Context) (*big.Int, error) { return rpcCall(ctx, r, r.eth.ChainID) }

// BlockNumber returns the number of the provider's latest block.
func (r *RPC) BlockNumber(ctx context.Context) (uint64, error) {
	return rpcCall(ctx, r, r.eth.BlockNumber)
}

// PendingNonceAt returns account's next nonce, counting the transactions in the pool.
func (r *RPC) PendingNonceAt(ctx context.Context, account common.Address) (uint64, error) {
	return rpcCall(ctx, r, func(ctx context.Context) (uint64, error) { return r.eth.PendingNonceAt(ctx, account) })
}

// HeaderByNumber returns block number's header; nil is the latest.
func (r *RPC) HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error) {
	return rpcCall(ctx, r, func(ctx context.Context) (*types.Header, error) { return r.eth.HeaderByNumber(ctx, number) })
}

// SuggestGasTipCap returns the provider's suggested EIP-1559 tip.
func (r *RPC) SuggestGasTipCap(ctx context.Context) (*big.Int, error) {
	return rpcCall(ctx, r, r.eth.SuggestGasTipCap)
}

// SuggestGasPrice returns the provider's suggested legacy gas price.
func (r *RPC) SuggestGasPrice(ctx context.Context) (*big.Int, error) {
	return rpcCall(ctx, r, r.eth.SuggestGasPrice)
}

// EstimateGas estimates msg's gas at the latest block.
func (r *RPC) EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error) {
	return rpcCall(ctx, r, func(ctx context.Context) (uint64, error) { return r.eth.EstimateGas(ctx, msg) })
}

// SendTransaction sends a signed transaction.
func (r *RPC) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	_, err := rpcCall(ctx, r, func(ctx context.Context) (struct{}, error) { return struct{}{}, r.eth.SendTransaction(ctx, tx) })
	return err
}

// TransactionReceipt returns hash's receipt, or an error matching ethereum.NotFound while it is
// not mined.
func (r *RPC) TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error) {
	return rpcCall(ctx, r, func(ctx context.Context) (*types.Receipt, error) { return r.eth.TransactionReceipt(ctx, hash) })
}

// CodeAt returns the code at account in block number (nil: the latest).
func (r *RPC) CodeAt(ctx context.Context, account common.Address, number *big.Int) ([]byte, error) {
	return rpcCall(ctx, r, func(ctx context.Context) ([]byte, error) { return r.eth.CodeAt(ctx, account, number) })
}

// CallContract executes msg as a call (nothing is sent) in block number (nil: the latest).
func (r *RPC) CallContract(ctx context.Context, msg ethereum.CallMsg, number *big.Int) ([]byte, error) {
	return rpcCall(ctx, r, func(ctx context.Context) ([]byte, error) { return r.eth.CallContract(ctx, msg, number) })
}

// BalanceAt returns account's native balance in wei at block number (nil: the latest).
func (r *RPC) BalanceAt(ctx context.Context, account common.Address, number *big.Int) (*big.Int, error) {
	return rpcCall(ctx, r, func(ctx context.Context) (*big.Int, error) { return r.eth.BalanceAt(ctx, account, number) })
}

// ContractReader is what reading a deployment needs from a chain: RPC, *ethclient.Client and
// go-ethereum's simulated backend's client all satisfy it.
type ContractReader interface {
	CodeAt(ctx context.Context, account common.Address, number *big.Int) ([]byte, error)
	CallContract(ctx context.Context, msg ethereum.CallMsg, number *big.Int) ([]byte, error)
}

// ChannelsParams are a RelayChannels contract's parameters, as its views answer them.
type ChannelsParams struct {
	// Token is the ERC-20 the channels are funded in (token()).
	Token common.Address
	// ClosurePeriod is how long a channel stays PendingToClose (closurePeriod(), whole seconds).
	ClosurePeriod time.Duration
	// MinWinProb is the network's minimum win probability (minWinProb(), 56-bit); its owner
	// may change it.
	MinWinProb uint64
}

// ReadChannels reads the parameters of the RelayChannels contract at addr from the latest block.
// It fails with ErrNoContract when addr holds no code, or code that does not answer the
// contract's views (another contract, such as the token).
func ReadChannels(ctx context.Context, r ContractReader, addr common.Address) (ChannelsParams, error) {
	code, err := r.CodeAt(ctx, addr, nil)
	if err != nil {
		return ChannelsParams{}, fmt.Errorf("read code at %s: %w", addr.Hex(), err)
	}
	if len(code) == 0 {
		return ChannelsParams{}, fmt.Errorf("channels contract %s: %w", addr.Hex(), ErrNoContract)
	}
	var p ChannelsParams
	if p.Token, err = readView(ctx, r, addr, "token()", channelsABI.PackToken(), channelsABI.UnpackToken); err != nil {
		return ChannelsParams{}, err
	}
	period, err := readView(ctx, r, addr, "closurePeriod()", channelsABI.PackClosurePeriod(), channelsABI.UnpackClosurePeriod)
	if err != nil {
		return ChannelsParams{}, err
	}
	p.ClosurePeriod = time.Duration(period) * time.Second
	if p.MinWinProb, err = readView(ctx, r, addr, "minWinProb()", channelsABI.PackMinWinProb(), channelsABI.UnpackMinWinProb); err != nil {
		return ChannelsParams{}, err
	}
	return p, nil
}

// ReadTokenSymbol returns the symbol of the ERC-20 at addr. It fails with ErrNoContract when
// addr holds no code or code without an ERC-20 symbol() view.
func ReadTokenSymbol(ctx context.Context, r ContractReader, addr common.Address) (string, error) {
	code, err := r.CodeAt(ctx, addr, nil)
	if err != nil {
		return "", fmt.Errorf("read code at %s: %w", addr.Hex(), err)
	}
	if len(code) == 0 {
		return "", fmt.Errorf("token %s: %w", addr.Hex(), ErrNoContract)
	}
	return readView(ctx, r, addr, "symbol()", tokenABI.PackSymbol(), tokenABI.UnpackSymbol)
}

// readView calls a view of the contract at to; a call that reverts, returns nothing or returns
// what does not unpack means the contract has no such view (ErrNoContract), unless the provider
// failed.
func readView[T any](ctx context.Context, r ContractReader, to common.Address, view string, data []byte, unpack func([]byte) (T, error)) (T, error) {
	var zero T
	out, err := r.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
	if err != nil {
		if rev := revertFrom(err); rev == nil {
			return zero, fmt.Errorf("call %s on %s: %w", view, to.Hex(), classify(ctx, err))
		}
		return zero, fmt.Errorf("%s has no %s view (it reverts): %w", to.Hex(), view, ErrNoContract)
	}
	v, err := unpack(out)
	if err != nil || len(out) == 0 {
		return zero, fmt.Errorf("%s has no %s view (it answers %d bytes): %w", to.Hex(), view, len(out), ErrNoContract)
	}
	return v, nil
}

// ReadTokenBalance returns account's balance of the ERC-20 at addr, in its smallest unit.
func ReadTokenBalance(ctx context.Context, r ContractReader, addr, account common.Address) (*big.Int, error) {
	return readView(ctx, r, addr, "balanceOf()", tokenABI.PackBalanceOf(account), tokenABI.UnpackBalanceOf)
}
