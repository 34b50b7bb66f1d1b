package contracts_test

import (
	"bytes"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain/contracts"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/vrf"
)

func TestDeployment(t *testing.T) {
	e := newEnv(t)
	if got := call(e, e.token, tokenABI.PackName(), tokenABI.UnpackName); got != "Relay Token" {
		t.Errorf("name = %q", got)
	}
	if got := call(e, e.token, tokenABI.PackSymbol(), tokenABI.UnpackSymbol); got != "RELAY" {
		t.Errorf("symbol = %q", got)
	}
	if got := call(e, e.token, tokenABI.PackDecimals(), tokenABI.UnpackDecimals); got != 18 {
		t.Errorf("decimals = %d", got)
	}
	if got := call(e, e.token, tokenABI.PackTotalSupply(), tokenABI.UnpackTotalSupply); got.Cmp(totalSupply) != 0 {
		t.Errorf("total supply = %s", got)
	}
	if got, want := e.balanceOf(e.deployer.addr), new(big.Int).Sub(totalSupply, tokens(3000)); got.Cmp(want) != 0 {
		t.Errorf("deployer balance = %s, want %s", got, want)
	}
	if got := call(e, e.channels, channelsABI.PackToken(), channelsABI.UnpackToken); got != e.tokenAddr {
		t.Errorf("token = %s", got)
	}
	if got := call(e, e.channels, channelsABI.PackClosurePeriod(), channelsABI.UnpackClosurePeriod); got != uint64(closurePeriod/time.Second) {
		t.Errorf("closurePeriod = %d", got)
	}
	if got := call(e, e.channels, channelsABI.PackMAXWINPROB(), channelsABI.UnpackMAXWINPROB); got != tickets.MaxWinProb {
		t.Errorf("MAX_WIN_PROB = %#x", got)
	}
	// The token has no open mint: its ABI has no mint function at all.
	if _, ok := tokenABI.GetABI().Methods["mint"]; ok {
		t.Error("RelayToken has a mint function")
	}
	// A channels contract needs a token.
	_, _, err := bindDeploy(e, channelsABI.PackConstructor(common.Address{}, 1, tickets.MaxWinProb))
	wantRevert(t, err, new(contracts.RelayChannelsZeroAddress))
}

func TestChannelIDAndTicketHashMatchContract(t *testing.T) {
	e := newEnv(t)
	p := newPoR(t, 1)
	big1 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	cases := []struct {
		name    string
		amount  *big.Int
		index   uint64
		epoch   uint32
		winProb uint64
	}{
		{"typical", tokens(1), 1, 1, tickets.MaxWinProb},
		{"zero amount", big.NewInt(0), 9, 4, tickets.MaxWinProb},
		{"maximal fields", big1, 1<<64 - 1, 1<<32 - 1, tickets.MaxWinProb},
		{"low win prob", big.NewInt(12345), 77, 2, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tk := e.ticket(e.alice, e.bob, e.alice, tc.amount, tc.index, tc.epoch, p)
			tk.WinProb = tc.winProb
			want := call(e, e.channels, channelsABI.PackTicketHash(tk.ChannelID, tc.amount, tc.index, tc.epoch, tc.winProb,
				common.Address(tk.Challenge)), channelsABI.UnpackTicketHash)
			if got := tk.Hash(chainID, e.chanAddr); got != want {
				t.Fatalf("tickets.Hash = %x, contract ticketHash = %x", got, want)
			}
		})
	}
	want := call(e, e.channels, channelsABI.PackChannelIdOf(e.alice.addr, e.bob.addr), channelsABI.UnpackChannelIdOf)
	if got := tickets.ChannelID(e.alice.addr, e.bob.addr); got != want {
		t.Fatalf("tickets.ChannelID = %x, contract channelIdOf = %x", got, want)
	}
}

