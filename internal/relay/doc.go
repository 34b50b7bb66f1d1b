// Package relay is the node's packet pipeline: it sends messages as onion packets with the
// ticket for their first hop, and for every packet it receives it decodes the frame, peels one
// layer, checks the incoming ticket and its proof-of-relay challenge, acknowledges the packet
// to the previous hop, waits a random mixing delay, issues the ticket for the next hop and
// forwards the packet, or delivers the message when this node is the recipient. It matches the
// next hop's acknowledgement to the pending ticket and hands the ticket with its proof-of-relay
// response to Payments as acknowledged (docs/PROTOCOL.md §2, §3, §5.4).
//
// It also provides Ledger, the Payments implementation over the node's store and a channel
// lookup: incoming ticket validation, outgoing ticket indexes that never go back, acknowledged
// tickets, statistics and redemption in index order.
//
// The package reaches the transport, the chain's channel graph and the redeemer only through
// interfaces it declares (Transport, Payments, ChannelLookup, Redeemer). It must not import
// internal/chain, internal/node, internal/api or internal/ws. It never logs message text, keys,
// tickets' challenges or routes.
package relay
