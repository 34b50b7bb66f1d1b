package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Churn makes nodes come and go while the cluster runs: every Interval it kills a random
// Fraction of the nodes not in Exclude with SIGKILL and restarts each on its data after
// Downtime. Before each kill it reads how many acknowledged tickets the node holds (or has
// redeemed); once the node serves again it checks that none was lost.
type Churn struct {
	Fraction float64       // share of the eligible nodes killed per round, 0 < Fraction ≤ 1
	Interval time.Duration // time between rounds
	Downtime time.Duration // how long a killed node stays down
	Exclude  []int         // nodes never killed (e.g. the senders and recipients of a load test)
}

// ChurnEvent is one line of <data>/churn.jsonl.
type ChurnEvent struct {
	Time  time.Time `json:"time"`
	Node  int       `json:"node"`
	Event string    `json:"event"` // kill, restart, tickets-kept, tickets-lost, check-failed
	// TicketsBefore is what the node held before the kill; TicketsAfter once it serves again.
	TicketsBefore uint64 `json:"ticketsBefore"`
	TicketsAfter  uint64 `json:"ticketsAfter,omitempty"`
	Err           string `json:"err,omitempty"`
}

// churner runs a Churn on the cluster and logs every event.
type churner struct {
	c   *cluster
	cfg Churn
	rng *rand.Rand

	mu     sync.Mutex
	log    *os.File
	kills  int
	kept   int
	lost   int
	failed int
}

func (c *cluster) runChurn(ctx context.Context) error {
	f, err := os.OpenFile(filepath.Join(c.dataDir, "churn.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("churn log: %w", err)
	}
	ch := &churner{c: c, cfg: *c.cfg.Churn, rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), log: f}
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		f.Close()
		c.progress("churn: %d kills; acknowledged tickets kept on %d restarts, lost on %d, not checked on %d (log: %s)",
			ch.kills, ch.kept, ch.lost, ch.failed, f.Name())
	}()
	c.progress("churn: every %s, SIGKILL %.0f%% of the nodes (never %v), each down for %s", ch.cfg.Interval, 100*ch.cfg.Fraction, ch.cfg.Exclude, ch.cfg.Downtime)
	t := time.NewTicker(ch.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for _, m := range ch.pick() {
			wg.Go(func() { ch.killAndCheck(ctx, m) })
		}
	}
}

// pick chooses this round's victims among the nodes that are up and not excluded.
func (ch *churner) pick() []*member {
	var eligible []*member
	for _, m := range ch.c.nodes {
		if !slices.Contains(ch.cfg.Exclude, m.Index) && !m.process().exited() {
			eligible = append(eligible, m)
		}
	}
	n := max(1, int(ch.cfg.Fraction*float64(len(eligible))+0.5))
	ch.rng.Shuffle(len(eligible), func(i, j int) { eligible[i], eligible[j] = eligible[j], eligible[i] })
	return eligible[:min(n, len(eligible))]
}

// killAndCheck kills m, lets its watcher restart it after the downtime, and checks its tickets.
func (ch *churner) killAndCheck(ctx context.Context, m *member) {
	before, err := m.client.ticketsHeld(ctx)
	if err != nil {
		ch.record(ChurnEvent{Node: m.Index, Event: "check-failed", Err: "before the kill: " + err.Error()})
		return
	}
	m.mu.Lock()
	m.downFor = ch.cfg.Downtime
	p := m.proc
	m.mu.Unlock()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return
	}
	ch.record(ChurnEvent{Node: m.Index, Event: "kill", TicketsBefore: before})
	deadline := time.Now().Add(ch.cfg.Downtime + time.Minute)
	for {
		if ctx.Err() != nil {
			return
		}
		if m.process() != p {
			after, err := m.client.ticketsHeld(ctx)
			if err == nil {
				ev := ChurnEvent{Node: m.Index, Event: "tickets-kept", TicketsBefore: before, TicketsAfter: after}
				if after < before {
					ev.Event = "tickets-lost"
				}
				ch.record(ev)
				return
			}
		}
		if time.Now().After(deadline) {
			ch.record(ChurnEvent{Node: m.Index, Event: "check-failed", TicketsBefore: before, Err: "the node did not serve again within a minute of its restart"})
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollInterval):
		}
	}
}

func (ch *churner) record(ev ChurnEvent) {
	ev.Time = time.Now().UTC()
	b, _ := json.Marshal(ev)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.log.Write(append(b, '\n'))
	switch ev.Event {
	case "kill":
		ch.kills++
		return // the watcher reports the exit and the restart
	case "tickets-kept":
		ch.kept++
	case "tickets-lost":
		ch.lost++
		ch.c.progress("churn: node %d LOST acknowledged tickets across its restart: %d before, %d after", ev.Node, ev.TicketsBefore, ev.TicketsAfter)
	case "check-failed":
		ch.failed++
		ch.c.progress("churn: node %d: ticket check failed: %s", ev.Node, ev.Err)
	}
}
