package p2p

import (
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"
)

// Defaults used by New for zero Config fields.
const (
	DefaultHeartbeatInterval = 10 * time.Second
	DefaultPingTimeout       = 5 * time.Second
	DefaultQueueSize         = 1024
	DefaultMaxFrameSize      = 64 << 10
	DefaultDialTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultBackoffMin        = 100 * time.Millisecond
	DefaultBackoffMax        = 30 * time.Second
	DefaultAckDelay          = 10 * time.Millisecond

	// MaxFrameSizeLimit is the largest MaxFrameSize New accepts.
	MaxFrameSizeLimit = 16 << 20
)

// Config configures a Host. PrivKey, ListenAddrs and Network are required; every
// other field has a default used when it is left zero. Negative values are refused.
type Config struct {
	// PrivKey is the node's identity key (required). It must be secp256k1: the node
	// derives it from its chain key, so the PeerId and the chain address match.
	PrivKey crypto.PrivKey

	// ListenAddrs are the multiaddrs to listen on (required, at least one), TCP
	// and/or QUIC, e.g. /ip4/127.0.0.1/tcp/9091 and /ip4/127.0.0.1/udp/9091/quic-v1.
	// Port 0 picks a free port. Every address must be free: New fails with
	// ErrAddrInUse otherwise.
	ListenAddrs []ma.Multiaddr

	// Network names the relay network (required): letters, digits, '.', '_' and
	// '-'. Nodes only talk to nodes of the same network because it is part of every
	// protocol ID (/relay/<network>/msg/1.0.0).
	Network string

	// HeartbeatInterval is how often Run pings every known peer.
	HeartbeatInterval time.Duration

	// PingTimeout bounds one heartbeat ping, dial included.
	PingTimeout time.Duration

	// QueueSize is the number of frames each (peer, protocol) outbound queue holds
	// before Send returns ErrQueueFull.
	QueueSize int

	// MaxFrameSize is the largest frame in bytes, enforced on send and on receive
	// (at most MaxFrameSizeLimit). A received length above it drops the stream.
	MaxFrameSize int

	// DialTimeout bounds opening an outbound stream, dial included.
	DialTimeout time.Duration

	// WriteTimeout bounds one write to a stream; a peer that does not read for this
	// long has its stream dropped.
	WriteTimeout time.Duration

	// AckDelay is how long an acknowledgement frame may wait for more acknowledgements to the
	// same peer, so that they leave in one write (default DefaultAckDelay). Packets never wait.
	// At a few hundred packets a second a node sends each peer an acknowledgement every few
	// milliseconds, each its own write(2) and its own wake-up on both sides; nothing waits for
	// an acknowledgement but the ticket it settles (PROTOCOL.md §5.2). NoAckDelay sends each
	// at once.
	AckDelay   time.Duration
	NoAckDelay bool
	// BackoffMin and BackoffMax bound the exponential backoff before re-opening a
	// stream that failed: the wait doubles from BackoffMin up to BackoffMax.
	BackoffMin, BackoffMax time.Duration

	// Announce, when set, are the only addresses the host gives other nodes (identify; discovery
	// puts the same on chain): the --announce flag. They are taken as reachable, so AutoNAT does
	// not judge them.
	Announce []ma.Multiaddr

	// Traversal turns on NAT traversal (docs/NAT.md): AutoNAT v1 and v2 (client and server),
	// circuit relay v2 (dialing through relays, and a relay service with RelayLimit while the node
	// is public), reservations on public known peers when it is not (autorelay), and hole punching
	// (DCUtR) to replace a relayed connection by a direct one. TCP then dials from its listen port
	// (SO_REUSEPORT), which TCP hole punching needs.
	Traversal bool

	// RelayLimit bounds what this node relays for others when Traversal is on; zero fields take
	// their defaults.
	RelayLimit RelayLimit

	// Logger receives the host's logs. Optional: nil discards them.
	Logger *slog.Logger

	// Registerer receives the host's prometheus metrics. Optional: nil keeps the
	// metrics unregistered. libp2p's own metrics are always off.
	Registerer prometheus.Registerer
}

