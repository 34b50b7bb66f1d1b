// Package relay is the node's packet pipeline: it sends messages as onion packets with the
// ticket for their first hop, and for every packet it receives it decodes the frame, peels one
// layer, checks the incoming ticket and its proof-of-relay challenge, acknowledges the packet
// to the previous hop, waits a random mixing delay, issues the ticket for the next hop and
// forwards the packet, or delivers the message when this node is the recipient. It matches the
// next hop's acknowledgement to the pending ticket and hands the ticket with its proof-of-relay
// response to Payments as acknowledged (docs/PROTOCOL.md §2, §3, §5.4).
//
// Replies: NewReplyBlock makes a reply block over a return path ending at this node, with the
// proof-of-relay data of every hop, and keeps its keys in a ReplyKeyring; SendReply sends one
// message with another node's block, paying its first hop; a reply to this node is delivered as
// a Received with Reply set (PROTOCOL.md §3.9).
//
// Payments are internal/ledger's: the relay reaches them, and the transport, only through the
// interfaces it declares (Payments, Transport), and uses the ledger's types and sentinels; its
// readiness is a health.Checker (Checks: not ready while the store refuses tickets); it counts
// the tokens its first tickets are worth with internal/token. It must not import internal/node, internal/api or internal/ws, nor internal/chain directly. It
// never logs message text, keys, tickets' challenges or routes.
package relay
