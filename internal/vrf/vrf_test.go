package vrf

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	"github.com/ethereum/go-ethereum/crypto"
)

// testKey returns a fixed test key derived from seed.
func testKey(t testing.TB, seed string) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("relayd vrf test " + seed)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustProve(t testing.TB, sk *ecdsa.PrivateKey, alpha []byte) Proof {
	t.Helper()
	p, err := Prove(sk, alpha)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// refHashToCurve is HashToCurve written independently with math/big, the square root by
// modular exponentiation as the contract's modexp computes it. It returns the counter too.
func refHashToCurve(pk Point, alpha []byte) (Point, int) {
	exp := new(big.Int).Rsh(new(big.Int).Add(fieldP, big.NewInt(1)), 2)
	for ctr := range 256 {
		pre := append(append(append(append([]byte(dstHashToCurve), pk.X[:]...), pk.Y[:]...), alpha...), byte(ctr))
		x := new(big.Int).Mod(new(big.Int).SetBytes(crypto.Keccak256(pre)), fieldP)
		a := new(big.Int).Add(new(big.Int).Exp(x, big.NewInt(3), fieldP), big.NewInt(7))
		a.Mod(a, fieldP)
		y := new(big.Int).Exp(a, exp, fieldP)
		if new(big.Int).Exp(y, big.NewInt(2), fieldP).Cmp(a) != 0 {
			continue
		}
		if y.Bit(0) == 1 {
			y.Sub(fieldP, y)
		}
		var h Point
		x.FillBytes(h.X[:])
		y.FillBytes(h.Y[:])
		return h, ctr
	}
	panic("no point")
}

// refMul is k·p with decred's variable-time multiplication, a reference for mul.
func refMul(k []byte, p Point) Point {
	var s secp256k1.ModNScalar
	s.SetByteSlice(k)
	pj := p.jacobian()
	var r secp256k1.JacobianPoint
	secp256k1.ScalarMultNonConst(&s, &pj, &r)
	return affine(&r)
}

// pubPoint is sk's public key as a Point.
func pubPoint(sk *ecdsa.PrivateKey) Point {
	b := crypto.FromECDSAPub(&sk.PublicKey)
	return Point{X: [32]byte(b[1:33]), Y: [32]byte(b[33:])}
}

// keyOf is pk as an *ecdsa.PublicKey, or nil if go-ethereum refuses it (off the curve).
func keyOf(pk Point) *ecdsa.PublicKey {
	k, err := crypto.UnmarshalPubkey(append(append([]byte{4}, pk.X[:]...), pk.Y[:]...))
	if err != nil {
		return nil
	}
	return k
}

func TestHashToCurveMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	counters := map[int]int{}
	for i := range 200 {
		sk := testKey(t, fmt.Sprint("h2c ", i))
		alpha := make([]byte, r.IntN(70))
		for j := range alpha {
			alpha[j] = byte(r.Uint32())
		}
		h, err := HashToCurve(&sk.PublicKey, alpha)
		if err != nil {
			t.Fatal(err)
		}
		want, ctr := refHashToCurve(pubPoint(sk), alpha)
		counters[ctr]++
		if h != want {
			t.Fatalf("key %d alpha %x: H = %x, want %x", i, alpha, h, want)
		}
		if !onCurve(word(&h.X), word(&h.Y)) || h.Y[31]&1 != 0 {
			t.Fatalf("H = %x is not on the curve with an even y", h)
		}
	}
	// About half the inputs need a second counter: the loop is exercised.
	if counters[0] == 200 || counters[1] == 0 {
		t.Fatalf("counters used: %v", counters)
	}
}

