package chain

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/tickets"
)

// DeployBackend is what Deploy needs from a chain: RPC, *ethclient.Client and the simulated
// backend's client all satisfy it.
type DeployBackend interface {
	ContractReader
	ChainID(ctx context.Context) (*big.Int, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	SuggestGasTipCap(ctx context.Context) (*big.Int, error)
	SuggestGasPrice(ctx context.Context) (*big.Int, error)
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
}

// Deployment is where Deploy put the contracts.
type Deployment struct {
	Token    common.Address
	Channels common.Address
	// Block is the block the channels contract was created in: an indexer needs no earlier one.
	Block uint64
}

// DeployOption changes a default of Deploy.
type DeployOption func(*deployOptions)

type deployOptions struct {
	minWinProb uint64
	token      common.Address
}

// WithToken makes Deploy use the ERC-20 already deployed at token instead of deploying
// RelayToken: only the channels contract is deployed, for it. Deploy checks first that token
// holds a contract that answers ERC-20's totalSupply(), and fails with ErrNoContract before
// sending anything when it does not.
func WithToken(token common.Address) DeployOption {
	return func(o *deployOptions) { o.token = token }
}

// WithMinWinProb sets the channels contract's initial minimum win probability (56-bit, like a
// ticket's WinProb). Without it Deploy uses tickets.MaxWinProb: every ticket must win, which is
// how relayd's dev chain behaved before the minimum existed. The deployer becomes the contract's
// owner and can change it later (Client.SetMinWinProb).
func WithMinWinProb(p uint64) DeployOption {
	return func(o *deployOptions) { o.minWinProb = p }
}

// Deploy deploys RelayToken, minting initialSupply to the deployer (or takes an existing ERC-20:
// WithToken; initialSupply is then unused and may be nil), and RelayChannels for it with the
// given closure period (whole seconds) and minimum win probability (WithMinWinProb;
// tickets.MaxWinProb by default), and waits until both are mined and the backend's latest
// block has reached them (deployHead). The deployer is the channels contract's owner. Both
// creations are sent at once (consecutive nonces), so they can share a block. Someone must be
// producing blocks: a real chain, or a dev chain's Run.
func Deploy(ctx context.Context, backend DeployBackend, deployer *ecdsa.PrivateKey, closurePeriod time.Duration, initialSupply *big.Int, opts ...DeployOption) (Deployment, error) {
	o := deployOptions{minWinProb: tickets.MaxWinProb}
	for _, opt := range opts {
		opt(&o)
	}
	existing := o.token != (common.Address{})
	if closurePeriod < 0 || !existing && (initialSupply == nil || initialSupply.Sign() < 0) {
		return Deployment{}, fmt.Errorf("deploy: %w: negative closure period or supply", ErrBadConfig)
	}
	if o.minWinProb > tickets.MaxWinProb {
		return Deployment{}, fmt.Errorf("deploy: %w: minimum win probability %d does not fit in 56 bits", ErrBadConfig, o.minWinProb)
	}
	from := crypto.PubkeyToAddress(deployer.PublicKey)
	chainID, err := backend.ChainID(ctx)
	if err != nil {
		return Deployment{}, fmt.Errorf("deploy: chain id: %w", classify(ctx, err))
	}
	nonce, err := backend.PendingNonceAt(ctx, from)
	if err != nil {
		return Deployment{}, fmt.Errorf("deploy: nonce: %w", classify(ctx, err))
	}
	type creation struct {
		name string
		code []byte
	}
	var codes []creation
	tokenAddr := o.token
	if existing {
		if err := checkERC20(ctx, backend, tokenAddr); err != nil {
			return Deployment{}, fmt.Errorf("deploy: %w", err)
		}
	} else {
		tokenAddr = crypto.CreateAddress(from, nonce)
		codes = append(codes, creation{"RelayToken", append(common.FromHex(contracts.RelayTokenMetaData.Bin), tokenABI.PackConstructor(initialSupply)...)})
	}
	codes = append(codes, creation{"RelayChannels", append(common.FromHex(contracts.RelayChannelsMetaData.Bin),
		channelsABI.PackConstructor(tokenAddr, uint64(closurePeriod/time.Second), o.minWinProb)...)})
	signer := types.LatestSignerForChainID(chainID)
	var hashes []common.Hash
	for i, cd := range codes {
		gas, err := backend.EstimateGas(ctx, ethereum.CallMsg{From: from, Data: cd.code})
		if err != nil {
			return Deployment{}, fmt.Errorf("deploy %s: estimate gas: %w", cd.name, classify(ctx, err))
		}
		f, err := backendFees(ctx, backend)
		if err != nil {
			return Deployment{}, fmt.Errorf("deploy %s: %w", cd.name, err)
		}
		var txData types.TxData
		if f.base == nil {
			txData = &types.LegacyTx{Nonce: nonce + uint64(i), GasPrice: f.price, Gas: gas + gas/5, Data: cd.code}
		} else {
			feeCap := new(big.Int).Add(new(big.Int).Mul(f.base, big.NewInt(2)), f.tip)
			txData = &types.DynamicFeeTx{ChainID: chainID, Nonce: nonce + uint64(i), GasTipCap: f.tip, GasFeeCap: feeCap, Gas: gas + gas/5, Data: cd.code}
		}
		tx, err := types.SignNewTx(deployer, signer, txData)
		if err != nil {
			return Deployment{}, fmt.Errorf("deploy %s: sign: %w", cd.name, err)
		}
		if err := backend.SendTransaction(ctx, tx); err != nil {
			return Deployment{}, fmt.Errorf("deploy %s: send: %w", cd.name, classify(ctx, err))
		}
		hashes = append(hashes, tx.Hash())
	}
	d := Deployment{Token: tokenAddr}
	for i, h := range hashes {
		r, err := waitReceipt(ctx, backend, h, DefaultReceiptPoll)
		if err != nil {
			return Deployment{}, fmt.Errorf("deploy %s: %w", codes[i].name, err)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return Deployment{}, fmt.Errorf("deploy %s: %w", codes[i].name, &RevertError{Reason: "constructor failed", Sent: true})
		}
		if codes[i].name == "RelayToken" {
			d.Token = r.ContractAddress
		} else {
			d.Channels, d.Block = r.ContractAddress, r.BlockNumber.Uint64()
		}
	}
	// The contracts exist for a caller's next read only once the head has reached their block
	// (Client.waitHead says why a receipt comes first): Dial reads the code at "latest".
	deployHead(ctx, backend, d.Block, DefaultReceiptPoll)
	return d, nil
}

// checkERC20 checks that token holds a contract answering ERC-20's totalSupply().
func checkERC20(ctx context.Context, backend ContractReader, token common.Address) error {
	code, err := backend.CodeAt(ctx, token, nil)
	if err != nil {
		return fmt.Errorf("read the token's code: %w", classify(ctx, err))
	}
	if len(code) == 0 {
		return fmt.Errorf("token %s: %w (no code there on this chain)", token.Hex(), ErrNoContract)
	}
	if _, err := readView(ctx, backend, token, "totalSupply()", tokenABI.PackTotalSupply(), tokenABI.UnpackTotalSupply); err != nil {
		return fmt.Errorf("token %s is not an ERC-20: %w", token.Hex(), err)
	}
	return nil
}

// deployHead waits until backend's latest block is at least block, for up to DefaultCallTimeout
// or until ctx ends.
func deployHead(ctx context.Context, backend DeployBackend, block uint64, poll time.Duration) {
	deadline := time.Now().Add(DefaultCallTimeout)
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		h, err := backend.HeaderByNumber(ctx, nil)
		if err == nil && h != nil && h.Number.IsUint64() && h.Number.Uint64() >= block {
			return
		}
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func backendFees(ctx context.Context, b DeployBackend) (fees, error) {
	head, err := b.HeaderByNumber(ctx, nil)
	if err != nil {
		return fees{}, fmt.Errorf("latest header: %w", classify(ctx, err))
	}
	if head.BaseFee == nil {
		p, err := b.SuggestGasPrice(ctx)
		if err != nil {
			return fees{}, fmt.Errorf("gas price: %w", classify(ctx, err))
		}
		return fees{price: p}, nil
	}
	tip, err := b.SuggestGasTipCap(ctx)
	if err != nil {
		return fees{}, fmt.Errorf("gas tip: %w", classify(ctx, err))
	}
	return fees{base: head.BaseFee, tip: tip}, nil
}

// waitReceipt polls backend for hash's receipt every poll until it is there or ctx ends.
func waitReceipt(ctx context.Context, backend DeployBackend, hash common.Hash, poll time.Duration) (*types.Receipt, error) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		r, err := backend.TransactionReceipt(ctx, hash)
		if err == nil {
			return r, nil
		}
		if !notYet(err) {
			return nil, fmt.Errorf("receipt of %s: %w", hash, classify(ctx, err))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("receipt of %s: %w", hash, ctx.Err())
		case <-t.C:
		}
	}
}
