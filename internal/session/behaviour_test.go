package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/wait"
)

// TestHalfClose: the entry ends its direction, the exit reads to EOF and still answers, then
// ends its own; both sessions leave their muxes after lingering. Frames are lost and reordered.
func TestHalfClose(t *testing.T) {
	em := netem{loss: 0.05, delay: time.Millisecond, jitter: 2 * time.Millisecond}
	p := newPair(t, fastConfig(), em, em)
	entry, exit := p.connect(t, ModeTCP)
	deadline := time.Now().Add(time.Minute)
	_ = entry.SetDeadline(deadline)
	_ = exit.SetDeadline(deadline)

	request := []byte("GET / HTTP/1.0\r\n\r\n")
	if _, err := entry.Write(request); err != nil {
		t.Fatal(err)
	}
	if err := entry.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if _, err := entry.Write([]byte("more")); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after CloseWrite: %v, want ErrClosed", err)
	}
	got, err := io.ReadAll(exit)
	if err != nil || !bytes.Equal(got, request) {
		t.Fatalf("exit read %q, %v", got, err)
	}
	answer := randomBytes(3, 100<<10)
	if _, err := exit.Write(answer); err != nil {
		t.Fatalf("the exit cannot answer after the entry's half-close: %v", err)
	}
	if err := exit.Close(); err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(entry)
	if err != nil || !bytes.Equal(got, answer) {
		t.Fatalf("entry read %d bytes (%v), want the %d-byte answer", len(got), err, len(answer))
	}
	if err := entry.Close(); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return p.a.Sessions() == 0 && p.b.Sessions() == 0 }, 20*time.Second,
		"both sessions leave their muxes")
	if _, err := exit.Read(make([]byte, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after Close: %v, want ErrClosed", err)
	}
}

// TestRefusalReachesTheEntry: an exit that refuses a session makes Dial fail with the reason's
// error, also when most frames are lost (the exit answers the SYN sent again with its RST).
func TestRefusalReachesTheEntry(t *testing.T) {
	em := netem{loss: 0.3, delay: time.Millisecond, jitter: time.Millisecond}
	p := newPair(t, fastConfig(), em, em)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, r := range []Reason{ReasonNotAllowed, ReasonRefused, ReasonUnreachable, ReasonLimit} {
		mode := Mode(i % 2)
		go func() {
			c, err := p.b.Accept(ctx)
			if err != nil {
				t.Errorf("accept: %v", err)
				return
			}
			if err := c.Reset(r); err != nil {
				t.Errorf("reset: %v", err)
			}
		}()
		c, err := p.a.Dial(ctx, p.ab, mode, []byte("10.0.0.1:22"))
		if !errors.Is(err, r.Err()) || c != nil {
			t.Errorf("%v session refused with %v: dial gave %v, %v", mode, r, c, err)
		}
	}
}

// TestResetReachesThePeer: an exit that resets an open session makes the entry's Read fail
// with the reason's error after what arrived before; data sent to a closed session resets
// it.
func TestResetReachesThePeer(t *testing.T) {
	p := newPair(t, fastConfig(), netem{}, netem{})
	entry, exit := p.connect(t, ModeTCP)
	_ = entry.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := exit.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return exit.Stats().Queued == 0 }, 10*time.Second, "the entry acknowledged the data")
	if err := exit.Reset(ReasonUnreachable); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(entry)
	if string(got) != "partial" || !errors.Is(err, ErrUnreachable) {
		t.Fatalf("entry read %q, %v; want \"partial\", ErrUnreachable", got, err)
	}
	if _, err := entry.Write([]byte("x")); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("write after the reset: %v", err)
	}
	if _, err := exit.Read(make([]byte, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after the local reset: %v", err)
	}

	entry, exit = p.connect(t, ModeTCP)
	_ = exit.SetDeadline(time.Now().Add(30 * time.Second))
	if err := entry.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(exit); err != nil {
		t.Fatalf("exit read: %v", err)
	}
	var werr error
	for werr == nil {
		_, werr = exit.Write([]byte("anyone there?"))
		if werr == nil {
			werr = waitErr(exit, 50*time.Millisecond)
		}
	}
	if !errors.Is(werr, ErrReset) {
		t.Fatalf("writing to a closed session: %v, want ErrReset", werr)
	}
}

