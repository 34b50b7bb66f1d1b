// Package hostnet builds a network of hosts on one Linux machine: one network namespace per
// host, each with its own address on a bridge in the initial namespace, so that programs started
// in a host (Host.Start) bind, announce and dial real non-loopback addresses exactly as on
// separate machines. `relayd cluster --netns` runs its nodes there.
//
// A Network owns every name with its prefix (default "rlyd": namespaces rlyd-nN, the bridge
// rlyd0, host-side veths rlyd-vN): Create first removes whatever an earlier run left under that
// prefix (a command killed with SIGKILL cannot clean up), and Close removes it all again. Only
// that prefix is ever touched. The subnet is 10.<Octet>.0.0/16 (default 10.77.0.0/16): the
// bridge is .0.1, host N (from 1) is .0.(N+1), and beyond 253 hosts the next /24s follow.
//
// Options.Public puts the bridge on 11.<Octet>.0.0/16 instead, a range the internet routes (so
// that libp2p's AutoNAT, relays and hole punching treat the hosts as public) but that no test
// machine talks to. Options.NAT puts the last hosts each behind its own router, as at home: a
// namespace <prefix>-rN holds the host's bridge address and masquerades (iptables MASQUERADE) the
// host's private network 192.168.N.0/24, dropping what arrives unasked, and the host
// (192.168.N.2) routes through it. Options.SymmetricNAT gives the last of them a new random
// source port per connection. iptables must be installed (scripts/setup.sh).
//
// Creating namespaces and links needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): Create returns
// ErrNotRoot otherwise. It may import only the standard library and the netlink/netns
// libraries; it must not import other relayd packages.
package hostnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

var (
	// ErrNotRoot means the process cannot create namespaces and links: it is not root.
	ErrNotRoot = errors.New("network namespaces need root")
	// ErrBadOptions means an Options field is out of range.
	ErrBadOptions = errors.New("bad host network options")
)

// Defaults of Options.
const (
	DefaultPrefix = "rlyd"
	DefaultOctet  = 77
	// MaxHosts is how many host addresses fit in the /16 after the bridge.
	MaxHosts = 253 * 254
)

// Options configures Create. The zero value is the default network.
type Options struct {
	// Prefix names everything the network creates (DefaultPrefix); at most 5 characters, so that
	// every link name fits the kernel's 15.
	Prefix string
	// Octet is the second octet of the network's 10.x.0.0/16 (DefaultOctet).
	Octet int
	// LinkRate, when set, limits each host's link in both directions with a token bucket filter
	// (`tc tbf`), e.g. "10mbit".
	LinkRate string
	// Public puts the bridge on 11.<Octet>.0.0/16, a range the internet routes, instead of
	// 10.<Octet>.0.0/16.
	Public bool
	// NAT is how many of the hosts (the last ones) sit each behind its own router with
	// MASQUERADE; at most 254, and they must be among the first 254 hosts.
	NAT int
	// SymmetricNAT is how many of those (the last ones) have a symmetric NAT: a new random source
	// port for every connection (MASQUERADE --random-fully), as many carrier-grade NATs do, which
	// hole punching cannot predict.
	SymmetricNAT int
}

// Network is a bridge and its hosts.
type Network struct {
	opts  Options
	hosts []Host
}

// Host is one namespace on the bridge.
type Host struct {
	// Index counts hosts from 1.
	Index int
	// Namespace is the named network namespace (/run/netns/<Namespace>).
	Namespace string
	// Addr is the host's own address: on the bridge, or behind its router.
	Addr netip.Addr
	// Public is the address the other hosts see it from: Addr, or its router's address on the
	// bridge.
	Public netip.Addr
	// Router names the namespace of the host's router; empty for a host on the bridge.
	Router string
	// Symmetric reports that the router picks a new random source port for every connection.
	Symmetric bool
}

