package tickets

import (
	"bytes"
	"crypto/ecdsa"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
)

const testChainID = 1337

var testContract = common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")

// testKey returns a deterministic key for seed.
func testKey(t testing.TB, seed string) *ecdsa.PrivateKey {
	t.Helper()
	key, err := crypto.ToECDSA(crypto.Keccak256([]byte(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func sampleTicket(src, dst common.Address) Ticket {
	t := Ticket{
		ChannelID: ChannelID(src, dst),
		Amount:    AmountFor(2),
		Index:     7,
		Epoch:     3,
		WinProb:   MaxWinProb,
	}
	copy(t.Challenge[:], crypto.Keccak256([]byte("challenge"))[12:])
	return t
}

func signedTicket(t testing.TB) (Ticket, common.Address) {
	t.Helper()
	key := testKey(t, "source")
	src := crypto.PubkeyToAddress(key.PublicKey)
	tk := sampleTicket(src, common.HexToAddress("0x00000000000000000000000000000000000000d5"))
	if err := tk.Sign(key, testChainID, testContract); err != nil {
		t.Fatal(err)
	}
	return tk, src
}

func TestChannelID(t *testing.T) {
	src := common.HexToAddress("0x1111111111111111111111111111111111111111")
	dst := common.HexToAddress("0x2222222222222222222222222222222222222222")
	want := crypto.Keccak256(src.Bytes(), dst.Bytes())
	got := ChannelID(src, dst)
	if !bytes.Equal(got[:], want) {
		t.Fatalf("ChannelID = %x, want %x", got, want)
	}
	if ChannelID(dst, src) == got {
		t.Fatal("ChannelID is symmetric; channels are unidirectional")
	}
}

func TestAmountFor(t *testing.T) {
	for _, tc := range []struct {
		ahead int
		want  string
	}{
		{0, "0"},
		{1, "10000000000000000"},
		{2, "20000000000000000"},
		{3, "30000000000000000"},
	} {
		got := AmountFor(tc.ahead)
		if got.Dec() != tc.want {
			t.Errorf("AmountFor(%d) = %s, want %s", tc.ahead, got.Dec(), tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AmountFor(-1) did not panic")
		}
	}()
	AmountFor(-1)
}

// TestHashIsABIEncode checks Hash against go-ethereum's ABI encoder, independent of the
// hand-laid buffer in Hash. (The contract tests check it against the contract itself.)
func TestHashIsABIEncode(t *testing.T) {
	typ := func(s string) abi.Type {
		ty, err := abi.NewType(s, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return ty
	}
	args := abi.Arguments{
		{Type: typ("uint256")}, {Type: typ("address")}, {Type: typ("bytes32")}, {Type: typ("uint256")},
		{Type: typ("uint64")}, {Type: typ("uint32")}, {Type: typ("uint64")}, {Type: typ("address")},
	}
	tk, _ := signedTicket(t)
	tk.Amount.SetFromBig(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(3)))
	tk.Index = 1<<64 - 2
	tk.Epoch = 1<<32 - 1
	packed, err := args.Pack(big.NewInt(testChainID), testContract, tk.ChannelID, tk.Amount.ToBig(),
		tk.Index, tk.Epoch, tk.WinProb, common.Address(tk.Challenge))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Hash(testChainID, testContract), crypto.Keccak256Hash(packed); got != want {
		t.Fatalf("Hash = %x, want %x", got, want)
	}
}

func TestEthSignedHash(t *testing.T) {
	h := crypto.Keccak256Hash([]byte("x"))
	if got, want := EthSignedHash(h), accounts.TextHash(h[:]); !bytes.Equal(got[:], want) {
		t.Fatalf("EthSignedHash = %x, want %x", got, want)
	}
}

func TestSignAndSigner(t *testing.T) {
	tk, src := signedTicket(t)
	if v := tk.Signature[64]; v != 27 && v != 28 {
		t.Fatalf("v = %d", v)
	}
	got, err := tk.Signer(testChainID, testContract)
	if err != nil {
		t.Fatal(err)
	}
	if got != src {
		t.Fatalf("Signer = %s, want %s", got, src)
	}
	// Changing anything signed changes the recovered address.
	other := common.HexToAddress("0x0000000000000000000000000000000000000001")
	mutations := map[string]func(*Ticket) (uint64, common.Address){
		"channel": func(t *Ticket) (uint64, common.Address) { t.ChannelID[0] ^= 1; return testChainID, testContract },
		"amount": func(t *Ticket) (uint64, common.Address) {
			t.Amount.AddUint64(&t.Amount, 1)
			return testChainID, testContract
		},
		"index":     func(t *Ticket) (uint64, common.Address) { t.Index++; return testChainID, testContract },
		"epoch":     func(t *Ticket) (uint64, common.Address) { t.Epoch++; return testChainID, testContract },
		"winProb":   func(t *Ticket) (uint64, common.Address) { t.WinProb--; return testChainID, testContract },
		"challenge": func(t *Ticket) (uint64, common.Address) { t.Challenge[19] ^= 1; return testChainID, testContract },
		"chain id":  func(t *Ticket) (uint64, common.Address) { return testChainID + 1, testContract },
		"contract":  func(t *Ticket) (uint64, common.Address) { return testChainID, other },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			m := tk
			chainID, contract := mutate(&m)
			signer, err := m.Signer(chainID, contract)
			if err == nil && signer == src {
				t.Fatal("mutated ticket still recovers the source")
			}
		})
	}
}

func TestSignerRejectsMalformed(t *testing.T) {
	tk, _ := signedTicket(t)
	n := crypto.S256().Params().N
	put := func(b []byte, v *big.Int) { v.FillBytes(b) }
	tests := map[string]func(*Ticket){
		"v=0":  func(t *Ticket) { t.Signature[64] = 0 },
		"v=29": func(t *Ticket) { t.Signature[64] = 29 },
		"r=0":  func(t *Ticket) { clear(t.Signature[:32]) },
		"r=n":  func(t *Ticket) { put(t.Signature[:32], n) },
		"s=0":  func(t *Ticket) { clear(t.Signature[32:64]) },
		"high s": func(t *Ticket) { // the malleated twin (n-s, flipped v) is a valid ECDSA signature
			s := new(big.Int).SetBytes(t.Signature[32:64])
			put(t.Signature[32:64], s.Sub(n, s))
			t.Signature[64] ^= 1 // 27 <-> 28
		},
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			m := tk
			mutate(&m)
			if _, err := m.Signer(testChainID, testContract); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("Signer err = %v, want ErrBadSignature", err)
			}
		})
	}
}

