package sim

import (
	"testing"
	"time"
)

// TestLayeredPathsCrossTheLayers: in a layered network every path crosses one relayer of each
// layer in order (topology.Valid), nodes outside the layers relay nothing, and the messages
// arrive.
func TestLayeredPathsCrossTheLayers(t *testing.T) {
	s, err := New(small(t, func(c *Config) {
		c.Nodes, c.Layers, c.LayerWidth, c.LayerCoverRate, c.CoverRate = 40, 3, 4, 2, 1
		c.MaxChannels, c.Relayers = 4, 3
	}))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	if s.top == nil || r.LayerRelayers != 12 {
		t.Fatalf("no layers drawn (%d relayers)", r.LayerRelayers)
	}
	for range 200 {
		from, to := s.rng.IntN(len(s.nodes)), s.rng.IntN(len(s.nodes))
		hops, err := s.pickPath(from, to)
		if err != nil {
			t.Fatalf("no path %d -> %d: %v", from, to, err)
		}
		ids := make([]string, len(hops)-1)
		for k, h := range hops[:len(hops)-1] {
			ids[k] = string(s.nodes[h].addr[:])
		}
		if !s.top.Valid(ids) || hops[len(hops)-1] != to {
			t.Fatalf("path %v from %d to %d does not cross the layers in order", hops, from, to)
		}
	}
	for i := range s.nodes {
		if s.layerOf[i] < 0 && s.earned[i] != 0 {
			t.Errorf("node %d is outside the layers but relayed %d packets", i, s.earned[i])
		}
	}
	if r.Delivery < 0.99 || r.MeanHops != 4 || r.LayerLoops == 0 || r.CoverReturned == 0 {
		t.Fatalf("delivery %.3f, hops %.2f, %d mix loops, %d loops back", r.Delivery, r.MeanHops, r.LayerLoops, r.CoverReturned)
	}
}

// TestLayeredIsDeterministic: the same Config gives the same Report.
func TestLayeredIsDeterministic(t *testing.T) {
	cfg := small(t, func(c *Config) { c.Nodes, c.Layers, c.LayerWidth, c.Duration = 30, 3, 3, 5*time.Second })
	a, b := run(t, cfg), run(t, cfg)
	if a.Delivered != b.Delivered || a.LatencyP50 != b.LatencyP50 || a.RelayerEarnsPerDay != b.RelayerEarnsPerDay {
		t.Fatalf("two runs differ: %+v, %+v", a, b)
	}
}
