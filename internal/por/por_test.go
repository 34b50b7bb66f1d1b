package por

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	xhkdf "golang.org/x/crypto/hkdf"
)

// n is the secp256k1 group order.
var n = crypto.S256().Params().N

func scalarFromBig(t testing.TB, v *big.Int) Scalar {
	t.Helper()
	var s Scalar
	v.FillBytes(s[:])
	return s
}

func secret(b byte) [32]byte {
	var s [32]byte
	for i := range s {
		s[i] = b + byte(i)
	}
	return s
}

// refDerive is an independent implementation of the PROTOCOL.md §2 derivation (x/crypto HKDF and
// math/big), to check derive against.
func refDerive(t *testing.T, s [32]byte, info string) Scalar {
	t.Helper()
	okm := make([]byte, 32)
	if _, err := io.ReadFull(xhkdf.New(sha256.New, s[:], nil, []byte(info)), okm); err != nil {
		t.Fatal(err)
	}
	return scalarFromBig(t, new(big.Int).Mod(new(big.Int).SetBytes(okm), n))
}

// refPoint returns s·G with go-ethereum's crypto (libsecp256k1), independent of decred.
func refPoint(t *testing.T, s Scalar) (compressed [33]byte, addr [20]byte) {
	t.Helper()
	key, err := crypto.ToECDSA(s[:])
	if err != nil {
		t.Fatal(err)
	}
	copy(compressed[:], crypto.CompressPubkey(&key.PublicKey))
	return compressed, crypto.PubkeyToAddress(key.PublicKey)
}

func mustDerive(t testing.TB, f func([32]byte) (Scalar, error), s [32]byte) Scalar {
	t.Helper()
	k, err := f(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestDerive(t *testing.T) {
	for i := range 8 {
		s := secret(byte(i * 31))
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			own := mustDerive(t, DeriveOwn, s)
			ack := mustDerive(t, DeriveAck, s)
			end := mustDerive(t, DeriveEnd, s)
			if want := refDerive(t, s, "relayd por own"); own != want {
				t.Errorf("own = %x, want %x", own, want)
			}
			if want := refDerive(t, s, "relayd por ack"); ack != want {
				t.Errorf("ack = %x, want %x", ack, want)
			}
			if want := refDerive(t, s, "relayd por end"); end != want {
				t.Errorf("end = %x, want %x", end, want)
			}
			if own == ack || ack == end || own == end {
				t.Error("derived scalars coincide")
			}
			for _, k := range []Scalar{own, ack, end} {
				if !k.Valid() {
					t.Errorf("derived scalar %x is not valid", k)
				}
			}
		})
	}
}

// TestKnownAnswer pins PROTOCOL.md §2 for the secret 00 01 02 … 1f, so that any change of the info
// strings, the reduction or the point encodings shows up. (TestDerive, TestAckChallengeOf and
// TestChallenges check the same functions against independent implementations.)
func TestKnownAnswer(t *testing.T) {
	var s [32]byte
	for i := range s {
		s[i] = byte(i)
	}
	own := mustDerive(t, DeriveOwn, s)
	ack := mustDerive(t, DeriveAck, s)
	end := mustDerive(t, DeriveEnd, s)
	a, err := AckChallengeOf(ack)
	if err != nil {
		t.Fatal(err)
	}
	c, err := TicketChallenge(own, end)
	if err != nil {
		t.Fatal(err)
	}
	r := Response(own, end)
	for _, v := range []struct{ name, got, want string }{
		{"own", hex.EncodeToString(own[:]), "63f03c1d2c857024ab0798c622d83b9bf9f375ddb17863b1b2573d7d910905e8"},
		{"ack", hex.EncodeToString(ack[:]), "3d8d125e3ecf1da4366e79f920f196412997af033c3bfd87829c4e4c4da3b564"},
		{"end", hex.EncodeToString(end[:]), "52151abef3e3fa35b85e9c2c8f0750965f92a31aa4bacc36dda83511bd4eb16d"},
		{"ack·G", hex.EncodeToString(a[:]), "02bc20f31de2995262577a1d75dbb76eedeed6beb4e50c48957dd40d230b386c5d"},
		{"address((own+end)·G)", hex.EncodeToString(c[:]), "f954585525760e90a2b936ae0ad21fcc12af7f66"},
		{"own+end", hex.EncodeToString(r[:]), "b60556dc20696a5a636634f2b1df8c32598618f856332fe88fff728f4e57b755"},
	} {
		if v.got != v.want {
			t.Errorf("%s = %s, want %s", v.name, v.got, v.want)
		}
	}
}

func TestAckChallengeOf(t *testing.T) {
	for i := range 8 {
		ack := mustDerive(t, DeriveAck, secret(byte(i)))
		a, err := AckChallengeOf(ack)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := refPoint(t, ack)
		if a != want {
			t.Fatalf("AckChallengeOf(%x) = %x, want %x", ack, a, want)
		}
		if !a.Valid() {
			t.Fatalf("%x not valid", a)
		}
	}
}

