package relay

import (
	"testing"
	"time"

	"github.com/relayd/relayd/internal/packet"
)

// TestMemoryReplayForgetsExpiredEpochs: a tag is refused as seen while its epoch is in the
// window, the store forgets an epoch once it sees one 2·EpochSkew later (Peel refuses the
// old one by then), and a tag of a forgotten epoch still counts as seen.
func TestMemoryReplayForgetsExpiredEpochs(t *testing.T) {
	m := NewMemoryReplay()
	const e = 2_945_376
	tag := [packet.TagSize]byte{7}
	check := func(epoch uint32, want bool) {
		t.Helper()
		if fresh, err := m.CheckAndAdd(epoch, tag); fresh != want || err != nil {
			t.Fatalf("epoch %d: fresh = %v, %v; want %v", epoch, fresh, err, want)
		}
	}
	check(e, true)
	check(e, false)
	check(e+1, true) // another epoch: another packet
	check(e+2, true)
	check(e, false) // e+2 does not yet put e out of Peel's window
	if len(m.epochs) != 3 {
		t.Fatalf("%d epochs kept, want 3", len(m.epochs))
	}
	check(e+3, true)
	if _, ok := m.epochs[e]; ok || len(m.epochs) != 3 {
		t.Fatalf("epochs kept %d, want e+1..e+3", len(m.epochs))
	}
	check(e, false) // forgotten, still refused
	for i := range uint32(100) {
		check(e+4+i, true)
	}
	if len(m.epochs) != 3 {
		t.Fatalf("%d epochs kept after 100 more, want 3", len(m.epochs))
	}
}

// offsetClock is the system clock shifted by d.
type offsetClock struct {
	realClock
	d time.Duration
}

func (c offsetClock) Now() time.Time { return time.Now().Add(c.d) }

// TestExpiredPacketDropped: a sender whose clock is 30 minutes slow builds packets of an
// epoch past the relayer's window; the relayer drops them as expired without touching its
// replay store, and nothing is forwarded or delivered.
func TestExpiredPacketDropped(t *testing.T) {
	replay := NewMemoryReplay()
	nodes := newNet(t, netOptions{edit: func(name string, c *Config) {
		c.NoMixDelay = true
		switch name {
		case "A":
			c.Clock = offsetClock{d: -3 * packet.EpochLength}
		case "R1":
			c.Replay = replay
		}
	}}, "A", "R1", "B")
	a, r1, b := nodes["A"], nodes["R1"], nodes["B"]
	if _, err := a.relay.Send(t.Context(), ids(r1, b), "late"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "expired drop", func() bool { return dropped(r1, reasonExpired) == 1 })
	if got := counter(r1.relay.m.forwarded); got != 0 {
		t.Errorf("R1 forwarded %v packets, want 0", got)
	}
	replay.mu.Lock()
	kept := len(replay.epochs)
	replay.mu.Unlock()
	if kept != 0 {
		t.Errorf("R1's replay store holds %d epochs, want none", kept)
	}
	if len(b.deliveries()) != 0 {
		t.Error("expired message delivered")
	}
}
