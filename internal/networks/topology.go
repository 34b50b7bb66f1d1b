package networks

import (
	"fmt"
	"math/big"

	"github.com/relayd/relayd/internal/token"
	"github.com/relayd/relayd/internal/topology"
)

// Bounds of a network's layered topology.
const (
	// MinLayers and MaxLayers bound Topology.Layers: a path crosses one relayer per layer, and a
	// packet has at most 4 hops (3 relayers and the recipient; path.MaxRelayers).
	MinLayers, MaxLayers = 2, 3
	// MaxLayerWidth bounds Topology.Width.
	MaxLayerWidth = 4096
	// MaxEpochBlocks bounds Topology.EpochBlocks (about a month at 1 s a block).
	MaxEpochBlocks = 1 << 22
	// DefaultRelayerCoverRate is Topology.RelayerCoverRate when a networks file leaves it out:
	// at 20 simulated nodes it keeps most of what 10 a second gives a quiet network (72 % of the
	// maximum entropy against 75 %, 62 % without) and costs nothing by day (93.7 % against 93.9 %;
	// 10 a second: 89.2 %), PRIVACY.md "Relayers' own loops". MaxRelayerCoverRate bounds it (the
	// coverRate setting's bound).
	DefaultRelayerCoverRate, MaxRelayerCoverRate = 1, 100
)

// Topology is a network's layered topology (issue 30, docs/NETWORK.md "The layered topology"):
// every EpochBlocks blocks, Layers layers of at most Width relayers are drawn among the announced
// nodes whose stake is at least MinStake. Every node of the network must read the same values, so
// they are the network's, not a node's setting. A Network without one routes freely.
type Topology struct {
	// Layers is the number of layers a path crosses: MinLayers to MaxLayers.
	Layers int
	// Width is the most relayers a layer holds: 1 to MaxLayerWidth.
	Width int
	// EpochBlocks is an epoch's length in blocks, at least 1: each epoch draws the layers again,
	// and each draw makes a relayer open channels to its next layer (about Width transactions),
	// so epochs of hours suit a public chain.
	EpochBlocks uint64
	// MinStake is the least stake of a candidate, in the token's smallest unit; nil or 0: every
	// announced node holds one lottery entry.
	MinStake *big.Int
	// RelayerCoverRate is the loops a second each relayer of the epoch's layers sends through the
	// layers back to itself, on top of its coverRate setting (0 to MaxRelayerCoverRate; a file
	// that leaves it out: DefaultRelayerCoverRate). They keep a relayer's pool from falling to
	// what its senders send when they are quiet (docs/NETWORK.md "Relayers' own loops").
	RelayerCoverRate float64
}

// Epochs is t's EpochBlocks, 0 on a nil Topology (free routes: no epochs).
func (t *Topology) Epochs() uint64 {
	if t == nil {
		return 0
	}
	return t.EpochBlocks
}

// Params is the topology's drawing parameters (topology.Draw).
func (t Topology) Params() topology.Params {
	return topology.Params{Layers: t.Layers, Width: t.Width, MinStake: t.MinStake}
}

// topologyJSON is Topology in a networks file; minStake is in whole tokens ("10", "0.5").
type topologyJSON struct {
	Layers      int    `json:"layers"`
	Width       int    `json:"width"`
	EpochBlocks uint64 `json:"epochBlocks"`
	MinStake    string `json:"minStake,omitempty"`
	// RelayerCoverRate is written only when it is not DefaultRelayerCoverRate (so that the
	// binaries that came before it read the file); nil when read: DefaultRelayerCoverRate.
	RelayerCoverRate *float64 `json:"relayerCoverRate,omitempty"`
}

func (tj *topologyJSON) topology() (*Topology, string, string) {
	if tj == nil {
		return nil, "", ""
	}
	t := &Topology{Layers: tj.Layers, Width: tj.Width, EpochBlocks: tj.EpochBlocks, RelayerCoverRate: DefaultRelayerCoverRate}
	if tj.RelayerCoverRate != nil {
		t.RelayerCoverRate = *tj.RelayerCoverRate
	}
	if tj.MinStake != "" {
		a, err := token.Parse(tj.MinStake)
		if err != nil {
			return nil, "topology.minStake", fmt.Sprintf("%q is not an amount of tokens such as \"10\" or \"0.5\"", tj.MinStake)
		}
		t.MinStake = a.Big()
	}
	return t, "", ""
}

func (t *Topology) json() *topologyJSON {
	if t == nil {
		return nil
	}
	tj := &topologyJSON{Layers: t.Layers, Width: t.Width, EpochBlocks: t.EpochBlocks}
	if rate := t.RelayerCoverRate; rate != DefaultRelayerCoverRate {
		tj.RelayerCoverRate = &rate
	}
	if t.MinStake != nil && t.MinStake.Sign() > 0 {
		tj.MinStake = token.Of(t.MinStake).String()
	}
	return tj
}

// validate returns the field and what is wrong with t, or "".
func (t *Topology) validate() (field, msg string) {
	switch {
	case t == nil:
		return "", ""
	case t.Layers < MinLayers || t.Layers > MaxLayers:
		return "topology.layers", fmt.Sprintf("is %d; a path crosses %d to %d layers", t.Layers, MinLayers, MaxLayers)
	case t.Width < 1 || t.Width > MaxLayerWidth:
		return "topology.width", fmt.Sprintf("is %d; want 1 to %d relayers a layer", t.Width, MaxLayerWidth)
	case t.EpochBlocks < 1 || t.EpochBlocks > MaxEpochBlocks:
		return "topology.epochBlocks", fmt.Sprintf("is %d; want 1 to %d blocks", t.EpochBlocks, MaxEpochBlocks)
	case !(t.RelayerCoverRate >= 0 && t.RelayerCoverRate <= MaxRelayerCoverRate): // also refuses NaN
		return "topology.relayerCoverRate", fmt.Sprintf("is %g; want 0 to %d loops a second", t.RelayerCoverRate, MaxRelayerCoverRate)
	case t.MinStake != nil && t.MinStake.Sign() < 0:
		return "topology.minStake", "is negative"
	case t.MinStake != nil && !roundTrips(t.MinStake):
		return "topology.minStake", "is too large to write as an amount of tokens"
	}
	return "", ""
}

// roundTrips reports whether v written in tokens reads back as v.
func roundTrips(v *big.Int) bool {
	a, err := token.Parse(token.Of(v).String())
	return err == nil && a.Big().Cmp(v) == 0
}