// waitErr reads c for up to d and returns its error, nil when it timed out.
func waitErr(c *Conn, d time.Duration) error {
	_ = c.SetReadDeadline(time.Now().Add(d))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	_, err := c.Read(make([]byte, 1))
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// TestKeepAlive: keep-alives keep an idle session open; a peer that went silent is found dead.
func TestKeepAlive(t *testing.T) {
	cfg := fastConfig()
	cfg.KeepAliveIdle, cfg.KeepAliveInterval, cfg.KeepAliveCount = 50*time.Millisecond, 50*time.Millisecond, 5
	cfg.MaxRetries = 4
	p := newPair(t, cfg, netem{delay: time.Millisecond}, netem{delay: time.Millisecond})
	entry, exit := p.connect(t, ModeTCP)
	wait.For(t, func() bool { return entry.Stats().KeepAlives >= 10 && exit.Stats().KeepAlives >= 10 },
		20*time.Second, "both ends sent 10 keep-alives")
	_ = entry.SetDeadline(time.Now().Add(10 * time.Second))
	_ = exit.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := entry.Write([]byte("still there?")); err != nil {
		t.Fatalf("idle session: %v", err)
	}
	buf := make([]byte, 12)
	if _, err := io.ReadFull(exit, buf); err != nil {
		t.Fatalf("idle session: %v", err)
	}

	wait.For(t, func() bool { return entry.Stats().InFlight == 0 && exit.Stats().InFlight == 0 }, 10*time.Second,
		"nothing is in flight")
	p.ab.cut.Store(true)
	p.ba.cut.Store(true)
	start := time.Now()
	if _, err := entry.Read(buf); !errors.Is(err, ErrTimeout) {
		t.Fatalf("entry read from a dead peer: %v, want ErrTimeout", err)
	}
	if _, err := exit.Read(buf); !errors.Is(err, ErrTimeout) {
		t.Fatalf("exit read from a dead peer: %v, want ErrTimeout", err)
	}
	t.Logf("dead peer found after %v", time.Since(start).Round(time.Millisecond))
	wait.For(t, func() bool { return p.a.Sessions() == 0 && p.b.Sessions() == 0 }, 10*time.Second,
		"the dead sessions leave their muxes")
}

// TestFlowControl: a reader that does not read bounds what the writer has in flight (the
// receiver's window) and what it can write (SendBuffer); reading lets the rest through.
func TestFlowControl(t *testing.T) {
	cfg := fastConfig()
	cfg.Window, cfg.SendBuffer = 8, 8<<10
	p := newPair(t, cfg, netem{delay: time.Millisecond}, netem{delay: time.Millisecond})
	var mu sync.Mutex
	var edge uint64 // the highest window edge the exit advertised
	var beyond []uint32
	p.ba.tap = func(f Frame) {
		if f.Flags&FlagACK != 0 {
			mu.Lock()
			edge = max(edge, uint64(f.Ack)+uint64(f.Window))
			mu.Unlock()
		}
	}
	p.ab.tap = func(f Frame) {
		if len(f.Payload) > 0 && f.Flags&FlagSYN == 0 {
			mu.Lock()
			if uint64(f.Seq) >= edge {
				beyond = append(beyond, f.Seq)
			}
			mu.Unlock()
		}
	}
	entry, exit := p.connect(t, ModeTCP)
	deadline := time.Now().Add(time.Minute)
	_ = entry.SetDeadline(deadline)
	_ = exit.SetDeadline(deadline)

	data := randomBytes(4, 200<<10)
	var written atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		for off := 0; off < len(data); off += 1024 {
			n, err := entry.Write(data[off:min(off+1024, len(data))])
			written.Add(int64(n))
			if err != nil {
				wrote <- err
				return
			}
		}
		wrote <- entry.CloseWrite()
	}()
	segCap := 500 - HeaderSize
	// Full: the entry sent up to the window edge the exit advertised and all of it was
	// acknowledged (the exit holds a window of segments; some may be short, since a segment
	// leaves without waiting for more: no Nagle), and the writer filled the entry's buffer.
	full := func() bool {
		e, x := entry.Stats(), exit.Stats()
		return e.PeerWindow == 0 && e.InFlight == 0 && e.Queued == cfg.SendBuffer && x.Buffered > 0
	}
	var got []byte
	for round := range 3 {
		wait.For(t, full, 20*time.Second, "the exit's window and the entry's buffer are full")
		if round == 0 {
			held := exit.Stats().Buffered
			wait.For(t, func() bool { return entry.Stats().KeepAlives >= 2 }, 20*time.Second,
				"the entry probes the closed window")
			if !full() || exit.Stats().Buffered != held {
				t.Fatal("probing the closed window moved data")
			}
		}
		e := entry.Stats()
		if w := written.Load(); w > int64(len(got)+cfg.Window*segCap+cfg.SendBuffer) {
			t.Fatalf("round %d: %d bytes written with %d read, a window of %d and a buffer of %d",
				round, w, len(got), cfg.Window*segCap, cfg.SendBuffer)
		}
		if e.PeerWindow != 0 {
			t.Fatalf("round %d: the entry sees a window of %d segments", round, e.PeerWindow)
		}
		buf := make([]byte, 3*segCap)
		n, err := io.ReadFull(exit, buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	rest, err := io.ReadAll(exit)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if got = append(got, rest...); sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(data))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(beyond) > 0 {
		t.Fatalf("segments %v sent beyond the advertised window", beyond)
	}
}

// TestUDP: datagrams both ways; a reader that does not read keeps the newest DatagramQueue of
// them, and a link that does not take them keeps the newest DatagramQueue for it.
func TestUDP(t *testing.T) {
	cfgA, cfgB := fastConfig(), fastConfig()
	cfgA.DatagramQueue, cfgB.DatagramQueue = 8, 16
	p := newPairOf(t, cfgA, cfgB, netem{}, netem{})
	entry, exit := p.connect(t, ModeUDP)
	_ = entry.SetDeadline(time.Now().Add(30 * time.Second))
	_ = exit.SetDeadline(time.Now().Add(30 * time.Second))
	if _, ok := entry.LocalAddr().(*net.UDPAddr); !ok {
		t.Fatalf("a UDP session's address is a %T", entry.LocalAddr())
	}
	if entry.MaxDatagram() != 500-HeaderSize || exit.MaxDatagram() != 472-HeaderSize {
		t.Fatalf("datagrams of %d and %d bytes", entry.MaxDatagram(), exit.MaxDatagram())
	}
	if _, err := entry.Write(make([]byte, 500-HeaderSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a datagram over a frame: %v", err)
	}
	dgram := func(i int) []byte { return []byte{byte(i), 'd', 'g'} }
	buf := make([]byte, 100)
	if _, err := exit.Write(dgram(7)); err != nil {
		t.Fatal(err)
	}
	if n, err := entry.Read(buf); err != nil || !bytes.Equal(buf[:n], dgram(7)) {
		t.Fatalf("entry read %x, %v", buf[:n], err)
	}

	// The exit reads nothing while 100 arrive: it keeps the newest 16.
	for i := range 100 {
		if _, err := entry.Write(dgram(i)); err != nil {
			t.Fatal(err)
		}
		wait.For(t, func() bool { return entry.Stats().DatagramsSent == uint64(i+1) }, 10*time.Second,
			"the entry sent the datagram")
	}
	wait.For(t, func() bool { return exit.Stats().DatagramsDropped == 100-16 }, 10*time.Second,
		"the exit dropped the oldest 84")
	for i := 100 - 16; i < 100; i++ {
		if n, err := exit.Read(buf); err != nil || !bytes.Equal(buf[:n], dgram(i)) {
			t.Fatalf("exit read %x, %v; want datagram %d", buf[:n], err, i)
		}
	}

	// The link takes nothing while 100 are written: the entry keeps the newest 8.
	hold := make(chan struct{})
	p.ab.hold.Store(&hold)
	if _, err := entry.Write(dgram(200)); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return p.ab.held.Load() == 1 }, 10*time.Second, "the link holds a send")
	for i := range 100 {
		if _, err := entry.Write(dgram(i)); err != nil {
			t.Fatal(err)
		}
	}
	p.ab.hold.Store(nil)
	close(hold)
	want := [][]byte{dgram(200)}
	for i := 100 - 8; i < 100; i++ {
		want = append(want, dgram(i))
	}
	for _, w := range want {
		if n, err := exit.Read(buf); err != nil || !bytes.Equal(buf[:n], w) {
			t.Fatalf("exit read %x, %v; want %x", buf[:n], err, w)
		}
	}
	if d := entry.Stats().DatagramsDropped; d != 100-8 {
		t.Fatalf("the entry dropped %d datagrams, want 92", d)
	}
	_ = exit.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := exit.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a datagram more: %v", err)
	}
	_ = exit.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := entry.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := exit.Read(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the entry's close: %v, want io.EOF", err)
	}
	wait.For(t, func() bool { return p.a.Sessions() == 0 && p.b.Sessions() == 0 }, 10*time.Second,
		"the UDP sessions leave their muxes")
}

