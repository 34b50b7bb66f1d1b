// Package fragment carries messages larger than one packet: it cuts a message (up to 64 KiB by
// the node's setting, up to MaxFragments packets by the format) into one-packet texts, carries the
// anonymous reply blocks a sender attaches for the application and for acknowledgements, encodes
// the acknowledgements and replies that travel back on those blocks, and reassembles all of it at
// the recipient.
//
// Every text this package makes is a frame: a version/kind byte, then a fixed header, then data
// (docs/PROTOCOL.md §8). Decode reads one strictly; the packet layer marks a text as a frame, so a
// frame need not be told apart from an application's plain text by its bytes.
//
//   - Split cuts a message's content (the application's reply blocks, then the body) into
//     Fragment texts of fixed-size chunks; SplitReply does the same for an answer sent back on
//     reply blocks (Reply frames); AckBlockParts cuts the reply block a sender attaches in each
//     transmission round for acknowledgements into AckBlockPart texts.
//   - Reassembler, at the recipient, collects fragments, replies and ack block parts under
//     bounded memory, reports a message once when its last fragment arrives, remembers
//     completed ids to suppress duplicates, gives the acknowledgement bitmap (Status) and hands
//     out each ack block once (TakeAckBlock). It has no clock: every call takes the time.
//   - Ack, the recipient's acknowledgement: a bitmap of the fragments it holds (Has), and
//     whether the message is whole and stored (Complete). The sender goes by the newest one.
//
// The engine that sends rounds, times out and retries is not here. The package is pure: no I/O,
// no clock, no randomness (the caller draws message IDs from crypto/rand), no globals. It imports
// no relayd package.
package fragment
