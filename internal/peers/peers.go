// Package peers names the other nodes of the network. A node's PeerId and its chain address both
// derive from its secp256k1 key: Directory converts between them (with caches: each conversion
// costs a point decompression) and names an account by its PeerId once it announced itself on
// chain. It resolves the names operators and clients give peers ("me", a PeerId, an alias), keeps
// the aliases through AliasStore, and defines Info, what the transport knows of a peer, which
// the REST API and the admin console show.
//
// It does no I/O (the alias store is an interface) and imports only internal/identity and
// internal/channels of relayd's packages; it never reaches the libp2p transport.
package peers

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
)

// Me always names the node itself.
const Me = "me"

// Errors of Directory. Their texts are sentences an operator or a client reads.
var (
	// ErrUnknownName is a name that is neither "me", a secp256k1 PeerId nor an alias.
	ErrUnknownName = errors.New("neither an alias nor a valid PeerId")
	// ErrAliasNotFound is an alias that is not set.
	ErrAliasNotFound = errors.New("no such alias")
	// ErrInvalidAlias is a name that cannot be set as an alias (CheckAlias says why).
	ErrInvalidAlias = errors.New("invalid alias")
	// ErrNotAnnounced is an account that never announced itself on chain, so its PeerId is not
	// known.
	ErrNotAnnounced = errors.New("has not announced itself on chain")
)

// Info is a known peer as the transport's heartbeat sees it.
type Info struct {
	// ID is the peer's PeerId.
	ID peer.ID
	// Addrs are the peer's known multiaddrs (without /p2p/ suffix).
	Addrs []ma.Multiaddr
	// Quality is an exponentially weighted heartbeat success ratio in [0, 1].
	Quality float64
	// LastSeen is the time of the last successful ping; zero if there was none.
	LastSeen time.Time
	// Latency is the round-trip time of the last successful ping.
	Latency time.Duration
	// Connected reports whether the transport has an open connection to the peer now.
	Connected bool
	// Down reports that sending to the peer failed after its last successful heartbeat: path
	// selection avoids it until the next one.
	Down bool
	// HeartbeatsSent and HeartbeatsSucceeded count the pings recorded for the peer and those it
	// answered.
	HeartbeatsSent, HeartbeatsSucceeded uint64
	// Reach says how the transport reaches the peer now; ReachNone without a connection.
	Reach Reach
}

// Reach is how the transport reaches a peer (docs/NAT.md).
type Reach string

// The ways a peer is reached.
const (
	// ReachNone: no open connection.
	ReachNone Reach = ""
	// ReachDirect: a direct connection that needed no hole punch.
	ReachDirect Reach = "direct"
	// ReachHolePunched: a direct connection that the hole-punching service (DCUtR) opened after
	// the two nodes met over a relay: by dialing each other at once, or by a synchronised punch.
	ReachHolePunched Reach = "hole-punched"
	// ReachRelayed: only a circuit relay v2 connection through a third node, which carries
	// (and pays for) every byte.
	ReachRelayed Reach = "relayed"
)

// Announcements are the nodes announced on chain; *channels.Graph implements it.
type Announcements interface {
	Announced(account common.Address) (channels.Announcement, bool)
}

// AliasStore keeps the aliases, alias → PeerId text; *store.DB implements it.
type AliasStore interface {
	// Aliases lists every alias and its peer, sorted by alias.
	Aliases() ([][2]string, error)
	// Alias returns the peer an alias names; ok is false when it is not set.
	Alias(alias string) (peerID string, ok bool, err error)
	SetAlias(alias, peerID string) error
	// DeleteAlias removes an alias; ok is false (and nothing changes) when it is not set.
	DeleteAlias(alias string) (ok bool, err error)
}

// Config configures a Directory. Self and Aliases are required; Announcements is nil on a node
// without a chain (no account is then known as announced).
type Config struct {
	Self          peer.ID
	Announcements Announcements
	Aliases       AliasStore
}

