package topology

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func cands(n int, stake int64) []Candidate {
	out := make([]Candidate, n)
	for i := range out {
		out[i] = Candidate{ID: fmt.Sprintf("peer-%04d", i), Stake: big.NewInt(stake), Announced: true}
	}
	return out
}

// TestSameOnEveryNode: nodes that list the same candidates in different orders (and with a
// duplicate) draw the same layers.
func TestSameOnEveryNode(t *testing.T) {
	p := Params{Layers: 3, Width: 10, MinStake: big.NewInt(100)}
	cs := cands(200, 1000)
	seed := Seed(7, []byte("block hash"))
	want, err := Draw(p, 7, seed, cs)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		other := append([]Candidate(nil), cs...)
		r.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
		other = append(other, Candidate{ID: other[0].ID, Stake: big.NewInt(1), Announced: true}) // a stale duplicate
		got, err := Draw(p, 7, seed, other)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Layers(), want.Layers()) {
			t.Fatalf("trial %d: another order drew other layers", trial)
		}
	}
}

func TestBounds(t *testing.T) {
	tests := []struct {
		name             string
		n, layers, width int
		wantWidth        int
		wantErr          error
	}{
		{"full", 200, 3, 10, 10, nil},
		{"few candidates narrow the layers", 20, 3, 10, 6, nil},
		{"exactly one each", 3, 3, 10, 1, nil},
		{"too few", 2, 3, 10, 0, ErrTooFewCandidates},
		{"no layer", 10, 0, 10, 0, ErrBadParams},
		{"no width", 10, 3, 0, 0, ErrBadParams},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			top, err := Draw(Params{Layers: tc.layers, Width: tc.width}, 1, Seed(1, nil), cands(tc.n, 1))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			seen := map[string]bool{}
			for k, l := range top.Layers() {
				if len(l) != tc.wantWidth {
					t.Errorf("layer %d has %d relayers, want %d", k, len(l), tc.wantWidth)
				}
				for _, id := range l {
					if seen[id] {
						t.Errorf("%s in two layers", id)
					}
					seen[id] = true
					if got, ok := top.LayerOf(id); !ok || got != k {
						t.Errorf("LayerOf(%s) = %d, %v; want %d", id, got, ok, k)
					}
				}
			}
			if top.Len() != tc.layers || top.Width() != tc.wantWidth {
				t.Errorf("Len %d Width %d", top.Len(), top.Width())
			}
		})
	}
}

// TestRedrawEachEpoch: another epoch (or another beacon) draws other layers; the same one the
// same.
func TestRedrawEachEpoch(t *testing.T) {
	p := Params{Layers: 3, Width: 10}
	cs := cands(300, 1)
	a, _ := Draw(p, 1, Seed(1, []byte("h1")), cs)
	again, _ := Draw(p, 1, Seed(1, []byte("h1")), cs)
	if !reflect.DeepEqual(a.Layers(), again.Layers()) {
		t.Fatal("the same epoch drew other layers")
	}
	for _, s := range [][32]byte{Seed(2, []byte("h1")), Seed(1, []byte("h2"))} {
		b, _ := Draw(p, 2, s, cs)
		same := 0
		for _, l := range b.Layers() {
			for _, id := range l {
				if k, ok := a.LayerOf(id); ok && k == mustLayer(t, b, id) {
					same++
				}
			}
		}
		// 30 of 300 are drawn: about 30 × 10 % × 1/3 = 1 keeps its layer by chance.
		if same > 8 {
			t.Errorf("%d of 30 relayers kept their layer after a re-draw", same)
		}
	}
}

func mustLayer(t *testing.T, top *Topology, id string) int {
	t.Helper()
	k, ok := top.LayerOf(id)
	if !ok {
		t.Fatalf("%s not in a layer", id)
	}
	return k
}