// TestChallengeOf checks the ecrecover trick address(r·G) against internal/por, and its edges.
func TestChallengeOf(t *testing.T) {
	e := newEnv(t)
	n := crypto.S256().Params().N
	scalar := func(v *big.Int) (s [32]byte) { v.FillBytes(s[:]); return s }
	valid := []*big.Int{big.NewInt(1), big.NewInt(2), new(big.Int).Sub(n, big.NewInt(1)), new(big.Int).Rsh(n, 1)}
	for i := range 4 {
		p := newPoR(t, byte(10+i))
		valid = append(valid, new(big.Int).SetBytes(p.response[:]))
	}
	for _, r := range valid {
		got := call(e, e.channels, channelsABI.PackChallengeOf(scalar(r)), channelsABI.UnpackChallengeOf)
		want, err := por.ChallengeOf(por.Scalar(scalar(r)))
		if err != nil {
			t.Fatal(err)
		}
		if got != common.Address(want) {
			t.Errorf("challengeOf(%x) = %s, want %x", r, got, want)
		}
	}
	// r = 1 opens the generator's address.
	gAddr := crypto.PubkeyToAddress(*mustKey(t, big.NewInt(1)))
	if got := call(e, e.channels, channelsABI.PackChallengeOf(scalar(big.NewInt(1))), channelsABI.UnpackChallengeOf); got != gAddr {
		t.Errorf("challengeOf(1) = %s, want address(G) %s", got, gAddr)
	}
	invalid := map[string]*big.Int{
		"zero":    big.NewInt(0),
		"n":       n,
		"n+1":     new(big.Int).Add(n, big.NewInt(1)),
		"2^256-1": new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)),
	}
	for name, r := range invalid {
		t.Run(name, func(t *testing.T) {
			_, err := bindCall(e, channelsABI.PackChallengeOf(scalar(r)))
			wantRevert(t, err, new(contracts.RelayChannelsInvalidResponse))
		})
	}
}

// TestIsWinning checks the contract's draw against tickets.IsWinning: the top 56 bits of
// keccak256(hash ‖ response ‖ beta), at the edges of winProb; beta changes the luck; and
// MAX_WIN_PROB wins whatever beta is.
func TestIsWinning(t *testing.T) {
	e := newEnv(t)
	p := newPoR(t, 3)
	tk := e.ticket(e.alice, e.bob, e.alice, tokens(1), 1, 1, p)
	h := tk.Hash(chainID, e.chanAddr)
	beta, err := vrf.OutputOf(e.bob.key, h[:])
	if err != nil {
		t.Fatal(err)
	}
	luckOf := func(beta [32]byte) uint64 {
		return new(big.Int).Rsh(new(big.Int).SetBytes(crypto.Keccak256(h[:], p.response[:], beta[:])), 200).Uint64()
	}
	luck := luckOf(beta)
	if other := luckOf([32]byte{}); other == luck {
		t.Fatalf("the luck %#x does not depend on beta", luck)
	}
	for _, tc := range []struct {
		winProb uint64
		beta    [32]byte
		want    bool
	}{
		{tickets.MaxWinProb, beta, true},
		{tickets.MaxWinProb, [32]byte{}, true},
		{luck, beta, true},
		{luck - 1, beta, false},
		{0, beta, luck == 0},
		{luck, [32]byte{}, luckOf([32]byte{}) <= luck},
	} {
		got := call(e, e.channels, channelsABI.PackIsWinning(h, p.response, tc.beta, tc.winProb), channelsABI.UnpackIsWinning)
		if got != tc.want || got != tickets.IsWinning(h, p.response, tc.beta, tc.winProb) {
			t.Errorf("isWinning(winProb %#x, beta %x…) = %v, want %v (luck %#x)", tc.winProb, tc.beta[:4], got, tc.want, luck)
		}
	}
}