// TestGarbageChangesNothing: texts that are not frames, frames of unknown sessions and
// mangled copies of a session's frames change nothing: the session still carries data
// byte-exact afterwards.
func TestGarbageChangesNothing(t *testing.T) {
	p := newPair(t, fastConfig(), netem{}, netem{})
	var mu sync.Mutex
	var seen [][]byte
	p.ab.tap = func(f Frame) {
		text, _ := f.Encode()
		mu.Lock()
		seen = append(seen, text)
		mu.Unlock()
	}
	entry, exit := p.connect(t, ModeTCP)
	rng := rand.New(rand.NewPCG(5, 5))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	mu.Lock()
	genuine := seen
	mu.Unlock()
	sent := 0
	for i := range 20000 {
		var text []byte
		switch i % 4 {
		case 0:
			text = random(rng.IntN(600))
		case 1:
			text = append([]byte{KindSegment}, random(rng.IntN(100))...)
		case 2: // a genuine frame, cut or with a byte changed
			g := bytes.Clone(genuine[rng.IntN(len(genuine))])
			if rng.IntN(2) == 0 {
				text = g[:rng.IntN(len(g))]
			} else {
				g[rng.IntN(len(g))] ^= byte(1 + rng.IntN(255))
				text = g
			}
		case 3: // a well-formed frame of an unknown session
			f := Frame{Flags: Flags(rng.IntN(64)) &^ FlagSYN, Seq: rng.Uint32() >> 1, Payload: random(rng.IntN(10))}
			copy(f.ID[:], random(IDSize))
			if f.Flags&FlagRST != 0 {
				f.Reason, f.Payload = 1, nil
			}
			if text, _ = f.Encode(); text == nil {
				continue
			}
		}
		if f, err := Decode(text); err == nil && (f.ID == entry.ID() || f.Flags&(FlagSYN|FlagACK) == FlagSYN) {
			continue // a valid frame of the session, or a new session's SYN, is not garbage
		}
		for _, m := range []*Mux{p.a, p.b} {
			sent++
			if err := m.Receive(text); !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownSession) {
				t.Fatalf("receive %x: %v", text, err)
			}
		}
	}
	if p.a.Sessions() != 1 || p.b.Sessions() != 1 {
		t.Fatalf("garbage changed the sessions: %d and %d", p.a.Sessions(), p.b.Sessions())
	}
	deadline := time.Now().Add(30 * time.Second)
	_ = entry.SetDeadline(deadline)
	_ = exit.SetDeadline(deadline)
	up, down := randomBytes(6, 64<<10), randomBytes(7, 64<<10)
	sendAll(entry, up)
	sendAll(exit, down)
	if r := <-readAll(exit); r.err != nil || r.sum != sha256.Sum256(up) {
		t.Fatalf("after %d garbage texts: up %d bytes, %v", sent, r.n, r.err)
	}
	if r := <-readAll(entry); r.err != nil || r.sum != sha256.Sum256(down) {
		t.Fatalf("after %d garbage texts: down %d bytes, %v", sent, r.n, r.err)
	}
}

