package bench

import (
	"errors"
	"testing"
	"time"
)

func TestHostAddrs(t *testing.T) {
	env := Env{Nodes: []Node{{Index: 1, APIURL: "http://127.0.0.1:13301"}, {Index: 2, APIURL: "http://127.0.0.1:13302"}}}
	if _, err := env.HostAddrs(); !errors.Is(err, ErrSharedAddress) {
		t.Errorf("loopback env: %v, want ErrSharedAddress", err)
	}
	env = Env{Nodes: []Node{{Index: 1, APIURL: "http://10.77.0.2:3001"}, {Index: 2, APIURL: "http://10.77.0.2:3002"}}}
	if _, err := env.HostAddrs(); !errors.Is(err, ErrSharedAddress) {
		t.Errorf("two nodes on one address: %v, want ErrSharedAddress", err)
	}
	env = Env{Nodes: []Node{{Index: 1, APIURL: "http://10.77.0.2:3001"}, {Index: 2, APIURL: "http://10.77.0.3:3001"}}}
	h, err := env.HostAddrs()
	if err != nil || len(h) != 2 {
		t.Errorf("namespace env: %v, %v", h, err)
	}
}

func TestGroundTruth(t *testing.T) {
	t0 := time.Unix(100, 0)
	rep := &Report{Start: t0, Samples: []Sample{
		{Seq: 0, Sender: 1, Recipient: 3, SentAt: time.Second, Accepted: true, Delivered: true, Latency: 50 * time.Millisecond},
		{Seq: 1, Sender: 2, Recipient: 3, SentAt: 2 * time.Second, Accepted: false},
		{Seq: 2, Sender: 2, Recipient: 4, SentAt: 3 * time.Second, Accepted: true},
	}}
	msgs, seqs := GroundTruth(rep)
	if len(msgs) != 2 || seqs[0] != 0 || seqs[1] != 2 {
		t.Fatalf("got %v %v: want the two accepted messages", msgs, seqs)
	}
	if !msgs[0].Sent.Equal(t0.Add(time.Second)) || !msgs[0].Delivered.Equal(t0.Add(1050*time.Millisecond)) || msgs[0].Sender != 1 || msgs[0].Recipient != 3 {
		t.Errorf("message 0: %+v", msgs[0])
	}
	if !msgs[1].Delivered.IsZero() {
		t.Errorf("undelivered message has a delivery time: %+v", msgs[1])
	}
	// The node's own time of receipt, a millisecond later, when it is earlier than the tool's.
	rep.Samples[0].Received = t0.Add(time.Second + 20*time.Millisecond)
	rep.Samples = append(rep.Samples, Sample{Seq: 3, Sender: 1, Recipient: 4, SentAt: 4 * time.Second, Accepted: true, Delivered: true,
		Latency: 10 * time.Millisecond, Received: t0.Add(4*time.Second + 10*time.Millisecond)})
	msgs, _ = GroundTruth(rep)
	if !msgs[0].Delivered.Equal(t0.Add(1021*time.Millisecond)) || !msgs[2].Delivered.Equal(t0.Add(4010*time.Millisecond)) {
		t.Errorf("deliveries %v and %v: want the node's time + 1 ms, and the tool's when earlier", msgs[0].Delivered, msgs[2].Delivered)
	}
}
