package node

import (
	"fmt"
	"net"

	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/p2p"
)

// listenAddrs turns --host (host:port) into a TCP and a QUIC multiaddr on
// the same port.
func listenAddrs(hostPort string) ([]ma.Multiaddr, error) {
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

// buildTransport starts the libp2p host on --host and adds the --peers.
func (n *Node) buildTransport() error {
	addrs, err := listenAddrs(n.cfg.Host)
	if err != nil {
		return &StartupError{"host", err}
	}
	h, err := p2p.New(p2p.Config{
		PrivKey:           n.id.P2PKey(),
		ListenAddrs:       addrs,
		Network:           n.cfg.Network,
		HeartbeatInterval: n.cfg.HeartbeatInterval,
		Logger:            n.log.With("component", "p2p"),
		Registerer:        n.metrics,
	})
	if err != nil {
		return &StartupError{"host", err}
	}
	n.host = h
	for _, s := range n.cfg.Peers {
		info, err := peer.AddrInfoFromString(s)
		if err != nil {
			return &StartupError{"peers", fmt.Errorf("%q: %w", s, err)}
		}
		if info.ID == n.id.PeerID() {
			continue
		}
		if err := h.AddPeer(*info); err != nil {
			return &StartupError{"peers", fmt.Errorf("%q: %w", s, err)}
		}
	}
	return nil
}