func TestAnnounce(t *testing.T) {
	e := newEnv(t)
	pub := func(a *actor) []byte { return crypto.FromECDSAPub(&a.key.PublicKey)[1:] }
	maddr := []byte("/ip4/127.0.0.1/tcp/9091")
	t.Run("own key", func(t *testing.T) {
		r := e.must(e.alice, "announce", e.channels, channelsABI.PackAnnounce(pub(e.alice), maddr))
		if len(r.Logs) != 1 {
			t.Fatalf("%d logs, want 1", len(r.Logs))
		}
		ev, err := channelsABI.UnpackAnnouncementEvent(r.Logs[0])
		if err != nil {
			t.Fatal(err)
		}
		if ev.Account != e.alice.addr || !bytes.Equal(ev.PublicKey, pub(e.alice)) || !bytes.Equal(ev.Multiaddr, maddr) {
			t.Fatalf("Announcement = %+v", ev)
		}
	})
	reverts := []struct {
		name string
		key  []byte
		want any
	}{
		{"someone else's key", pub(e.bob), &contracts.RelayChannelsPublicKeyNotSender{Derived: e.bob.addr}},
		{"with 0x04 prefix", crypto.FromECDSAPub(&e.alice.key.PublicKey), &contracts.RelayChannelsInvalidPublicKeyLength{Length: big.NewInt(65)}},
		{"compressed", crypto.CompressPubkey(&e.alice.key.PublicKey), &contracts.RelayChannelsInvalidPublicKeyLength{Length: big.NewInt(33)}},
		{"empty", nil, &contracts.RelayChannelsInvalidPublicKeyLength{Length: big.NewInt(0)}},
	}
	for _, tc := range reverts {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.send(e.alice, "announce", e.channels, channelsABI.PackAnnounce(tc.key, maddr))
			wantRevert(t, err, tc.want)
		})
	}
}

func TestFundChannel(t *testing.T) {
	e := newEnv(t)
	aliceBefore := e.balanceOf(e.alice.addr)

	// Open.
	r := e.fund(e.alice, e.bob, tokens(10))
	e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: tokens(10), Epoch: 1, Status: statusOpen})
	e.wantUpdate(r, e.alice, e.bob)
	// Fund more: same epoch, balance adds up.
	r = e.fund(e.alice, e.bob, tokens(5))
	e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: tokens(15), Epoch: 1, Status: statusOpen})
	e.wantUpdate(r, e.alice, e.bob)
	if got, want := e.balanceOf(e.alice.addr), new(big.Int).Sub(aliceBefore, tokens(15)); got.Cmp(want) != 0 {
		t.Fatalf("alice balance %s, want %s", got, want)
	}
	if got := e.balanceOf(e.chanAddr); got.Cmp(tokens(15)) != 0 {
		t.Fatalf("contract balance %s, want 15 tokens", got)
	}
	// The reverse direction is another channel.
	e.wantChannel(e.bob, e.alice, contracts.ChannelsOutput{Balance: big.NewInt(0), Status: statusClosed})

	reverts := []struct {
		name   string
		from   *actor
		dst    common.Address
		amount *big.Int
		want   any
	}{
		{"zero amount", e.alice, e.carol.addr, big.NewInt(0), new(contracts.RelayChannelsZeroAmount)},
		{"to self", e.alice, e.alice.addr, tokens(1), new(contracts.RelayChannelsSameSourceAndDestination)},
		{"to zero address", e.alice, common.Address{}, tokens(1), new(contracts.RelayChannelsZeroAddress)},
		{"over allowance", e.carol, e.alice.addr, tokens(1001), &contracts.RelayTokenERC20InsufficientAllowance{
			Spender: e.chanAddr, Allowance: tokens(1000), Needed: tokens(1001)}},
	}
	for _, tc := range reverts {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.send(tc.from, "fundChannel", e.channels, channelsABI.PackFundChannel(tc.dst, tc.amount))
			wantRevert(t, err, tc.want)
		})
	}
}

// secp256k1P is the secp256k1 field prime.
var secp256k1P, _ = new(big.Int).SetString("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f", 16)

