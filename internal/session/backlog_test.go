package session

import (
	"io"
	"sync"
	"testing"
)

// backlogLink is a memLink that records what its session says it has still to send.
type backlogLink struct {
	*memLink
	mu      sync.Mutex
	reports []int
}

func (l *backlogLink) Backlog(frames int) {
	l.mu.Lock()
	l.reports = append(l.reports, frames)
	l.mu.Unlock()
}

// TestBacklog: a session tells a Backlogger link what it has still to send beyond the frames
// it hands it: 20 segments written at once leave the congestion window's 10 (or 9, the SYN|ACK
// still out) to come, and once the data is read and the FIN sent nothing is.
func TestBacklog(t *testing.T) {
	cfg := fastConfig()
	ab, ba := newLink(t, 500, netem{}, 1), &backlogLink{memLink: newLink(t, 472, netem{}, 2)}
	a, err := NewMux(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AcceptLink = func(ID) Link { return ba }
	b, err := NewMux(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ab.peer, ba.peer = b, a
	runMux(t, a)
	runMux(t, b)
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := b.Accept(t.Context())
		if err == nil && c.Confirm() == nil {
			accepted <- c
		}
	}()
	entry, err := a.Dial(t.Context(), ab, ModeTCP, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	exit := <-accepted
	segCap := 472 - HeaderSize
	if _, err := exit.Write(make([]byte, 20*segCap)); err != nil {
		t.Fatal(err)
	}
	if err := exit.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(entry); err != nil || len(got) != 20*segCap {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	ba.mu.Lock()
	reports := append([]int(nil), ba.reports...)
	ba.mu.Unlock()
	most := 0
	for _, r := range reports {
		most = max(most, r)
	}
	if most < 9 || most > 21 || reports[len(reports)-1] != 0 {
		t.Fatalf("the session said it had %v frames to send", reports)
	}
}
