package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/config"
)

// fakeRelayd writes a shell script that stands in for the relayd binary.
func fakeRelayd(t *testing.T, body string) string {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh")
	}
	path := filepath.Join(t.TempDir(), "relayd")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// runConfig is a 4-node configuration on free ports with a kept data
// directory.
func runConfig(t *testing.T, exe string) Config {
	c := DefaultConfig()
	c.Executable = exe
	c.Nodes = MinNodes
	base := freeBase(t, 1+3*MinNodes)
	c.ChainPort, c.APIPortBase, c.AdminPortBase, c.P2PPortBase = base, base+1, base+1+MinNodes, base+1+2*MinNodes
	c.DataDir = filepath.Join(t.TempDir(), "data")
	c.EnvFile = filepath.Join(t.TempDir(), "cluster.env")
	c.StageTimeout = 2 * time.Second
	c.StopTimeout = 2 * time.Second
	return c
}

// TestRunNodeExits: a node that exits at once stops the whole cluster with
// a NodeError carrying its log; no env file is written and a --data
// directory is kept.
func TestRunNodeExits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev chain")
	}
	cfg := runConfig(t, fakeRelayd(t, `echo "starting $*"; echo "boom: cannot start" >&2; exit 3`))
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := Run(ctx, cfg, &out)
	var ne *NodeError
	if !errors.As(err, &ne) {
		t.Fatalf("Run returned %v, want a NodeError\n%s", err, out.String())
	}
	if !strings.Contains(ne.Tail, "boom: cannot start") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("error %q lacks the node's log or exit status", err)
	}
	if strings.Contains(ne.Tail, "--apiToken") || strings.Contains(ne.Tail, cfg.APIToken) || strings.Contains(ne.Tail, Password) {
		t.Fatalf("secrets on the node's command line: %q", ne.Tail)
	}
	if _, err := os.Stat(cfg.EnvFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("env file written for a failed cluster: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "node-1", "relayd.log")); err != nil {
		t.Fatalf("--data not kept: %v", err)
	}
}

// TestRunNodeNeverReady: a node that runs but never answers fails the
// stage within StageTimeout (no hang); every node is stopped, one that
// ignores SIGTERM is killed after StopTimeout.
func TestRunNodeNeverReady(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev chain")
	}
	cfg := runConfig(t, fakeRelayd(t, `trap '' TERM; echo "pid $$ waiting"; while :; do sleep 1; done`))
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	t0 := time.Now()
	err := Run(ctx, cfg, &out)
	took := time.Since(t0)
	var ne *NodeError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "not ready within 2s") {
		t.Fatalf("Run returned %v, want a NodeError about readiness\n%s", err, out.String())
	}
	if took > cfg.StageTimeout+cfg.StopTimeout+10*time.Second {
		t.Fatalf("Run took %s", took)
	}
	if !strings.Contains(out.String(), "killed after 2s") {
		t.Fatalf("output does not report the killed nodes:\n%s", out.String())
	}
}

// lockedBuffer is an io.Writer the test can read while Run writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunStopsOnCancel: cancelling the context during start-up is a clean
// stop: nil, and a temporary data directory is removed.
func TestRunStopsOnCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev chain")
	}
	cfg := runConfig(t, fakeRelayd(t, `exec sleep 60`))
	cfg.DataDir = ""
	cfg.StageTimeout = time.Minute
	var out lockedBuffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, &out) }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "processes started") {
		if time.Now().After(deadline) {
			t.Fatal("nodes never started")
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	m := regexp.MustCompile(`created in \S+ \((.+)\)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no data directory in the output:\n%s", out.String())
	}
	dir := m[1]
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary data directory %q kept: %v", dir, err)
	}
}

// TestRunPassesMixingFlags: --mixDelayMean, --mixDelayMax and --coverRate reach every node's
// command line in a form relayd parses back to the same values.
func TestRunPassesMixingFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the dev chain")
	}
	cfg := runConfig(t, fakeRelayd(t, `echo "args $*"; exit 3`))
	cfg.MixDelayMean, cfg.MixDelayMax, cfg.CoverRate = 50*time.Millisecond, 0, 2.5
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var ne *NodeError
	if err := Run(ctx, cfg, &out); !errors.As(err, &ne) {
		t.Fatalf("Run returned %v, want the fake node's NodeError\n%s", err, out.String())
	}
	m := regexp.MustCompile(`args (.*)`).FindStringSubmatch(ne.Tail)
	if m == nil {
		t.Fatalf("no command line in the node's log %q", ne.Tail)
	}
	nc, err := config.Parse(strings.Fields(m[1]), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("relayd does not parse the cluster's command line %q: %v", m[1], err)
	}
	if nc.MixDelayMean != 50*time.Millisecond || nc.MixDelayMax != 0 || nc.CoverRate != 2.5 {
		t.Fatalf("node got mean %v max %v cover %v from %q", nc.MixDelayMean, nc.MixDelayMax, nc.CoverRate, m[1])
	}
}