// TestForgedFramesDoNotPanic: well-formed frames with a live session's ID and arbitrary
// fields may end the session (whoever knows the ID can reset it) but never panic either side.
func TestForgedFramesDoNotPanic(t *testing.T) {
	p := newPair(t, fastConfig(), netem{}, netem{})
	rng := rand.New(rand.NewPCG(8, 8))
	for i := range 20 {
		mode := Mode(i % 2)
		entry, exit := p.connect(t, mode)
		go func() {
			for range 20 {
				_, _ = entry.Write(randomBytes(9, 400))
			}
		}()
		for range 500 {
			f := Frame{ID: entry.ID(), Flags: Flags(rng.IntN(64)) &^ (FlagRST | FlagUDP), Seq: rng.Uint32N(64),
				Ack: rng.Uint32N(64), Window: uint16(rng.IntN(20)), Payload: make([]byte, rng.IntN(3)*100)}
			if f.Flags&FlagACK == 0 {
				f.Ack = 0
			}
			if mode == ModeUDP {
				f.Flags |= FlagUDP
			}
			if f.Flags&FlagACK != 0 && rng.IntN(2) == 0 {
				a := f.Ack + 1 + rng.Uint32N(5)
				f.SACK = []Range{{a, a + 1 + rng.Uint32N(5)}}
			}
			text, err := f.Encode()
			if err != nil {
				continue
			}
			_ = p.a.Receive(text)
			_ = p.b.Receive(text)
		}
		_ = entry.Reset(0)
		_ = exit.Reset(0)
	}
}

