package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRunReport: the last stage of a run adds up the admin connections' counts, prices the CPU
// only against two timed floors, and returns the report with an error when a connection was
// lost for good, a floor failed or the run was stopped.
func TestRunReport(t *testing.T) {
	errLost := errors.New("connection lost")
	errFloor := errors.New("no floor")
	stopped, stop := context.WithCancel(t.Context())
	stop()
	for _, c := range []struct {
		name        string
		ctx         context.Context
		floorRounds int
		floorErr    error
		lostAt      int // index of the watcher whose connection was lost for good; -1: none
		wantCost    bool
		wantErr     []string // substrings of the error; nil: no error
		wantIs      error
	}{
		{"clean", t.Context(), 1000, nil, -1, true, nil, nil},
		{"no floor asked", t.Context(), -1, nil, -1, false, nil, nil},
		{"floor failed", t.Context(), 1000, errFloor, -1, false, []string{"bench: no floor"}, errFloor},
		{"connection lost", t.Context(), 1000, nil, 1, true, []string{"bench: recipient node 4: connection lost"}, errLost},
		{"lost and no floor", t.Context(), 1000, errFloor, 0, false, []string{"recipient node 3: connection lost", "no floor"}, errLost},
		{"stopped", stopped, 1000, nil, -1, true, []string{"bench: stopped"}, context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := Env{Nodes: []Node{{Index: 1}, {Index: 2}, {Index: 3}, {Index: 4}}}
			r := newRun(Config{Env: env, Senders: []int{1}, Recipients: []int{3, 4}, Messages: 2, Size: 100,
				RunID: "0123abcd", FloorRounds: c.floorRounds})
			r.watchers = []*watcher{{node: 3}, {node: 4}}
			r.watchResults = []watchResult{{foreign: 2, reconnects: 1}, {foreign: 1}}
			if c.lostAt >= 0 {
				r.watchResults[c.lostAt].err = errLost
			}
			r.floorErr = c.floorErr

			rep, err := r.report(c.ctx)
			if rep == nil {
				t.Fatalf("no report (error %v)", err)
			}
			if rep.Foreign != 3 || rep.WSReconnects != 1 || len(rep.Nodes) != 4 || rep.NotSent != 2 {
				t.Fatalf("foreign %d reconnects %d nodes %d not sent %d", rep.Foreign, rep.WSReconnects, len(rep.Nodes), rep.NotSent)
			}
			if (rep.Cost != nil) != c.wantCost {
				t.Fatalf("cost %+v, want one: %v", rep.Cost, c.wantCost)
			}
			if c.wantErr == nil {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, c.wantIs) {
				t.Fatalf("error %v, want one matching %v", err, c.wantIs)
			}
			for _, s := range c.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q has no %q", err, s)
				}
			}
		})
	}
}
