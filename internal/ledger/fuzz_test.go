package ledger

import (
	"bytes"
	"crypto/ecdsa"
	"errors"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// FuzzAcceptTicket feeds arbitrary ticket bytes, as a peer sends them in a paid msg frame,
// to the ledger's AcceptTicket over an open channel with a fuzzed balance and redeemed index.
// With resign set the decoded fields are signed by the channel's source, so mutations of the
// fields get past the signature check. The ledger must answer nil or one of its rejection sentinels, and
// accept only a ticket that is for this channel and epoch, signed by its source, above the
// redeemed index, priced for its position (a relayer's between PricePerHop and MaxTicketValue,
// a recipient's any amount: the sender's padding) and covered by the balance; and never the
// same ticket twice.
func FuzzAcceptTicket(f *testing.F) {
	db, err := store.Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	self, selfAddr := keyFromSeed(f, 1)
	source, sourceAddr := keyFromSeed(f, 2)
	other, _ := keyFromSeed(f, 3)
	channelID := tickets.ChannelID(sourceAddr, selfAddr)

	valid := tickets.Ticket{ChannelID: channelID, Amount: PricePerHop, Index: 1, Epoch: 1,
		WinProb: tickets.MaxWinProb, Challenge: [20]byte{1}}
	for _, c := range []struct {
		tk     tickets.Ticket
		key    *ecdsa.PrivateKey
		resign bool
		final  bool
	}{
		{tk: valid, key: source},
		{tk: withAmount(valid, uint256.Int{}), key: source, final: true},
		{tk: withAmount(valid, tickets.AmountFor(tickets.PadMax)), key: source, final: true},
		{tk: withAmount(valid, MaxTicketValue), key: source},
		{tk: withAmount(valid, tickets.AmountFor(100)), key: source, resign: true},
		{tk: valid, key: other},
		{tk: withAmount(valid, *uint256.NewInt(1)), key: source, resign: true},
	} {
		tk := c.tk
		sign(f, c.key, &tk)
		b, err := tk.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, c.resign, c.final, uint64(0), uint64(1e18))
		f.Add(b, c.resign, c.final, uint64(1), uint64(1e16))
	}

	f.Fuzz(func(t *testing.T, raw []byte, resign, final bool, redeemed, balance uint64) {
		var tk tickets.Ticket
		if err := tk.UnmarshalBinary(raw); err != nil {
			return // the msg frame decoder drops it: ErrTicketMalformed
		}
		if resign {
			sign(t, source, &tk)
		}
		chans := channelstest.New()
		chans.Set(sourceAddr, selfAddr, func(s *channels.Channel) {
			s.Status, s.Epoch, s.TicketIndex = channels.Open, 1, redeemed
			s.Balance.SetUint64(balance)
		})
		l, err := New(Config{Key: self, ChainID: testChainID, Contract: testContract, Channels: chans, Store: db})
		if err != nil {
			t.Fatal(err)
		}
		err = l.AcceptTicket(sourceAddr, &tk, final)
		if err != nil {
			for _, reason := range rejections {
				if errors.Is(err, reason) {
					return
				}
			}
			t.Fatalf("AcceptTicket: %v, want one of the rejection sentinels", err)
		}
		signerAddr, serr := tk.Signer(testChainID, testContract)
		value := tk.Value()
		switch {
		case serr != nil || signerAddr != sourceAddr:
			t.Fatalf("accepted a ticket signed by %s (%v), not the source", signerAddr, serr)
		case tk.ChannelID != channelID || tk.Epoch != 1:
			t.Fatalf("accepted a ticket for channel %x epoch %d", tk.ChannelID, tk.Epoch)
		case tk.Index <= redeemed:
			t.Fatalf("accepted index %d, redeemed up to %d", tk.Index, redeemed)
		case !final && (value.Lt(&PricePerHop) || value.Gt(&MaxTicketValue)):
			t.Fatalf("accepted amount %s (final %v)", tk.Amount.Dec(), final)
		case tk.Amount.Gt(uint256.NewInt(balance)):
			t.Fatalf("accepted amount %s over the balance %d", tk.Amount.Dec(), balance)
		}
		again := tk
		if err := l.AcceptTicket(sourceAddr, &again, final); !errors.Is(err, ErrTicketIndex) {
			t.Fatalf("the same ticket accepted twice: %v", err)
		}
	})
}

// sign signs tk with key for the test chain and contract.
func sign(tb testing.TB, key *ecdsa.PrivateKey, tk *tickets.Ticket) {
	tb.Helper()
	if err := tk.Sign(key, testChainID, testContract); err != nil {
		tb.Fatal(err)
	}
}

func withAmount(tk tickets.Ticket, a uint256.Int) tickets.Ticket {
	tk.Amount = a
	return tk
}

func keyFromSeed(tb testing.TB, b byte) (*ecdsa.PrivateKey, common.Address) {
	tb.Helper()
	k, err := crypto.ToECDSA(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	return k, crypto.PubkeyToAddress(k.PublicKey)
}

// rejections are the sentinels AcceptTicket rejects a ticket with.
var rejections = []error{ErrChannelNotFound, ErrChannelNotOpen, ErrTicketChannel, ErrTicketEpoch, ErrTicketWinProb,
	ErrTicketAmount, ErrTicketIndex, ErrTicketBalance, ErrTicketSigner}
