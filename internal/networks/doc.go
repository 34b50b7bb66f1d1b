// Package networks describes relay networks: which chain a network runs on and where its
// contracts are (chain id, token, channels contract, the block to index from, the minimum win
// probability and closure period, and its layered topology if it has one), so that a node joins
// one by name. A networks file is JSON (docs/NETWORKS.md specifies it); the entries shipped in the binary (Shipped: the `local` dev
// network of `relayd cluster` and `relayd devchain`) come first, an operator's own file may
// add networks and replace shipped ones by name (Lookup). `relayd deploy` writes entries
// (Append). Verify checks a network against what the chain itself says; a node refuses to start
// when it fails.
//
// The package imports internal/chain (its read-only RPC reads and errors), internal/atomicfile
// (the file written whole or not at all), internal/tickets
// (win probabilities as operators write them), internal/token (a layered topology's minimum
// stake) and internal/topology (its parameters), go-ethereum's common types and go-multiaddr for
// the peers' addresses; never the libp2p transport, the node or a face.
package networks