// TestDial: the errors Dial reports before and instead of a session.
func TestDial(t *testing.T) {
	cfg := fastConfig()
	cfg.MaxRetries = 2
	p := newPair(t, cfg, netem{}, netem{})
	ctx := context.Background()
	if _, err := p.a.Dial(ctx, p.ab, ModeTCP, make([]byte, 500-HeaderSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a request over a frame: %v", err)
	}
	if _, err := p.a.Dial(ctx, newLink(t, MinFrame-1, netem{}, 3), ModeTCP, nil); !errors.Is(err, ErrLink) {
		t.Errorf("a link of small frames: %v", err)
	}
	// Nobody accepts: the SYN is answered by nobody, so Dial times out.
	cut := newLink(t, 500, netem{}, 4)
	cut.cut.Store(true)
	if _, err := p.a.Dial(ctx, cut, ModeTCP, nil); !errors.Is(err, ErrTimeout) {
		t.Errorf("a SYN nobody answers: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		if !wait.Until(func() bool { return p.b.Sessions() == 1 }, 10*time.Second) {
			t.Error("the exit never held the SYN")
		}
		cancel()
	}()
	if _, err := p.a.Dial(cctx, p.ab, ModeUDP, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("a dial cancelled: %v", err)
	}
	// The unconfirmed session the exit holds hears the entry's RST.
	c, err := p.b.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return p.b.Sessions() == 0 }, 10*time.Second, "the cancelled session ends")
	if err := c.Confirm(); !errors.Is(err, ErrReset) {
		t.Errorf("confirming a session the entry gave up: %v", err)
	}
}

// TestLimits: SYNs beyond the backlog are refused with ReasonLimit.
func TestLimits(t *testing.T) {
	cfg := fastConfig()
	cfg.Backlog = 2
	p := newPair(t, cfg, netem{}, netem{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := p.a.Dial(ctx, p.ab, ModeTCP, nil)
			errs <- err
		}()
	}
	if err := <-errs; !errors.Is(err, ErrLimit) {
		t.Fatalf("a third dial to a backlog of 2: %v, want ErrLimit", err)
	}
	for range 2 {
		c, err := p.b.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.Confirm()
		if err := <-errs; err != nil {
			t.Fatalf("dial within the backlog: %v", err)
		}
	}
}