// Create removes what an earlier network of the same prefix left, then makes the bridge and n
// hosts, each with its loopback up and one veth to the bridge carrying its address.
func Create(n int, opts Options) (*Network, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Octet == 0 {
		opts.Octet = DefaultOctet
	}
	switch {
	case len(opts.Prefix) > 5 || strings.ContainsAny(opts.Prefix, "/ -"):
		return nil, fmt.Errorf("%w: prefix %q must be at most 5 characters, no spaces, dashes or slashes", ErrBadOptions, opts.Prefix)
	case opts.Octet < 0 || opts.Octet > 255:
		return nil, fmt.Errorf("%w: octet %d", ErrBadOptions, opts.Octet)
	case n < 1 || n > MaxHosts:
		return nil, fmt.Errorf("%w: %d hosts, want 1 to %d", ErrBadOptions, n, MaxHosts)
	case opts.SymmetricNAT < 0 || opts.SymmetricNAT > opts.NAT:
		return nil, fmt.Errorf("%w: %d symmetric NATs of %d", ErrBadOptions, opts.SymmetricNAT, opts.NAT)
	case opts.NAT < 0 || opts.NAT > n || n > 254 && opts.NAT > 0:
		return nil, fmt.Errorf("%w: %d hosts behind NAT of %d (NAT needs at most 254 hosts)", ErrBadOptions, opts.NAT, n)
	}
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	if err := Clean(opts.Prefix); err != nil {
		return nil, err
	}
	nw := &Network{opts: opts}
	if err := nw.build(n); err != nil {
		Clean(opts.Prefix)
		return nil, err
	}
	return nw, nil
}

// BridgeAddr is the address of the bridge, where programs of the initial namespace (the dev
// chain) listen for the hosts.
func (nw *Network) BridgeAddr() netip.Addr {
	return netip.AddrFrom4([4]byte{nw.firstOctet(), byte(nw.opts.Octet), 0, 1})
}

// firstOctet is 10, or 11 for a public network.
func (nw *Network) firstOctet() byte {
	if nw.opts.Public {
		return 11
	}
	return 10
}

// Hosts returns the hosts, Index 1 first.
func (nw *Network) Hosts() []Host { return nw.hosts }

// Close removes the bridge and every host (their programs must have ended, or the kernel keeps
// a namespace alive until they do).
func (nw *Network) Close() error { return Clean(nw.opts.Prefix) }

// hostAddr is host i's address: 10.octet.0.(i+1) up to host 253, then the next /24s.
func hostAddr(octet, i int) netip.Addr { return hostAddrIn(10, octet, i) }

// hostAddrIn is hostAddr on first.octet.0.0/16.
func hostAddrIn(first byte, octet, i int) netip.Addr {
	third, fourth := 0, i+1
	if i > 253 {
		third, fourth = 1+(i-254)/254, 1+(i-254)%254
	}
	return netip.AddrFrom4([4]byte{first, byte(octet), byte(third), byte(fourth)})
}

func (nw *Network) bridgeName() string      { return nw.opts.Prefix + "0" }
func (nw *Network) vethName(i int) string   { return fmt.Sprintf("%s-v%d", nw.opts.Prefix, i) }
func (nw *Network) nsName(i int) string     { return fmt.Sprintf("%s-n%d", nw.opts.Prefix, i) }
func (nw *Network) routerName(i int) string { return fmt.Sprintf("%s-r%d", nw.opts.Prefix, i) }
func (nw *Network) prefixLen() netip.Prefix { return netip.PrefixFrom(nw.BridgeAddr(), 16) }

func (nw *Network) build(n int) error {
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: nw.bridgeName()}}
	if err := netlink.LinkAdd(br); err != nil {
		return fmt.Errorf("add bridge %s: %w", br.Name, err)
	}
	if err := netlink.AddrAdd(br, addrOf(nw.prefixLen())); err != nil {
		return fmt.Errorf("address bridge %s: %w", br.Name, err)
	}
	if err := netlink.LinkSetUp(br); err != nil {
		return fmt.Errorf("bring up bridge %s: %w", br.Name, err)
	}
	for i := 1; i <= n; i++ {
		h := Host{Index: i, Namespace: nw.nsName(i), Addr: hostAddrIn(nw.firstOctet(), nw.opts.Octet, i)}
		h.Public = h.Addr
		if i > n-nw.opts.NAT {
			h.Router = nw.routerName(i)
			h.Symmetric = i > n-nw.opts.SymmetricNAT
			if err := nw.addNATHost(br, &h); err != nil {
				return fmt.Errorf("host %d: %w", i, err)
			}
		} else if err := nw.addHost(br, h); err != nil {
			return fmt.Errorf("host %d: %w", i, err)
		}
		nw.hosts = append(nw.hosts, h)
	}
	return nil
}

