package gateway

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/wait"
)

// TestThousandSessions (issue 28: "1,000 sessions opened and closed: each node's memory returns
// within 10 % of where it started"): an entry opens 1,000 sessions to an exit over the
// in-memory mixnet, eight at a time, each a local listener (Entry.Open) carrying one TCP
// connection with a short request and answer, then closed (Entry.Close). Afterwards both
// muxes hold no session, both carriers no link, the goroutines are back to where they were
// (within a small margin for the runtime's own) and the live heap after a GC (HeapAlloc) is
// within 10 % of where it started, or memoryMargin when 10 % is less: both nodes share this
// process's heap, which at the start holds little more than the two stacks. The heap in use
// (HeapInuse, spans holding any live object) is logged: it keeps the fragments of the peak.
func TestThousandSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 sessions")
	}
	if raceEnabled {
		t.Skip("the race detector changes what memory and time the sessions take")
	}
	served := tcpServer(t, answer)
	n := newMemNet(t)
	n.untracked = true // the network keeps no record of the blocks it carried
	entry := n.stack(t, "entry", nil, testSession())
	ex := n.stack(t, "exit", mustPolicy(t, []string{served}), testSession())

	run := func(count int) {
		t.Helper()
		jobs := make(chan int)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := range jobs {
					if err := oneSession(t, entry, served, i); err != nil {
						t.Error(err)
					}
				}
			})
		}
		for i := range count {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
	}
	// Sessions first, so that what the first ones set up once (pools, the runtime's caches)
	// and what is bounded is in the start: each mux remembers the last 1,024 sessions that ended
	// (session.maxTombs: an id and a reason each, about 1.4 MiB here), so that a late or replayed
	// SYN opens none of them again.
	run(1100)
	forgotten(t, entry, ex)
	g0, m0 := measure()

	start := time.Now()
	run(1000)
	took := time.Since(start)
	var peak runtime.MemStats
	runtime.ReadMemStats(&peak)
	forgotten(t, entry, ex)

	margin := 4
	if !wait.Until(func() bool { return runtime.NumGoroutine() <= g0+margin }, 30*time.Second) {
		t.Errorf("%d goroutines after 1,000 sessions, %d before", runtime.NumGoroutine(), g0)
	}
	g1, m1 := measure()
	limit := max(m0.HeapAlloc/10, memoryMargin)
	t.Logf("1,000 sessions in %v; goroutines %d → %d; live heap %s → %s; heap in use %s → %s (peak %s); blocks sent %d",
		took.Round(time.Millisecond), g0, g1, mib(m0.HeapAlloc), mib(m1.HeapAlloc), mib(m0.HeapInuse), mib(m1.HeapInuse),
		mib(peak.HeapInuse), entry.Carrier.Stats().BlocksSent)
	if m1.HeapAlloc > m0.HeapAlloc+limit {
		t.Errorf("live heap %s after 1,000 sessions, %s before: more than %s above", mib(m1.HeapAlloc), mib(m0.HeapAlloc), mib(limit))
	}
}

// memoryMargin is what the heap may grow by over 1,000 sessions when 10 % of the start is
// less: the start is tiny (two stacks, about 1.5 MiB live), a node's far larger.
const memoryMargin = 1 << 20

// oneSession opens a session, asks and reads the answer over one connection, and closes it.
func oneSession(t *testing.T, entry *Stack, target string, i int) error {
	info, err := entry.Entry.Open(t.Context(), Open{Destination: exitID, Protocol: TCP, Target: target})
	if err != nil {
		return fmt.Errorf("session %d: %w", i, err)
	}
	defer func() { _ = entry.Entry.Close(info.ID) }()
	c, err := net.DialTimeout("tcp", info.Listen, 10*time.Second)
	if err != nil {
		return fmt.Errorf("session %d: %w", i, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	msg := fmt.Appendf(nil, "request %d", i)
	if _, err := c.Write(msg); err != nil {
		return fmt.Errorf("session %d: %w", i, err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != answerOf(msg) {
		return fmt.Errorf("session %d answered %q, %v", i, got, err)
	}
	return nil
}

// measure is the goroutines and the memory statistics after a GC.
func measure() (int, runtime.MemStats) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), m
}

func mib(b uint64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }
