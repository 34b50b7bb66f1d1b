// Package nat tests relayd's NAT traversal on network namespaces (internal/hostnet): public
// libp2p hosts of internal/p2p on a public bridge and NAT'd ones each behind its own router with
// iptables MASQUERADE, each host a process of its own (this test binary started again in the
// host's namespace). It needs root and iptables (scripts/setup.sh); without them it is skipped.
//
// TestNATTraversal runs 3 public and 3 NAT'd hosts, one of them behind a symmetric NAT (about
// 20 s); RELAYD_NAT_HOSTS=public,natted[,symmetric] (e.g. 4,8,2) runs another network, and
// RELAYD_NAT_TRANSPORT=tcp or quic one transport only. RELAYD_NAT_LOGS keeps the hosts' logs in
// a directory.
package nat

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/hostnet"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/wait"
)

// childEnv makes the test binary a host process (runHost) instead of running the tests.
const childEnv = "RLYD_NAT_HOST"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runHost(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

const (
	port        = 4001
	testNetwork = "nattest"
	frameSize   = 1520 // relayd's one wire size
)

// command is one request to a host process; the host answers each with one status line.
type command struct {
	Op    string   `json:"op"` // "status", "add" (Addrs), "send" (To, N frames)
	Addrs []string `json:"addrs,omitempty"`
	To    string   `json:"to,omitempty"`
	N     int      `json:"n,omitempty"`
}

// status is a host process's answer.
type status struct {
	ID           string             `json:"id"`
	RelayAddrs   []string           `json:"relayAddrs"`
	Reachability string             `json:"reachability"`
	HolePunches  p2p.HolePunchStats `json:"holePunches"`
	Reach        map[string]string  `json:"reach"`    // by PeerId
	Received     map[string]int     `json:"received"` // frames by sender
	Err          string             `json:"err,omitempty"`
}

// runHost is a host process: an internal/p2p host with NAT traversal on port 4001 of every
// interface of its namespace, counting the frames it receives, driven by commands on in.
func runHost(in io.Reader, out io.Writer) int {
	key, _, err := crypto.GenerateSecp256k1Key(rand.Reader)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, err := p2p.New(p2p.Config{
		PrivKey:           key,
		ListenAddrs:       listenAddrs(),
		Network:           testNetwork,
		Traversal:         true,
		HeartbeatInterval: time.Second,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer h.Close()
	var mu sync.Mutex
	received := map[string]int{}
	if err := h.Handle(p2p.ProtocolMsg, func(from peer.ID, _ []byte) {
		mu.Lock()
		received[from.String()]++
		mu.Unlock()
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go h.Run(context.Background())

	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var c command
		st := status{ID: h.ID().String(), Reach: map[string]string{}, Received: map[string]int{}}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			st.Err = err.Error()
		}
		switch c.Op {
		case "add":
			for _, s := range c.Addrs {
				info, err := peer.AddrInfoFromString(s)
				if err == nil {
					err = h.AddPeer(*info)
				}
				if err != nil {
					st.Err = err.Error()
				}
			}
		case "send":
			to, err := peer.Decode(c.To)
			if err != nil {
				st.Err = err.Error()
				break
			}
			frame := make([]byte, frameSize)
			deadline := time.Now().Add(60 * time.Second)
			for i := 0; i < c.N; {
				if err := h.Send(context.Background(), to, p2p.ProtocolMsg, frame); err == nil {
					i++
				} else if time.Now().After(deadline) {
					st.Err = fmt.Sprintf("sent %d of %d: %v", i, c.N, err)
					break
				} else {
					time.Sleep(50 * time.Millisecond) // the outbound stream backs off; try again
				}
			}
		}
		for _, a := range h.RelayAddrs() {
			st.RelayAddrs = append(st.RelayAddrs, a.String())
		}
		st.Reachability = h.Reachability().String()
		st.HolePunches = h.HolePunches()
		for _, p := range h.Peers() {
			st.Reach[p.ID.String()] = string(p.Reach)
		}
		mu.Lock()
		for k, v := range received {
			st.Received[k] = v
		}
		mu.Unlock()
		if err := enc.Encode(st); err != nil {
			return 1
		}
	}
	return 0
}

// listenAddrs are port 4001 on every interface, over TCP and QUIC or one of them (transport).
func listenAddrs() []ma.Multiaddr {
	var out []ma.Multiaddr
	if transport() != "quic" {
		out = append(out, ma.StringCast(fmt.Sprintf("/ip4/0.0.0.0/tcp/%d", port)))
	}
	if transport() != "tcp" {
		out = append(out, ma.StringCast(fmt.Sprintf("/ip4/0.0.0.0/udp/%d/quic-v1", port)))
	}
	return out
}

// proc is a host process as the test drives it.
type proc struct {
	host hostnet.Host
	mu   sync.Mutex
	in   io.Writer
	out  *bufio.Scanner
	id   string
}

func (p *proc) do(t *testing.T, c command) status {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	b, _ := json.Marshal(c)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("host %d: %v", p.host.Index, err)
	}
	if !p.out.Scan() {
		t.Fatalf("host %d ended: %v", p.host.Index, p.out.Err())
	}
	var st status
	if err := json.Unmarshal(p.out.Bytes(), &st); err != nil {
		t.Fatalf("host %d: %v", p.host.Index, err)
	}
	if st.Err != "" {
		t.Errorf("host %d %s: %s", p.host.Index, c.Op, st.Err)
	}
	return st
}

// hostCounts is the network's size: RELAYD_NAT_HOSTS=public,natted[,symmetric] (the last
// symmetric of the NAT'd hosts behind symmetric NATs), or 3, 3 and 1.
func hostCounts(t *testing.T) (public, natted, symmetric int) {
	public, natted, symmetric = 3, 3, 1
	if v := os.Getenv("RELAYD_NAT_HOSTS"); v != "" {
		f := strings.Split(v, ",")
		n := make([]int, 3)
		ok := len(f) == 2 || len(f) == 3
		for i := range f {
			var err error
			if n[i], err = strconv.Atoi(f[i]); err != nil {
				ok = false
			}
		}
		public, natted, symmetric = n[0], n[1], n[2]
		if !ok || public < 2 || natted < 2 || symmetric < 0 || symmetric > natted {
			t.Fatalf("RELAYD_NAT_HOSTS=%q: want public,natted[,symmetric] with at least 2 public and 2 NAT'd hosts", v)
		}
	}
	return public, natted, symmetric
}

// TestNATTraversal: every NAT'd host takes a relay reservation on a public host, frames flow
// between every pair, and NAT'd pairs end up on hole-punched direct connections (the rate is
// reported; the target, the measured internet baseline, is 70 %).
func TestNATTraversal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creates network namespaces: needs root")
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables (scripts/setup.sh)")
	}
	nPublic, nNAT, nSymmetric := hostCounts(t)
	nw, err := hostnet.Create(nPublic+nNAT, hostnet.Options{Prefix: "rlydn", Octet: 81, Public: true, NAT: nNAT, SymmetricNAT: nSymmetric})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nw.Close(); err != nil {
			t.Errorf("close network: %v", err)
		}
	})
	start := time.Now()
	logs := os.Getenv("RELAYD_NAT_LOGS") // a directory that keeps the hosts' logs
	if logs == "" {
		logs = t.TempDir()
	}
	var procs []*proc
	for _, h := range nw.Hosts() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		stderr, err := os.Create(filepath.Join(logs, fmt.Sprintf("host%d.log", h.Index)))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Start(cmd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			in.Close()
			cmd.Process.Kill()
			cmd.Wait()
			stderr.Close()
			if t.Failed() {
				if b, err := os.ReadFile(stderr.Name()); err == nil {
					t.Logf("host %d (%s) log, last lines:\n%s", h.Index, h.Public, tail(string(b), 40))
				}
			}
		})
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		procs = append(procs, &proc{host: h, in: in, out: sc})
	}
	for _, p := range procs {
		p.id = p.do(t, command{Op: "status"}).ID
	}
	public, natted := procs[:nPublic], procs[nPublic:]

	// Everyone learns the public hosts' addresses (as from their announcements on chain).
	var publicAddrs []string
	for _, p := range public {
		for _, a := range listenAddrs() {
			s := strings.Replace(a.String(), "0.0.0.0", p.host.Public.String(), 1)
			publicAddrs = append(publicAddrs, s+"/p2p/"+p.id)
		}
	}
	for _, p := range procs {
		var others []string
		for _, a := range publicAddrs {
			if !strings.HasSuffix(a, p.id) {
				others = append(others, a)
			}
		}
		p.do(t, command{Op: "add", Addrs: others})
	}

	// Every NAT'd host takes a reservation; everyone learns its relay addresses.
	relayAddrs := map[*proc][]string{}
	wait.For(t, func() bool {
		for _, p := range natted {
			if st := p.do(t, command{Op: "status"}); len(st.RelayAddrs) > 0 {
				relayAddrs[p] = st.RelayAddrs
			}
		}
		return len(relayAddrs) == len(natted)
	}, 90*time.Second, "a relay reservation for every NAT'd host")
	t.Logf("every NAT'd host holds a reservation after %s", time.Since(start).Round(time.Second))
	// AutoNAT's verdicts: the public hosts found themselves reachable (their relay services run
	// only then), the NAT'd ones know they are not.
	for _, p := range procs {
		want := "Public"
		if p.host.Router != "" {
			want = "Private"
		}
		if got := p.do(t, command{Op: "status"}).Reachability; got != want {
			t.Errorf("host %d (%s) reachability %s, want %s", p.host.Index, p.host.Public, got, want)
		}
	}
	for _, p := range procs {
		for q, addrs := range relayAddrs {
			if p != q {
				p.do(t, command{Op: "add", Addrs: addrs})
			}
		}
	}

	// Frames between every pair, both ways.
	const frames = 50
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range procs {
				if q != p {
					p.do(t, command{Op: "send", To: q.id, N: frames})
				}
			}
		}()
	}
	wg.Wait()
	var missing []string
	if !wait.Until(func() bool {
		missing = missing[:0]
		for _, p := range procs {
			st := p.do(t, command{Op: "status"})
			for _, q := range procs {
				if q != p && st.Received[q.id] < frames {
					missing = append(missing, fmt.Sprintf("%d→%d: %d frames, reached %q", q.host.Index, p.host.Index, st.Received[q.id], st.Reach[q.id]))
				}
			}
		}
		return len(missing) == 0
	}, 60*time.Second) {
		t.Fatalf("frames missing between %d of %d ordered pairs:\n%s", len(missing), len(procs)*(len(procs)-1), strings.Join(missing, "\n"))
	}
	t.Logf("%d frames of %d bytes arrived between every pair of %d hosts after %s",
		frames, frameSize, len(procs), time.Since(start).Round(time.Second))

	// How NAT'd pairs reach each other, once their hole punches had time to end (DCUtR tries up
	// to three times), by the kinds of their NATs.
	type tally struct{ pairs, punched, direct, relayed int }
	kind := func(p, q *proc) string {
		switch {
		case p.host.Symmetric && q.host.Symmetric:
			return "symmetric-symmetric"
		case p.host.Symmetric || q.host.Symmetric:
			return "cone-symmetric"
		}
		return "cone-cone"
	}
	reaches := func() map[string]*tally {
		st := map[*proc]status{}
		for _, p := range natted {
			st[p] = p.do(t, command{Op: "status"})
		}
		out := map[string]*tally{}
		for i, p := range natted {
			for _, q := range natted[i+1:] {
				k := out[kind(p, q)]
				if k == nil {
					k = &tally{}
					out[kind(p, q)] = k
				}
				k.pairs++
				a, b := st[p].Reach[q.id], st[q].Reach[p.id]
				switch {
				case a == string(peers.ReachHolePunched) || b == string(peers.ReachHolePunched):
					k.punched++
				case a == string(peers.ReachDirect) && b == string(peers.ReachDirect):
					k.direct++
				default:
					k.relayed++
				}
			}
		}
		return out
	}
	var byKind map[string]*tally
	wait.Until(func() bool {
		byKind = reaches()
		cone := byKind["cone-cone"]
		return cone == nil || cone.punched == cone.pairs // else, after the deadline, as they are
	}, 30*time.Second)
	if len(byKind) > 1 || byKind["cone-cone"] == nil { // pairs behind symmetric NATs: their attempts end within seconds
		wait.Until(func() bool {
			byKind = reaches()
			for _, k := range byKind {
				if k.relayed > 0 {
					return false
				}
			}
			return true
		}, 10*time.Second)
	}
	var hp p2p.HolePunchStats
	for _, p := range procs {
		s := p.do(t, command{Op: "status"}).HolePunches
		hp.DirectDials += s.DirectDials
		hp.DirectDialSuccesses += s.DirectDialSuccesses
		hp.HolePunches += s.HolePunches
		hp.HolePunchSuccesses += s.HolePunchSuccesses
	}
	for _, name := range []string{"cone-cone", "cone-symmetric", "symmetric-symmetric"} {
		if k := byKind[name]; k != nil {
			t.Logf("NAT'd pairs %s (%s): %d of %d hole-punched (%.0f %%), %d direct otherwise, %d only relayed",
				name, transport(), k.punched, k.pairs, 100*float64(k.punched)/float64(k.pairs), k.direct, k.relayed)
		}
	}
	t.Logf("DCUtR: direct dials %d of %d, synchronised punches %d of %d (both sides count)",
		hp.DirectDialSuccesses, hp.DirectDials, hp.HolePunchSuccesses, hp.HolePunches)
	if k := byKind["cone-cone"]; k != nil && float64(k.punched+k.direct) < 0.7*float64(k.pairs) {
		t.Errorf("%d of %d NAT'd pairs behind cone NATs direct: below the 70 %% target", k.punched+k.direct, k.pairs)
	}
}

// transport is RELAYD_NAT_TRANSPORT: tcp, quic, or both (the default).
func transport() string {
	if v := os.Getenv("RELAYD_NAT_TRANSPORT"); v == "tcp" || v == "quic" {
		return v
	}
	return "tcp+quic"
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
