package tickets

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strings"
	"testing"
)

func TestPaddedAmount(t *testing.T) {
	for _, tc := range []struct {
		ahead, pad int
		want       string
	}{
		{2, 0, "20000000000000000"},
		{2, 3, "50000000000000000"},
		{0, PadMax, fmt.Sprint(PadMax, "0000000000000000")},
		{3, PadMax, fmt.Sprint(3+PadMax, "0000000000000000")},
	} {
		if got := PaddedAmount(tc.ahead, tc.pad); got.Dec() != tc.want {
			t.Errorf("PaddedAmount(%d, %d) = %s, want %s", tc.ahead, tc.pad, got.Dec(), tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("PaddedAmount(2, -1) did not panic")
		}
	}()
	PaddedAmount(2, -1)
}

// TestDrawPadIsExactlyUniform feeds DrawPad every byte value once: each padding must come out
// equally often (the bytes that would bias it are skipped), and never above PadMax.
func TestDrawPadIsExactlyUniform(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	r := bytes.NewReader(all)
	counts := make([]int, PadMax+1)
	for {
		pad, err := DrawPad(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || pad < 0 || pad > PadMax {
			t.Fatalf("DrawPad = %d, %v", pad, err)
		}
		counts[pad]++
	}
	for pad, c := range counts {
		if c != counts[0] || c == 0 {
			t.Fatalf("over all 256 bytes the paddings came out %v times: not uniform (pad %d)", counts, pad)
		}
	}
}

// TestDrawPadFromCryptoRand: 80,000 draws from crypto/rand pass a chi-square test of
// uniformity (7 degrees of freedom at PadMax 7; the bound is far in the tail, p < 10^-6).
func TestDrawPadFromCryptoRand(t *testing.T) {
	const draws = 80_000
	counts := make([]float64, PadMax+1)
	for range draws {
		pad, err := DrawPad(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		counts[pad]++
	}
	want := float64(draws) / float64(PadMax+1)
	var chi2 float64
	for _, c := range counts {
		chi2 += (c - want) * (c - want) / want
	}
	// The chi-square quantile at 1 - 10^-6 for k degrees of freedom is below 5k + 20 for k ≤ 10.
	if bound := float64(5*PadMax + 20); chi2 > bound {
		t.Fatalf("chi-square %.1f over %v (bound %.0f): not uniform", chi2, counts, bound)
	}
}

func TestDrawPadFailsWithItsReader(t *testing.T) {
	if _, err := DrawPad(bytes.NewReader(nil)); !errors.Is(err, io.EOF) {
		t.Fatalf("DrawPad from an empty reader: %v", err)
	}
}

// leak is what a relayer learns about its position from the amount of its incoming ticket, on
// a path of n relayers whose sender pads by 0..padMax uniformly, for a relayer that knows n
// (the worst case) and is at each position with probability 1/n. Position i of n receives
// (n - i + 1 + j) × 0.01 for pad j.
type leak struct {
	certainFirst, certainLast *big.Rat // P(the amount is possible only at its position | position)
	posteriors                []*big.Rat
	bits                      float64  // mutual information between position and amount
	guessFirst                *big.Rat // P(the best guess of "am I first?" from the amount is right)
	meanExtra                 *big.Rat // the sender's mean padding, in tokens
}

func analyse(n, padMax int) leak {
	joint := map[[2]int]*big.Rat{} // (position, amount in units) → probability
	each := big.NewRat(1, int64(n*(padMax+1)))
	for i := 1; i <= n; i++ {
		for j := 0; j <= padMax; j++ {
			joint[[2]int{i, n - i + 1 + j}] = each // each (position, amount) pair is hit once
		}
	}
	positions := func(a int) []int {
		var ps []int
		for i := 1; i <= n; i++ {
			if joint[[2]int{i, a}] != nil {
				ps = append(ps, i)
			}
		}
		return ps
	}
	l := leak{certainFirst: new(big.Rat), certainLast: new(big.Rat), guessFirst: new(big.Rat),
		meanExtra: big.NewRat(int64(padMax), 200)}
	perPosition := big.NewRat(1, int64(padMax+1))
	seen := map[string]bool{}
	hPosGivenAmount := 0.0
	for a := 1; a <= n+padMax; a++ {
		ps := positions(a)
		if len(ps) == 1 && ps[0] == 1 {
			l.certainFirst.Add(l.certainFirst, perPosition)
		}
		if len(ps) == 1 && ps[0] == n {
			l.certainLast.Add(l.certainLast, perPosition)
		}
		pa := new(big.Rat).Mul(each, big.NewRat(int64(len(ps)), 1))
		first := new(big.Rat)
		if joint[[2]int{1, a}] != nil {
			first.Set(each)
			post := new(big.Rat).Quo(first, pa)
			if s := post.RatString(); !seen[s] {
				seen[s] = true
				l.posteriors = append(l.posteriors, post)
			}
		}
		notFirst := new(big.Rat).Sub(pa, first)
		if first.Cmp(notFirst) > 0 {
			l.guessFirst.Add(l.guessFirst, first)
		} else {
			l.guessFirst.Add(l.guessFirst, notFirst)
		}
		p, _ := pa.Float64()
		hPosGivenAmount += p * math.Log2(float64(len(ps))) // the possible positions are equally likely
	}
	l.bits = math.Log2(float64(n)) - hPosGivenAmount
	return l
}

// row is the line of the table in docs/PROTOCOL.md §4.5 for n relayers and padMax.
func (l leak) row(n, padMax int) string {
	var uncertain []string
	for _, p := range l.posteriors {
		if p.Cmp(big.NewRat(1, 1)) != 0 {
			uncertain = append(uncertain, p.RatString())
		}
	}
	otherwise := "—"
	if len(uncertain) > 0 {
		otherwise = strings.Join(uncertain, " or ")
	}
	guess, _ := l.guessFirst.Float64()
	return fmt.Sprintf("| %d | %d | %s | %s | %s | %.3f | %.1f %% | %s |", n, padMax, l.certainFirst.RatString(),
		l.certainLast.RatString(), otherwise, l.bits, 100*guess, l.meanExtra.FloatString(3))
}

// TestPositionLeakTable recomputes, exactly, the table of what a relayer learns from its
// ticket's amount and checks that docs/PROTOCOL.md shows it: every row for 2 and 3 relayers and
// PadMax 0 to 8, and the chosen PadMax.
func TestPositionLeakTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	var missing []string
	for _, n := range []int{2, 3} {
		for p := 0; p <= 8; p++ {
			if row := analyse(n, p).row(n, p); !strings.Contains(text, row+"\n") {
				missing = append(missing, row)
			}
		}
	}
	if len(missing) > 0 {
		t.Fatalf("docs/PROTOCOL.md §4.5 lacks these rows (or shows others):\n%s", strings.Join(missing, "\n"))
	}
	if want := fmt.Sprintf("`tickets.PadMax` = %d", PadMax); !strings.Contains(text, want) {
		t.Fatalf("docs/PROTOCOL.md does not say %s", want)
	}
}

// TestPositionLeakClosedForm checks the analysis against the closed forms the documentation
// states: a relayer is certain to be first (or last) with probability 1/(PadMax+1), and on 2
// relayers it learns 1/(PadMax+1) bits.
func TestPositionLeakClosedForm(t *testing.T) {
	for p := 0; p <= 8; p++ {
		for _, n := range []int{2, 3} {
			l := analyse(n, p)
			want := big.NewRat(1, int64(p+1))
			if l.certainFirst.Cmp(want) != 0 || l.certainLast.Cmp(want) != 0 {
				t.Fatalf("n %d PadMax %d: certain first %s, last %s, want %s", n, p, l.certainFirst, l.certainLast, want)
			}
		}
		if l := analyse(2, p); math.Abs(l.bits-1/float64(p+1)) > 1e-12 {
			t.Fatalf("PadMax %d: %.4f bits on 2 relayers, want %.4f", p, l.bits, 1/float64(p+1))
		}
	}
}
