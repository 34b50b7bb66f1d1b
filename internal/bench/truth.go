package bench

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"time"

	"github.com/relayd/relayd/internal/observe"
)

// ErrSharedAddress: the nodes of the env file are not hosts of their own (they share an
// address, e.g. loopback), so an observer of the links cannot tell them apart by address.
var ErrSharedAddress = errors.New("the nodes share an address: observing the links needs a namespace network (relayd cluster --netns), where each node is a host of its own")

// HostAddrs maps each node's address (its REST URL's host) to its 1-based index.
func (e Env) HostAddrs() (map[netip.Addr]int, error) {
	hosts := map[netip.Addr]int{}
	for _, n := range e.Nodes {
		u, err := url.Parse(n.APIURL)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", n.Index, err)
		}
		a, err := netip.ParseAddr(u.Hostname())
		if err != nil {
			return nil, fmt.Errorf("node %d: API host %q is not an IP address", n.Index, u.Hostname())
		}
		a = a.Unmap()
		if _, dup := hosts[a]; dup || a.IsLoopback() {
			return nil, fmt.Errorf("node %d at %s: %w", n.Index, a, ErrSharedAddress)
		}
		hosts[a] = n.Index
	}
	return hosts, nil
}

// GroundTruth is what an observer is scored against: for every message the API accepted, who
// sent it to whom, when, and when it was delivered (zero if never), in sequence order. The
// delivery is the tool's, or the recipient's own time of receipt plus a millisecond (its line
// has milliseconds) when that is earlier: the observer starts its trace from the last message
// packet into the recipient before the delivery, and the tool sees a message later than the
// node by the node's inbox write and its WebSocket, long enough for another packet to arrive
// (tens of milliseconds for a framed message). seqs
// holds each message's sequence number. The patient observer's scoring (observe.LongTerm)
// reads from it each target's correspondents, when it sent or received its k-th message and
// in which windows it was active.
func GroundTruth(rep *Report) (msgs []observe.Message, seqs []int) {
	for _, s := range rep.Samples {
		if !s.Accepted {
			continue
		}
		sent := rep.Start.Add(s.SentAt)
		m := observe.Message{Sender: s.Sender, Recipient: s.Recipient, Sent: sent}
		if s.Delivered {
			m.Delivered = sent.Add(s.Latency)
			if !s.Received.IsZero() {
				if node := s.Received.Add(time.Millisecond); node.Before(m.Delivered) {
					m.Delivered = node
				}
			}
		}
		msgs = append(msgs, m)
		seqs = append(seqs, s.Seq)
	}
	return msgs, seqs
}
