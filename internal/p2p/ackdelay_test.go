package p2p

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
)

// TestAcksLeaveTogether: acknowledgements sent to one peer a millisecond apart wait up to
// AckDelay for each other and leave in one write, all of them delivered; packets sent the same
// way leave one write each (they never wait).
func TestAcksLeaveTogether(t *testing.T) {
	const n = 10
	regA := prometheus.NewRegistry()
	a := newTestHost(t, func(c *Config) {
		c.Registerer = regA
		c.AckDelay = time.Second // far longer than the sends take, so that one write carries all
	})
	b := newTestHost(t, nil)
	var got [numFrameProtocols]atomic.Int64
	for i, p := range []Protocol{ProtocolMsg, ProtocolAck} {
		if err := b.Handle(p, func(peer.ID, []byte) { got[i].Add(1) }); err != nil {
			t.Fatal(err)
		}
	}
	introduce(t, a, b)
	deadline := time.Now().Add(20 * time.Second)
	// Open both streams first, so that the writes counted below are the frames' alone.
	for _, p := range []Protocol{ProtocolMsg, ProtocolAck} {
		sendRetry(t, a, b.ID(), p, []byte{0}, deadline)
	}
	eventually(t, time.Until(deadline), "first frames delivered", func() bool { return got[0].Load() == 1 && got[1].Load() == 1 })
	writes := func(p Protocol) float64 {
		return counterValue(t, regA, "relayd_p2p_frame_writes_total", map[string]string{"protocol": p.String()})
	}
	// The writer counts a write after it returns, which may be after B has the frame.
	eventually(t, time.Until(deadline), "first writes counted", func() bool { return writes(ProtocolMsg) == 1 && writes(ProtocolAck) == 1 })
	msgWrites, ackWrites := writes(ProtocolMsg), writes(ProtocolAck)

	for i := range n {
		for _, p := range []Protocol{ProtocolMsg, ProtocolAck} {
			if err := a.Send(context.Background(), b.ID(), p, []byte{byte(i + 1)}); err != nil {
				t.Fatal(err)
			}
		}
		// Each packet reaches B before the next is sent: one write each.
		eventually(t, time.Until(deadline), "packet delivered", func() bool { return got[0].Load() == int64(i+2) })
	}
	eventually(t, time.Until(deadline), "acknowledgements delivered and counted", func() bool {
		return got[1].Load() == n+1 && writes(ProtocolAck) > ackWrites
	})
	if d := writes(ProtocolMsg) - msgWrites; d != n {
		t.Errorf("packets took %v writes, want %d (one each: packets never wait)", d, n)
	}
	if d := writes(ProtocolAck) - ackWrites; d != 1 {
		t.Errorf("acknowledgements took %v writes, want 1", d)
	}
}

// TestNoAckDelay: with NoAckDelay a lone acknowledgement leaves at once.
func TestNoAckDelay(t *testing.T) {
	a := newTestHost(t, func(c *Config) {
		c.AckDelay = time.Hour
		c.NoAckDelay = true
	})
	b := newTestHost(t, nil)
	var got atomic.Int64
	if err := b.Handle(ProtocolAck, func(peer.ID, []byte) { got.Add(1) }); err != nil {
		t.Fatal(err)
	}
	introduce(t, a, b)
	sendRetry(t, a, b.ID(), ProtocolAck, []byte{1}, time.Now().Add(20*time.Second))
	// Within a time far below the hour AckDelay would have waited.
	eventually(t, 10*time.Second, "acknowledgement delivered", func() bool { return got.Load() == 1 })
}