// addNATHost makes h's router on the bridge (with h's slot address, which becomes h.Public) and h
// behind it on 192.168.<Index>.0/24: the router forwards and masquerades h's traffic and, like a
// home router, drops new connections from outside; h's default route is the router.
func (nw *Network) addNATHost(br *netlink.Bridge, h *Host) error {
	router := Host{Index: h.Index, Namespace: h.Router, Addr: h.Public}
	if err := nw.addHost(br, router); err != nil {
		return err
	}
	lan := func(last byte) netip.Addr { return netip.AddrFrom4([4]byte{192, 168, byte(h.Index), last}) }
	h.Addr = lan(2)
	ns, err := newNamedNS(h.Namespace)
	if err != nil {
		return err
	}
	defer ns.Close()
	rns, err := netns.GetFromName(h.Router)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", h.Router, err)
	}
	defer rns.Close()
	rh, err := netlink.NewHandleAt(rns)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", h.Router, err)
	}
	defer rh.Close()
	if err := rh.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "lan0"}, PeerName: "wan0"}); err != nil {
		return fmt.Errorf("add veth in %s: %w", h.Router, err)
	}
	lan0, err := rh.LinkByName("lan0")
	if err != nil {
		return err
	}
	if err := rh.AddrAdd(lan0, addrOf(netip.PrefixFrom(lan(1), 24))); err != nil {
		return fmt.Errorf("address lan0 in %s: %w", h.Router, err)
	}
	if err := rh.LinkSetUp(lan0); err != nil {
		return err
	}
	wan0, err := rh.LinkByName("wan0")
	if err != nil {
		return err
	}
	if err := rh.LinkSetNsFd(wan0, int(ns)); err != nil {
		return fmt.Errorf("move veth into %s: %w", h.Namespace, err)
	}
	nh, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", h.Namespace, err)
	}
	defer nh.Close()
	eth0, err := nh.LinkByName("wan0")
	if err == nil {
		err = nh.LinkSetName(eth0, "eth0")
	}
	if err == nil {
		err = nh.AddrAdd(eth0, addrOf(netip.PrefixFrom(h.Addr, 24)))
	}
	for _, name := range []string{"lo", "eth0"} {
		if err != nil {
			break
		}
		var l netlink.Link
		if l, err = nh.LinkByName(name); err == nil {
			err = nh.LinkSetUp(l)
		}
	}
	if err == nil {
		gw := lan(1).As4()
		err = nh.RouteAdd(&netlink.Route{Gw: net.IP(gw[:])})
	}
	if err != nil {
		return fmt.Errorf("set up %s: %w", h.Namespace, err)
	}
	return inNamespace(h.Router, func() error {
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
			return fmt.Errorf("forwarding in %s: %w", h.Router, err)
		}
		masquerade := []string{"-t", "nat", "-A", "POSTROUTING", "-o", "eth0", "-j", "MASQUERADE"}
		if h.Symmetric {
			masquerade = append(masquerade, "--random-fully")
		}
		for _, rule := range [][]string{
			masquerade,
			{"-A", "INPUT", "-i", "eth0", "-m", "conntrack", "--ctstate", "NEW,INVALID", "-j", "DROP"},
			{"-A", "FORWARD", "-i", "eth0", "-m", "conntrack", "--ctstate", "NEW,INVALID", "-j", "DROP"},
		} {
			if out, err := exec.Command("iptables", rule...).CombinedOutput(); err != nil {
				return fmt.Errorf("iptables %s in %s: %w: %s", strings.Join(rule, " "), h.Router, err, strings.TrimSpace(string(out)))
			}
		}
		return nil
	})
}

// addHost creates h's namespace and its veth pair: one end on the bridge, the other, named eth0
// and carrying h's address, in the namespace.
func (nw *Network) addHost(br *netlink.Bridge, h Host) error {
	ns, err := newNamedNS(h.Namespace)
	if err != nil {
		return err
	}
	defer ns.Close()
	peer := h.Namespace + "p" // a temporary name, unique in the initial namespace
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: nw.vethName(h.Index), MasterIndex: br.Index}, PeerName: peer}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("add veth %s: %w", veth.Name, err)
	}
	inner, err := netlink.LinkByName(peer)
	if err != nil {
		return fmt.Errorf("find veth %s: %w", peer, err)
	}
	if err := netlink.LinkSetNsFd(inner, int(ns)); err != nil {
		return fmt.Errorf("move veth into %s: %w", h.Namespace, err)
	}
	if err := netlink.LinkSetUp(veth); err != nil {
		return fmt.Errorf("bring up %s: %w", veth.Name, err)
	}
	nh, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netlink in %s: %w", h.Namespace, err)
	}
	defer nh.Close()
	inner, err = nh.LinkByName(peer)
	if err != nil {
		return fmt.Errorf("find veth in %s: %w", h.Namespace, err)
	}
	if err := nh.LinkSetName(inner, "eth0"); err != nil {
		return fmt.Errorf("rename veth in %s: %w", h.Namespace, err)
	}
	if err := nh.AddrAdd(inner, addrOf(netip.PrefixFrom(h.Addr, 16))); err != nil {
		return fmt.Errorf("address %s: %w", h.Namespace, err)
	}
	for _, name := range []string{"lo", "eth0"} {
		l, err := nh.LinkByName(name)
		if err == nil {
			err = nh.LinkSetUp(l)
		}
		if err != nil {
			return fmt.Errorf("bring up %s in %s: %w", name, h.Namespace, err)
		}
	}
	if nw.opts.LinkRate != "" {
		return nw.limit(h)
	}
	return nil
}

