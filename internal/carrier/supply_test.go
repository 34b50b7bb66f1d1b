package carrier

import (
	"encoding/binary"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/wait"
)

// TestSelfishExit: an exit that lies about its stock in every answer (always none; many, then
// none; none and many in turn; none, and every block the entry sent received) cannot make the
// entry pay for blocks it never uses: the entry counts the blocks it sent against the answers
// that came back, and keeps at most its own bound of blocks unanswered, so it sends about one
// block an answer however the exit reports.
func TestSelfishExit(t *testing.T) {
	type lie struct {
		stock    func(answer int64) byte
		received bool // says it received every block the entry sent
		slow     bool // the answer trickles: a segment every 10 ms
	}
	for name, lie := range map[string]lie{
		"honest":                     {},
		"none":                       {stock: func(int64) byte { return 0 }},
		"many, then none":            {stock: func(n int64) byte { return byte(map[bool]int{true: 255, false: 0}[n < 50]) }},
		"none and many, in turn":     {stock: func(n int64) byte { return byte(255 * (n % 2)) }},
		"none, all received":         {stock: func(int64) byte { return 0 }, received: true},
		"none, all received, slowly": {stock: func(int64) byte { return 0 }, received: true, slow: true},
	} {
		t.Run(name, func(t *testing.T) {
			n := newMemNet(t, 0)
			entry := n.node(t, "entry", false, Config{})
			exit := n.node(t, "exit", true, Config{})
			var answers atomic.Int64
			n.lie = func(text []byte) {
				if lie.stock == nil || text[0] != KindAnswer {
					return
				}
				text[1] = lie.stock(answers.Add(1))
				if lie.received { // the worst an exit can say: what the entry sent so far
					entry.c.mu.Lock()
					for _, l := range entry.c.entries {
						l.mu.Lock()
						binary.BigEndian.PutUint16(text[2:], uint16(l.total))
						l.mu.Unlock()
					}
					entry.c.mu.Unlock()
				}
			}
			size := 256 << 10
			if lie.slow {
				size = 100 * maxAnswerSize
				go func() {
					conn, err := exit.mux.Accept(t.Context())
					if err != nil || conn.Confirm() != nil {
						return
					}
					defer conn.Close()
					for range 100 {
						if _, err := conn.Write(make([]byte, maxAnswerSize)); err != nil {
							return
						}
						time.Sleep(10 * time.Millisecond) // the answer's pace, not a synchronisation
					}
				}()
			} else {
				serve(t, exit, size)
			}
			conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("seed-5"))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.Copy(io.Discard, conn); err != nil || got != int64(size) {
				t.Fatalf("read %d bytes: %v", got, err)
			}
			en := entry.c.Stats()
			t.Logf("the entry sent %d blocks for %d answers (%.2f an answer); the exit dropped %d",
				en.BlocksSent, en.AnswersReceived, float64(en.BlocksSent)/float64(en.AnswersReceived), exit.c.Stats().BlocksDropped)
			// The bound: the blocks outstanding (at most MaxStock and the opening ones), the
			// probes', and those taken for lost, a block in four answers.
			if extra, bound := int64(en.BlocksSent)-int64(en.AnswersReceived), int64(en.AnswersReceived)/3+256+2*16; extra > bound {
				t.Fatalf("the entry sent %d blocks more than it got answers, more than %d", extra, bound)
			}
		})
	}
}