func TestRedeemTicket(t *testing.T) {
	amount := tokens(1).Div(tokens(1), big.NewInt(50)) // 0.02: two relayers ahead
	n := crypto.S256().Params().N
	type setup struct {
		e *env
		p porFixture
	}
	// Every case starts from a fresh chain with alice→bob funded with 1 token (epoch 1).
	cases := []struct {
		name string
		// run redeems (and may prepare); it returns the error of the redeem under test.
		run  func(t *testing.T, s setup) error
		want any // nil: success; else the revert, arguments included (or only its type, see typeOnly)
		// typeOnly compares only the revert's type.
		typeOnly bool
	}{
		{name: "ok", run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
		{name: "ok while pending to close", run: func(t *testing.T, s setup) error {
			s.e.must(s.e.alice, "initiateChannelClosure", s.e.channels, channelsABI.PackInitiateChannelClosure(s.e.bob.addr))
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
		{name: "whole balance", run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, tokens(1), 1, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
		{name: "malformed signature v", want: new(contracts.RelayChannelsInvalidSignature), run: func(t *testing.T, s setup) error {
			tk := toContract(s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p))
			tk.Signature[64] = 0
			_, err := s.e.redeem(s.e.bob, s.e.alice, tk, s.p.response)
			return err
		}},
		{name: "malformed signature high s", want: new(contracts.RelayChannelsInvalidSignature), run: func(t *testing.T, s setup) error {
			tk := toContract(s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p))
			sv := new(big.Int).SetBytes(tk.Signature[32:64])
			sv.Sub(n, sv).FillBytes(tk.Signature[32:64])
			tk.Signature[64] ^= 1 // 27 <-> 28: the malleated twin of a valid signature
			_, err := s.e.redeem(s.e.bob, s.e.alice, tk, s.p.response)
			return err
		}},
		{name: "malformed signature length", want: new(contracts.RelayChannelsInvalidSignature), run: func(t *testing.T, s setup) error {
			tk := toContract(s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p))
			tk.Signature = tk.Signature[:64]
			_, err := s.e.redeem(s.e.bob, s.e.alice, tk, s.p.response)
			return err
		}},
		{name: "signed by someone else", run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.carol, amount, 1, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			wantRevert(t, err, &contracts.RelayChannelsSignerNotSource{Signer: s.e.carol.addr})
			return nil
		}},
		{name: "amount raised after signing", typeOnly: true, want: new(contracts.RelayChannelsSignerNotSource), run: func(t *testing.T, s setup) error {
			tk := toContract(s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p))
			tk.Amount = new(big.Int).Mul(amount, big.NewInt(2))
			_, err := s.e.redeem(s.e.bob, s.e.alice, tk, s.p.response)
			return err
		}},
		{name: "replayed index", run: func(t *testing.T, s setup) error {
			tk := toContract(s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p))
			if _, err := s.e.redeem(s.e.bob, s.e.alice, tk, s.p.response); err != nil {
				t.Fatal(err)
			}
			_, err := s.e.redeem(s.e.bob, s.e.alice, tk, s.p.response)
			wantRevert(t, err, &contracts.RelayChannelsIndexNotIncreasing{TicketIndex: 1, LastRedeemed: 1})
			return nil
		}},
		{name: "lower index", run: func(t *testing.T, s setup) error {
			hi := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 5, 1, s.p)
			if _, err := s.e.redeem(s.e.bob, s.e.alice, toContract(hi), s.p.response); err != nil {
				t.Fatal(err)
			}
			lo := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 3, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(lo), s.p.response)
			wantRevert(t, err, &contracts.RelayChannelsIndexNotIncreasing{TicketIndex: 3, LastRedeemed: 5})
			return nil
		}},
		{name: "index 0", want: &contracts.RelayChannelsIndexNotIncreasing{TicketIndex: 0, LastRedeemed: 0}, run: func(t *testing.T, s setup) error {
			tk := toContract(s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p))
			tk.Index = 0 // tickets.Sign refuses index 0; the contract must too
			_, err := s.e.redeem(s.e.bob, s.e.alice, tk, s.p.response)
			return err
		}},
		{name: "stale epoch after close and reopen", run: func(t *testing.T, s setup) error {
			old := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			s.e.must(s.e.bob, "closeIncomingChannel", s.e.channels, channelsABI.PackCloseIncomingChannel(s.e.alice.addr))
			s.e.fund(s.e.alice, s.e.bob, tokens(1))
			s.e.wantChannel(s.e.alice, s.e.bob, contracts.ChannelsOutput{Balance: tokens(1), Epoch: 2, Status: statusOpen})
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(old), s.p.response)
			wantRevert(t, err, &contracts.RelayChannelsEpochMismatch{TicketEpoch: 1, ChannelEpoch: 2})
			// A ticket of the new epoch with the same index pays.
			fresh := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 2, s.p)
			_, err = s.e.redeem(s.e.bob, s.e.alice, toContract(fresh), s.p.response)
			return err
		}},
		{name: "future epoch", want: &contracts.RelayChannelsEpochMismatch{TicketEpoch: 2, ChannelEpoch: 1}, run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 2, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
		{name: "amount over balance", want: &contracts.RelayChannelsInsufficientChannelBalance{Amount: tokens(2), Balance: tokens(1)}, run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, tokens(2), 1, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
		{name: "wrong PoR response", run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			other := newPoR(t, 99)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), other.response)
			wantRevert(t, err, &contracts.RelayChannelsChallengeMismatch{
				Expected: common.Address(s.p.challenge), Actual: common.Address(other.challenge)})
			return nil
		}},
		{name: "PoR response zero", want: new(contracts.RelayChannelsInvalidResponse), run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), [32]byte{})
			return err
		}},
		{name: "PoR response plus n", want: new(contracts.RelayChannelsInvalidResponse), run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			r := new(big.Int).Add(new(big.Int).SetBytes(s.p.response[:]), n) // same point mod n, not canonical
			if r.BitLen() > 256 {
				t.Skip("response + n overflows 256 bits")
			}
			var rb [32]byte
			r.FillBytes(rb[:])
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), rb)
			return err
		}},
		{name: "redeemed by someone else", want: new(contracts.RelayChannelsNotChannelDestination), run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			_, err := s.e.redeem(s.e.carol, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
		{name: "source misnamed", want: new(contracts.RelayChannelsNotChannelDestination), run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.carol, toContract(tk), s.p.response)
			return err
		}},
		{name: "closed channel", want: new(contracts.RelayChannelsChannelNotOpen), run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			s.e.must(s.e.bob, "closeIncomingChannel", s.e.channels, channelsABI.PackCloseIncomingChannel(s.e.alice.addr))
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
		{name: "never opened channel", want: new(contracts.RelayChannelsChannelNotOpen), run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.carol, s.e.bob, s.e.carol, amount, 1, 1, s.p)
			_, err := s.e.redeem(s.e.bob, s.e.carol, toContract(tk), s.p.response)
			return err
		}},
		{name: "win prob over 56 bits", want: &contracts.RelayChannelsInvalidWinProb{WinProb: tickets.MaxWinProb + 1}, run: func(t *testing.T, s setup) error {
			tk := toContract(s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p))
			tk.WinProb = tickets.MaxWinProb + 1
			_, err := s.e.redeem(s.e.bob, s.e.alice, tk, s.p.response)
			return err
		}},
		{name: "losing ticket", want: new(contracts.RelayChannelsTicketNotWinning), run: func(t *testing.T, s setup) error {
			tk := tickets.Ticket{ChannelID: tickets.ChannelID(s.e.alice.addr, s.e.bob.addr), Amount: u256(amount),
				Index: 1, Epoch: 1, WinProb: 0, Challenge: [20]byte(s.p.challenge)}
			if err := tk.Sign(s.e.alice.key, chainID, s.e.chanAddr); err != nil {
				t.Fatal(err)
			}
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
		{name: "lottery winner with the holder's proof", run: func(t *testing.T, s setup) error {
			it := lotteryWinner(t, s.e, s.e.alice, s.e.bob, 1, 0.5, 40)
			_, err := s.e.redeem(s.e.bob, s.e.alice, it.tk, it.resp)
			return err
		}},
		{name: "lottery loser with the holder's proof", want: new(contracts.RelayChannelsTicketNotWinning), run: func(t *testing.T, s setup) error {
			it := lotteryWinner(t, s.e, s.e.alice, s.e.bob, 1, 0.5, 40)
			it.tk.WinProb = 0 // luck 0 only: loses
			it.tk = resign(t, s.e, s.e.alice, it.tk)
			_, err := s.e.redeem(s.e.bob, s.e.alice, it.tk, it.resp)
			return err
		}},
		{name: "lottery winner with another key's proof", want: new(contracts.RelayChannelsInvalidVRFProof), run: func(t *testing.T, s setup) error {
			it := lotteryWinner(t, s.e, s.e.alice, s.e.bob, 1, 0.5, 40)
			_, err := s.e.redeemWith(s.e.bob, s.e.alice, it.tk, it.resp, holderKey(s.e.bob), s.e.vrfProof(s.e.carol, it.tk))
			return err
		}},
		{name: "lottery winner with a tampered proof", want: new(contracts.RelayChannelsInvalidVRFProof), run: func(t *testing.T, s setup) error {
			it := lotteryWinner(t, s.e, s.e.alice, s.e.bob, 1, 0.5, 40)
			p := s.e.vrfProof(s.e.bob, it.tk)
			p.GammaY = new(big.Int).Sub(secp256k1P, p.GammaY) // −Gamma: on the curve, not the key's point
			_, err := s.e.redeemWith(s.e.bob, s.e.alice, it.tk, it.resp, holderKey(s.e.bob), p)
			return err
		}},
		{name: "lottery winner with the proof of another ticket", want: new(contracts.RelayChannelsInvalidVRFProof), run: func(t *testing.T, s setup) error {
			it := lotteryWinner(t, s.e, s.e.alice, s.e.bob, 1, 0.5, 40)
			other := it.tk
			other.Index = 2
			_, err := s.e.redeemWith(s.e.bob, s.e.alice, it.tk, it.resp, holderKey(s.e.bob), s.e.vrfProof(s.e.bob, other))
			return err
		}},
		{name: "lottery winner without a proof", want: new(contracts.RelayChannelsInvalidVRFProof), run: func(t *testing.T, s setup) error {
			it := lotteryWinner(t, s.e, s.e.alice, s.e.bob, 1, 0.5, 40)
			_, err := s.e.redeemWith(s.e.bob, s.e.alice, it.tk, it.resp, holderKey(s.e.bob), zeroProof())
			return err
		}},
		{name: "lottery winner with carol's key and proof", run: func(t *testing.T, s setup) error {
			it := lotteryWinner(t, s.e, s.e.alice, s.e.bob, 1, 0.5, 40)
			_, err := s.e.redeemWith(s.e.bob, s.e.alice, it.tk, it.resp, holderKey(s.e.carol), s.e.vrfProof(s.e.carol, it.tk))
			wantRevert(t, err, &contracts.RelayChannelsHolderKeyNotSender{Derived: s.e.carol.addr})
			return nil
		}},
		{name: "holder key checked before the signature", run: func(t *testing.T, s setup) error {
			it := lotteryWinner(t, s.e, s.e.alice, s.e.bob, 1, 0.5, 40)
			it.tk.Signature[64] = 0
			_, err := s.e.redeemWith(s.e.bob, s.e.alice, it.tk, it.resp, contracts.RelayChannelsPublicKey{X: big.NewInt(0), Y: big.NewInt(0)}, zeroProof())
			wantRevert(t, err, &contracts.RelayChannelsHolderKeyNotSender{Derived: common.BytesToAddress(crypto.Keccak256(make([]byte, 64))[12:])})
			return nil
		}},
		{name: "a ticket that always wins needs no key nor proof", run: func(t *testing.T, s setup) error {
			tk := s.e.ticket(s.e.alice, s.e.bob, s.e.alice, amount, 1, 1, s.p)
			_, err := s.e.redeemWith(s.e.bob, s.e.alice, toContract(tk), s.p.response,
				contracts.RelayChannelsPublicKey{X: big.NewInt(0), Y: big.NewInt(0)}, zeroProof())
			return err
		}},
		{name: "wrong contract in the signed domain", typeOnly: true, want: new(contracts.RelayChannelsSignerNotSource), run: func(t *testing.T, s setup) error {
			tk := tickets.Ticket{ChannelID: tickets.ChannelID(s.e.alice.addr, s.e.bob.addr), Amount: u256(amount),
				Index: 1, Epoch: 1, WinProb: tickets.MaxWinProb, Challenge: [20]byte(s.p.challenge)}
			if err := tk.Sign(s.e.alice.key, chainID, s.e.tokenAddr); err != nil {
				t.Fatal(err)
			}
			_, err := s.e.redeem(s.e.bob, s.e.alice, toContract(tk), s.p.response)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := setup{e: newEnv(t), p: newPoR(t, 1)}
			s.e.fund(s.e.alice, s.e.bob, tokens(1))
			err := tc.run(t, s)
			switch {
			case tc.want != nil && tc.typeOnly:
				wantRevertType(t, err, tc.want)
			case tc.want != nil:
				wantRevert(t, err, tc.want)
			case err != nil:
				t.Fatal(err)
			}
			if tc.want != nil {
				// A rejected ticket moves nothing.
				before := s.e.preRedeem
				after := call(s.e, s.e.channels, channelsABI.PackChannels(before.id), channelsABI.UnpackChannels)
				if fmt.Sprintf("%+v", after) != fmt.Sprintf("%+v", before.channel) {
					t.Fatalf("channel changed by a rejected ticket: %+v → %+v", before.channel, after)
				}
				if got := s.e.balanceOf(before.by); got.Cmp(before.balance) != 0 {
					t.Fatalf("redeemer's balance changed by a rejected ticket: %s → %s", before.balance, got)
				}
			}
		})
	}
}

