package networks_test

import (
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/topology"
)

// TestTopology: a network's layered topology is read, checked field by field and written back;
// a network without one routes freely (Topology nil).
func TestTopology(t *testing.T) {
	nets, err := networks.Parse([]byte(file(`, "topology": {"layers": 3, "width": 16, "epochBlocks": 720, "minStake": "2.5"}`)), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	want := &networks.Topology{Layers: 3, Width: 16, EpochBlocks: 720, MinStake: big.NewInt(25e17), RelayerCoverRate: networks.DefaultRelayerCoverRate}
	if got := nets[0].Topology; !reflect.DeepEqual(got, want) {
		t.Fatalf("topology %+v, want %+v", got, want)
	}
	// The relayers' own loops: the default when left out, 0 when the file says so.
	for topo, rate := range map[string]float64{`{"layers": 2, "width": 4, "epochBlocks": 10, "relayerCoverRate": 0}`: 0,
		`{"layers": 2, "width": 4, "epochBlocks": 10, "relayerCoverRate": 2.5}`: 2.5} {
		nets, err := networks.Parse([]byte(file(`, "topology": `+topo)), "f.json")
		if err != nil || nets[0].Topology.RelayerCoverRate != rate {
			t.Fatalf("%s: %v, %+v; want relayerCoverRate %g", topo, err, nets, rate)
		}
	}
	if p := nets[0].Topology.Params(); !reflect.DeepEqual(p, topology.Params{Layers: 3, Width: 16, MinStake: big.NewInt(25e17)}) {
		t.Fatalf("Params %+v", p)
	}
	if nets, _ := networks.Parse([]byte(file("")), ""); nets[0].Topology != nil {
		t.Fatal("a network without a topology has one")
	}
	for _, tt := range []struct{ name, topo, field, says string }{
		{"one layer", `{"layers": 1, "width": 4, "epochBlocks": 10}`, "topology.layers", "2 to 3"},
		{"four layers", `{"layers": 4, "width": 4, "epochBlocks": 10}`, "topology.layers", "2 to 3"},
		{"no width", `{"layers": 3, "epochBlocks": 10}`, "topology.width", "1 to 4096"},
		{"no epoch", `{"layers": 3, "width": 4}`, "topology.epochBlocks", "1 to"},
		{"stake not tokens", `{"layers": 3, "width": 4, "epochBlocks": 10, "minStake": "-1"}`, "topology.minStake", "amount of tokens"},
		{"negative loops", `{"layers": 3, "width": 4, "epochBlocks": 10, "relayerCoverRate": -1}`, "topology.relayerCoverRate", "0 to 100"},
		{"too many loops", `{"layers": 3, "width": 4, "epochBlocks": 10, "relayerCoverRate": 101}`, "topology.relayerCoverRate", "0 to 100"},
		{"unknown field", `{"layers": 3, "width": 4, "epochBlocks": 10, "epoch": "1h"}`, "epoch", "not a field"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := networks.Parse([]byte(file(`, "topology": `+tt.topo)), "f.json")
			var fe *networks.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Parse: %v, want field %s saying %q", err, tt.field, tt.says)
			}
		})
	}
	// Encode writes it back; Parse reads the same.
	n := example()
	n.Topology = want
	data, err := networks.Encode([]networks.Network{n})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"minStake": "2.5"`) || strings.Contains(string(data), `relayerCoverRate`) {
		t.Fatalf("encoded:\n%s", data)
	}
	back, err := networks.Parse(data, "")
	if err != nil || !reflect.DeepEqual(back[0], n) {
		t.Fatalf("round trip: %v\n%+v\n%+v", err, back, n)
	}
	// Another rate than the default is written, and read back.
	n.Topology = &networks.Topology{Layers: 3, Width: 4, EpochBlocks: 10, RelayerCoverRate: 0}
	if data, err = networks.Encode([]networks.Network{n}); err != nil || !strings.Contains(string(data), `"relayerCoverRate": 0`) {
		t.Fatalf("encoded (%v):\n%s", err, data)
	}
	if back, err := networks.Parse(data, ""); err != nil || !reflect.DeepEqual(back[0], n) {
		t.Fatalf("round trip of rate 0: %v", err)
	}
	n.Topology = &networks.Topology{Layers: 3, Width: 4, EpochBlocks: 0}
	if _, err := networks.Encode([]networks.Network{n}); !errors.Is(err, networks.ErrBadNetwork) {
		t.Fatalf("Encode of a topology without epochs: %v", err)
	}
}
