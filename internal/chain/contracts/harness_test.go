package contracts_test

import (
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/vrf"
)

const (
	closurePeriod = time.Hour
	chainID       = 1337 // the simulated backend's
)

var (
	oneToken     = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	tokens       = func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), oneToken) }
	totalSupply  = tokens(1_000_000_000)
	channelsABI  = contracts.NewRelayChannels()
	tokenABI     = contracts.NewRelayToken()
	statusClosed = uint8(0)
	statusOpen   = uint8(1)
	statusClose  = uint8(2) // PendingToClose
)

// actor is a funded account with its transactor.
type actor struct {
	name string
	key  *ecdsa.PrivateKey
	addr common.Address
	opts *bind.TransactOpts
}

// env is a simulated chain with RelayToken and RelayChannels deployed, the deployer holding the
// supply and alice, bob and carol holding 1000 tokens each and having approved the channels
// contract for all of it. dave has ether but no tokens.
type env struct {
	t                   *testing.T
	sim                 *simulated.Backend
	client              simulated.Client
	deployer            *actor
	alice, bob, carol   *actor
	dave                *actor
	token, channels     *bind.BoundContract
	tokenAddr, chanAddr common.Address
	gas                 map[string]uint64 // first gas use of each operation, for BENCHMARKS.md
	// preRedeem is the state of the redeemed channel and of its destination's balance just before
	// the latest redeem call.
	preRedeem struct {
		id      [32]byte
		by      common.Address
		channel contracts.ChannelsOutput
		balance *big.Int
	}
}

func newActor(t *testing.T, name string) *actor {
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte("relayd contract test " + name)))
	if err != nil {
		t.Fatal(err)
	}
	opts := bind.NewKeyedTransactor(key, big.NewInt(chainID))
	opts.Context = t.Context()
	return &actor{name: name, key: key, addr: crypto.PubkeyToAddress(key.PublicKey), opts: opts}
}

// newEnv starts a simulated chain with go-ethereum's dev-chain rules (every fork it knows,
// which is what relayd's embedded dev chain runs) and deploys the contracts.
func newEnv(t *testing.T, options ...func(*node.Config, *ethconfig.Config)) *env {
	t.Helper()
	e := &env{t: t, gas: map[string]uint64{}}
	e.deployer = newActor(t, "deployer")
	e.alice, e.bob, e.carol = newActor(t, "alice"), newActor(t, "bob"), newActor(t, "carol")
	e.dave = newActor(t, "dave")
	alloc := types.GenesisAlloc{}
	eth := new(big.Int).Mul(big.NewInt(100), oneToken)
	for _, a := range []*actor{e.deployer, e.alice, e.bob, e.carol, e.dave} {
		alloc[a.addr] = types.Account{Balance: eth}
	}
	e.sim = simulated.NewBackend(alloc, options...)
	t.Cleanup(func() { _ = e.sim.Close() })
	e.client = e.sim.Client()

	e.tokenAddr = e.deploy("deploy RelayToken", contracts.RelayTokenMetaData.Bin, tokenABI.PackConstructor(totalSupply))
	e.chanAddr = e.deploy("deploy RelayChannels", contracts.RelayChannelsMetaData.Bin,
		channelsABI.PackConstructor(e.tokenAddr, uint64(closurePeriod/time.Second), tickets.MaxWinProb))
	e.token = tokenABI.Instance(e.client, e.tokenAddr)
	e.channels = channelsABI.Instance(e.client, e.chanAddr)
	for _, a := range []*actor{e.alice, e.bob, e.carol} {
		e.must(e.deployer, "transfer", e.token, tokenABI.PackTransfer(a.addr, tokens(1000)))
		e.must(a, "approve", e.token, tokenABI.PackApprove(e.chanAddr, tokens(1000)))
	}
	return e
}

func (e *env) deploy(what, bin string, input []byte) common.Address {
	e.t.Helper()
	addr, tx, err := bind.DeployContract(e.deployer.opts, common.FromHex(bin), e.client, input)
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	e.receipt(what, tx)
	return addr
}

// send submits data to contract from a; it returns the receipt of the mined transaction, or the
// error of the submission (gas estimation reverts) or of a failed receipt.
func (e *env) send(from *actor, what string, c *bind.BoundContract, data []byte) (*types.Receipt, error) {
	e.t.Helper()
	tx, err := bind.Transact(c, from.opts, data)
	if err != nil {
		return nil, fmt.Errorf("%s by %s: %w", what, from.name, err)
	}
	return e.receipt(what, tx), nil
}