// TestRedeemTicketEffects checks balances, stored state and events of a successful redemption
// of a ticket made with internal/tickets and internal/por.
func TestRedeemTicketEffects(t *testing.T) {
	e := newEnv(t)
	p := newPoR(t, 5)
	e.fund(e.alice, e.bob, tokens(1))
	bobBefore, contractBefore := e.balanceOf(e.bob.addr), e.balanceOf(e.chanAddr)
	amountU := tickets.AmountFor(2)
	amount := amountU.ToBig()
	tk := e.ticket(e.alice, e.bob, e.alice, amount, 3, 1, p)
	// The ticket survives its wire encoding.
	enc, err := tk.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var decoded tickets.Ticket
	if err := decoded.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	if signer, err := decoded.Signer(chainID, e.chanAddr); err != nil || signer != e.alice.addr {
		t.Fatalf("Signer = %s, %v; want alice", signer, err)
	}
	r, err := e.redeem(e.bob, e.alice, toContract(decoded), p.response)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.balanceOf(e.bob.addr), new(big.Int).Add(bobBefore, amount); got.Cmp(want) != 0 {
		t.Errorf("bob balance %s, want %s", got, want)
	}
	if got, want := e.balanceOf(e.chanAddr), new(big.Int).Sub(contractBefore, amount); got.Cmp(want) != 0 {
		t.Errorf("contract balance %s, want %s", got, want)
	}
	e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: new(big.Int).Sub(tokens(1), amount), TicketIndex: 3, Epoch: 1, Status: statusOpen})
	var redeemed *contracts.RelayChannelsTicketRedeemed
	for _, l := range r.Logs {
		if ev, err := channelsABI.UnpackTicketRedeemedEvent(l); err == nil {
			redeemed = ev
		}
	}
	if redeemed == nil || redeemed.ChannelId != tk.ChannelID || redeemed.Index != 3 || redeemed.Amount.Cmp(amount) != 0 {
		t.Fatalf("TicketRedeemed = %+v", redeemed)
	}
	e.wantUpdate(r, e.alice, e.bob)
	// The next index pays too.
	tk4 := e.ticket(e.alice, e.bob, e.alice, amount, 4, 1, p)
	if _, err := e.redeem(e.bob, e.alice, toContract(tk4), p.response); err != nil {
		t.Fatal(err)
	}
	e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: new(big.Int).Sub(tokens(1), new(big.Int).Mul(amount, big.NewInt(2))), TicketIndex: 4, Epoch: 1, Status: statusOpen})
}

