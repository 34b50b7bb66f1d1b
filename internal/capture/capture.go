// Package capture records what a global passive observer sees on the links of a network: for
// each IP packet between two known hosts, the time, the two hosts and the transport payload's
// size (observe.Transmission). Nothing else is kept, and nothing is read from the nodes.
//
// It reads AF_PACKET sockets (github.com/gopacket/gopacket/afpacket: no libpcap) on the given
// interfaces, e.g. every bridge port of a `relayd cluster --netns` network. A packet crossing
// the bridge is seen on two ports (leaving its sender, reaching its receiver): copies with the
// same bytes less than DupWindow apart are one packet, kept at its earliest time. Only IPv4
// TCP and UDP packets with a payload between two hosts that Hosts maps are kept (the dev
// chain's RPC traffic, ARP and pure TCP acknowledgements are not).
//
// Capturing needs CAP_NET_RAW (root): Open fails with ErrNotRoot otherwise. The package may
// import internal/observe, gopacket's afpacket and the standard library.
package capture

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gopacket/gopacket/afpacket"

	"github.com/relayd/relayd/internal/observe"
)

// FlightGap is what observe.Options.FlightGap should be for a capture: a frame larger than
// the MTU leaves as IP packets microseconds apart, while two frames on one link are hundreds
// of microseconds apart or more.
const FlightGap = 300 * time.Microsecond

// DupWindow is how far apart two copies of one packet may be captured.
const DupWindow = 5 * time.Millisecond

var (
	// ErrNotRoot: the process may not open packet sockets.
	ErrNotRoot = errors.New("capture: packet sockets need root (CAP_NET_RAW)")
	// ErrNoInterfaces: nothing to capture on.
	ErrNoInterfaces = errors.New("capture: no interface to capture on")
)

// Hosts maps an IP endpoint to a host index; ok false for anything that is not a host.
type Hosts func(netip.AddrPort) (host int, ok bool)

// HostsByAddr maps each address to its host.
func HostsByAddr(addrs map[netip.Addr]int) Hosts {
	return func(ap netip.AddrPort) (int, bool) {
		h, ok := addrs[ap.Addr()]
		return h, ok
	}
}

// packet is one kept packet before deduplication.
type packet struct {
	t        time.Time
	sum      uint64 // hash of the IP packet's first bytes
	from, to int
	size     int
}

// Capture is a running capture.
type Capture struct {
	socks []*afpacket.TPacket
	hosts Hosts
	seed  maphash.Seed

	mu      sync.Mutex
	packets []packet
	wg      sync.WaitGroup
}

// Open starts capturing on ifaces.
func Open(ifaces []string, hosts Hosts) (*Capture, error) {
	if len(ifaces) == 0 {
		return nil, ErrNoInterfaces
	}
	c := &Capture{hosts: hosts, seed: maphash.MakeSeed()}
	for _, name := range ifaces {
		s, err := afpacket.NewTPacket(afpacket.OptInterface(name), afpacket.OptFrameSize(4096),
			afpacket.OptBlockSize(1<<20), afpacket.OptNumBlocks(64), afpacket.OptPollTimeout(50*time.Millisecond))
		if err != nil {
			c.closeSockets()
			if errors.Is(err, os.ErrPermission) {
				return nil, fmt.Errorf("%w: %s: %w", ErrNotRoot, name, err)
			}
			return nil, fmt.Errorf("capture on %s: %w", name, err)
		}
		c.socks = append(c.socks, s)
	}
	return c, nil
}

// Run reads until ctx ends.
func (c *Capture) Run(ctx context.Context) {
	for _, s := range c.socks {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.read(ctx, s)
		}()
	}
	<-ctx.Done()
	c.wg.Wait()
}

func (c *Capture) read(ctx context.Context, s *afpacket.TPacket) {
	for ctx.Err() == nil {
		data, ci, err := s.ZeroCopyReadPacketData()
		if err != nil {
			continue // poll timeout, or a truncated read: nothing to keep
		}
		if p, ok := c.parse(data); ok {
			p.t = ci.Timestamp
			c.mu.Lock()
			c.packets = append(c.packets, p)
			c.mu.Unlock()
		}
	}
}

// parse reads an Ethernet frame carrying IPv4 TCP or UDP; sizes come from the headers, so a
// truncated capture (or a segmentation-offload super packet) counts its full length.
func (c *Capture) parse(b []byte) (packet, bool) {
	if len(b) < 14+20 || binary.BigEndian.Uint16(b[12:14]) != 0x0800 {
		return packet{}, false
	}
	ip := b[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || ihl < 20 || len(ip) < ihl+8 {
		return packet{}, false
	}
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	src := netip.AddrFrom4([4]byte(ip[12:16]))
	dst := netip.AddrFrom4([4]byte(ip[16:20]))
	l4 := ip[ihl:]
	sport, dport := binary.BigEndian.Uint16(l4[0:2]), binary.BigEndian.Uint16(l4[2:4])
	var size int
	switch ip[9] {
	case 6: // TCP
		if len(l4) < 13 {
			return packet{}, false
		}
		size = total - ihl - int(l4[12]>>4)*4
	case 17: // UDP
		size = total - ihl - 8
	default:
		return packet{}, false
	}
	if size <= 0 {
		return packet{}, false
	}
	from, ok1 := c.hosts(netip.AddrPortFrom(src, sport))
	to, ok2 := c.hosts(netip.AddrPortFrom(dst, dport))
	if !ok1 || !ok2 || from == to {
		return packet{}, false
	}
	n := min(len(ip), ihl+64)
	return packet{sum: maphash.Bytes(c.seed, ip[:n]), from: from, to: to, size: size}, true
}

// Captured is the number of packets kept so far, copies included.
func (c *Capture) Captured() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.packets)
}

// Close stops the sockets; call it after Run returned.
func (c *Capture) Close() { c.closeSockets() }

func (c *Capture) closeSockets() {
	for _, s := range c.socks {
		s.Close()
	}
	c.socks = nil
}

// Transmissions returns what was captured, each packet once (copies within DupWindow dropped,
// the earliest kept), in time order.
func (c *Capture) Transmissions() []observe.Transmission {
	c.mu.Lock()
	ps := slices.Clone(c.packets)
	c.mu.Unlock()
	return dedup(ps)
}

func dedup(ps []packet) []observe.Transmission {
	slices.SortFunc(ps, func(a, b packet) int {
		if a.sum != b.sum {
			if a.sum < b.sum {
				return -1
			}
			return 1
		}
		return a.t.Compare(b.t)
	})
	out := make([]observe.Transmission, 0, len(ps)/2+1)
	for i, p := range ps {
		if i > 0 && ps[i-1].sum == p.sum && p.t.Sub(ps[i-1].t) < DupWindow {
			continue
		}
		out = append(out, observe.Transmission{Time: p.t, From: p.from, To: p.to, Size: p.size})
	}
	slices.SortStableFunc(out, func(a, b observe.Transmission) int { return a.Time.Compare(b.Time) })
	return out
}

// InterfacesWithPrefix lists the network interfaces whose names start with prefix, e.g.
// "rlyd-v": the bridge ports of `relayd cluster --netns`.
func InterfacesWithPrefix(prefix string) ([]string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, i := range ifs {
		if strings.HasPrefix(i.Name, prefix) {
			out = append(out, i.Name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: none named %s*", ErrNoInterfaces, prefix)
	}
	return out, nil
}
