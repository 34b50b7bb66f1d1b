// Package discovery makes the network's nodes known to this node's transport and this node known
// to them: the static peers of --peers and every node announced on chain become peers of the
// libp2p host (at start from the stored announcements, then as the indexer reports new ones), and
// once this node's account can pay for the transaction it announces its own addresses on chain,
// once. It also answers what the node knows of other nodes' addresses (entry nodes, a peer's
// announced and observed addresses, its heartbeat quality by chain address) and reports the
// relayd_peers gauges.
//
// Of relayd's packages it imports internal/chain (events, Retry), internal/channels and
// internal/peers; the transport and the chain client it reaches only through the interfaces it
// declares (Host, Chain). It must not import internal/node, internal/api, internal/ws or
// internal/admin.
package discovery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/peers"
)

// Host is the transport as discovery uses it; *p2p.Host implements it.
type Host interface {
	// AddPeer makes a peer known (or updates its addresses).
	AddPeer(info peer.AddrInfo) error
	// Addrs are the addresses the host listens on.
	Addrs() []ma.Multiaddr
	// Peers lists the known peers with their heartbeat quality.
	Peers() []peers.Info
}

// Chain is the chain client as discovery uses it; *chain.Client implements it.
type Chain interface {
	NativeBalance(ctx context.Context, addr common.Address) (*big.Int, error)
	Announce(ctx context.Context, multiaddrs []string) (common.Hash, error)
}

// Graph is the indexed announcements and channels; *channels.Graph implements it.
type Graph interface {
	Peers() []channels.Announcement
	Announced(account common.Address) (channels.Announcement, bool)
	// Incoming and Outgoing list the channels to and from an account (relayd_channel_peers).
	Incoming(account common.Address) []channels.Channel
	Outgoing(account common.Address) []channels.Channel
}

// Config configures Discovery. Host and Directory are required; Chain, Graph and CaughtUp are
// nil on a node without a chain (then only the static peers are known and nothing is announced).
type Config struct {
	Host      Host
	Directory *peers.Directory
	Chain     Chain
	Graph     Graph
	// CaughtUp waits until the indexer has read the chain up to its head (retrying while the
	// provider does not answer); an error only when ctx ends.
	CaughtUp func(ctx context.Context) error
	// StaticPeers are multiaddrs ending in /p2p/<PeerId> (the --peers flag).
	StaticPeers []string
	// Announce, when set, are exactly the multiaddrs the node announces (the --announce flag; a
	// /p2p/<PeerId> suffix is added where missing). Without it the node announces the host's
	// addresses that Scope lets others reach (docs/NAT.md).
	Announce []string
	// Scope is which of the host's addresses others can reach, when Announce is empty: ScopeFor
	// says which for a network. The zero value, ScopeLocal, keeps every address.
	Scope Scope
	// AnnounceRetry is how an unfunded node checks its balance again, and how a failed
	// announcement is retried (default DefaultAnnounceRetry).
	AnnounceRetry chain.Retry
	// AnnounceCheck is how often a node that announced the addresses Scope chose (no Announce,
	// a scope other than local) checks that others can still reach one of them, and announces its
	// current ones when none is left, e.g. after both its relays went (default
	// DefaultAnnounceCheck).
	AnnounceCheck time.Duration
	Logger        *slog.Logger
	// Registerer, when set, receives the relayd_peers gauges, and relayd_channel_peers with a
	// Graph.
	Registerer prometheus.Registerer
}

// DefaultAnnounceRetry is Config.AnnounceRetry's default.
var DefaultAnnounceRetry = chain.Retry{Initial: time.Second, Max: 10 * time.Second}

// DefaultAnnounceCheck is Config.AnnounceCheck's default.
const DefaultAnnounceCheck = time.Minute

// Discovery is the node's peer discovery. Create it with New; Start adds the peers known at
// start, Run announces the node, OnEvent follows the indexer.
type Discovery struct {
	cfg    Config
	log    *slog.Logger
	self   common.Address
	static []peer.AddrInfo
	// announce is Config.Announce, each with its /p2p suffix.
	announce []string
}

var (
	// ErrBadPeer is a static peer that is not a multiaddr with a secp256k1 PeerId.
	ErrBadPeer = errors.New("not a multiaddr ending in /p2p/<PeerId>")
	// ErrBadAnnounce is an --announce entry that is not a multiaddr of this node.
	ErrBadAnnounce = errors.New("not a multiaddr of this node")
)

