package session

import (
	"errors"
	"testing"
	"time"
)

func TestConfig(t *testing.T) {
	for name, c := range map[string]Config{
		"window too large": {Window: 1 << 16},
		"negative window":  {Window: -1},
		"negative limit":   {Backlog: -1},
		"rto bounds":       {MinRTO: 2 * time.Second, MaxRTO: time.Second},
		"negative delay":   {AckDelay: -1},
		"ack delay ≥ rto":  {AckDelay: time.Second, MinRTO: time.Second},
	} {
		if _, err := NewMux(c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	m, err := NewMux(Config{MinRTO: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if m.cfg.InitialRTO != 5*time.Second || m.cfg.Window != 128 || m.cfg.MaxRTO != time.Minute {
		t.Fatalf("defaults: %+v", m.cfg)
	}
}

func TestPickRanges(t *testing.T) {
	rs := []Range{{2, 3}, {5, 7}, {9, 10}, {12, 20}, {22, 23}}
	for _, tc := range []struct {
		n      int
		newest uint32
		want   []Range
	}{
		{3, 22, []Range{{2, 3}, {5, 7}, {22, 23}}}, // the newest arrival's range, then the lowest
		{3, 6, []Range{{2, 3}, {5, 7}, {9, 10}}},
		{2, 15, []Range{{2, 3}, {12, 20}}},
		{0, 15, nil},
		{9, 15, rs},
	} {
		got := pickRanges(rs, tc.n, tc.newest)
		if len(got) != len(tc.want) {
			t.Fatalf("pick %d with %d newest: %v, want %v", tc.n, tc.newest, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("pick %d with %d newest: %v, want %v", tc.n, tc.newest, got, tc.want)
			}
		}
		f := Frame{Flags: FlagACK, Ack: 1, SACK: got}
		if _, err := f.Encode(); err != nil && len(got) <= MaxSACK {
			t.Fatalf("picked ranges do not encode: %v", err)
		}
	}
}