func TestMulSecretMatchesReference(t *testing.T) {
	for i := range 50 {
		sk := testKey(t, fmt.Sprint("mul ", i))
		h, err := HashToCurve(&sk.PublicKey, []byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		d := [32]byte(crypto.FromECDSA(sk))
		for _, p := range []Point{h, generator} {
			got, ok := mul(&d, &p)
			if !ok || got != refMul(d[:], p) {
				t.Fatalf("mul(%x, %x) = %x, %v", d, p, got, ok)
			}
		}
	}
	for _, k := range [][32]byte{{}, [32]byte(groupN.FillBytes(make([]byte, 32)))} {
		if _, ok := mul(&k, &generator); ok {
			t.Fatalf("mul accepted the scalar %x", k)
		}
	}
}

// TestProveVerify: round trips over random keys and inputs of every length; the output is the
// same through Prove, OutputOf and Gamma, and is keccak of sk·H.
func TestProveVerify(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 100 {
		sk, err := ecdsa.GenerateKey(crypto.S256(), cryptoReader{r})
		if err != nil {
			t.Fatal(err)
		}
		alpha := make([]byte, []int{0, 1, 32, 32, 100}[i%5])
		for j := range alpha {
			alpha[j] = byte(r.Uint32())
		}
		p, err := Prove(sk, alpha)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(&sk.PublicKey, alpha, p); err != nil {
			t.Fatalf("key %d alpha %x: Verify: %v", i, alpha, err)
		}
		beta, err := OutputOf(sk, alpha)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Gamma(sk, alpha)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := refHashToCurve(pubPoint(sk), alpha)
		if want := refMul(crypto.FromECDSA(sk), h); g != want || p.Gamma != want {
			t.Fatalf("Gamma %x, proof's %x, want sk·H = %x", g, p.Gamma, want)
		}
		if p.Output() != beta || beta != output(g) {
			t.Fatalf("outputs differ: proof %x, OutputOf %x", p.Output(), beta)
		}
		b, _ := p.MarshalBinary()
		var back Proof
		if err := back.UnmarshalBinary(b); err != nil || back != p {
			t.Fatalf("encoding round trip: %v", err)
		}
	}
}

// cryptoReader adapts a math/rand source for ecdsa.GenerateKey in tests (reproducible keys).
type cryptoReader struct{ r *rand.Rand }

func (c cryptoReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(c.r.Uint32())
	}
	return len(b), nil
}

// TestUniqueness: a key has one output per input whatever the proof; Prove is deterministic,
// and a holder that proves another Gamma (grinding for a winning output) is refused.
func TestUniqueness(t *testing.T) {
	sk := testKey(t, "unique")
	alpha := []byte("ticket hash")
	p1, p2 := mustProve(t, sk, alpha), mustProve(t, sk, alpha)
	if p1 != p2 || p1.Output() != p2.Output() {
		t.Fatal("two proofs of the same key and input differ")
	}
	if other := mustProve(t, sk, []byte("ticket hasi")); other.Output() == p1.Output() {
		t.Fatal("two inputs have the same output")
	}
	h, _ := refHashToCurve(pubPoint(sk), alpha)
	d := [32]byte(crypto.FromECDSA(sk))
	for i, gamma := range []Point{refMul([]byte{2}, p1.Gamma), generator, refMul([]byte{7}, h)} {
		forged, err := prove(&d, pubPoint(sk), h, gamma)
		if err != nil {
			t.Fatal(err)
		}
		rewitness(&forged, h) // the witnesses a cheater would give: right for its S, C and Gamma
		if err := Verify(&sk.PublicKey, alpha, forged); !errors.Is(err, ErrChallenge) {
			t.Fatalf("forged Gamma %d: Verify = %v, want ErrChallenge", i, err)
		}
	}
}

// rewitness sets p's witnesses to the right values for its S, C and Gamma and the point h.
func rewitness(p *Proof, h Point) {
	p.SH = refMul(p.S[:], h)
	p.CGamma = refMul(p.C[:], p.Gamma)
	d := new(big.Int).Sub(word(&p.SH.X), word(&p.CGamma.X))
	setWord(&p.ZInv, new(big.Int).ModInverse(d.Mod(d, fieldP), fieldP))
}

// tamper is a way to spoil a valid proof and the error Verify must answer.
type tamper struct {
	name   string
	change func(p *Proof, pk *Point, alpha *[]byte)
	want   error
}

func setWord(w *[32]byte, v *big.Int) { v.FillBytes(w[:]) }

func addWord(w *[32]byte, d int64) { setWord(w, new(big.Int).Add(word(w), big.NewInt(d))) }

func negate(p *Point) { setWord(&p.Y, new(big.Int).Sub(fieldP, word(&p.Y))) }

