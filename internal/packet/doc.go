// Package packet builds and peels relayd's Sphinx-style onion packets over
// secp256k1.
//
// A sender picks a route of 1 to MaxHops nodes (the relayers, then the
// recipient), calls NewRoute to draw one fresh ephemeral key per hop and to
// learn the secret it shares with each hop (the proof-of-relay input), then
// Route.Seal to wrap a Message into a packet. Every packet is exactly
// PacketSize bytes whatever the path length. Each hop calls Peel with its node
// key and its clock: one ECDH, a key derivation, a MAC check over the header, a
// check that the packet's creation epoch is within the window, a replay check,
// and the packet for the next hop, its payload under one ChaCha20 layer less
// (or, at the recipient, the Message, whose payload is authenticated end to
// end).
//
// Reply blocks: a node builds a ReplyBlock over a return path ending at itself
// (Route.SealReply) and keeps its ReplyKeys; a replier seals one Message with
// the block (ReplyBlock.Seal) into a packet that relayers cannot tell from any
// other; at the creator Peel reports a reply (Peeled.Reply) and OpenReply
// reads it.
// The byte layout and the choices behind it are in docs/PROTOCOL.md, section 3
// (reply blocks: §3.9).
//
// A sender may keep an EphemeralPool: ephemeral keys computed ahead of time (in
// idle time, by the pool's Run in a goroutine of the caller's), so that
// EphemeralPool.NewRoute does only the work that depends on the route.
//
// The package owns the packet format, its keys, MACs, padding and replay tags.
// It is pure: no I/O, no globals, no clock; randomness comes in as an
// io.Reader, the time as Peel's argument and replay state through the
// caller's ReplayChecker. It must not
// import other relayd packages.
package packet
