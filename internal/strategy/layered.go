package strategy

import (
	"slices"

	"github.com/ethereum/go-ethereum/common"
)

// Layered is a node's place in its network's layered topology for one epoch (issue 30,
// docs/NETWORK.md "The layered topology"), as the channel strategy uses it: the peers its
// channels go to. Every node keeps channels to the first layer's relayers, which its own paths
// start with; a relayer of layer k also keeps one to every relayer of layer k+1, which it forwards
// to; the last layer's relayers keep none onwards (the ticket to a recipient is worth 0 and needs
// no channel). LayerPeers computes it from the layers.
type Layered struct {
	// Peers are the relayers the node keeps channels to this epoch; never the node itself.
	Peers []common.Address
	// Relayer reports that the node relays in a layer this epoch: it keeps a channel to each of
	// Peers (MaxChannels is their number) and opens them all in one tick. A node outside the
	// layers keeps the policy's MaxChannels, among Peers.
	Relayer bool
	// Keep are peers whose open channels are kept though they are not in Peers, none opened to
	// them: the previous epoch's peers during a grace after an epoch change, so that packets on
	// paths drawn just before it still find their channels. Channels to any other peer outside
	// Peers are closed ("left the layers").
	Keep []common.Address
	// Pending means the epoch's layers are not known yet (the node has not drawn them): the
	// strategy opens and closes nothing, and only tops up.
	Pending bool
}

// LayerPeers returns self's Layered when layers[k] lists layer k's relayers (layer 0 first):
// the first layer's relayers other than self, and for a relayer of layer k < len(layers)−1 the
// relayers of layer k+1.
func LayerPeers(layers [][]common.Address, self common.Address) Layered {
	if len(layers) == 0 {
		return Layered{}
	}
	l := Layered{Peers: slices.DeleteFunc(slices.Clone(layers[0]), func(a common.Address) bool { return a == self })}
	for k, layer := range layers {
		if slices.Contains(layer, self) {
			l.Relayer = true
			if k+1 < len(layers) {
				l.Peers = append(l.Peers, layers[k+1]...)
			}
			break
		}
	}
	return l
}

// set returns the addresses as a set (nil for none).
func set(as []common.Address) map[common.Address]bool {
	if len(as) == 0 {
		return nil
	}
	m := make(map[common.Address]bool, len(as))
	for _, a := range as {
		m[a] = true
	}
	return m
}
