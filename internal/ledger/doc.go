// Package ledger is the node's settlement: payment channels as this node sees them, the tickets
// it issues and receives, what each channel owes, and the chain-facing operations that move
// money (open, close, withdraw, redeem).
//
// Tickets are probabilistic (PROTOCOL.md §4.5): a ticket is worth its face Amount only if it
// wins, which it does with the probability its WinProb field encodes, so its expected value is
// Amount × P(win) (tickets.Value). The relay pipeline prices packets in expected value; the
// Ledger turns an expected value into a face amount at this node's outgoing win probability
// (never below the network minimum the contract publishes), refuses incoming tickets below that
// minimum, drops losing tickets as soon as their proof-of-relay response is known, stores the
// winners and redeems them in batches.
//
// Channels have one representation, channels.Channel, shared with the path graph; the Ledger
// reads them through ChannelLookup (a *channels.Graph is one). Unredeemed tickets live in the
// store (internal/store), not in memory: what the Ledger keeps in memory per channel is a sum,
// the pending (unacknowledged) tickets and index bookkeeping.
//
// Errors are this package's sentinels (errors.go). The contract's custom errors become them here,
// from the bindings' typed error values (chain.RevertError.Decoded), never from their text; the
// REST layer maps the sentinels to status codes in its one table.
//
// Tickets below tickets.MaxWinProb win by a draw over this node's VRF output for the ticket hash
// (internal/vrf, PROTOCOL.md §4.5), which the ticket's issuer cannot compute: Acknowledge computes
// it (vrf.OutputOf with Config.Key, about 50 µs a ticket, a large batch over the CPUs) to tell
// winners from losers, and the chain client proves it when it redeems.
//
// Imports: internal/chain (the client and its typed errors), internal/channels, internal/store,
// internal/tickets, internal/token, internal/por, internal/vrf (the holder's draw), internal/packet
// (for packet.MaxHops) and internal/strategy (the auto-redeem policy), go-ethereum and uint256. It must not import internal/relay, internal/node, internal/api, internal/ws or the
// libp2p transport. It never logs keys, tickets' challenges or responses.
package ledger
