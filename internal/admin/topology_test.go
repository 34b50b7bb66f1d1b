package admin

import (
	"testing"

	"github.com/relayd/relayd/internal/layers"
)

type fakeLayers struct {
	st layers.Status
	ok bool
}

func (f fakeLayers) Status() (layers.Status, bool) { return f.st, f.ok }

// TestTopologyLine: info's last line says free routes, layers not drawn yet, or the node's layer
// in the epoch.
func TestTopologyLine(t *testing.T) {
	shape := layers.Status{Layers: 3, Width: 4, EpochBlocks: 100}
	drawn := shape
	drawn.Drawn, drawn.Epoch, drawn.NextEpochBlock, drawn.Relayers, drawn.Layer = true, 7, 800, 12, 2
	outside := drawn
	outside.Layer, outside.Grace = 0, true
	for _, tc := range []struct {
		l    Layers
		want string
	}{
		{nil, "free routes"},
		{fakeLayers{}, "free routes"},
		{fakeLayers{shape, true}, "3 layers of up to 4 relayers, epochs of 100 blocks; not drawn yet (no path until then)"},
		{fakeLayers{drawn, true}, "3 layers of up to 4 relayers, epochs of 100 blocks; epoch 7 (12 relayers drawn, next draw at block 800): this node relays in layer 2"},
		{fakeLayers{outside, true}, "3 layers of up to 4 relayers, epochs of 100 blocks; epoch 7 (12 relayers drawn, next draw at block 800): this node relays in none, the previous epoch's channels kept for a grace"},
	} {
		if got := topologyLine(tc.l); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
