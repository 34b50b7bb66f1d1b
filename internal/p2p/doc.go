// Package p2p is the node's transport: a libp2p host (TCP and QUIC, Noise on TCP,
// Yamux) that carries opaque frames between relay nodes.
//
// It owns the libp2p host, the three wire protocols (/relay/<network>/msg/1.0.0,
// /relay/<network>/ack/1.0.0 and /relay/<network>/heartbeat/1.0.0), one long-lived
// outbound stream per (peer, protocol) with a bounded queue and batched writes, the
// peer list with its heartbeat quality, and the PeerId helpers other packages use
// to validate user input.
//
// Frames are opaque to this package: on the msg and ack protocols each frame is a
// 4-byte big-endian length followed by that many bytes (see docs/PROTOCOL.md,
// section 5). What the bytes mean belongs to the relay layer.
//
// The host never uses mDNS, a DHT or NAT port mapping: peers are learned from on-chain
// announcements or a static list through AddPeer. With Config.Traversal it finds out whether
// it is reachable (AutoNAT v1 and v2), relays for others while it is (circuit relay v2, with
// RelayLimit), takes reservations on public known peers while it is not, and replaces relayed
// connections by direct ones by hole punching (DCUtR); Reach says how each peer is reached
// (docs/NAT.md).
//
// Of relayd's packages p2p imports only internal/identity (PeerIds) and internal/peers (Info,
// what it reports of each peer); the relay pipeline, chain, store and API packages depend on it,
// not the other way round.
package p2p
