// Package session is the transport of sessions (docs/SESSIONS.md, issue 28): TCP connections
// and UDP flows carried over the mixnet, one frame per packet, between an entry and an exit.
//
// A session's frames go over a Link the caller gives it (in the node: forward packets from the
// entry, reply blocks from the exit), which may lose, duplicate, delay and reorder them and
// carries at most MaxFrame bytes (500 forward, 472 back); the frame layout is
// docs/PROTOCOL.md §9 (Frame, Encode, Decode, strict).
//
//   - Mux holds sessions by ID: Dial opens one (the entry, with a request for the exit in its
//     SYN), Accept hands out the ones a peer opened (the exit, which Confirms or Resets them
//     with a reason), Receive hands each incoming frame to its session.
//   - Conn is a session as a net.Conn. In TCP mode: segments numbered per frame, cumulative and
//     selective acknowledgement, retransmission after an RFC 6298 timeout and fast
//     retransmit after three later segments arrived, a congestion window in segments (slow
//     start from 10, halved on loss), flow control by the receiver's window, delayed and
//     piggybacked acknowledgements, keep-alives, a FIN per direction (CloseWrite) and RSTs
//     whose reason the other side reads as an error (ErrRefused, ErrNotAllowed, …). In UDP
//     mode: one datagram per frame, no retransmission, bounded queues that drop the oldest.
//
// The package draws session IDs from crypto/rand (Config.Rand) and uses the real clock; Mux.Run
// runs the sessions' timers. It imports only internal/rto (the retransmission timeout it shares
// with the courier).
package session
