package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/config"
)

// sessionView is a session as GET /sessions shows it.
type sessionView struct {
	ID, Destination, Protocol, Target, Listen string
	Active, Total                             int
	BytesOut, BytesIn                         uint64
}

// target is an HTTP server on the loopback interface the exit is to reach: /file serves size
// random bytes.
func target(t *testing.T, size int) (addr string, file []byte) {
	t.Helper()
	file = make([]byte, size)
	if _, err := rand.Read(file); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(file)))
		_, _ = w.Write(file)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), file
}

// TestSessionsThroughAnExit: a session opened over REST carries an HTTP download from the
// exit's allowed target to the entry through two relayers each way, byte-exact; the exit refuses
// a target outside its rules (the local connection closes without a byte); the session lists its
// counters and closes.
func TestSessionsThroughAnExit(t *testing.T) {
	net, a, _, _, b := sessionNet(t, func(*config.Config, *config.Config) {})
	addr, file := target(t, 64<<10)
	other, _ := target(t, 10)
	net.mustCall(b, http.MethodPut, "/settings/exitAllow", fmt.Sprintf(`{"settingValue":[%q]}`, addr), http.StatusNoContent, nil)

	var s sessionView
	net.mustCall(a, http.MethodPost, "/sessions", fmt.Sprintf(`{"destination":%q,"protocol":"tcp","target":%q}`, b.id.PeerID(), addr),
		http.StatusCreated, &s)
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get("http://" + s.Listen + "/file")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || sha256.Sum256(got) != sha256.Sum256(file) {
		t.Fatalf("downloaded %d bytes (want %d), equal %v: %v", len(got), len(file), bytes.Equal(got, file), err)
	}
	var list []sessionView
	net.mustCall(a, http.MethodGet, "/sessions", "", http.StatusOK, &list)
	if len(list) != 1 || list[0].ID != s.ID || list[0].Total != 1 || list[0].BytesIn < uint64(len(file)) || list[0].BytesOut == 0 {
		t.Fatalf("sessions %+v", list)
	}

	// A target the exit's rules do not name: the connection is closed without an answer.
	var refused sessionView
	net.mustCall(a, http.MethodPost, "/sessions", fmt.Sprintf(`{"destination":%q,"protocol":"tcp","target":%q}`, b.id.PeerID(), other),
		http.StatusCreated, &refused)
	conn, err := (&netDialer{}).dial(refused.Listen)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	_, _ = conn.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	if n, err := conn.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("a refused session answered %d bytes, %v", n, err)
	}
	conn.Close()

	net.mustCall(a, http.MethodDelete, "/sessions/"+s.ID, "", http.StatusNoContent, nil)
	net.mustCall(a, http.MethodDelete, "/sessions/"+refused.ID, "", http.StatusNoContent, nil)
	net.mustCall(a, http.MethodGet, "/sessions", "", http.StatusOK, &list)
	if len(list) != 0 {
		t.Fatalf("sessions after closing them: %+v", list)
	}
	if _, err := client.Get("http://" + s.Listen + "/file"); err == nil {
		t.Fatal("a closed session still listens")
	}
}

// TestSOCKS5ThroughAnExit: with --socks5Listen and --socks5Exit, an HTTP client using the
// SOCKS5 proxy with remote names (socks5h) downloads through the exit; a target outside the
// exit's rules is refused with SOCKS5's "not allowed" before any byte.
func TestSOCKS5ThroughAnExit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev chain and several nodes")
	}
	addr, file := target(t, 64<<10)
	tn, a, _, _, b := sessionNet(t, func(entry, exit *config.Config) {
		exit.ExitAllow = []string{addr}
		entry.SOCKS5Listen, entry.SOCKS5Exit = "127.0.0.1:0", "exit" // an alias, set below
	})
	entry := a
	tn.mustCall(a, http.MethodPost, "/aliases", fmt.Sprintf(`{"alias":"exit","peerId":%q}`, b.id.PeerID()), http.StatusCreated, nil)
	proxy := &url.URL{Scheme: "socks5h", Host: entry.sessions.SOCKS.Addr().String()}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	resp, err := client.Get("http://" + addr + "/file")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, file) {
		t.Fatalf("downloaded %d bytes (want %d): %v", len(got), len(file), err)
	}
	// Not allowed: the exit's own API port, and 127.0.0.1 elsewhere.
	for _, dest := range []string{b.APIAddr().String(), "127.0.0.1:9"} {
		_, err := client.Get("http://" + dest + "/")
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("not allowed")) {
			t.Fatalf("%s through the exit: %v, want not allowed", dest, err)
		}
	}
	// The socks5Listen setting moves the entry while the node runs: the new address serves, the
	// old one takes no connection.
	old := entry.sessions.SOCKSAddr().String()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	moved := free.Addr().String()
	free.Close()
	tn.mustCall(a, http.MethodPut, "/settings/socks5Listen", fmt.Sprintf(`{"settingValue":%q}`, moved), http.StatusNoContent, nil)
	if got := entry.sessions.SOCKSAddr(); got == nil || got.String() != moved {
		t.Fatalf("SOCKS5 entry on %v after the setting, want %s", got, moved)
	}
	client.Transport = &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "socks5h", Host: moved})}
	if resp, err := client.Get("http://" + addr + "/file"); err != nil {
		t.Fatalf("through the moved entry: %v", err)
	} else if got, err := io.ReadAll(resp.Body); resp.Body.Close() != nil || err != nil || !bytes.Equal(got, file) {
		t.Fatalf("through the moved entry: %d bytes, %v", len(got), err)
	}
	if c, err := net.DialTimeout("tcp", old, time.Second); err == nil {
		c.Close()
		t.Fatalf("the old SOCKS5 address %s still takes connections", old)
	}
}

// sessionNet starts a dev chain and a line of nodes a (the entry), r1, r2, b (the exit), with
// channels both ways, after edit changed the entry's and the exit's configs. The channels are
// large: at a win probability of 1 every answer costs the entry two forward packets of reply
// block and the exit one reply, 0.02 to 0.09 tokens each, and every relayer pays its next hop.
func sessionNet(t *testing.T, edit func(entry, exit *config.Config)) (tn *testNet, a, r1, r2, b *Node) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a dev chain and several nodes")
	}
	ch := startDevChain(t)
	tn = &testNet{t: t, chain: ch}
	var cfgs []config.Config
	for range 4 {
		cfgs = append(cfgs, fundedNodeConfig(t, ch, tokens(300)))
	}
	edit(&cfgs[0], &cfgs[3])
	for _, c := range cfgs {
		tn.nodes = append(tn.nodes, startNode(t, c))
	}
	tn.eventually("every node sees every announcement", func() bool {
		for _, n := range tn.nodes {
			if nodeInfo(n).PeersAnnounced != 4 {
				return false
			}
		}
		return true
	})
	a, r1, r2, b = tn.nodes[0], tn.nodes[1], tn.nodes[2], tn.nodes[3]
	for _, c := range [][2]*Node{{a, r1}, {b, r2}, {r1, r2}, {r2, b}, {r2, r1}, {r1, a}} {
		tn.open(c[0], c[1], tokens(140))
	}
	return tn, a, r1, r2, b
}

type netDialer struct{}

func (netDialer) dial(addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}