func TestSignRejectsBadFields(t *testing.T) {
	key := testKey(t, "source")
	base := sampleTicket(crypto.PubkeyToAddress(key.PublicKey), common.Address{1})
	tests := []struct {
		name   string
		mutate func(*Ticket)
		want   error
	}{
		{"index 0", func(t *Ticket) { t.Index = 0 }, ErrBadIndex},
		{"epoch 0", func(t *Ticket) { t.Epoch = 0 }, ErrBadEpoch},
		{"win prob over 56 bits", func(t *Ticket) { t.WinProb = MaxWinProb + 1 }, ErrBadWinProb},
		{"zero challenge", func(t *Ticket) { t.Challenge = [20]byte{} }, ErrBadChallenge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := base
			tc.mutate(&tk)
			before := tk
			if err := tk.Sign(key, testChainID, testContract); !errors.Is(err, tc.want) {
				t.Fatalf("Sign err = %v, want %v", err, tc.want)
			}
			if tk != before {
				t.Fatal("failed Sign changed the ticket")
			}
			if err := tk.Validate(); !errors.Is(err, tc.want) {
				t.Fatalf("Validate err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	tk, _ := signedTicket(t)
	tk.Amount = *uint256.MustFromHex("0x102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20")
	tk.Index = 0x0102030405060708
	tk.Epoch = 0x0a0b0c0d
	tk.WinProb = 0x00aabbccddeeff11
	b, err := tk.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != EncodedLen {
		t.Fatalf("len = %d, want %d", len(b), EncodedLen)
	}
	// Spot-check the layout of PROTOCOL.md §4.
	if !bytes.Equal(b[:32], tk.ChannelID[:]) || b[32] != 0x01 || b[63] != 0x20 ||
		b[64] != 0x01 || b[71] != 0x08 || b[72] != 0x0a || b[75] != 0x0d ||
		b[76] != 0xaa || b[82] != 0x11 || !bytes.Equal(b[83:103], tk.Challenge[:]) ||
		!bytes.Equal(b[103:], tk.Signature[:]) {
		t.Fatalf("layout mismatch: %x", b)
	}
	var got Ticket
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if got != tk {
		t.Fatalf("round trip: got %+v, want %+v", got, tk)
	}
	appended, err := tk.AppendBinary([]byte{0xee})
	if err != nil || appended[0] != 0xee || !bytes.Equal(appended[1:], b) {
		t.Fatalf("AppendBinary = %x, %v", appended, err)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	tk, _ := signedTicket(t)
	good, err := tk.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTooShort},
		{"one short", good[:EncodedLen-1], ErrTooShort},
		{"one long", append(bytes.Clone(good), 0), ErrTooLong},
		{"index 0", with(func(b []byte) { clear(b[offIndex:offEpoch]) }), ErrBadIndex},
		{"epoch 0", with(func(b []byte) { clear(b[offEpoch:offWinProb]) }), ErrBadEpoch},
		{"zero challenge", with(func(b []byte) { clear(b[offChallenge:offSignature]) }), ErrBadChallenge},
		{"v 0", with(func(b []byte) { b[EncodedLen-1] = 0 }), ErrBadSignature},
		{"v 1", with(func(b []byte) { b[EncodedLen-1] = 1 }), ErrBadSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Ticket
			got.Index = 42
			before := got
			if err := got.UnmarshalBinary(tc.in); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if got != before {
				t.Fatal("failed UnmarshalBinary changed the ticket")
			}
		})
	}
	var unsigned Ticket = sampleTicket(common.Address{1}, common.Address{2})
	if _, err := unsigned.MarshalBinary(); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("marshal unsigned: err = %v, want ErrBadSignature", err)
	}
}

var sentinels = []error{ErrTooShort, ErrTooLong, ErrBadIndex, ErrBadEpoch, ErrBadWinProb, ErrBadChallenge, ErrBadSignature}

func FuzzUnmarshal(f *testing.F) {
	tk, _ := signedTicket(f)
	good, err := tk.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:EncodedLen-1])
	f.Add(append(bytes.Clone(good), 1))
	f.Add(make([]byte, EncodedLen))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Ticket
		err := d.UnmarshalBinary(b)
		if err != nil {
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}
		again, err := d.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded ticket does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip changed the encoding:\n in  %x\n out %x", b, again)
		}
		// Signer never panics on decoded input.
		_, _ = d.Signer(testChainID, testContract)
	})
}

func BenchmarkTicketSign(b *testing.B) {
	key := testKey(b, "source")
	tk := sampleTicket(crypto.PubkeyToAddress(key.PublicKey), common.Address{1})
	for b.Loop() {
		tk.Index++
		if err := tk.Sign(key, testChainID, testContract); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTicketVerify(b *testing.B) {
	tk, src := signedTicket(b)
	for b.Loop() {
		signer, err := tk.Signer(testChainID, testContract)
		if err != nil || signer != src {
			b.Fatal("bad signer", err)
		}
	}
}

func BenchmarkTicketHash(b *testing.B) {
	tk, _ := signedTicket(b)
	for b.Loop() {
		_ = tk.Hash(testChainID, testContract)
	}
}

func BenchmarkTicketMarshal(b *testing.B) {
	tk, _ := signedTicket(b)
	buf := make([]byte, 0, EncodedLen)
	for b.Loop() {
		if _, err := tk.AppendBinary(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTicketUnmarshal(b *testing.B) {
	tk, _ := signedTicket(b)
	enc, _ := tk.MarshalBinary()
	var d Ticket
	for b.Loop() {
		if err := d.UnmarshalBinary(enc); err != nil {
			b.Fatal(err)
		}
	}
}