// tampers lists every way of spoiling a valid proof of sk for alpha (32 bytes) that Verify and
// the contract must refuse. other is another key.
func tampers(t testing.TB, sk, other *ecdsa.PrivateKey, alpha []byte) []tamper {
	t.Helper()
	field := func(name string, f func(p *Proof), want error) tamper {
		return tamper{name, func(p *Proof, _ *Point, _ *[]byte) { f(p) }, want}
	}
	nBytes, pBytes := [32]byte(groupN.FillBytes(make([]byte, 32))), [32]byte(fieldP.FillBytes(make([]byte, 32)))
	max := [32]byte{}
	for i := range max {
		max[i] = 0xff
	}
	h, _ := refHashToCurve(pubPoint(sk), alpha)
	return []tamper{
		{"another key", func(_ *Proof, pk *Point, _ *[]byte) { *pk = pubPoint(other) }, ErrWitness},
		{"another alpha", func(_ *Proof, _ *Point, a *[]byte) { *a = crypto.Keccak256(*a) }, ErrWitness},
		{"key off the curve", func(_ *Proof, pk *Point, _ *[]byte) { addWord(&pk.Y, 1) }, ErrBadKey},
		{"key at infinity", func(_ *Proof, pk *Point, _ *[]byte) { *pk = Point{} }, ErrBadKey},
		{"key with x = n", func(_ *Proof, pk *Point, _ *[]byte) {
			pk.X = nBytes
			setWord(&pk.Y, mustHex("98f66641cb0ae1776b463ebdee3d77fe2658f021db48e2c8ac7ab4c92f83621e"))
		}, ErrBadKey},
		field("gamma x + 1", func(p *Proof) { addWord(&p.Gamma.X, 1) }, ErrMalformed),
		field("gamma y + 1", func(p *Proof) { addWord(&p.Gamma.Y, 1) }, ErrMalformed),
		field("gamma at infinity", func(p *Proof) { p.Gamma = Point{} }, ErrMalformed),
		field("gamma x = n", func(p *Proof) {
			p.Gamma.X = nBytes
			setWord(&p.Gamma.Y, mustHex("98f66641cb0ae1776b463ebdee3d77fe2658f021db48e2c8ac7ab4c92f83621e"))
		}, ErrMalformed),
		field("gamma of the other parity", func(p *Proof) { negate(&p.Gamma) }, ErrWitness),
		field("gamma and cGamma of the other parity", func(p *Proof) { negate(&p.Gamma); negate(&p.CGamma) }, ErrChallenge),
		field("gamma = G", func(p *Proof) { p.Gamma = generator }, ErrWitness),
		field("gamma = H", func(p *Proof) { p.Gamma = h }, ErrWitness),
		field("gamma = 2·Gamma, witnesses right for it", func(p *Proof) { p.Gamma = refMul([]byte{2}, p.Gamma); rewitness(p, h) }, ErrChallenge),
		field("c + 1", func(p *Proof) { addWord(&p.C, 1) }, ErrWitness),
		field("c + 1, witnesses right for it", func(p *Proof) { addWord(&p.C, 1); rewitness(p, h) }, ErrChallenge),
		field("c = 0", func(p *Proof) { p.C = [32]byte{} }, ErrMalformed),
		field("c = n", func(p *Proof) { p.C = nBytes }, ErrMalformed),
		field("c = 2^256 - 1", func(p *Proof) { p.C = max }, ErrMalformed),
		field("s + 1", func(p *Proof) { addWord(&p.S, 1) }, ErrWitness),
		field("s + 1, witnesses right for it", func(p *Proof) { addWord(&p.S, 1); rewitness(p, h) }, ErrChallenge),
		field("s = 0", func(p *Proof) { p.S = [32]byte{} }, ErrMalformed),
		field("s = n", func(p *Proof) { p.S = nBytes }, ErrMalformed),
		field("s = 2^256 - 1", func(p *Proof) { p.S = max }, ErrMalformed),
		field("sH x + 1", func(p *Proof) { addWord(&p.SH.X, 1) }, ErrMalformed),
		field("sH y + 1", func(p *Proof) { addWord(&p.SH.Y, 1) }, ErrMalformed),
		field("sH x = p", func(p *Proof) { p.SH.X = pBytes }, ErrMalformed),
		field("sH at infinity", func(p *Proof) { p.SH = Point{} }, ErrMalformed),
		field("sH of the other parity", func(p *Proof) { negate(&p.SH) }, ErrWitness),
		field("sH = G", func(p *Proof) { p.SH = generator }, ErrWitness),
		field("cGamma x + 1", func(p *Proof) { addWord(&p.CGamma.X, 1) }, ErrMalformed),
		field("cGamma at infinity", func(p *Proof) { p.CGamma = Point{} }, ErrMalformed),
		field("cGamma of the other parity", func(p *Proof) { negate(&p.CGamma) }, ErrWitness),
		field("sH and cGamma swapped", func(p *Proof) { p.SH, p.CGamma = p.CGamma, p.SH }, ErrWitness),
		field("zInv + 1", func(p *Proof) { addWord(&p.ZInv, 1) }, ErrWitness),
		field("zInv = 0", func(p *Proof) { p.ZInv = [32]byte{} }, ErrWitness),
		field("zInv = p", func(p *Proof) { p.ZInv = pBytes }, ErrMalformed),
		field("zInv = 2^256 - 1", func(p *Proof) { p.ZInv = max }, ErrMalformed),
		field("zInv negated", func(p *Proof) { setWord(&p.ZInv, new(big.Int).Sub(fieldP, word(&p.ZInv))) }, ErrWitness),
	}
}