// New checks cfg and parses the static peers; it changes nothing yet.
func New(cfg Config) (*Discovery, error) {
	if cfg.Host == nil || cfg.Directory == nil {
		return nil, errors.New("discovery: Host and Directory are required")
	}
	if (cfg.Chain == nil) != (cfg.Graph == nil) || (cfg.Chain == nil) != (cfg.CaughtUp == nil) {
		return nil, errors.New("discovery: Chain, Graph and CaughtUp go together")
	}
	if cfg.AnnounceRetry == (chain.Retry{}) {
		cfg.AnnounceRetry = DefaultAnnounceRetry
	}
	if cfg.AnnounceCheck <= 0 {
		cfg.AnnounceCheck = DefaultAnnounceCheck
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Discovery{cfg: cfg, log: cfg.Logger, self: cfg.Directory.SelfAddress()}
	for _, s := range cfg.StaticPeers {
		info, err := peer.AddrInfoFromString(s)
		if err != nil {
			return nil, fmt.Errorf("%q: %w: %w", s, ErrBadPeer, err)
		}
		if info.ID != cfg.Directory.Self() {
			d.static = append(d.static, *info)
		}
	}
	for _, s := range cfg.Announce {
		a, err := ownAddr(s, cfg.Directory.Self())
		if err != nil {
			return nil, fmt.Errorf("announce %q: %w: %w", s, ErrBadAnnounce, err)
		}
		d.announce = append(d.announce, a)
	}
	if reg := cfg.Registerer; reg != nil {
		if err := reg.Register(gauges{d}); err != nil {
			return nil, fmt.Errorf("discovery: register metrics: %w", err)
		}
	}
	return d, nil
}

// Start makes the static peers and every stored announcement known to the host, so that paths,
// pings and forwarding work before the first heartbeat round. A static peer the host refuses is
// an error.
func (d *Discovery) Start() error {
	for _, info := range d.static {
		if err := d.cfg.Host.AddPeer(info); err != nil {
			return fmt.Errorf("%s: %w", info.ID, err)
		}
	}
	if d.cfg.Graph == nil {
		return nil
	}
	added := 0
	for _, a := range d.cfg.Graph.Peers() {
		if d.addAnnounced(a) {
			added++
		}
	}
	if added > 0 {
		d.log.Info("known peers from stored announcements", "peers", added)
	}
	return nil
}

// OnEvent makes an announced node a peer (the indexer's events).
func (d *Discovery) OnEvent(ev chain.Event) {
	if ev.Kind == chain.AnnouncementEvent {
		d.addAnnounced(ev.Announcement)
	}
}

// addAnnounced makes an announced node (but this one) a peer; it reports whether it did.
func (d *Discovery) addAnnounced(a channels.Announcement) bool {
	if a.Account == d.self {
		return false
	}
	info, err := d.addrInfo(a)
	if err == nil {
		err = d.cfg.Host.AddPeer(info)
	}
	if err != nil {
		d.log.Debug("ignored announcement", "account", a.Account, "err", err)
		return false
	}
	return true
}

// addrInfo turns an announcement into a libp2p peer: the multiaddrs that name its PeerId.
func (d *Discovery) addrInfo(a channels.Announcement) (peer.AddrInfo, error) {
	id, err := d.cfg.Directory.PeerIDOf(a)
	if err != nil {
		return peer.AddrInfo{}, err
	}
	info := peer.AddrInfo{ID: id}
	for _, s := range a.Multiaddrs {
		ai, err := peer.AddrInfoFromString(s)
		if err != nil || ai.ID != id {
			continue
		}
		info.Addrs = append(info.Addrs, ai.Addrs...)
	}
	if len(info.Addrs) == 0 {
		return info, errors.New("announcement has no usable multiaddr")
	}
	return info, nil
}

// errNotFunded makes Run retry while the node has no native currency.
var errNotFunded = errors.New("not funded")

// ownAddr is s with this node's /p2p suffix: s must be a multiaddr without one, or with self's.
func ownAddr(s string, self peer.ID) (string, error) {
	m, err := ma.NewMultiaddr(s)
	if err != nil {
		return "", err
	}
	rest, last := ma.SplitLast(m)
	if last != nil && last.Code() == ma.P_P2P {
		id, err := peer.IDFromBytes(last.RawValue())
		if err != nil || id != self {
			return "", fmt.Errorf("ends in another node's /p2p")
		}
		if len(rest) == 0 {
			return "", errors.New("no address before /p2p")
		}
		return m.String(), nil
	}
	return m.Encapsulate(ma.StringCast("/p2p/" + self.String())).String(), nil
}

// Run announces the node on chain once the indexer has caught up, unless the chain already holds
// the same announcement: Config.Announce, or else the host's addresses that Config.Scope lets
// others reach, as soon as there is one (a node behind a NAT has one once it holds a relay
// reservation) and its account can pay for the transaction. Until then it says so in the log (and
// so on the admin WebSocket) instead of failing. With addresses Scope chose (not on the local
// scope) it then checks every Config.AnnounceCheck that one of them is still the host's, and
// announces the current ones when none is (a node behind a NAT whose relays went). It returns
// nil when done, at once without a chain, or when ctx ends.
func (d *Discovery) Run(ctx context.Context) error {
	if d.cfg.Chain == nil {
		return nil
	}
	if err := d.cfg.CaughtUp(ctx); err != nil {
		return nil
	}
	addrs := d.announceOnce(ctx)
	if len(d.announce) > 0 || d.cfg.Scope == ScopeLocal || ctx.Err() != nil {
		return nil
	}
	t := time.NewTicker(d.cfg.AnnounceCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		cur := d.AnnounceAddrs()
		if len(cur) == 0 || slices.ContainsFunc(cur, func(a string) bool { return slices.Contains(addrs, a) }) {
			continue
		}
		if _, err := d.cfg.Chain.Announce(ctx, cur); err != nil {
			if ctx.Err() == nil {
				d.log.Warn("announcing the node's new addresses failed, retrying", "err", err)
			}
			continue
		}
		d.log.Info("node announced again: none of its announced addresses is its own any more", "multiaddrs", len(cur))
		addrs = cur
	}
}

// announceOnce is Run's first announcement; it returns what the chain holds for the node.
func (d *Discovery) announceOnce(ctx context.Context) []string {
	var addrs []string
	warnedAddrs, warnedFunds := false, false
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		if addrs = d.AnnounceAddrs(); len(addrs) == 0 {
			if !warnedAddrs {
				d.log.Warn("no address others can reach yet: waiting for a relay reservation (or set --announce)", "scope", d.cfg.Scope.String())
				warnedAddrs = true
			}
			return struct{}{}, errNoAddress
		}
		if a, ok := d.cfg.Graph.Announced(d.self); ok && slices.Equal(a.Multiaddrs, addrs) {
			return struct{}{}, backoff.Permanent(errAnnounced)
		}
		native, err := d.cfg.Chain.NativeBalance(ctx, d.self)
		if err == nil && native.Sign() == 0 {
			if !warnedFunds {
				d.log.Warn("node is not funded: send native currency to its address to announce it", "address", d.self)
				warnedFunds = true
			}
			return struct{}{}, errNotFunded
		}
		if err == nil {
			_, err = d.cfg.Chain.Announce(ctx, addrs)
		}
		if err != nil && ctx.Err() == nil {
			d.log.Warn("announcement failed, retrying", "err", err)
		}
		return struct{}{}, err
	}, backoff.WithBackOff(d.cfg.AnnounceRetry.BackOff()), backoff.WithMaxElapsedTime(0))
	switch {
	case errors.Is(err, errAnnounced):
		d.log.Info("node already announced", "multiaddrs", len(addrs))
	case err == nil:
		d.log.Info("node announced on chain", "multiaddrs", len(addrs))
	}
	return addrs
}

