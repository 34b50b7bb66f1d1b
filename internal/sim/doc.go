// Package sim is a discrete-event simulation of a relayd network (issue 13): N nodes that
// announce themselves, open their own channels with the real channel strategy, heartbeat each
// other, go down and come back, and relay messages over paths picked by the real path selection,
// all on a simulated clock. One priority queue of events drives everything: there is no real
// time, no goroutine per node, and a run is a pure function of its Config (Seed included).
//
// What runs for real: strategy.Runner.Tick (so strategy.Decide and the Runner's rule of opening
// nothing while the announced peers differ from those of the tick before), path.Select with the
// node's fallback from 2 to 3 relayers (internal/node pickPath), tickets.AmountFor for what each
// hop's ticket takes from its channel. What is modelled: the chain (an action is mined after
// Config.ChainDelay), links (a one-way latency per node pair, drawn once), each hop's
// processing time and each relayer's mixing delay (uniform, or exponential as internal/relay draws
// it), acknowledgements (sent back by every hop once it has processed a packet), loop cover
// traffic (Config.CoverRate: packets over 2 or 3 relayers back to their node, paid like
// messages), heartbeat quality as internal/p2p computes it (0.5 at first, moved a quarter of the way to 1 on a successful ping and to 0 on a failed one, every heartbeat
// interval, by each node for each peer), the sender's "down" mark on a first hop it could not
// reach (until its next successful heartbeat), and churn as `relayd cluster --churn` does it. With Config.AutoFund and AutoRedeem (the node's
// autoFund and autoRedeem) tokens circulate as they do between nodes: a relayer's tickets are
// redeemed into its balance, and the strategy tops its channels up from it.
// What it leaves out: bandwidth, CPU, queues at relayers, the chain's real block times and reorgs.
//
// The traffic is round robin over the (sender, recipient) pairs at Config.Rate, or patient
// senders (Config.Fixed: each writes to one fixed correspondent in on/off bursts, as `relayctl
// bench --correspondents fixed` does). Beside today's sending (a message leaves when it is
// sent), the traffic shapes of docs/TRAFFIC.md are modelled as options: a constant-rate
// stream per node (Config.SendRate: a message takes the next tick of a Poisson process, whose
// other ticks send drop cover, or loops with Config.StreamLoops; the queueing delay is
// measured), drop cover outside a stream (Config.DropRate: packets over a path, paid like a
// message's, to a node drawn uniformly, which drops them), and the recipients' re-emissions
// (Config.Reemit: a drop packet per message received, after an exponential delay); loops keep
// their own rate. RunShape runs one Shape over several seeds and pools what the patient
// observer learned (`relaysim --privacy --shapes`).
//
// With Config.Observe the run records what a global passive observer of the links sees (each
// packet's and acknowledgement's time, ends and size: FrameSize and AckSize) and the ground
// truth of the messages, and scores internal/observe's attacks on them (Report.Privacy): the
// per-message trace and the patient observer's counting attacks (observe.LongTerm).
//
// With Config.Layers the network is a layered one (issue 30): the epoch's layers are drawn by
// internal/topology once the nodes announced themselves, the channel strategy opens channels from
// every node to the first layer and from each layer to the next, paths cross one relayer of each
// layer in order (the selection is the sim's own, as path.Select weighs hops; the last hop into
// the recipient needs no channel), nodes outside the layers relay nothing, and the relayers send
// their own loops (Config.LayerCoverRate). The Report says what a relayer earns and what every
// node spends and sends, per day. With Config.Epoch the layers are re-drawn while the traffic
// runs, the previous epoch's layers and channels kept for Config.EpochOverlap, and the Report
// says what a re-draw costs (Report.Redraw: channels opened and closed, tokens, messages
// without a path, the observer's entropy in the overlaps and outside).
//
// It reaches 10,000 nodes: heartbeat quality is computed when asked from each node's heartbeat
// schedule and each peer's downs and restarts (Sim.quality) instead of a float per pair of nodes,
// a node's strategy tick is skipped when strategy.Decide would do nothing (Sim.idle), and each
// node keeps the channels into it.
//
// The package owns only the simulation and its Report. It may import internal/strategy,
// internal/path, internal/tickets, internal/token, internal/channels, internal/observe,
// internal/topology, the standard library,
// go-ethereum's common and holiman/uint256 (and libp2p peer IDs if path needs them); nothing
// that does I/O.
package sim
