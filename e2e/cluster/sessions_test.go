package cluster_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/hostnet"
	"github.com/relayd/relayd/internal/wait"
)

// socks5Base is the SOCKS5 port of every node of TestSessionsInNamespaces (its own namespace's
// loopback).
const socks5Base = 10800

// TestSessionsInNamespaces: curl, a real program, fetches a 1 MiB file from an HTTP server in
// another namespace through node 1's SOCKS5 entry (--socks5-hostname), three relayers and node 5
// as the exit, byte-exact, with no loss and with 1 % and 5 % of the packets every host receives
// dropped, and with a relayer killed with SIGKILL under way (the cluster restarts it); the
// exit refuses a target outside its rules, its own API port and 127.0.0.1, and curl
// says so (SOCKS5 reply 2, "connection not allowed by ruleset").
func TestSessionsInNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relayd and starts a dev chain and five node processes in namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("relayd cluster --netns and iptables need root")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	// At a win probability of 1 a mebibyte costs the entry some 400 tokens (an answer costs it
	// two forward packets of reply block and an acknowledgement's share, 0.03 to 0.10 each), more
	// under loss, and nothing tops the channels up here: 4,000 tokens a channel.
	c := startCluster(t, "--netns", "--relayers", "3", "--channelFunding", "4000", "--socks5PortBase", strconv.Itoa(socks5Base),
		"--restartNodes", "--restartDelay", "500ms")
	entry, exitNode := c.nodes[0], c.nodes[len(c.nodes)-1]

	// The target: an HTTP server on the bridge, outside every node's namespace.
	file := make([]byte, 1<<20)
	if _, err := rand.Read(file); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(c.bridgeAddr(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(file)))
		_, _ = w.Write(file)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	target := ln.Addr().String()

	c.mustCall(exitNode, http.MethodPut, "/settings/exitAllow", fmt.Sprintf(`{"settingValue":[%q]}`, target), http.StatusNoContent, nil)
	c.mustCall(entry, http.MethodPost, "/aliases", fmt.Sprintf(`{"alias":"exit","peerId":%q}`, exitNode.peerID), http.StatusCreated, nil)

	want := sha256.Sum256(file)
	for _, loss := range []float64{0, 0.01, 0.05} {
		if !t.Run(fmt.Sprintf("loss %g%%", 100*loss), func(t *testing.T) {
			c.t = t
			defer func() { c.t = nil }()
			var removes []func() uint64
			if loss > 0 {
				for _, n := range c.nodes {
					removes = append(removes, c.dropIncoming(n, loss))
				}
			}
			t0 := time.Now()
			out, err := curl(t, entry.index, "-sS", "--max-time", "300", "-o", "-", "-w", "\n%{time_starttransfer}",
				"--socks5-hostname", "127.0.0.1:"+strconv.Itoa(socks5Base), "http://"+target+"/file")
			took := time.Since(t0)
			var hits uint64
			for _, remove := range removes {
				hits += remove()
			}
			if err != nil {
				t.Fatalf("curl: %v", err)
			}
			i := bytes.LastIndexByte(out, '\n')
			body, ttfb := out[:i], strings.TrimSpace(string(out[i+1:]))
			if sha256.Sum256(body) != want {
				t.Fatalf("curl got %d bytes that differ from the %d served", len(body), len(file))
			}
			t.Logf("loss %g%%: 1 MiB byte-exact in %s (first byte after %s s, %.0f kB/s); the hosts' rules dropped %d packets",
				100*loss, took.Round(time.Millisecond), ttfb, float64(len(file))/took.Seconds()/1000, hits)
			if loss > 0 && hits == 0 {
				t.Errorf("no host's rule matched a packet: the loss was not in effect")
			}
		}) {
			return
		}
	}
	c.t = t

	// kill -9 of a relayer while the file comes: the session goes on over paths without it (of
	// two relayers, the other count, while it is down), and the file is whole.
	t.Run("relayer killed", func(t *testing.T) {
		c.t = t
		defer func() { c.t = nil }()
		victim := c.nodes[2]
		base := c.metric(entry, metricDelivered)
		type result struct {
			out []byte
			err error
		}
		done := make(chan result, 1)
		t0 := time.Now()
		go func() {
			out, err := curl(t, entry.index, "-sS", "--max-time", "300", "-o", "-",
				"--socks5-hostname", "127.0.0.1:"+strconv.Itoa(socks5Base), "http://"+target+"/file")
			done <- result{out, err}
		}()
		var at float64
		if !wait.Until(func() bool {
			m, err := c.metrics(t.Context(), entry, metricDelivered)
			at = m[metricDelivered] - base
			return err == nil && at >= 400
		}, waitTimeout) {
			t.Fatalf("node 1 received no 400 packets of the answer within %s", waitTimeout)
		}
		c.signal(victim, syscall.SIGKILL)
		t.Logf("killed node %d with %.0f of the answer's 2,389 packets at node 1", victim.index, at)
		r := <-done
		if r.err != nil {
			t.Fatalf("curl: %v", r.err)
		}
		if sha256.Sum256(r.out) != want {
			t.Fatalf("curl got %d bytes that differ from the %d served", len(r.out), len(file))
		}
		t.Logf("1 MiB byte-exact in %s with node %d killed under way", time.Since(t0).Round(time.Millisecond), victim.index)
		c.awaitRestart(victim)
	})
	c.t = t

	// Refusals: a target the rules do not name, the exit's own API port, its loopback.
	apiHost, apiPort, _ := net.SplitHostPort(strings.TrimPrefix(exitNode.apiURL, "http://"))
	for _, dest := range []string{net.JoinHostPort(c.bridgeAddr(), "9"), net.JoinHostPort(apiHost, apiPort), "127.0.0.1:" + apiPort} {
		out, err := curl(t, entry.index, "-sS", "--max-time", "120", "--socks5-hostname", "127.0.0.1:"+strconv.Itoa(socks5Base), "http://"+dest+"/")
		// curl prints the reply code: "Can't complete SOCKS5 connection to … (2)".
		if err == nil || !bytes.Contains(out, []byte("(2)")) {
			t.Errorf("curl to %s through the exit: %v: %s, want SOCKS5 reply 2 (not allowed)", dest, err, out)
		}
	}
}

// curl runs curl with args inside node index's namespace and returns its standard output, or
// its error output with the error.
func curl(t *testing.T, index int, args ...string) ([]byte, error) {
	t.Helper()
	ns := fmt.Sprintf("%s-n%d", hostnet.DefaultPrefix, index)
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, "curl"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stderr.Bytes(), fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}