// TestShutdown: when a mux stops, its sessions end with ErrClosed and their peers hear an RST;
// a stopped mux dials, accepts and receives nothing.
func TestShutdown(t *testing.T) {
	p := newPair(t, fastConfig(), netem{}, netem{})
	entry, exit := p.connect(t, ModeTCP)
	_ = entry.SetDeadline(time.Now().Add(20 * time.Second))
	_ = exit.SetDeadline(time.Now().Add(20 * time.Second))
	p.stopB()
	if _, err := exit.Read(make([]byte, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("read at the stopped side: %v, want ErrClosed", err)
	}
	if _, err := entry.Read(make([]byte, 1)); !errors.Is(err, ErrReset) {
		t.Fatalf("read at the peer: %v, want ErrReset", err)
	}
	if _, err := p.b.Accept(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("accept on a stopped mux: %v", err)
	}
	if err := p.b.Receive(mustEncode(t, Frame{Flags: FlagSYN})); !errors.Is(err, ErrClosed) {
		t.Fatalf("receive on a stopped mux: %v", err)
	}
	if _, err := p.b.Dial(context.Background(), p.ba, ModeTCP, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("dial on a stopped mux: %v", err)
	}
	if err := p.b.Run(context.Background()); err == nil {
		t.Fatal("Run ran twice")
	}
}

func mustEncode(t testing.TB, f Frame) []byte {
	t.Helper()
	text, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// TestDeadline: a Read past its deadline fails with a timeout net.Error and the session lives.
func TestDeadline(t *testing.T) {
	p := newPair(t, fastConfig(), netem{}, netem{})
	entry, exit := p.connect(t, ModeTCP)
	_ = entry.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := entry.Read(make([]byte, 1))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v", err)
	}
	if _, ok := entry.RemoteAddr().(*net.TCPAddr); !ok {
		t.Fatalf("a TCP session's address is a %T", entry.RemoteAddr())
	}
	_ = entry.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := exit.Write([]byte("late")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(entry, buf); err != nil || string(buf) != "late" {
		t.Fatalf("read after a deadline: %q, %v", buf, err)
	}
}

// TestAcknowledgements: an answer sent within AckDelay carries the acknowledgement (no frame
// of its own); a segment nobody answers is acknowledged AckDelay after it arrived.
func TestAcknowledgements(t *testing.T) {
	cfg := fastConfig()
	cfg.AckDelay, cfg.MinRTO, cfg.InitialRTO, cfg.MaxRTO = 500*time.Millisecond, 5*time.Second, 5*time.Second, time.Minute
	p := newPair(t, cfg, netem{}, netem{})
	var mu sync.Mutex
	var pongSent, pongAcked time.Time
	p.ba.tap = func(f Frame) {
		mu.Lock()
		if string(f.Payload) == "pong" && pongSent.IsZero() {
			pongSent = time.Now()
		}
		mu.Unlock()
	}
	p.ab.tap = func(f Frame) {
		mu.Lock()
		if !pongSent.IsZero() && pongAcked.IsZero() && f.Flags&FlagACK != 0 && f.Ack == 2 {
			pongAcked = time.Now()
		}
		mu.Unlock()
	}
	entry, exit := p.connect(t, ModeTCP)
	_ = entry.SetDeadline(time.Now().Add(20 * time.Second))
	_ = exit.SetDeadline(time.Now().Add(20 * time.Second))
	wait.For(t, func() bool { return exit.Stats().InFlight == 0 }, 10*time.Second, "the entry acknowledged the SYN|ACK")
	before := p.ba.sent.Load()
	buf := make([]byte, 4)
	if _, err := entry.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(exit, buf); err != nil {
		t.Fatal(err)
	}
	if _, err := exit.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(entry, buf); err != nil {
		t.Fatal(err)
	}
	if n := p.ba.sent.Load() - before; n != 1 {
		t.Fatalf("the exit sent %d frames for the answer and the acknowledgement, want 1", n)
	}
	wait.For(t, func() bool { mu.Lock(); defer mu.Unlock(); return !pongAcked.IsZero() }, 10*time.Second,
		"the entry acknowledged the answer")
	mu.Lock()
	defer mu.Unlock()
	if d := pongAcked.Sub(pongSent); d < cfg.AckDelay*9/10 {
		t.Fatalf("the lone answer was acknowledged after %v, before AckDelay %v", d, cfg.AckDelay)
	}
}

// TestLateSYNDoesNotReopen: once a session ended cleanly and left the mux, its SYN arriving again
// (late from the mixnet, or replayed) opens nothing: the exit would dial its target twice.
func TestLateSYNDoesNotReopen(t *testing.T) {
	p := newPair(t, fastConfig(), netem{}, netem{})
	entry, exit := p.connect(t, ModeTCP)
	id := entry.ID()
	if err := entry.Close(); err != nil {
		t.Fatal(err)
	}
	if err := exit.Close(); err != nil {
		t.Fatal(err)
	}
	if !wait.Until(func() bool { return p.a.Sessions() == 0 && p.b.Sessions() == 0 }, 10*time.Second) {
		t.Fatalf("sessions left: entry %d, exit %d", p.a.Sessions(), p.b.Sessions())
	}
	syn, err := (&Frame{ID: id, Flags: FlagSYN, Seq: 0, Window: 16, Payload: []byte("example.org:443")}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.b.Receive(syn); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("a late SYN: %v, want ErrUnknownSession", err)
	}
	if n := p.b.Sessions(); n != 0 {
		t.Fatalf("a late SYN opened %d sessions", n)
	}
}

// TestLastAckAfterLinger: the exit's acknowledgement of the entry's FIN is lost, and the exit
// leaves its mux (its Linger ended) before the FIN comes again: the ended session's last
// acknowledgement answers it, and the entry ends cleanly within a few of its timeouts instead
// of sending its FIN until MaxRetries expiries end it.
func TestLastAckAfterLinger(t *testing.T) {
	cfgA, cfgB := fastConfig(), fastConfig()
	cfgA.MinRTO, cfgA.InitialRTO, cfgA.MaxRTO, cfgA.MaxRetries = 300*time.Millisecond, 300*time.Millisecond, 10*time.Second, 8
	cfgB.Linger = time.Millisecond
	var entryFIN atomic.Int64 // the seq after the entry's FIN, once sent
	var dropped atomic.Int64
	p := newPairOf(t, cfgA, cfgB, netem{}, netem{})
	p.ab.tap = func(f Frame) {
		if f.Flags&FlagFIN != 0 {
			entryFIN.Store(int64(f.Seq) + 1)
		}
	}
	p.ba.drop = func(f Frame) bool {
		if n := entryFIN.Load(); n != 0 && f.Flags&FlagACK != 0 && int64(f.Ack) == n && dropped.Load() == 0 {
			dropped.Add(1)
			return true
		}
		return false
	}
	var rsts atomic.Int64
	p.ba.tap = func(f Frame) {
		if f.Flags&FlagRST != 0 {
			rsts.Add(1)
		}
	}
	entry, exit := p.connect(t, ModeTCP)
	_ = entry.SetDeadline(time.Now().Add(20 * time.Second))
	if err := exit.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(entry); err != nil {
		t.Fatal(err)
	}
	if err := entry.Close(); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return p.b.Sessions() == 0 }, 10*time.Second, "the exit leaves its mux")
	wait.For(t, func() bool { return p.a.Sessions() == 0 }, 5*time.Second, "the entry leaves its mux")
	if dropped.Load() != 1 {
		t.Fatalf("dropped %d acknowledgements of the entry's FIN, want 1", dropped.Load())
	}
	if st := entry.Stats(); st.Timeouts > 3 || rsts.Load() != 0 {
		t.Fatalf("the entry's FIN timed out %d times; the exit sent %d RSTs", st.Timeouts, rsts.Load())
	}
}

