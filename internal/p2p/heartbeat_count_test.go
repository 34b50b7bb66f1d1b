package p2p

import (
	"errors"
	"testing"
	"time"
)

// TestHeartbeatCounts: every recorded ping counts as sent, an answered one
// also as a success (GET /node/peers shows both).
func TestHeartbeatCounts(t *testing.T) {
	a := newTestHost(t, nil)
	b := newTestHost(t, nil)
	introduce(t, a, b)
	if p := peerInfo(t, a, b.ID()); p.HeartbeatsSent != 0 || p.HeartbeatsSucceeded != 0 {
		t.Fatalf("before any ping: %+v", p)
	}
	if _, err := a.Ping(t.Context(), b.ID()); err != nil {
		t.Fatal(err)
	}
	a.recordPing(b.ID(), 0, errors.New("no answer"), time.Now())
	if p := peerInfo(t, a, b.ID()); p.HeartbeatsSent != 2 || p.HeartbeatsSucceeded != 1 {
		t.Fatalf("after one answered and one failed ping: sent %d, succeeded %d; want 2, 1", p.HeartbeatsSent, p.HeartbeatsSucceeded)
	}
}
