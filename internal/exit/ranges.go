package exit

import "net/netip"

// block is a range of addresses an exit never dials unless an address rule inside it names
// them.
type block struct {
	prefix netip.Prefix
	what   string
}

// forbidden are the blocks, most specific first. An IPv4-mapped IPv6 address is unmapped
// before it is looked up here; NAT64 and 6to4 addresses are looked up by the IPv4 address they
// carry (embedded).
var forbidden = []block{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this network)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved and broadcast"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// embedders are the IPv6 ranges that carry an IPv4 address a gateway connects to: NAT64's
// well-known prefix (the last 32 bits) and 6to4 (the 32 bits after the prefix).
var embedders = []netip.Prefix{netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("2002::/16")}

// forbiddenBlock returns the forbidden block an address (unmapped) lies in. For an address
// that carries a forbidden IPv4 address, the block is the IPv6 range that carries the IPv4
// block (64:ff9b::a00:0/104 for 10.0.0.0/8 through NAT64).
func forbiddenBlock(a netip.Addr) (block, bool) {
	for _, b := range forbidden {
		if b.prefix.Contains(a) {
			return b, true
		}
	}
	for _, e := range embedders {
		if !e.Contains(a) {
			continue
		}
		off := e.Bits() / 8 // where the IPv4 address starts: byte 12 for NAT64, 2 for 6to4
		b16 := a.As16()
		v4 := netip.AddrFrom4([4]byte(b16[off : off+4]))
		b, ok := forbiddenBlock(v4)
		if !ok {
			return block{}, false
		}
		base := b16
		copy(base[off:off+4], b.prefix.Addr().AsSlice())
		return block{netip.PrefixFrom(netip.AddrFrom16(base), off*8+b.prefix.Bits()).Masked(), b.what + " (embedded)"}, true
	}
	return block{}, false
}