var networkName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// withDefaults checks c and returns a copy with defaults filled in.
func (c Config) withDefaults() (Config, error) {
	if c.PrivKey == nil {
		return c, fmt.Errorf("%w: PrivKey is required", ErrInvalidConfig)
	}
	if _, ok := c.PrivKey.(*crypto.Secp256k1PrivateKey); !ok {
		return c, fmt.Errorf("%w: PrivKey is %s, want secp256k1", ErrInvalidConfig, c.PrivKey.Type())
	}
	if len(c.ListenAddrs) == 0 {
		return c, fmt.Errorf("%w: ListenAddrs is required", ErrInvalidConfig)
	}
	if !networkName.MatchString(c.Network) {
		return c, fmt.Errorf("%w: Network %q must be 1-64 of [A-Za-z0-9._-]", ErrInvalidConfig, c.Network)
	}
	durations := []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"HeartbeatInterval", &c.HeartbeatInterval, DefaultHeartbeatInterval},
		{"PingTimeout", &c.PingTimeout, DefaultPingTimeout},
		{"DialTimeout", &c.DialTimeout, DefaultDialTimeout},
		{"WriteTimeout", &c.WriteTimeout, DefaultWriteTimeout},
		{"BackoffMin", &c.BackoffMin, DefaultBackoffMin},
		{"BackoffMax", &c.BackoffMax, DefaultBackoffMax},
		{"AckDelay", &c.AckDelay, DefaultAckDelay},
	}
	for _, d := range durations {
		if *d.v < 0 {
			return c, fmt.Errorf("%w: %s is negative", ErrInvalidConfig, d.name)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if c.NoAckDelay {
		c.AckDelay = 0
	}
	if c.BackoffMax < c.BackoffMin {
		return c, fmt.Errorf("%w: BackoffMax %s is below BackoffMin %s", ErrInvalidConfig, c.BackoffMax, c.BackoffMin)
	}
	if c.QueueSize < 0 {
		return c, fmt.Errorf("%w: QueueSize is negative", ErrInvalidConfig)
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.MaxFrameSize < 0 || c.MaxFrameSize > MaxFrameSizeLimit {
		return c, fmt.Errorf("%w: MaxFrameSize %d outside 0..%d", ErrInvalidConfig, c.MaxFrameSize, MaxFrameSizeLimit)
	}
	if c.MaxFrameSize == 0 {
		c.MaxFrameSize = DefaultMaxFrameSize
	}
	if c.RelayLimit.Duration < 0 || c.RelayLimit.Data < 0 || c.RelayLimit.Reservations < 0 || c.RelayLimit.Circuits < 0 {
		return c, fmt.Errorf("%w: RelayLimit has a negative field", ErrInvalidConfig)
	}
	c.RelayLimit = c.RelayLimit.withDefaults()
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Protocol selects one of the node's wire protocols.
type Protocol uint8

// The wire protocols. Send and Handle accept ProtocolMsg and ProtocolAck;
// ProtocolHeartbeat is served by the host itself.
const (
	ProtocolMsg Protocol = iota + 1
	ProtocolAck
	ProtocolHeartbeat
)

// numFrameProtocols is the number of frame protocols (msg and ack).
const numFrameProtocols = 2

// String returns the protocol's short name ("msg", "ack", "heartbeat").
func (p Protocol) String() string {
	switch p {
	case ProtocolMsg:
		return "msg"
	case ProtocolAck:
		return "ack"
	case ProtocolHeartbeat:
		return "heartbeat"
	default:
		return fmt.Sprintf("protocol(%d)", uint8(p))
	}
}

// ID returns the libp2p protocol ID of p on the given network,
// e.g. /relay/<network>/msg/1.0.0.
func (p Protocol) ID(network string) protocol.ID {
	return protocol.ID("/relay/" + network + "/" + p.String() + "/1.0.0")
}

// Indexes of the frame protocols (Protocol.frameIndex).
const (
	msgIndex = 0
	ackIndex = 1
)

// frameIndex maps a frame protocol to msgIndex or ackIndex.
func (p Protocol) frameIndex() (int, error) {
	switch p {
	case ProtocolMsg:
		return msgIndex, nil
	case ProtocolAck:
		return ackIndex, nil
	default:
		return 0, fmt.Errorf("%w: %s", ErrUnknownProtocol, p)
	}
}

// ListenAddrsFor turns a host:port (the --host flag) into the TCP and the QUIC multiaddr the
// host listens on, on the same port: /ip4, /ip6 or /dns by the host's form.
func ListenAddrsFor(hostPort string) ([]ma.Multiaddr, error) {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil, err
	}
	proto := "dns"
	if ip := net.ParseIP(host); ip != nil {
		proto = "ip4"
		if ip.To4() == nil {
			proto = "ip6"
		}
	}
	var out []ma.Multiaddr
	for _, s := range []string{
		fmt.Sprintf("/%s/%s/tcp/%s", proto, host, port),
		fmt.Sprintf("/%s/%s/udp/%s/quic-v1", proto, host, port),
	} {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// ParseAnnounce turns the --announce multiaddrs into Config.Announce: each parsed, a trailing
// /p2p/<PeerId> removed (the host adds its own).
func ParseAnnounce(ss []string) ([]ma.Multiaddr, error) {
	var out []ma.Multiaddr
	for _, s := range ss {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return nil, fmt.Errorf("announce %q: %w", s, err)
		}
		if rest, last := ma.SplitLast(a); last != nil && last.Code() == ma.P_P2P {
			a = rest
		}
		if len(a) == 0 {
			return nil, fmt.Errorf("announce %q: no address before /p2p", s)
		}
		out = append(out, a)
	}
	return out, nil
}