var (
	// errNoAddress makes Run wait while the node has no address others can reach.
	errNoAddress = errors.New("no reachable address")
	// errAnnounced ends Run's retries: the chain holds the announcement already.
	errAnnounced = errors.New("already announced")
)

// AnnounceAddrs are the multiaddrs Run announces now: Config.Announce, or the host's addresses
// that Config.Scope keeps (relay addresses are judged by their relay's address). A host that
// knows it is not reachable (behind a NAT: AutoNAT says private) announces its relay addresses
// only: the address others see it from is its router's, which drops their connections (not on a
// local network, ScopeLocal, whose nodes share one machine).
func (d *Discovery) AnnounceAddrs() []string {
	if len(d.announce) > 0 {
		return slices.Clone(d.announce)
	}
	r, ok := d.cfg.Host.(interface{ Reachability() network.Reachability })
	private := ok && d.cfg.Scope != ScopeLocal && r.Reachability() == network.ReachabilityPrivate
	var out []string
	for _, a := range d.cfg.Host.Addrs() {
		if d.cfg.Scope.Allows(a) && (!private || isRelayAddr(a)) {
			out = append(out, a.String())
		}
	}
	return out
}

// isRelayAddr reports whether a is a circuit relay address.
func isRelayAddr(a ma.Multiaddr) bool {
	for _, c := range a {
		if c.Code() == ma.P_CIRCUIT {
			return true
		}
	}
	return false
}

// EntryNodes lists the peers the node can enter the network through, by PeerId: its static
// peers and the nodes announced on chain, other than itself, with their multiaddrs.
func (d *Discovery) EntryNodes() map[peer.ID][]string {
	out := map[peer.ID][]string{}
	for _, info := range d.static {
		for _, m := range info.Addrs {
			out[info.ID] = append(out[info.ID], m.String())
		}
	}
	if d.cfg.Graph != nil {
		for _, a := range d.cfg.Graph.Peers() {
			if a.Account == d.self {
				continue
			}
			if id, err := d.cfg.Directory.PeerIDOf(a); err == nil {
				out[id] = append(out[id], a.Multiaddrs...)
			}
		}
	}
	return out
}