// TestVerifyRefusesTampering runs every tampering through verify (the contract's mirror, which
// takes the key as a Point) and, when go-ethereum accepts the key, through Verify.
func TestVerifyRefusesTampering(t *testing.T) {
	sk, other := testKey(t, "tamper"), testKey(t, "tamper other")
	alpha := crypto.Keccak256([]byte("a ticket hash"))
	valid := mustProve(t, sk, alpha)
	for _, c := range tampers(t, sk, other, alpha) {
		t.Run(c.name, func(t *testing.T) {
			p, pk, a := valid, pubPoint(sk), append([]byte(nil), alpha...)
			c.change(&p, &pk, &a)
			if err := verify(pk, a, &p); !errors.Is(err, c.want) {
				t.Fatalf("verify = %v, want %v", err, c.want)
			}
			if key := keyOf(pk); key != nil {
				if err := Verify(key, a, p); !errors.Is(err, c.want) {
					t.Fatalf("Verify = %v, want %v", err, c.want)
				}
			}
		})
	}
}

func TestBadKeys(t *testing.T) {
	p := mustProve(t, testKey(t, "bad keys"), nil)
	for name, pk := range map[string]*ecdsa.PublicKey{"nil": nil, "no coordinates": {}} {
		if err := Verify(pk, nil, p); !errors.Is(err, ErrBadKey) {
			t.Errorf("Verify with %s key: %v", name, err)
		}
		if _, err := HashToCurve(pk, nil); !errors.Is(err, ErrBadKey) {
			t.Errorf("HashToCurve with %s key: %v", name, err)
		}
	}
	for name, k := range map[string]*ecdsa.PrivateKey{"nil": nil, "no curve": {}} {
		if _, err := Prove(k, nil); !errors.Is(err, ErrBadKey) {
			t.Errorf("Prove with %s key: %v", name, err)
		}
		if _, err := OutputOf(k, nil); !errors.Is(err, ErrBadKey) {
			t.Errorf("OutputOf with %s key: %v", name, err)
		}
	}
}

func TestUnmarshalLength(t *testing.T) {
	var p Proof
	for _, n := range []int{0, ProofLen - 1, ProofLen + 1} {
		if err := p.UnmarshalBinary(make([]byte, n)); !errors.Is(err, ErrMalformed) {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
}

// FuzzVerify: decoding and verifying arbitrary bytes never panics, and a proof that verifies
// has the key's one output (uniqueness under attack).
func FuzzVerify(f *testing.F) {
	sk := testKey(f, "fuzz")
	alpha := []byte("fuzz alpha")
	valid := mustProve(f, sk, alpha)
	b, _ := valid.MarshalBinary()
	f.Add(b, alpha)
	for _, c := range tampers(f, sk, testKey(f, "fuzz other"), crypto.Keccak256(alpha)) {
		p, pk, a := mustProve(f, sk, crypto.Keccak256(alpha)), pubPoint(sk), crypto.Keccak256(alpha)
		c.change(&p, &pk, &a)
		if pk == pubPoint(sk) {
			bb, _ := p.MarshalBinary()
			f.Add(bb, a)
		}
	}
	f.Add(make([]byte, ProofLen), []byte{})
	f.Add([]byte{1, 2, 3}, []byte{4})
	f.Fuzz(func(t *testing.T, b []byte, alpha []byte) {
		var p Proof
		if err := p.UnmarshalBinary(b); err != nil {
			return
		}
		if err := Verify(&sk.PublicKey, alpha, p); err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrWitness) && !errors.Is(err, ErrChallenge) && !errors.Is(err, ErrUnprovable) {
				t.Fatalf("Verify: unexpected error %v", err)
			}
			return
		}
		beta, err := OutputOf(sk, alpha)
		if err != nil || beta != p.Output() {
			t.Fatalf("a proof verified with output %x, the key's is %x (%v)", p.Output(), beta, err)
		}
	})
}

// benchInputs are 64 ticket-hash-like inputs: the benchmarks cycle through them, so their
// hash to curve needs the mean number of counters (2 square roots), not one input's.
func benchInputs() [][]byte {
	in := make([][]byte, 64)
	for i := range in {
		in[i] = crypto.Keccak256([]byte(fmt.Sprint("bench ", i)))
	}
	return in
}

func BenchmarkProve(b *testing.B) {
	sk, in := testKey(b, "bench"), benchInputs()
	i := 0
	for b.Loop() {
		if _, err := Prove(sk, in[i%len(in)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkOutputOf(b *testing.B) {
	sk, in := testKey(b, "bench"), benchInputs()
	i := 0
	for b.Loop() {
		if _, err := OutputOf(sk, in[i%len(in)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkVerify(b *testing.B) {
	sk, in := testKey(b, "bench"), benchInputs()
	proofs := make([]Proof, len(in))
	for i, a := range in {
		proofs[i] = mustProve(b, sk, a)
	}
	i := 0
	for b.Loop() {
		if err := Verify(&sk.PublicKey, in[i%len(in)], proofs[i%len(in)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkHashToCurve(b *testing.B) {
	sk, in := testKey(b, "bench"), benchInputs()
	i := 0
	for b.Loop() {
		if _, err := HashToCurve(&sk.PublicKey, in[i%len(in)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
