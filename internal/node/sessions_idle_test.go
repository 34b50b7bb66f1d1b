package node

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/testnet"

	"github.com/relayd/relayd/internal/config"
)

// TestSessionKeptOpenWhileIdle: a TCP connection over a session through two relayers each way
// stays open across idle periods longer than the session's keep-alive idle time (30 s), and
// every exchange after one echoes byte for byte. RELAYD_IDLE_TEST=10m runs the ten
// minutes, idle periods of up to four minutes, across replay-tag epochs and the reply blocks'
// lifetime (10–20 minutes: the exit drops expired blocks and the entry renews them; it passed
// on 2026-11-27: echoes at 0 s, 3m20s, 6m40s and 10m0s after opening); by default
// it runs 45 s (one idle period of 45 s, past one keep-alive), which fits `make test`.
func TestSessionKeptOpenWhileIdle(t *testing.T) {
	total, idle := 45*time.Second, 45*time.Second
	if v := os.Getenv("RELAYD_IDLE_TEST"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			t.Fatalf("RELAYD_IDLE_TEST=%q: want a duration of a minute or more", v)
		}
		total, idle = d, min(4*time.Minute, d/3)
	}
	echo := testnet.EchoTCP(t).String()
	tn, a, _, _, b := sessionNet(t, func(_, exit *config.Config) { exit.ExitAllow = []string{echo} })
	var s sessionView
	tn.mustCall(a, http.MethodPost, "/sessions", fmt.Sprintf(`{"destination":%q,"protocol":"tcp","target":%q}`, b.id.PeerID(), echo),
		http.StatusCreated, &s)
	conn, err := net.Dial("tcp", s.Listen)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	for round := 1; ; round++ {
		msg := make([]byte, 4<<10)
		if _, err := rand.Read(msg); err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(time.Minute))
		if _, err := conn.Write(msg); err != nil {
			t.Fatalf("round %d, %s after opening: write: %v", round, time.Since(start).Round(time.Second), err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(conn, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("round %d, %s after opening: echo equal %v: %v", round, time.Since(start).Round(time.Second), bytes.Equal(got, msg), err)
		}
		t.Logf("round %d: 4 KiB echoed %s after opening", round, time.Since(start).Round(time.Second))
		if time.Since(start) >= total {
			break
		}
		// The idle period is what is tested: nothing is sent either way for this long.
		time.Sleep(min(idle, total-time.Since(start)))
	}
	var list []sessionView
	tn.mustCall(a, http.MethodGet, "/sessions", "", http.StatusOK, &list)
	if len(list) != 1 || list[0].Active != 1 || list[0].Total != 1 {
		t.Fatalf("after %s the session lists %+v, want one connection, still active", time.Since(start).Round(time.Second), list)
	}
}
