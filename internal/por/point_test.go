package por

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
)

// TestHKDF checks the allocation-free HKDF against crypto/hkdf.
func TestHKDF(t *testing.T) {
	for i := range 64 {
		var s [32]byte
		rand.Read(s[:])
		info := []string{infoOwn, infoAck, infoEnd, "", "x"}[i%5]
		want, err := hkdf.Key(sha256.New, s[:], nil, info, 32)
		if err != nil {
			t.Fatal(err)
		}
		prk := hkdfExtract(&s)
		if got := hkdfExpand1(&prk, info); string(got[:]) != string(want) {
			t.Fatalf("secret %x info %q: %x, want %x", s, info, got, want)
		}
	}
}

func TestDeriveOwnAck(t *testing.T) {
	for i := range 8 {
		s := secret(byte(i * 7))
		own, ack, err := DeriveOwnAck(s)
		if err != nil {
			t.Fatal(err)
		}
		if own != mustDerive(t, DeriveOwn, s) || ack != mustDerive(t, DeriveAck, s) {
			t.Fatalf("secret %x: DeriveOwnAck differs from DeriveOwn, DeriveAck", s)
		}
	}
}

func TestMulBase(t *testing.T) {
	for n := range 6 {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ks := make([]Scalar, n)
			for i := range ks {
				ks[i] = mustDerive(t, DeriveOwn, secret(byte(40+i)))
			}
			pts, err := MulBase(ks...)
			if err != nil {
				t.Fatal(err)
			}
			for i, q := range pts {
				key, err := crypto.ToECDSA(ks[i][:])
				if err != nil {
					t.Fatal(err)
				}
				if want := crypto.FromECDSAPub(&key.PublicKey)[1:]; string(q[:]) != string(want) {
					t.Fatalf("point %d = %x, want %x", i, q, want)
				}
				if !q.Valid() {
					t.Fatalf("point %d is not valid", i)
				}
				if c, addr := refPoint(t, ks[i]); q.Compress() != AckChallenge(c) || q.Address() != Challenge(addr) {
					t.Fatalf("point %d: Compress or Address differ from go-ethereum", i)
				}
			}
		})
	}
	if _, err := MulBase(Scalar{}); err == nil {
		t.Fatal("MulBase(0) succeeded")
	}
}

func TestVerifyResponse(t *testing.T) {
	own := mustDerive(t, DeriveOwn, secret(1))
	ack := mustDerive(t, DeriveAck, secret(2))
	other := mustDerive(t, DeriveAck, secret(3))
	r, err := Sum(own, ack)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := MulBase(r)
	if err != nil {
		t.Fatal(err)
	}
	q := pts[0]
	c, _ := TicketChallenge(own, ack)
	if q.Address() != c {
		t.Fatal("address of (own+ack)·G differs from TicketChallenge")
	}
	neg := q // -Q: same X, Y' = p - Y
	yb := new(big.Int).Sub(crypto.S256().Params().P, new(big.Int).SetBytes(q[32:]))
	yb.FillBytes(neg[32:])
	offCurve := q
	offCurve[63] ^= 1
	var negOwnAck Scalar // ack' = -own: the sum is zero
	new(big.Int).Sub(n, new(big.Int).SetBytes(own[:])).FillBytes(negOwnAck[:])
	tests := []struct {
		name string
		ack  Scalar
		q    Point
		want bool
	}{
		{"valid", ack, q, true},
		{"wrong ack", other, q, false},
		{"own only", own, q, false},
		{"negated point", ack, neg, false},
		{"off curve", ack, offCurve, false},
		{"zero point", ack, Point{}, false},
		{"zero ack", Scalar{}, q, false},
		{"sum zero", negOwnAck, q, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := VerifyResponse(own, tc.ack, &tc.q); got != tc.want {
				t.Fatalf("VerifyResponse = %v, want %v", got, tc.want)
			}
		})
	}
	if !neg.Valid() || offCurve.Valid() {
		t.Fatal("Valid is wrong on -Q or an off-curve point")
	}
}

func TestEqualScalars(t *testing.T) {
	a := mustDerive(t, DeriveAck, secret(2))
	b := a
	if !EqualScalars(a, b) {
		t.Fatal("equal scalars differ")
	}
	b[31] ^= 1
	if EqualScalars(a, b) {
		t.Fatal("different scalars are equal")
	}
}

func BenchmarkDeriveOwnAck(b *testing.B) {
	s := secret(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DeriveOwnAck(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyResponse(b *testing.B) {
	own := mustDerive(b, DeriveOwn, secret(1))
	ack := mustDerive(b, DeriveAck, secret(2))
	r, _ := Sum(own, ack)
	pts, _ := MulBase(r)
	b.ReportAllocs()
	for b.Loop() {
		if !VerifyResponse(own, ack, &pts[0]) {
			b.Fatal("rejected")
		}
	}
}

func BenchmarkMulBase4(b *testing.B) {
	ks := make([]Scalar, 4)
	for i := range ks {
		ks[i] = mustDerive(b, DeriveOwn, secret(byte(i)))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MulBase(ks...); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCommitAck(t *testing.T) {
	ack := mustDerive(t, DeriveAck, secret(2))
	c := CommitAck(ack)
	if want := sha256.Sum256(append([]byte("relayd por ack commitment"), ack[:]...)); c != want {
		t.Fatalf("CommitAck = %x, want %x", c, want)
	}
	other := ack
	other[31] ^= 1
	if CommitAck(other) == c {
		t.Fatal("different acks commit alike")
	}
}