func TestChannelClosure(t *testing.T) {
	period := uint64(closurePeriod / time.Second)

	t.Run("stranger cannot close", func(t *testing.T) {
		e := newEnv(t)
		e.fund(e.alice, e.bob, tokens(1))
		// carol names alice→bob's destination, but the contract reads carol→bob: not open.
		_, err := e.send(e.carol, "initiateChannelClosure", e.channels, channelsABI.PackInitiateChannelClosure(e.bob.addr))
		wantRevert(t, err, new(contracts.RelayChannelsChannelNotOpen))
		_, err = e.send(e.carol, "closeIncomingChannel", e.channels, channelsABI.PackCloseIncomingChannel(e.alice.addr))
		wantRevert(t, err, new(contracts.RelayChannelsChannelNotOpen))
		_, err = e.send(e.carol, "finalizeChannelClosure", e.channels, channelsABI.PackFinalizeChannelClosure(e.bob.addr))
		wantRevert(t, err, new(contracts.RelayChannelsChannelNotPendingToClose))
		// The destination cannot use the source's two-phase closure either.
		_, err = e.send(e.bob, "initiateChannelClosure", e.channels, channelsABI.PackInitiateChannelClosure(e.alice.addr))
		wantRevert(t, err, new(contracts.RelayChannelsChannelNotOpen))
		e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: tokens(1), Epoch: 1, Status: statusOpen})
	})

	t.Run("two-phase closure by the source", func(t *testing.T) {
		e := newEnv(t)
		e.fund(e.alice, e.bob, tokens(3))
		aliceBefore := e.balanceOf(e.alice.addr)
		_, err := e.send(e.alice, "finalizeChannelClosure", e.channels, channelsABI.PackFinalizeChannelClosure(e.bob.addr))
		wantRevert(t, err, new(contracts.RelayChannelsChannelNotPendingToClose))

		r := e.must(e.alice, "initiateChannelClosure", e.channels, channelsABI.PackInitiateChannelClosure(e.bob.addr))
		hdr, err := e.client.HeaderByHash(t.Context(), r.BlockHash)
		if err != nil {
			t.Fatal(err)
		}
		closureTime := hdr.Time + period
		e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: tokens(3), Epoch: 1, Status: statusClose, ClosureTime: closureTime})
		e.wantUpdate(r, e.alice, e.bob)

		_, err = e.send(e.alice, "initiateChannelClosure", e.channels, channelsABI.PackInitiateChannelClosure(e.bob.addr))
		wantRevert(t, err, new(contracts.RelayChannelsChannelNotOpen))
		_, err = e.send(e.alice, "fundChannel", e.channels, channelsABI.PackFundChannel(e.bob.addr, tokens(1)))
		wantRevert(t, err, new(contracts.RelayChannelsChannelPendingToClose))
		_, err = e.send(e.alice, "finalizeChannelClosure", e.channels, channelsABI.PackFinalizeChannelClosure(e.bob.addr))
		wantRevert(t, err, &contracts.RelayChannelsClosureTimeNotReached{ClosureTime: closureTime})

		e.advance(closurePeriod)
		r = e.must(e.alice, "finalizeChannelClosure", e.channels, channelsABI.PackFinalizeChannelClosure(e.bob.addr))
		e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: big.NewInt(0), Epoch: 1, Status: statusClosed})
		e.wantUpdate(r, e.alice, e.bob)
		if got, want := e.balanceOf(e.alice.addr), new(big.Int).Add(aliceBefore, tokens(3)); got.Cmp(want) != 0 {
			t.Fatalf("alice balance %s, want %s (refund)", got, want)
		}
		_, err = e.send(e.alice, "finalizeChannelClosure", e.channels, channelsABI.PackFinalizeChannelClosure(e.bob.addr))
		wantRevert(t, err, new(contracts.RelayChannelsChannelNotPendingToClose))

		// Reopening starts a new epoch with the index reset.
		e.fund(e.alice, e.bob, tokens(1))
		e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: tokens(1), Epoch: 2, Status: statusOpen})
	})

	for _, pending := range []bool{false, true} {
		name := "destination closes an open channel at once"
		if pending {
			name = "destination closes a pending channel at once"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.fund(e.alice, e.bob, tokens(2))
			if pending {
				e.must(e.alice, "initiateChannelClosure", e.channels, channelsABI.PackInitiateChannelClosure(e.bob.addr))
			}
			aliceBefore := e.balanceOf(e.alice.addr)
			r := e.must(e.bob, "closeIncomingChannel", e.channels, channelsABI.PackCloseIncomingChannel(e.alice.addr))
			e.wantChannel(e.alice, e.bob, contracts.ChannelsOutput{Balance: big.NewInt(0), Epoch: 1, Status: statusClosed})
			e.wantUpdate(r, e.alice, e.bob)
			if got, want := e.balanceOf(e.alice.addr), new(big.Int).Add(aliceBefore, tokens(2)); got.Cmp(want) != 0 {
				t.Fatalf("alice balance %s, want %s (refund)", got, want)
			}
			_, err := e.send(e.bob, "closeIncomingChannel", e.channels, channelsABI.PackCloseIncomingChannel(e.alice.addr))
			wantRevert(t, err, new(contracts.RelayChannelsChannelNotOpen))
		})
	}
}

func mustKey(t *testing.T, d *big.Int) *ecdsa.PublicKey {
	t.Helper()
	var b [32]byte
	d.FillBytes(b[:])
	k, err := crypto.ToECDSA(b[:])
	if err != nil {
		t.Fatal(err)
	}
	return &k.PublicKey
}