// TestEligibility: candidates not announced or below the threshold never relay.
func TestEligibility(t *testing.T) {
	cs := cands(100, 1000)
	for i := range cs {
		switch i % 4 {
		case 1:
			cs[i].Stake = big.NewInt(99)
		case 2:
			cs[i].Announced = false
		case 3:
			cs[i].Stake = nil
		}
	}
	top, err := Draw(Params{Layers: 3, Width: 100, MinStake: big.NewInt(100)}, 3, Seed(3, nil), cs)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range top.Layers() {
		for _, id := range l {
			var i int
			fmt.Sscanf(id, "peer-%d", &i)
			if i%4 != 0 {
				t.Errorf("%s relays but is not eligible", id)
			}
			n++
		}
	}
	if n != 24 { // 25 eligible, 3 layers of 8
		t.Errorf("%d relayers, want 24", n)
	}
}

// TestStakeWeighted: a stake split over many identities wins about as many seats as the same
// stake in one identity per MinStake would, and a large stake in one identity wins at most one
// seat: seats follow stake, not identities. Here an attacker holds 10 % of the stake as 100
// identities of the minimum stake against 900 honest ones; over 200 epochs its share of the
// seats stays near 10 %.
func TestStakeWeighted(t *testing.T) {
	var cs []Candidate
	for i := range 900 {
		cs = append(cs, Candidate{ID: fmt.Sprintf("honest-%d", i), Stake: big.NewInt(100), Announced: true})
	}
	for i := range 100 {
		cs = append(cs, Candidate{ID: fmt.Sprintf("sybil-%d", i), Stake: big.NewInt(100), Announced: true})
	}
	whale := Candidate{ID: "whale", Stake: big.NewInt(100 * 64), Announced: true}
	cs = append(cs, whale)
	p := Params{Layers: 3, Width: 10, MinStake: big.NewInt(100)}
	sybil, whaleSeats, seats := 0, 0, 0
	for e := range uint64(200) {
		top, err := Draw(p, e, Seed(e, nil), cs)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range top.Layers() {
			for _, id := range l {
				seats++
				switch {
				case id == "whale":
					whaleSeats++
				case len(id) > 5 && id[:5] == "sybil":
					sybil++
				}
			}
		}
	}
	share := float64(sybil) / float64(seats)
	// 100 of 1,064 entries: 9.4 % of the seats expected; 6,000 seats give ±0.4 points.
	if share < 0.075 || share > 0.115 {
		t.Errorf("sybils hold %.1f %% of the seats, want about 9.4 %%", 100*share)
	}
	// The whale's 64 entries make it drawn almost every epoch (one seat each), never more.
	if whaleSeats < 150 || whaleSeats > 200 {
		t.Errorf("the whale sat %d times in 200 epochs", whaleSeats)
	}
}

func TestPathConstraint(t *testing.T) {
	top, err := Draw(Params{Layers: 3, Width: 4}, 1, Seed(1, nil), cands(50, 1))
	if err != nil {
		t.Fatal(err)
	}
	l := top.Layers()
	if !top.Valid([]string{l[0][1], l[1][2], l[2][0]}) {
		t.Error("a path through the layers in order is not valid")
	}
	for _, bad := range [][]string{
		{l[1][0], l[0][0], l[2][0]}, // out of order
		{l[0][0], l[1][0]},          // a layer short
		{l[0][0], l[1][0], l[2][0], l[2][1]},
		{l[0][0], "outsider", l[2][0]},
	} {
		if top.Valid(bad) {
			t.Errorf("%v is valid", bad)
		}
	}
	if got := top.Next(l[0][0]); !reflect.DeepEqual(got, l[1]) {
		t.Errorf("Next of a first-layer relayer = %v, want layer 2", got)
	}
	if top.Next(l[2][0]) != nil || top.Next("outsider") != nil {
		t.Error("the last layer or an outsider forwards to a layer")
	}
}

func TestEpochs(t *testing.T) {
	if EpochOfBlock(1439, 720) != 1 || EpochOfBlock(1440, 720) != 2 || EpochOfBlock(5, 0) != 5 {
		t.Error("EpochOfBlock")
	}
	g := time.Unix(1000, 0)
	if EpochAt(g.Add(-time.Second), g, time.Hour) != 0 || EpochAt(g.Add(90*time.Minute), g, time.Hour) != 1 {
		t.Error("EpochAt")
	}
	if Seed(1, nil) == Seed(2, nil) || Seed(1, []byte("a")) == Seed(1, []byte("b")) {
		t.Error("seeds of other epochs or beacons collide")
	}
}
