package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/carrier"
	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/wait"
)

// TestLastError: a session says why its connections last failed, in its fixed words: the exit's
// refusal of the target (over the in-memory mixnet), a dial that timed out or was reset, and
// the network's failed sends the carrier names for a connection's link (a channel that ran dry
// is no_balance, any other reason send_failed). A session whose connections did not fail says
// nothing.
func TestLastError(t *testing.T) {
	t.Run("the exit refuses the target", func(t *testing.T) {
		served := tcpServer(t, answer)
		_, entry, _ := pair(t, []string{served}, nil)
		info, err := entry.Entry.Open(t.Context(), Open{Destination: exitID, Protocol: TCP, Target: "127.0.0.1:9"})
		if err != nil {
			t.Fatal(err)
		}
		if info.LastError != "" {
			t.Fatalf("a new session's last error: %q", info.LastError)
		}
		c := dial(t, "tcp", info.Listen)
		if n, _ := io.Copy(io.Discard, c); n != 0 {
			t.Fatalf("read %d bytes of a refused connection", n)
		}
		wait.For(t, func() bool { return lastError(entry.Entry, info.ID) == FailNotAllowed }, 10*time.Second, "not_allowed")
	})
	for _, tc := range []struct {
		err  error
		want Failure
	}{
		{fmt.Errorf("open: %w", context.DeadlineExceeded), FailTimeout},
		{session.ErrTimeout, FailTimeout},
		{session.ErrReset, FailReset},
		{session.ErrUnreachable, FailUnreachable},
		{session.ErrLimit, FailLimit},
		{session.ErrRefused, FailRefused},
	} {
		t.Run(string(tc.want)+" dialling", func(t *testing.T) {
			e := newEntry(t, EntryConfig{Dial: func(context.Context, peer.ID, session.Mode, []byte) (*session.Conn, error) {
				return nil, tc.err
			}})
			info, err := e.Open(t.Context(), Open{Destination: "exit", Protocol: TCP, Target: "example.org:80"})
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t, "tcp", info.Listen)
			_, _ = io.Copy(io.Discard, c)
			wait.For(t, func() bool { return lastError(e, info.ID) == tc.want }, 10*time.Second, string(tc.want))
		})
	}
	for reason, want := range map[string]Failure{"no_balance": FailNoBalance, "no_path": FailNoPath, "other": FailSendFailed} {
		t.Run(reason+" on the link", func(t *testing.T) {
			served := tcpServer(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
			_, entry, _ := pair(t, []string{served}, nil)
			at := time.Now()
			e := newEntry(t, EntryConfig{Dial: entry.Dial, Link: func(id session.ID) (carrier.LinkStats, bool) {
				st, ok := entry.Carrier.Link(id)
				st.LastFailure, st.LastFailureAt = reason, at
				return st, ok
			}})
			info, err := e.Open(t.Context(), Open{Destination: exitID, Protocol: TCP, Target: served})
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t, "tcp", info.Listen)
			if _, err := c.Write([]byte("echo")); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
				t.Fatal(err)
			}
			wait.For(t, func() bool { return lastError(e, info.ID) == want }, 10*time.Second, string(want))
			if got := e.List()[0].LastErrorAt; !got.Equal(at) {
				t.Fatalf("last error at %v, want %v", got, at)
			}
		})
	}
	t.Run("no failure", func(t *testing.T) {
		served := tcpServer(t, answer)
		_, entry, _ := pair(t, []string{served}, nil)
		if err := oneSession(t, entry, served, 1); err != nil {
			t.Fatal(err)
		}
		for _, i := range entry.Entry.List() {
			if i.LastError != "" || !i.LastErrorAt.IsZero() {
				t.Fatalf("a session without failures: %q at %v", i.LastError, i.LastErrorAt)
			}
		}
	})
}

// lastError is session id's LastError, or "?" when e holds no such session.
func lastError(e *Entry, id string) Failure {
	for _, i := range e.List() {
		if i.ID == id {
			return i.LastError
		}
	}
	return "?"
}