func (e *env) receipt(what string, tx *types.Transaction) *types.Receipt {
	e.t.Helper()
	e.sim.Commit()
	r, err := e.client.TransactionReceipt(e.t.Context(), tx.Hash())
	if err != nil {
		e.t.Fatalf("%s: receipt: %v", what, err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		e.t.Fatalf("%s: transaction failed in the block (gas used %d)", what, r.GasUsed)
	}
	if _, seen := e.gas[what]; !seen {
		e.gas[what] = r.GasUsed
	}
	return r
}

func (e *env) must(from *actor, what string, c *bind.BoundContract, data []byte) *types.Receipt {
	e.t.Helper()
	r, err := e.send(from, what, c, data)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// revert decodes the custom error of a reverted call or transaction with the channels' and the
// token's ABIs.
func revert(err error) (any, bool) {
	raw, ok := ethclient.RevertErrorData(err)
	if !ok || len(raw) < 4 {
		return nil, false
	}
	if v, err := channelsABI.UnpackError(raw); err == nil {
		return v, true
	}
	if v, err := tokenABI.UnpackError(raw); err == nil {
		return v, true
	}
	return nil, false
}

// wantRevert fails unless err is a revert with exactly want (a pointer to a generated error
// struct, arguments included; a nil field of type *big.Int or an address left zero is compared
// too, so pass what the contract reports).
func wantRevert(t *testing.T, err error, want any) {
	t.Helper()
	if err == nil {
		t.Fatalf("no revert, want %T", want)
	}
	got, ok := revert(err)
	if !ok {
		t.Fatalf("error %v is not a decodable revert, want %T", err, want)
	}
	// %+v prints big.Int values, not their internal representation.
	if fmt.Sprintf("%T%+v", got, got) != fmt.Sprintf("%T%+v", want, want) {
		t.Fatalf("revert %T%+v, want %T%+v", got, got, want, want)
	}
}

// wantRevertType is wantRevert for errors whose arguments the test cannot predict.
func wantRevertType(t *testing.T, err error, want any) {
	t.Helper()
	got, ok := revert(err)
	if !ok {
		t.Fatalf("error %v is not a decodable revert, want %T", err, want)
	}
	if reflect.TypeOf(got) != reflect.TypeOf(want) {
		t.Fatalf("revert %T%+v, want %T", got, got, want)
	}
}

func call[T any](e *env, c *bind.BoundContract, data []byte, unpack func([]byte) (T, error)) T {
	e.t.Helper()
	v, err := bind.Call(c, &bind.CallOpts{Context: e.t.Context()}, data, unpack)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) balanceOf(a common.Address) *big.Int {
	e.t.Helper()
	return call(e, e.token, tokenABI.PackBalanceOf(a), tokenABI.UnpackBalanceOf)
}

func (e *env) channel(src, dst *actor) contracts.ChannelsOutput {
	e.t.Helper()
	return call(e, e.channels, channelsABI.PackChannels(tickets.ChannelID(src.addr, dst.addr)), channelsABI.UnpackChannels)
}

func (e *env) fund(src, dst *actor, amount *big.Int) *types.Receipt {
	e.t.Helper()
	return e.must(src, "fundChannel", e.channels, channelsABI.PackFundChannel(dst.addr, amount))
}

// wantChannel checks the channel's stored state.
func (e *env) wantChannel(src, dst *actor, want contracts.ChannelsOutput) {
	e.t.Helper()
	got := e.channel(src, dst)
	if got.Balance.Cmp(want.Balance) != 0 || got.TicketIndex != want.TicketIndex || got.Epoch != want.Epoch ||
		got.Status != want.Status || (want.ClosureTime != 0 && got.ClosureTime != want.ClosureTime) ||
		(want.ClosureTime == 0 && want.Status != statusClose && got.ClosureTime != 0) {
		e.t.Fatalf("channel %s→%s = %+v, want %+v", src.name, dst.name, got, want)
	}
}

// channelUpdates returns the ChannelUpdated events of a receipt.
func channelUpdates(t *testing.T, r *types.Receipt) []*contracts.RelayChannelsChannelUpdated {
	t.Helper()
	var out []*contracts.RelayChannelsChannelUpdated
	for _, l := range r.Logs {
		if ev, err := channelsABI.UnpackChannelUpdatedEvent(l); err == nil {
			out = append(out, ev)
		}
	}
	return out
}

// wantUpdate checks that r emitted exactly one ChannelUpdated, for src→dst, that matches the
// channel's stored state.
func (e *env) wantUpdate(r *types.Receipt, src, dst *actor) *contracts.RelayChannelsChannelUpdated {
	e.t.Helper()
	evs := channelUpdates(e.t, r)
	if len(evs) != 1 {
		e.t.Fatalf("%d ChannelUpdated events, want 1", len(evs))
	}
	ev := evs[0]
	st := e.channel(src, dst)
	if ev.ChannelId != tickets.ChannelID(src.addr, dst.addr) || ev.Source != src.addr || ev.Destination != dst.addr ||
		ev.Balance.Cmp(st.Balance) != 0 || ev.TicketIndex != st.TicketIndex || ev.Epoch != st.Epoch ||
		ev.Status != st.Status || ev.ClosureTime != st.ClosureTime {
		e.t.Fatalf("ChannelUpdated %+v does not match the stored channel %+v", ev, st)
	}
	return ev
}

// porFixture is one hop's proof-of-relay material for a ticket: the challenge the ticket carries
// and the response that opens it.
type porFixture struct {
	challenge por.Challenge
	response  [32]byte
}

func newPoR(t *testing.T, seed byte) porFixture {
	t.Helper()
	var s1, s2 [32]byte
	s1[0], s2[0] = seed, seed+1
	own, err := por.DeriveOwn(s1)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := por.DeriveAck(s2)
	if err != nil {
		t.Fatal(err)
	}
	c, err := por.TicketChallenge(own, ack)
	if err != nil {
		t.Fatal(err)
	}
	return porFixture{challenge: c, response: por.Response(own, ack)}
}

// ticket returns a ticket from src to dst signed by signer with the tickets package.
func (e *env) ticket(src, dst, signer *actor, amount *big.Int, index uint64, epoch uint32, p porFixture) tickets.Ticket {
	e.t.Helper()
	tk := tickets.Ticket{
		ChannelID: tickets.ChannelID(src.addr, dst.addr),
		Index:     index,
		Epoch:     epoch,
		WinProb:   tickets.MaxWinProb,
		Challenge: [20]byte(p.challenge),
	}
	if tk.Amount.SetFromBig(amount) {
		e.t.Fatal("amount overflows uint256")
	}
	if err := tk.Sign(signer.key, chainID, e.chanAddr); err != nil {
		e.t.Fatal(err)
	}
	return tk
}

// toContract converts a tickets.Ticket to the binding's struct.
func toContract(tk tickets.Ticket) contracts.RelayChannelsTicket {
	return contracts.RelayChannelsTicket{
		ChannelId: tk.ChannelID,
		Amount:    tk.Amount.ToBig(),
		Index:     tk.Index,
		Epoch:     tk.Epoch,
		WinProb:   tk.WinProb,
		Challenge: common.Address(tk.Challenge),
		Signature: tk.Signature[:],
	}
}

// redeem redeems tk with redeemTicket as by, with by's public key and, for a ticket below
// MAX_WIN_PROB, by's VRF proof over its hash (a zero proof otherwise), as a node does.
func (e *env) redeem(by, src *actor, tk contracts.RelayChannelsTicket, response [32]byte) (*types.Receipt, error) {
	e.t.Helper()
	return e.redeemWith(by, src, tk, response, holderKey(by), e.drawProof(by, tk))
}

// redeemWith is redeem with the holder key and proof given.
func (e *env) redeemWith(by, src *actor, tk contracts.RelayChannelsTicket, response [32]byte,
	key contracts.RelayChannelsPublicKey, proof contracts.RelayVRFProof) (*types.Receipt, error) {
	e.t.Helper()
	e.preRedeem.id, e.preRedeem.by = tk.ChannelId, by.addr
	e.preRedeem.channel = call(e, e.channels, channelsABI.PackChannels(tk.ChannelId), channelsABI.UnpackChannels)
	e.preRedeem.balance = e.balanceOf(by.addr)
	return e.send(by, "redeemTicket", e.channels, channelsABI.PackRedeemTicket(src.addr, tk, response, key, proof))
}

// holderKey is a's public key as the contract's PublicKey (x, y of the uncompressed key).
func holderKey(a *actor) contracts.RelayChannelsPublicKey {
	pub := crypto.FromECDSAPub(&a.key.PublicKey)
	return contracts.RelayChannelsPublicKey{X: new(big.Int).SetBytes(pub[1:33]), Y: new(big.Int).SetBytes(pub[33:])}
}

// zeroProof is the proof that goes with a ticket that always wins (not read by the contract).
func zeroProof() contracts.RelayVRFProof {
	z := new(big.Int)
	return contracts.RelayVRFProof{GammaX: z, GammaY: z, C: z, S: z, SHX: z, SHY: z, CGammaX: z, CGammaY: z, ZInv: z}
}

// hashOf is the ticket hash of a ticket in the binding's form, for the contract at e.chanAddr.
func (e *env) hashOf(tk contracts.RelayChannelsTicket) common.Hash {
	t := tickets.Ticket{ChannelID: tk.ChannelId, Index: tk.Index, Epoch: tk.Epoch, WinProb: tk.WinProb, Challenge: tk.Challenge}
	t.Amount.SetFromBig(tk.Amount)
	return t.Hash(chainID, e.chanAddr)
}

// vrfProof is a's VRF proof over the ticket hash of tk, in the binding's form.
func (e *env) vrfProof(a *actor, tk contracts.RelayChannelsTicket) contracts.RelayVRFProof {
	e.t.Helper()
	h := e.hashOf(tk)
	p, err := vrf.Prove(a.key, h[:])
	if err != nil {
		e.t.Fatal(err)
	}
	w := func(b [32]byte) *big.Int { return new(big.Int).SetBytes(b[:]) }
	return contracts.RelayVRFProof{GammaX: w(p.Gamma.X), GammaY: w(p.Gamma.Y), C: w(p.C), S: w(p.S),
		SHX: w(p.SH.X), SHY: w(p.SH.Y), CGammaX: w(p.CGamma.X), CGammaY: w(p.CGamma.Y), ZInv: w(p.ZInv)}
}

// drawProof is what a node sends with tk: its VRF proof for a ticket below MAX_WIN_PROB, a zero
// proof otherwise.
func (e *env) drawProof(a *actor, tk contracts.RelayChannelsTicket) contracts.RelayVRFProof {
	e.t.Helper()
	if tk.WinProb >= tickets.MaxWinProb {
		return zeroProof()
	}
	return e.vrfProof(a, tk)
}

// wins reports whether tk, redeemed by holder with response, wins: the contract's draw over
// holder's VRF output.
func (e *env) wins(holder *actor, tk contracts.RelayChannelsTicket, response [32]byte) bool {
	e.t.Helper()
	if tk.WinProb >= tickets.MaxWinProb {
		return true
	}
	h := e.hashOf(tk)
	beta, err := vrf.OutputOf(holder.key, h[:])
	if err != nil {
		e.t.Fatal(err)
	}
	return tickets.IsWinning(h, response, beta, tk.WinProb)
}

// advance moves the chain's clock forward by d in a new empty block. The empty Commit before it
// makes the backend sync its transaction pool, which AdjustTime needs empty: right after a mined
// transaction the pool's own reset may still be running.
func (e *env) advance(d time.Duration) {
	e.t.Helper()
	e.sim.Commit()
	if err := e.sim.AdjustTime(d); err != nil {
		e.t.Fatal(err)
	}
}

// osakaRules is a simulated backend option that switches off the forks after Osaka (the dev
// chain's default includes draft forks such as EIP-8037 state-gas metering), so gas figures
// match today's mainnet rules.
func osakaRules(_ *node.Config, ec *ethconfig.Config) {
	cfg := *ec.Genesis.Config
	cfg.AmsterdamTime, cfg.BogotaTime = nil, nil
	ec.Genesis.Config = &cfg
}

// bindDeploy deploys another RelayChannels with the given constructor input.
func bindDeploy(e *env, input []byte) (common.Address, *types.Transaction, error) {
	return bind.DeployContract(e.deployer.opts, common.FromHex(contracts.RelayChannelsMetaData.Bin), e.client, input)
}

// bindCall calls the channels contract with data and returns the raw result or the revert.
func bindCall(e *env, data []byte) ([]byte, error) {
	return e.client.CallContract(e.t.Context(), ethereum.CallMsg{To: &e.chanAddr, Data: data}, nil)
}

func u256(v *big.Int) uint256.Int {
	var u uint256.Int
	u.SetFromBig(v)
	return u
}
