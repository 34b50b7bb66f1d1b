// Package topology derives the layered topology of a network (issue 30, docs/NETWORK.md "The
// layered topology"): every epoch, L layers of at most W relayers each, drawn the same way by
// every node from public data only (the announced candidates and their stake, the epoch and its
// seed), so that nodes agree on the layers without talking to each other. A path crosses one
// relayer of each layer, in order; nodes outside the layers send and receive but do not relay.
//
// The draw is hard to grind: a candidate's rank comes from SHA-256 over the epoch's seed and its
// id, which it cannot choose once the seed is known (candidates are those announced before the
// epoch starts), and it is weighted by stake (one lottery entry per MinStake held, up to
// MaxEntries), so that splitting a stake over many identities wins about as many seats as keeping
// it in one: an attacker's share of the seats follows its share of the stake, not its number of
// identities.
//
// The package is pure: no I/O, no clock, no randomness of its own, no globals. It imports no
// relayd package (only the standard library).
package topology
