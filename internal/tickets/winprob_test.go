package tickets

import (
	"crypto/rand"
	"testing"

	"github.com/holiman/uint256"
)

func TestWinProbRoundTrip(t *testing.T) {
	for _, s := range []string{"1", "0.5", "0.1", "0.01", "0.001", "0.0001"} {
		w, err := ParseWinProb(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatWinProb(w); got != s {
			t.Errorf("FormatWinProb(ParseWinProb(%q)) = %q", s, got)
		}
	}
	if w, _ := ParseWinProb("1"); w != MaxWinProb {
		t.Errorf("probability 1 is %d, want MaxWinProb", w)
	}
	for _, bad := range []string{"0", "-0.1", "1.5", "NaN", "x", "", "0x1p-1", "1e-2", " 0.5", "0.5 ", "+0.5", ".", "Inf"} {
		if _, err := ParseWinProb(bad); err == nil {
			t.Errorf("ParseWinProb(%q) accepted", bad)
		}
	}
}

// The face amount at probability p is the smallest whose expected value covers the value asked:
// a relayer that prices in expected value never receives less than it was promised.
func TestFaceAmountCoversValue(t *testing.T) {
	price := AmountFor(1)
	for _, s := range []string{"1", "0.5", "0.3", "0.01", "0.0007"} {
		w, _ := ParseWinProb(s)
		for n := 1; n <= 10; n++ {
			v := AmountFor(n)
			face, err := FaceAmount(&v, w)
			if err != nil {
				t.Fatal(err)
			}
			if ev := ExpectedValue(&face, w); ev.Lt(&v) {
				t.Fatalf("p=%s: expected value %s of face %s is below %s", s, ev.Dec(), face.Dec(), v.Dec())
			}
			var less uint256.Int
			less.SubUint64(&face, 1)
			if ev := ExpectedValue(&less, w); !ev.Lt(&v) {
				t.Fatalf("p=%s: face %s is not the smallest covering %s", s, face.Dec(), v.Dec())
			}
		}
	}
	w, _ := ParseWinProb("0.01")
	face, _ := FaceAmount(&price, w)
	// 0.01 is not exactly (w+1)/2^56: the face is 1 token within a billionth.
	if want := AmountFor(100); face.Cmp(&want) < 0 || face.Cmp(uint256.NewInt(0).AddUint64(&want, 1e9)) > 0 {
		t.Errorf("face of 0.01 token at p=0.01 is %s, want 1 token within 10^9 wei", face.Dec())
	}
}

// Wins agrees with the probability: of many tickets with random responses and VRF outputs at
// p=0.25, about a quarter win (a 5-sigma band), and every ticket wins at MaxWinProb whatever its
// response and beta.
func TestWinsFrequency(t *testing.T) {
	w, _ := ParseWinProb("0.25")
	tk := Ticket{Index: 1, Epoch: 1, WinProb: w, Challenge: [20]byte{1}}
	const n = 4000
	won := 0
	var r, beta [32]byte
	for i := 0; i < n; i++ {
		rand.Read(r[:])
		rand.Read(beta[:])
		if tk.Wins(r, beta, 1337, [20]byte{2}) {
			won++
		}
	}
	// mean 1000, sd ≈ 27.4
	if won < 863 || won > 1137 {
		t.Errorf("%d of %d tickets won at p=0.25", won, n)
	}
	tk.WinProb = MaxWinProb
	if !tk.AlwaysWins() || !tk.Wins(r, beta, 1337, [20]byte{2}) || !tk.Wins(r, [32]byte{}, 1337, [20]byte{2}) {
		t.Error("a ticket with MaxWinProb lost")
	}
}

// TestWinsDependsOnBeta: the draw hashes beta with the response, so one who knows the response
// but not beta (the ticket's issuer) cannot tell the outcome. With the response fixed, each bit
// of beta changes the luck; over many betas about the probability win; and Wins is IsWinning
// over the ticket's hash.
func TestWinsDependsOnBeta(t *testing.T) {
	w, _ := ParseWinProb("0.5")
	tk := Ticket{Index: 1, Epoch: 1, WinProb: w, Challenge: [20]byte{1}}
	h := tk.Hash(1337, [20]byte{2})
	var r [32]byte
	r[31] = 7
	const n = 2000
	won := 0
	for i := 0; i < n; i++ {
		var beta [32]byte
		beta[0], beta[1] = byte(i), byte(i>>8)
		got := tk.Wins(r, beta, 1337, [20]byte{2})
		if got != IsWinning(h, r, beta, w) {
			t.Fatalf("Wins and IsWinning disagree for beta %x", beta[:2])
		}
		if got {
			won++
		}
	}
	// mean 1000, sd ≈ 22.4
	if won < 888 || won > 1112 {
		t.Errorf("with one response, %d of %d betas won at p=0.5", won, n)
	}
	if !IsWinning(h, r, [32]byte{}, MaxWinProb) {
		t.Error("IsWinning at MaxWinProb is false")
	}
}