// TestLostBlocksReplaced: forty blocks in a row are lost on their way to the exit midway through
// an answer (more than the entry's bound at a MaxStock of 32), which uses its stock up and
// waits. The entry still counts them outstanding, so its
// bound keeps it from sending more on the exit's word alone; its probe and the blocks it takes
// for lost, a few a round trip, get the answer going again, and it completes within seconds.
func TestLostBlocksReplaced(t *testing.T) {
	n := newMemNet(t, 0)
	var losing atomic.Bool
	var lost atomic.Int64
	n.drop = func(text []byte, reply bool) bool {
		if reply || text[0] != KindBlockPart || !losing.Load() || lost.Load() >= 2*40 {
			return false
		}
		lost.Add(1)
		return true
	}
	// A stock of 32 at most: the forty blocks lost are more than the entry's bound.
	entry := n.node(t, "entry", false, Config{MaxStock: 32})
	exit := n.node(t, "exit", true, Config{MaxStock: 32})
	const size = 256 << 10
	serve(t, exit, size)
	conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("seed-6"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(io.Discard, conn, size/4); err != nil {
		t.Fatal(err)
	}
	losing.Store(true)
	start := time.Now()
	if _, err := io.CopyN(io.Discard, conn, size-size/4); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	l, _ := entry.c.Link(conn.ID())
	t.Logf("%d block parts lost; the rest of the answer came in %v; the entry wrote %d blocks off (%d outstanding)", lost.Load(), took,
		l.WrittenOff, l.Outstanding)
	if lost.Load() < 2*40 {
		t.Fatalf("only %d block parts were lost", lost.Load())
	}
	if took > 20*time.Second {
		t.Fatalf("the answer took %v after the blocks were lost", took)
	}
}

// TestSupplyEndsWithTheAnswer: bursts of 49 answers, one after another on a session, each
// requested by the entry once the previous one came whole (a page and its parts). The exit says
// in every answer how many frames it has still to send, so the entry stops sending blocks as an
// answer ends instead of a round trip of its rate later: after the bursts the blocks it sent
// are about the answers and the initial stock (session 12, without the count: 157 for a burst of
// 49 answers).
func TestSupplyEndsWithTheAnswer(t *testing.T) {
	const (
		bursts = 5
		burst  = 49 * 439 // 49 full segments back
	)
	n := newMemNet(t, 0)
	entry := n.node(t, "entry", false, Config{})
	exit := n.node(t, "exit", true, Config{})
	go func() {
		conn, err := exit.mux.Accept(t.Context())
		if err != nil || conn.Confirm() != nil {
			return
		}
		defer conn.Close()
		req := make([]byte, 1)
		for range bursts {
			if _, err := io.ReadFull(conn, req); err != nil {
				return
			}
			if _, err := conn.Write(make([]byte, burst)); err != nil {
				return
			}
		}
	}()
	conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range bursts {
		if _, err := conn.Write([]byte{1}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(conn, make([]byte, burst)); err != nil {
			t.Fatalf("burst %d: %v", i, err)
		}
		// The blocks the last answers asked for are on their way: let them arrive before the
		// next request (the pause between a page's requests).
		time.Sleep(50 * time.Millisecond) // the pace of the requests, not a synchronisation
	}
	en, ex := entry.c.Stats(), exit.c.Stats()
	sent, answers := en.BlocksSent, ex.AnswersSent
	t.Logf("%d bursts of %d bytes: %d answers, the entry sent %d blocks (%.2f an answer)", bursts, burst, answers, sent,
		float64(sent)/float64(answers))
	if limit := answers + 2*16 + answers/10; sent > limit {
		t.Fatalf("the entry sent %d blocks for %d answers, more than %d", sent, answers, limit)
	}
}

// TestNoStockAfterTheExitsFIN: a session whose exit answers once and ends its direction (a
// short HTTP answer with its FIN, as most SOCKS5 connections end) costs the opening blocks and
// two after each of the exit's last answers (for the acknowledgement of the entry's FIN), not
// the rest of the initial stock, which no answer would use: 6 blocks here, 22 before.
func TestNoStockAfterTheExitsFIN(t *testing.T) {
	n := newMemNet(t, 0)
	entry := n.node(t, "entry", false, Config{})
	exit := n.node(t, "exit", true, Config{})
	go func() {
		conn, err := exit.mux.Accept(t.Context())
		if err != nil || conn.Confirm() != nil {
			return
		}
		_ = conn.CloseWrite() // the answer past the SYN|ACK is the exit's FIN
		_, _ = io.Copy(io.Discard, conn)
		_ = conn.Close()
	}()
	conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if b, err := io.ReadAll(conn); err != nil || len(b) != 0 {
		t.Fatalf("read %q, %v; want EOF", b, err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return entry.mux.Sessions() == 0 && exit.mux.Sessions() == 0 }, 20*time.Second,
		"both sessions end")
	sent := entry.c.Stats().BlocksSent
	t.Logf("the entry sent %d blocks", sent)
	if sent > 8 {
		t.Fatalf("the entry sent %d blocks for a session the exit ended at once, want at most 8", sent)
	}
}
