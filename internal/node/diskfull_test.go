package node

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRelayerWithFullDisk (root: mounts a tmpfs): a relayer whose disk fills up keeps the
// acknowledged ticket it cannot write, says so on /readyz, and refuses paid packets instead of
// relaying them unpaid; when space is freed it records the ticket, is ready again and relays.
func TestRelayerWithFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a small tmpfs as the relayer's data directory")
	}
	if testing.Short() {
		t.Skip("starts a dev chain and four nodes")
	}
	ch := startDevChain(t)
	net := &testNet{t: t, chain: ch}
	var filler string
	for i := range 4 {
		cfg := fundedNodeConfig(t, ch, tokens(100))
		cfg.Network = "test"
		if i == 1 {
			if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mount("tmpfs", cfg.Data, "tmpfs", 0, "size=32m,mode=0700"); err != nil {
				t.Skipf("cannot mount a tmpfs: %v", err)
			}
			t.Cleanup(func() { syscall.Unmount(cfg.Data, syscall.MNT_DETACH) })
			filler = filepath.Join(cfg.Data, "filler")
		}
		net.nodes = append(net.nodes, startNode(t, cfg))
	}
	a, r1, r2, b := net.nodes[0], net.nodes[1], net.nodes[2], net.nodes[3]
	net.eventually("every node sees every announcement", func() bool {
		for _, n := range net.nodes {
			if nodeInfo(n).PeersAnnounced != len(net.nodes) {
				return false
			}
		}
		return true
	})
	net.open(a, r1, tokens(1))
	net.open(r1, r2, tokens(1))
	net.open(r2, b, tokens(1))
	bFrames := watch(t, b)
	send := func(text string) {
		t.Helper()
		body := fmt.Sprintf(`{"body":%q,"recipient":%q}`, text, b.id.PeerID()) // the one path: over R1 and R2
		net.mustCall(a, http.MethodPost, "/messages", body, http.StatusAccepted, nil)
	}
	tickets := func() int {
		var list []ticketView
		net.mustCall(r1, http.MethodGet, "/tickets", "", http.StatusOK, &list)
		return len(list)
	}
	ready := func() (int, string) { return restGet(t, r1, http.MethodGet, "/readyz", "", false) }
	if s, body := ready(); s != http.StatusOK {
		t.Fatalf("R1 not ready before the disk fills: %d %s", s, body)
	}

	fill(t, filler)
	// A full disk refuses only the writes that need new space: bbolt reuses the pages it freed,
	// and some commits still succeed. Messages go on until R1 cannot record a ticket.
	failing := func() bool {
		s, body := ready()
		return s == http.StatusServiceUnavailable && strings.Contains(body, "acknowledged tickets wait")
	}
	delivered := 0
	for !failing() {
		if delivered == 200 {
			t.Fatal("R1 recorded 200 tickets on a full disk")
		}
		text := fmt.Sprintf("message %d to a full disk", delivered)
		send(text)
		expectMessage(t, bFrames, text)
		delivered++
		net.eventually("R1 records the ticket or says it cannot", func() bool { return tickets() == delivered || failing() })
	}
	t.Logf("R1's store refused a ticket after %d messages", delivered)
	if n := tickets(); n != delivered-1 {
		t.Fatalf("R1 lists %d tickets while it keeps one it cannot write, want %d", n, delivered-1)
	}
	before := net.metricFloat(r1, `relayd_relay_packets_dropped_total{reason="store_failing"}`)
	send("refused while the disk is full")
	net.eventually("R1 drops the paid packet it could not record", func() bool {
		return net.metricFloat(r1, `relayd_relay_packets_dropped_total{reason="store_failing"}`) == before+1
	})

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	net.eventually("R1 records the ticket it kept", func() bool { return tickets() == delivered })
	net.eventually("R1 is ready again", func() bool { s, _ := ready(); return s == http.StatusOK })
	send("after the disk was freed")
	expectMessage(t, bFrames, "after the disk was freed")
	net.eventually("R1 records the next ticket", func() bool { return tickets() == delivered+1 })
}

// fill writes path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<16)
	for range 1 << 16 { // at most 4 GiB: the tmpfs is far smaller
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the file system never filled")
}