func TestChallenges(t *testing.T) {
	own := mustDerive(t, DeriveOwn, secret(1))
	ackNext := mustDerive(t, DeriveAck, secret(2))
	c, err := TicketChallenge(own, ackNext)
	if err != nil {
		t.Fatal(err)
	}
	r := Response(own, ackNext)
	sum := new(big.Int).Add(new(big.Int).SetBytes(own[:]), new(big.Int).SetBytes(ackNext[:]))
	sum.Mod(sum, n)
	if want := scalarFromBig(t, sum); r != [32]byte(want) {
		t.Fatalf("Response = %x, want %x", r, want)
	}
	_, want := refPoint(t, Scalar(r))
	if c != Challenge(want) {
		t.Fatalf("TicketChallenge = %x, want address(r·G) %x", c, want)
	}
	opened, err := ChallengeOf(Scalar(r))
	if err != nil || opened != c {
		t.Fatalf("ChallengeOf(Response) = %x, %v; want %x", opened, err, c)
	}
}

func TestResponseWrapsModN(t *testing.T) {
	nMinus1 := scalarFromBig(t, new(big.Int).Sub(n, big.NewInt(1)))
	two := scalarFromBig(t, big.NewInt(2))
	if got, want := Response(nMinus1, two), scalarFromBig(t, big.NewInt(1)); got != [32]byte(want) {
		t.Fatalf("(n-1)+2 = %x, want 1", got)
	}
	one := scalarFromBig(t, big.NewInt(1))
	if _, err := TicketChallenge(nMinus1, one); !errors.Is(err, ErrPointAtInfinity) {
		t.Fatalf("TicketChallenge(n-1, 1) err = %v, want ErrPointAtInfinity", err)
	}
}

func TestInvalidScalars(t *testing.T) {
	good := mustDerive(t, DeriveOwn, secret(3))
	bad := map[string]Scalar{
		"zero": {},
		"n":    scalarFromBig(t, n),
		"n+1":  scalarFromBig(t, new(big.Int).Add(n, big.NewInt(1))),
		"max":  scalarFromBig(t, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))),
	}
	a, err := AckChallengeOf(good)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range bad {
		t.Run(name, func(t *testing.T) {
			if s.Valid() {
				t.Error("Valid() = true")
			}
			if _, err := AckChallengeOf(s); !errors.Is(err, ErrInvalidScalar) {
				t.Errorf("AckChallengeOf err = %v", err)
			}
			if _, err := ChallengeOf(s); !errors.Is(err, ErrInvalidScalar) {
				t.Errorf("ChallengeOf err = %v", err)
			}
			if _, err := TicketChallenge(s, good); !errors.Is(err, ErrInvalidScalar) {
				t.Errorf("TicketChallenge(bad, good) err = %v", err)
			}
			if _, err := TicketChallenge(good, s); !errors.Is(err, ErrInvalidScalar) {
				t.Errorf("TicketChallenge(good, bad) err = %v", err)
			}
			if VerifyAck(s, a) {
				t.Error("VerifyAck(bad) = true")
			}
			if VerifyIncoming(s, a, Challenge{}) {
				t.Error("VerifyIncoming(bad) = true")
			}
		})
	}
}

func TestVerifyIncoming(t *testing.T) {
	own := mustDerive(t, DeriveOwn, secret(10))
	ackNext := mustDerive(t, DeriveAck, secret(11))
	aNext, err := AckChallengeOf(ackNext)
	if err != nil {
		t.Fatal(err)
	}
	c, err := TicketChallenge(own, ackNext)
	if err != nil {
		t.Fatal(err)
	}
	otherOwn := mustDerive(t, DeriveOwn, secret(12))
	otherA, _ := AckChallengeOf(mustDerive(t, DeriveAck, secret(13)))
	flippedC := c
	flippedC[19] ^= 1
	flippedParity := aNext
	flippedParity[0] ^= 1 // 0x02 <-> 0x03: the negated point
	badPrefix := aNext
	badPrefix[0] = 0x04
	xTooBig := AckChallenge{0x02}
	for i := 1; i < 33; i++ {
		xTooBig[i] = 0xff
	}
	notOnCurve := AckChallenge{0x02} // x = 5: 5^3+7 = 132 is not a square mod p
	notOnCurve[32] = 5
	// own·G + A = infinity when A = -own·G.
	ownA, _ := AckChallengeOf(own)
	negOwnA := ownA
	negOwnA[0] ^= 1

	tests := []struct {
		name string
		own  Scalar
		a    AckChallenge
		c    Challenge
		want bool
	}{
		{"valid", own, aNext, c, true},
		{"wrong own", otherOwn, aNext, c, false},
		{"wrong ack challenge", own, otherA, c, false},
		{"wrong challenge", own, aNext, flippedC, false},
		{"negated ack challenge", own, flippedParity, c, false},
		{"bad prefix", own, badPrefix, c, false},
		{"x >= p", own, xTooBig, c, false},
		{"x not on curve", own, notOnCurve, c, false},
		{"zero ack challenge", own, AckChallenge{}, c, false},
		{"sum at infinity", own, negOwnA, Challenge{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := VerifyIncoming(tc.own, tc.a, tc.c); got != tc.want {
				t.Fatalf("VerifyIncoming = %v, want %v", got, tc.want)
			}
		})
	}
	for _, a := range []AckChallenge{badPrefix, xTooBig, notOnCurve, {}} {
		if a.Valid() {
			t.Errorf("AckChallenge %x Valid() = true", a)
		}
	}
}