// Directory names peers. Its methods are safe for concurrent use.
type Directory struct {
	self     peer.ID
	selfAddr common.Address
	ann      Announcements
	aliases  AliasStore

	// The conversions are pure but cost a point decompression each, and path selection needs
	// them for every announced peer.
	peerIDs   sync.Map // string(compressed key) → peer.ID
	addresses sync.Map // peer.ID → common.Address
	parsed    parseCache
}

// New returns a Directory.
func New(cfg Config) (*Directory, error) {
	if cfg.Self == "" || cfg.Aliases == nil {
		return nil, errors.New("peers: Self and Aliases are required")
	}
	addr, err := identity.AddressOf(cfg.Self)
	if err != nil {
		return nil, fmt.Errorf("peers: Self: %w", err)
	}
	return &Directory{self: cfg.Self, selfAddr: addr, ann: cfg.Announcements, aliases: cfg.Aliases, parsed: parseCache{max: 4096}}, nil
}

// Self is this node's PeerId.
func (d *Directory) Self() peer.ID { return d.self }

// SelfAddress is this node's chain address.
func (d *Directory) SelfAddress() common.Address { return d.selfAddr }

// PeerIDOf is the PeerId of an announced account.
func (d *Directory) PeerIDOf(a channels.Announcement) (peer.ID, error) {
	if v, ok := d.peerIDs.Load(string(a.PublicKey)); ok {
		return v.(peer.ID), nil
	}
	id, err := identity.PeerIDFromPubKey(a.PublicKey)
	if err == nil {
		d.peerIDs.Store(string(a.PublicKey), id)
	}
	return id, err
}

// AddressOf is the chain address of a peer.
func (d *Directory) AddressOf(id peer.ID) (common.Address, error) {
	if v, ok := d.addresses.Load(id); ok {
		return v.(common.Address), nil
	}
	addr, err := identity.AddressOf(id)
	if err == nil {
		d.addresses.Store(id, addr)
	}
	return addr, err
}

// PeerOf is the PeerId of an account that announced itself (ErrNotAnnounced otherwise).
func (d *Directory) PeerOf(account common.Address) (peer.ID, error) {
	if account == d.selfAddr {
		return d.self, nil
	}
	if d.ann != nil {
		if a, ok := d.ann.Announced(account); ok {
			return d.PeerIDOf(a)
		}
	}
	return "", fmt.Errorf("%s %w", account.Hex(), ErrNotAnnounced)
}

// Name names an account by its PeerId when it announced itself, by its address otherwise.
func (d *Directory) Name(account common.Address) string {
	if id, err := d.PeerOf(account); err == nil {
		return id.String()
	}
	return account.Hex()
}

// Resolve turns an operator's or a client's name for a peer into its PeerId: "me" is this
// node, a secp256k1 PeerId is itself, anything else is looked up as an alias. A PeerId is read
// before the aliases so that an alias spelt like a PeerId (refused since, but a store may hold
// one) cannot stand for another peer. An unknown name is ErrUnknownName.
func (d *Directory) Resolve(name string) (peer.ID, error) {
	if name == Me {
		return d.self, nil
	}
	if id, ok := d.parsed.get(name); ok {
		return id, nil
	}
	if id, err := identity.ParsePeerID(name); err == nil {
		d.parsed.put(name, id)
		return id, nil
	}
	if !ValidAlias(name) {
		return "", fmt.Errorf("%s is %w", quote(name), ErrUnknownName)
	}
	v, ok, err := d.aliases.Alias(name)
	switch {
	case err != nil:
		return "", fmt.Errorf("look up alias %s: %w", quote(name), err)
	case !ok:
		return "", fmt.Errorf("%s is %w", quote(name), ErrUnknownName)
	}
	id, err := identity.ParsePeerID(v)
	if err != nil {
		return "", fmt.Errorf("alias %s names %s, which is %w", quote(name), quote(v), ErrUnknownName)
	}
	return id, nil
}

// Alias is one alias and the peer it names.
type Alias struct {
	Name string
	Peer peer.ID
}

