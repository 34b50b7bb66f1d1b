package session

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// TestEarlyData: the entry's SYN carries the stream's first bytes after the request; the exit's
// application reads them first and once, then what the entry wrote after Dial, also when the
// SYN arrives twice and is sent again because its SYN|ACKs were lost, and over a lossy,
// reordering link. Once Dial returned the entry holds none of them (acknowledged with the
// SYN|ACK).
func TestEarlyData(t *testing.T) {
	lossy := netem{loss: 0.2, dup: 0.3, delay: time.Millisecond, jitter: 3 * time.Millisecond}
	for _, tc := range []struct {
		name        string
		ab, ba      netem
		dropSYNACKs int64 // the exit's first SYN|ACKs lost
		sentAgain   bool  // the entry must have sent its SYN again
	}{
		{"once", netem{}, netem{}, 0, false},
		{"SYN twice and sent again", netem{dup: 1}, netem{}, 2, true},
		{"lossy", lossy, lossy, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, fastConfig(), tc.ab, tc.ba)
			var syns, dropped atomic.Int64
			p.ab.tap = func(f Frame) {
				if f.Flags&(FlagSYN|FlagACK) == FlagSYN {
					syns.Add(1)
				}
			}
			p.ba.drop = func(f Frame) bool {
				return f.Flags&(FlagSYN|FlagACK) == FlagSYN|FlagACK && dropped.Add(1) <= tc.dropSYNACKs
			}
			request, early, later := []byte("example.org:443"), []byte("GET / HTTP/1.1\r\n\r\n"), randomBytes(11, 3000)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			read := make(chan []byte, 1)
			go func() {
				defer close(read)
				c, err := p.b.Accept(ctx)
				if err != nil {
					t.Errorf("accept: %v", err)
					return
				}
				if string(c.Request()) != string(request) || c.Stats().EarlyData != len(early) {
					t.Errorf("accepted a session asking for %q with %d bytes of early data", c.Request(), c.Stats().EarlyData)
				}
				if err := c.Confirm(); err != nil {
					t.Errorf("confirm: %v", err)
				}
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				got, err := io.ReadAll(c)
				if err != nil {
					t.Errorf("exit read: %v", err)
				}
				_ = c.Close()
				read <- got
			}()
			syn, err := WithEarlyData(request, early)
			if err != nil {
				t.Fatal(err)
			}
			entry, err := p.a.Dial(ctx, p.ab, ModeTCP, syn)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			if st := entry.Stats(); st.EarlyData != len(early) || st.Queued != 0 || st.InFlight != 0 {
				t.Fatalf("after Dial the entry counts %d bytes of early data, %d queued, %d segments in flight",
					st.EarlyData, st.Queued, st.InFlight)
			}
			if string(entry.Request()) != string(request) {
				t.Fatalf("the entry's request %q", entry.Request())
			}
			if err := <-sendAll(entry, later); err != nil {
				t.Fatal(err)
			}
			got := <-read
			if want := string(early) + string(later); string(got) != want {
				t.Fatalf("the exit read %d bytes beginning %q, want the %d bytes of early data and the rest",
					len(got), got[:min(len(got), 40)], len(want))
			}
			if tc.sentAgain && (syns.Load() < 2 || entry.Stats().Retransmits == 0) {
				t.Fatalf("the SYN went %d times (%d retransmits): the case did not send it again",
					syns.Load(), entry.Stats().Retransmits)
			}
		})
	}
}

// TestEarlyDataChecks: Dial refuses a request that begins with the early-data marker but is not
// laid out as one, early data in UDP mode, and early data that does not fit the SYN.
func TestEarlyDataChecks(t *testing.T) {
	p := newPair(t, fastConfig(), netem{}, netem{})
	syn, err := WithEarlyData([]byte("a:80"), []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.a.Dial(t.Context(), p.ab, ModeUDP, syn); !errors.Is(err, ErrMalformed) {
		t.Errorf("early data in UDP mode: %v", err)
	}
	if _, err := p.a.Dial(t.Context(), p.ab, ModeTCP, []byte{EarlyMarker, 0, 9, 'a'}); !errors.Is(err, ErrMalformed) {
		t.Errorf("a request beginning with the marker: %v", err)
	}
	room := EarlyRoom(p.ab.MaxFrame(), 4)
	if _, err := WithEarlyData([]byte("a:80"), make([]byte, room)); err != nil {
		t.Fatal(err)
	}
	big, err := WithEarlyData([]byte("a:80"), make([]byte, room+1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.a.Dial(t.Context(), p.ab, ModeTCP, big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("early data beyond EarlyRoom: %v", err)
	}
	if p.a.Sessions() != 0 || p.b.Sessions() != 0 {
		t.Fatalf("refused dials left sessions: %d and %d", p.a.Sessions(), p.b.Sessions())
	}
}

// TestAnswerBehindTheSYNACK: the entry's SYN carries its window, so the exit sends its answer
// to the early data right behind its SYN|ACK: the entry reads it having sent nothing but its
// SYN (before, the exit waited for the entry's first acknowledgement, AckDelay after the
// SYN|ACK).
func TestAnswerBehindTheSYNACK(t *testing.T) {
	cfg := fastConfig()
	cfg.AckDelay, cfg.MinRTO, cfg.InitialRTO, cfg.MaxRTO = 2*time.Second, 3*time.Second, 3*time.Second, 10*time.Second
	p := newPair(t, cfg, netem{}, netem{})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	go func() {
		c, err := p.b.Accept(ctx)
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		if err != nil {
			t.Errorf("exit read: %v", err)
			return
		}
		if _, err := c.Write(append([]byte("answer to "), buf[:n]...)); err != nil { // confirms
			t.Errorf("exit write: %v", err)
		}
	}()
	syn, err := WithEarlyData([]byte("example.org:443"), []byte("ping"))
	if err != nil {
		t.Fatal(err)
	}
	entry, err := p.a.Dial(ctx, p.ab, ModeTCP, syn)
	if err != nil {
		t.Fatal(err)
	}
	_ = entry.SetDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, len("answer to ping"))
	if _, err := io.ReadFull(entry, buf); err != nil || string(buf) != "answer to ping" {
		t.Fatalf("entry read %q, %v", buf, err)
	}
	if n := p.ab.sent.Load(); n != 1 {
		t.Fatalf("the entry sent %d frames before the answer came, want its SYN alone", n)
	}
}