// PeerAddresses returns what the peer announced on chain (none without a chain, or for a peer
// that never announced itself) and the addresses the transport knows for it; fresh slices.
func (d *Discovery) PeerAddresses(id peer.ID) (announced, observed []string) {
	announced, observed = []string{}, []string{}
	if d.cfg.Graph != nil {
		if addr, err := d.cfg.Directory.AddressOf(id); err == nil {
			if a, ok := d.cfg.Graph.Announced(addr); ok {
				announced = append(announced, a.Multiaddrs...)
			}
		}
	}
	for _, p := range d.cfg.Host.Peers() {
		if p.ID == id {
			for _, m := range p.Addrs {
				observed = append(observed, m.String())
			}
		}
	}
	return announced, observed
}

// Qualities returns the heartbeat quality of every known peer by chain address: what the channel
// strategy judges peers by.
func (d *Discovery) Qualities() map[common.Address]float64 {
	out := map[common.Address]float64{}
	for _, p := range d.cfg.Host.Peers() {
		if a, err := d.cfg.Directory.AddressOf(p.ID); err == nil {
			out[a] = p.Quality
		}
	}
	return out
}

var peersDesc = prometheus.NewDesc("relayd_peers",
	"Peers by state: known (the transport's peer set), connected (an open connection now), announced (nodes announced on chain, this one included); and the connected ones by how they are reached: direct, hole-punched, relayed (docs/NAT.md).",
	[]string{"state"}, nil)

var channelPeersDesc = prometheus.NewDesc("relayd_channel_peers",
	"Counterparties of this node's open channels (either way), by state: reachable, or unreachable (the transport does not know "+
		"the peer, marks it down because a send failed since its last answered heartbeat, or its heartbeat quality is below 0.5).",
	[]string{"state"}, nil)

// UnreachableQuality is the heartbeat quality below which relayd_channel_peers counts a
// channel's counterparty as unreachable: with each missed heartbeat taking a quarter off
// (p2p.QualityWeight), about three missed in a row from a good peer.
const UnreachableQuality = 0.5

// gauges reports relayd_peers and relayd_channel_peers at scrape time.
type gauges struct{ d *Discovery }

func (g gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- peersDesc
	ch <- channelPeersDesc
}

func (g gauges) Collect(ch chan<- prometheus.Metric) {
	known := g.d.cfg.Host.Peers()
	connected := 0
	reached := map[peers.Reach]int{}
	for _, p := range known {
		if p.Connected {
			connected++
		}
		reached[p.Reach]++
	}
	ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(len(known)), "known")
	ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(connected), "connected")
	for _, r := range []peers.Reach{peers.ReachDirect, peers.ReachHolePunched, peers.ReachRelayed} {
		ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(reached[r]), string(r))
	}
	if g.d.cfg.Graph != nil {
		ch <- prometheus.MustNewConstMetric(peersDesc, prometheus.GaugeValue, float64(len(g.d.cfg.Graph.Peers())), "announced")
		reachable, unreachable := g.d.channelPeers(known)
		ch <- prometheus.MustNewConstMetric(channelPeersDesc, prometheus.GaugeValue, float64(reachable), "reachable")
		ch <- prometheus.MustNewConstMetric(channelPeersDesc, prometheus.GaugeValue, float64(unreachable), "unreachable")
	}
}

// channelPeers counts the counterparties of this node's open channels (each once) that the
// transport can reach and those it cannot (relayd_channel_peers); known is the transport's peers.
func (d *Discovery) channelPeers(known []peers.Info) (reachable, unreachable int) {
	byAddr := make(map[common.Address]peers.Info, len(known))
	for _, p := range known {
		if a, err := d.cfg.Directory.AddressOf(p.ID); err == nil {
			byAddr[a] = p
		}
	}
	seen := map[common.Address]bool{}
	count := func(other common.Address) {
		if seen[other] || other == d.self {
			return
		}
		seen[other] = true
		if p, ok := byAddr[other]; ok && !p.Down && p.Quality >= UnreachableQuality {
			reachable++
		} else {
			unreachable++
		}
	}
	for _, c := range d.cfg.Graph.Outgoing(d.self) {
		if c.Status == channels.Open {
			count(c.Destination)
		}
	}
	for _, c := range d.cfg.Graph.Incoming(d.self) {
		if c.Status == channels.Open {
			count(c.Source)
		}
	}
	return reachable, unreachable
}
