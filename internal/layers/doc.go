// Package layers is this node's view of its network's layered topology (issue 30,
// docs/NETWORK.md "The layered topology"): when the indexer has read an epoch's first block, View
// draws that epoch's layers (topology.Draw) from what the node indexed, the accounts announced
// before the epoch as candidates with their open outgoing channels' funds as stake (Candidates),
// and the hash of the epoch's first block as beacon (topology.Seed), and hands them to the rooms
// that use them: path selection (Path: the k-th relayer in layer k) and the channel strategy
// (Strategy: which peers this node keeps channels to, the previous epoch's for a grace).
//
// Of relayd's packages it imports channels (the indexed graph), topology (the draw), path and
// strategy (their vocabulary); no I/O of its own: the block hash comes through Config.HeaderHash.
// It must not import the transport, the chain client, the node or a face.
package layers