// limit shapes h's link in both directions: the bridge side's egress is what h receives, eth0's
// egress in the namespace what it sends.
func (nw *Network) limit(h Host) error {
	args := func(dev string) []string {
		return []string{"qdisc", "replace", "dev", dev, "root", "tbf", "rate", nw.opts.LinkRate, "burst", "64kb", "latency", "100ms"}
	}
	if out, err := exec.Command("tc", args(nw.vethName(h.Index))...).CombinedOutput(); err != nil {
		return fmt.Errorf("%w: tc on %s: %v: %s", ErrBadOptions, nw.vethName(h.Index), err, strings.TrimSpace(string(out)))
	}
	cmd := exec.Command("tc", args("eth0")...)
	if err := h.Start(cmd); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w: tc in %s: %v", ErrBadOptions, h.Namespace, err)
	}
	return nil
}

// Start starts cmd in h's namespace: the process and everything it starts bind and dial there.
func (h Host) Start(cmd *exec.Cmd) error {
	return inNamespace(h.Namespace, cmd.Start)
}

// Do runs fn on a thread switched into h's namespace: sockets fn opens (a listener, a
// connection) belong to the namespace and stay there.
func (h Host) Do(fn func() error) error { return inNamespace(h.Namespace, fn) }

// inNamespace runs fn on this goroutine's thread switched into the named namespace and back.
// A process forked meanwhile inherits the namespace.
func inNamespace(name string, fn func() error) error {
	target, err := netns.GetFromName(name)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", name, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current namespace: %w", err)
	}
	defer orig.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter namespace %s: %w", name, err)
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		// The thread stays in the wrong namespace: leave it locked, so that it ends with the
		// goroutine instead of running other goroutines.
		return fmt.Errorf("leave namespace %s: %w", name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// newNamedNS creates a named namespace without moving the calling goroutine into it for longer
// than the call.
func newNamedNS(name string) (netns.NsHandle, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return 0, fmt.Errorf("current namespace: %w", err)
	}
	defer orig.Close()
	ns, err := netns.NewNamed(name) // also switches this thread into it
	if serr := netns.Set(orig); serr != nil {
		panic(fmt.Sprintf("hostnet: cannot return to the initial network namespace: %v", serr))
	}
	if err != nil {
		return 0, fmt.Errorf("create namespace %s: %w", name, err)
	}
	return ns, nil
}

// Clean removes every namespace named <prefix>-n… or <prefix>-r… and every link named <prefix>… of the initial
// namespace. Removing what is not there is not an error.
func Clean(prefix string) error {
	if prefix == "" {
		return fmt.Errorf("%w: empty prefix", ErrBadOptions)
	}
	var errs []error
	links, err := netlink.LinkList()
	if err != nil {
		errs = append(errs, err)
	}
	for _, l := range links {
		name := l.Attrs().Name
		if owned(prefix, name) {
			// A veth goes with its other end: ENODEV when that end's namespace went first.
			if err := netlink.LinkDel(l); err != nil && !errors.Is(err, syscall.ENODEV) {
				errs = append(errs, fmt.Errorf("delete link %s: %w", name, err))
			}
		}
	}
	entries, err := os.ReadDir("/run/netns")
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix+"-n") || strings.HasPrefix(e.Name(), prefix+"-r") {
			if err := netns.DeleteNamed(e.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("delete namespace %s: %w", e.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// owned reports whether a link of the initial namespace is one a network of prefix creates: the
// bridge <prefix>0, a veth <prefix>-vN, or a veth end <prefix>-nNp or <prefix>-rNp not yet moved.
func owned(prefix, name string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	return ok && (rest == "0" || strings.HasPrefix(rest, "-v") || strings.HasPrefix(rest, "-n") || strings.HasPrefix(rest, "-r"))
}

func addrOf(p netip.Prefix) *netlink.Addr {
	a := p.Addr().As4()
	return &netlink.Addr{IPNet: &net.IPNet{IP: net.IP(a[:]), Mask: net.CIDRMask(p.Bits(), 32)}}
}
