// Package path selects a packet's route over a snapshot of the channel graph (docs/DESIGN.md
// §3.4): the relayers between a sender and a recipient such that every consecutive pair has an
// open, sufficiently funded payment channel, preferring peers with a good heartbeat quality and
// varying the choice at random, weighted by channel balance. In a layered network (issue 30)
// SelectLayered also requires the k-th relayer to relay in layer k (Layers), whoever decides the
// layers: the package knows addresses only, not how layers are drawn.
//
// The package owns only the search. It is pure: no I/O, no clock, no globals; the graph and the
// random source come in as arguments. It must not import other relayd packages: the node turns
// its chain index and peer list into a Graph.
package path