// TestFewAcknowledgements: over a link that reorders most frames (as a mixnet does), a receiver
// acknowledges every AckEvery (4) segments, in order or not, not every segment that arrives out
// of order: each acknowledgement costs a packet.
func TestFewAcknowledgements(t *testing.T) {
	em := netem{delay: time.Millisecond, jitter: 4 * time.Millisecond}
	p := newPair(t, fastConfig(), em, em)
	var acks atomic.Int64
	p.ab.tap = func(f Frame) {
		if f.Flags == FlagACK && len(f.Payload) == 0 {
			acks.Add(1)
		}
	}
	entry, exit := p.connect(t, ModeTCP)
	deadline := time.Now().Add(time.Minute)
	_ = entry.SetDeadline(deadline)
	_ = exit.SetDeadline(deadline)
	answer := randomBytes(5, 300<<10)
	sent := sendAll(exit, answer)
	got := <-readAll(entry)
	if err := <-sent; err != nil || got.err != nil || got.sum != sha256.Sum256(answer) {
		t.Fatalf("send %v, read %d bytes: %v", err, got.n, got.err)
	}
	st := entry.Stats()
	ratio := float64(acks.Load()) / float64(st.SegmentsReceived)
	t.Logf("%d acknowledgements for %d segments (%.2f a segment)", acks.Load(), st.SegmentsReceived, ratio)
	if ratio > 0.4 {
		t.Fatalf("%d acknowledgements for %d segments (%.2f a segment), want at most 0.4", acks.Load(), st.SegmentsReceived, ratio)
	}
}