func TestVerifyAck(t *testing.T) {
	ack := mustDerive(t, DeriveAck, secret(20))
	a, _ := AckChallengeOf(ack)
	other := mustDerive(t, DeriveAck, secret(21))
	neg := a
	neg[0] ^= 1
	tests := []struct {
		name string
		ack  Scalar
		a    AckChallenge
		want bool
	}{
		{"valid", ack, a, true},
		{"wrong ack", other, a, false},
		{"negated point", ack, neg, false},
		{"zero point", ack, AckChallenge{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := VerifyAck(tc.ack, tc.a); got != tc.want {
				t.Fatalf("VerifyAck = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPath walks PROTOCOL.md §2 for a sender, two relayers and a recipient: every hop accepts its
// ticket, checks the acknowledgement it gets and can open its challenge with the response.
func TestPath(t *testing.T) {
	const hops = 3 // relayer 1, relayer 2, recipient
	var own, ack [hops]Scalar
	for i := range hops {
		s := secret(byte(100 + i))
		own[i] = mustDerive(t, DeriveOwn, s)
		ack[i] = mustDerive(t, DeriveAck, s)
	}
	end := mustDerive(t, DeriveEnd, secret(100+hops-1))
	next := func(i int) Scalar { // ack_{i+1}, or end for the recipient
		if i == hops-1 {
			return end
		}
		return ack[i+1]
	}
	for i := range hops {
		c, err := TicketChallenge(own[i], next(i)) // sender's work, in the header
		if err != nil {
			t.Fatal(err)
		}
		aNext, err := AckChallengeOf(next(i))
		if err != nil {
			t.Fatal(err)
		}
		if !VerifyIncoming(own[i], aNext, c) {
			t.Fatalf("hop %d rejects its ticket", i)
		}
		if !VerifyAck(next(i), aNext) {
			t.Fatalf("hop %d rejects the acknowledgement", i)
		}
		r := Response(own[i], next(i))
		if opened, err := ChallengeOf(Scalar(r)); err != nil || opened != c {
			t.Fatalf("hop %d: response opens %x (%v), want %x", i, opened, err, c)
		}
		// A hop that only has its own scalar (no acknowledgement yet) cannot open it.
		if opened, _ := ChallengeOf(own[i]); opened == c {
			t.Fatalf("hop %d opens its challenge without the acknowledgement", i)
		}
	}
	if bytes.Equal(end[:], ack[hops-1][:]) {
		t.Fatal("end scalar equals the recipient's ack scalar")
	}
}

func BenchmarkDeriveOwn(b *testing.B) {
	s := secret(1)
	for b.Loop() {
		if _, err := DeriveOwn(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAckChallengeOf(b *testing.B) {
	ack := mustDerive(b, DeriveAck, secret(1))
	for b.Loop() {
		if _, err := AckChallengeOf(ack); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTicketChallenge(b *testing.B) {
	own := mustDerive(b, DeriveOwn, secret(1))
	ack := mustDerive(b, DeriveAck, secret(2))
	for b.Loop() {
		if _, err := TicketChallenge(own, ack); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyIncoming(b *testing.B) {
	own := mustDerive(b, DeriveOwn, secret(1))
	ack := mustDerive(b, DeriveAck, secret(2))
	a, _ := AckChallengeOf(ack)
	c, _ := TicketChallenge(own, ack)
	for b.Loop() {
		if !VerifyIncoming(own, a, c) {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkVerifyAck(b *testing.B) {
	ack := mustDerive(b, DeriveAck, secret(2))
	a, _ := AckChallengeOf(ack)
	for b.Loop() {
		if !VerifyAck(ack, a) {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkResponse(b *testing.B) {
	own := mustDerive(b, DeriveOwn, secret(1))
	ack := mustDerive(b, DeriveAck, secret(2))
	for b.Loop() {
		_ = Response(own, ack)
	}
}
