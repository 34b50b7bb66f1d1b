package capture

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/observe"
)

// frame builds an Ethernet frame with an IPv4 UDP or TCP packet of payload bytes.
func frame(proto byte, src, dst netip.AddrPort, payload int, id uint16) []byte {
	l4 := 8
	if proto == 6 {
		l4 = 20
	}
	b := make([]byte, 14+20+l4+payload)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+l4+payload))
	binary.BigEndian.PutUint16(ip[4:], id)
	ip[9] = proto
	copy(ip[12:16], src.Addr().AsSlice())
	copy(ip[16:20], dst.Addr().AsSlice())
	binary.BigEndian.PutUint16(ip[20:], src.Port())
	binary.BigEndian.PutUint16(ip[22:], dst.Port())
	if proto == 6 {
		ip[32] = 5 << 4
	}
	return b
}

// TestParseAndDedup: sizes come from the headers, packets between unknown hosts, pure TCP
// acknowledgements and non-IP frames are dropped, and a packet seen on two ports counts once.
func TestParseAndDedup(t *testing.T) {
	a, b, chain := netip.MustParseAddrPort("10.77.0.2:9091"), netip.MustParseAddrPort("10.77.0.3:9091"), netip.MustParseAddrPort("10.77.0.1:8545")
	c := &Capture{hosts: HostsByAddr(map[netip.Addr]int{a.Addr(): 1, b.Addr(): 2}), seed: maphash.MakeSeed()}
	t0 := time.Unix(100, 0)
	var ps []packet
	add := func(f []byte, at time.Time) bool {
		p, ok := c.parse(f)
		if ok {
			p.t = at
			ps = append(ps, p)
		}
		return ok
	}
	if !add(frame(6, a, b, 1550, 1), t0) || !add(frame(6, a, b, 1550, 1), t0.Add(time.Millisecond)) {
		t.Fatal("a TCP packet between two hosts was not kept")
	}
	if !add(frame(17, b, a, 79, 2), t0.Add(2*time.Millisecond)) {
		t.Fatal("a UDP packet between two hosts was not kept")
	}
	if add(frame(6, a, b, 0, 3), t0) || add(frame(6, a, chain, 200, 4), t0) || add(frame(6, a, a, 20, 5), t0) {
		t.Fatal("kept a pure acknowledgement, chain traffic or a packet to itself")
	}
	arp := frame(17, a, b, 10, 6)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	if add(arp, t0) || add(arp[:20], t0) {
		t.Fatal("kept a non-IP or truncated frame")
	}
	// The same packet again much later is a new packet (a retransmission).
	add(frame(6, a, b, 1550, 1), t0.Add(time.Second))
	got := dedup(ps)
	want := []observe.Transmission{
		{Time: t0, From: 1, To: 2, Size: 1550},
		{Time: t0.Add(2 * time.Millisecond), From: 2, To: 1, Size: 79},
		{Time: t0.Add(time.Second), From: 1, To: 2, Size: 1550},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].From != want[i].From || got[i].To != want[i].To || got[i].Size != want[i].Size {
			t.Errorf("transmission %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestCaptureLoopback captures real datagrams on the loopback interface (each seen twice
// there) by their port pair. Needs root.
func TestCaptureLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("capturing needs root")
	}
	x, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	y, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	ports := map[uint16]int{uint16(x.LocalAddr().(*net.UDPAddr).Port): 1, uint16(y.LocalAddr().(*net.UDPAddr).Port): 2}
	c, err := Open([]string{"lo"}, func(ap netip.AddrPort) (int, bool) { h, ok := ports[ap.Port()]; return h, ok })
	if errors.Is(err, ErrNotRoot) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	for i := range 20 {
		if _, err := x.WriteTo(make([]byte, 1000+i), y.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		if _, err := y.WriteTo(make([]byte, 49), x.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	// Loopback shows each datagram twice: wait for all 80 copies (bounded), then stop.
	for end := time.Now().Add(10 * time.Second); c.Captured() < 80 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond) // polling the capture's count, with a deadline
	}
	cancel()
	<-done
	got := c.Transmissions()
	sizes := map[int]int{}
	for _, g := range got {
		sizes[g.Size]++
		if g.Size >= 1000 && (g.From != 1 || g.To != 2) || g.Size == 49 && (g.From != 2 || g.To != 1) {
			t.Errorf("transmission %+v: wrong direction", g)
		}
	}
	for i := range 20 {
		if sizes[1000+i] != 1 {
			t.Errorf("datagram of %d bytes captured %d times, want once", 1000+i, sizes[1000+i])
		}
	}
	if sizes[49] != 20 {
		t.Errorf("%d datagrams of 49 bytes, want 20", sizes[49])
	}
}