// Aliases lists the stored aliases, sorted by name, without "me"; an alias whose peer no longer
// parses (a store written by older code) is left out.
func (d *Directory) Aliases() ([]Alias, error) {
	list, err := d.aliases.Aliases()
	if err != nil {
		return nil, err
	}
	out := make([]Alias, 0, len(list))
	for _, kv := range list {
		if id, err := identity.ParsePeerID(kv[1]); err == nil {
			out = append(out, Alias{Name: kv[0], Peer: id})
		}
	}
	return out, nil
}

// SetAlias names a peer; CheckAlias says which names are refused (ErrInvalidAlias).
func (d *Directory) SetAlias(alias string, id peer.ID) error {
	if err := CheckAlias(alias); err != nil {
		return err
	}
	return d.aliases.SetAlias(alias, id.String())
}

// DeleteAlias removes an alias: ErrAliasNotFound when it is not set, ErrInvalidAlias for "me".
func (d *Directory) DeleteAlias(alias string) error {
	if alias == Me {
		return fmt.Errorf(`%w: alias "me" always names this node and cannot be removed`, ErrInvalidAlias)
	}
	ok, err := d.aliases.DeleteAlias(alias)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%s: %w", quote(alias), ErrAliasNotFound)
	}
	return nil
}

// ValidAlias reports whether s has the form of an alias: 1 to 64 printable characters without
// spaces. CheckAlias says whether it may be set.
func ValidAlias(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}

// CheckAlias says why s cannot be set as an alias (ErrInvalidAlias), or nil when it can: it must
// be ValidAlias, not "me", and not a PeerId. A name is resolved as a PeerId before it is looked
// up as an alias, so an alias shaped like a PeerId could never be used. Any libp2p PeerId counts
// (not only secp256k1 ones), except the degenerate empty one ("11").
func CheckAlias(s string) error {
	switch {
	case !ValidAlias(s):
		return fmt.Errorf("%w: alias must be 1 to 64 printable characters without spaces", ErrInvalidAlias)
	case s == Me:
		return fmt.Errorf(`%w: alias "me" is reserved for this node`, ErrInvalidAlias)
	case isPeerID(s):
		return fmt.Errorf("%w: alias %s is a PeerId; an alias cannot be one", ErrInvalidAlias, quote(s))
	}
	return nil
}

// isPeerID reports whether s decodes as a libp2p PeerId with a non-empty multihash.
func isPeerID(s string) bool {
	id, err := peer.Decode(s)
	return err == nil && len(id) > 2
}

// quote shortens and quotes a name for an error message (%q escapes what is not printable).
func quote(v string) string {
	if len(v) > 64 {
		v = v[:64] + "…"
	}
	return fmt.Sprintf("%q", v)
}

// parseCache remembers the names that parsed as PeerIds: parsing one checks that its key is a
// secp256k1 point, a square root in the field (about 8 µs, half of the REST API's own work on a
// message), and a sender writes to the same few recipients again and again. Once full it starts
// over, which bounds its memory whatever clients send.
type parseCache struct {
	mu  sync.Mutex
	m   map[string]peer.ID
	max int
}

func (c *parseCache) get(v string) (peer.ID, bool) {
	c.mu.Lock()
	id, ok := c.m[v]
	c.mu.Unlock()
	return id, ok
}

func (c *parseCache) put(v string, id peer.ID) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string]peer.ID, min(c.max, 64))
	}
	c.m[v] = id
	c.mu.Unlock()
}

// RelayOnly reports whether an announcement names the node only by circuit relay addresses
// (/p2p-circuit): a node behind a NAT that others reach over a relay unless a hole punch worked.
// Path selection weighs such relayers less (path.Node.Relayed, docs/NAT.md).
func RelayOnly(a channels.Announcement) bool {
	for _, s := range a.Multiaddrs {
		if !strings.Contains(s, "/p2p-circuit") {
			return false
		}
	}
	return len(a.Multiaddrs) > 0
}
