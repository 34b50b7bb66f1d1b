package carrier

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/wait"
)

// memNet is a mixnet in memory between carriers: forward texts and replies arrive after a
// random delay (so out of order), each lost with probability loss. Its reply blocks are real
// ones (packet.Route.SealReply over one hop), each usable once.
type memNet struct {
	t     testing.TB
	loss  float64
	delay time.Duration
	// partDelay holds block parts back this much more: they arrive after the SYN; halfDelay
	// holds back the second halves only, segDelay the segments forward.
	partDelay, halfDelay, segDelay time.Duration
	// drop, if set, loses the texts it says (forward, or on a reply block); session, if set,
	// changes the sessions' config of the nodes made after.
	drop    func(text []byte, reply bool) bool
	session func(*session.Config)
	// refuse, when set, is the error every forward send fails with (a channel that ran dry);
	// lie, when set, rewrites every answer before it leaves (a selfish exit's reports).
	refuse atomic.Pointer[error]
	lie    func(text []byte)
	pool   *packet.EphemeralPool
	key    *packet.PublicKey

	mu      sync.Mutex
	rng     *mrand.Rand
	nodes   map[peer.ID]*Carrier
	blocks  map[string]peer.ID // block → its creator
	used    map[string]bool
	sent    atomic.Int64 // packets sent, forward and back
	replies atomic.Int64
	// relayer is the one relayer of the blocks made now; down, the relayers that died: the
	// replies on their blocks vanish.
	relayer   peer.ID
	byRelayer map[string]peer.ID
	down      map[peer.ID]bool
}

func newMemNet(t testing.TB, loss float64) *memNet {
	pool, err := packet.NewEphemeralPool(rand.Reader, 64)
	if err != nil {
		t.Fatal(err)
	}
	scalar := make([]byte, 32)
	scalar[31] = 7
	k, err := packet.NewPrivateKey(scalar)
	if err != nil {
		t.Fatal(err)
	}
	return &memNet{t: t, loss: loss, delay: 3 * time.Millisecond, pool: pool, key: k.PublicKey(),
		rng: mrand.New(mrand.NewPCG(1, 2)), nodes: map[peer.ID]*Carrier{}, blocks: map[string]peer.ID{}, used: map[string]bool{},
		relayer: "relayer-0", byRelayer: map[string]peer.ID{}, down: map[peer.ID]bool{}}
}

// view is the network as the node named self sees it.
type view struct {
	n    *memNet
	self peer.ID
}

func (n *memNet) deliver(to peer.ID, text []byte, reply bool) {
	n.sent.Add(1)
	n.mu.Lock()
	lost := n.rng.Float64() < n.loss || (n.drop != nil && n.drop(text, reply))
	d := time.Duration(n.rng.Int64N(int64(n.delay) + 1))
	if len(text) > 0 && text[0] == KindBlockPart {
		d += n.partDelay
		if len(text) > partHeader && text[partHeader-1]&1 == 1 {
			d += n.halfDelay
		}
	}
	if len(text) > 0 && text[0] == session.KindSegment && !reply {
		d += n.segDelay
	}
	c := n.nodes[to]
	n.mu.Unlock()
	if lost || c == nil {
		return
	}
	text = bytes.Clone(text)
	time.AfterFunc(d, func() {
		err := c.Receive(text, reply)
		if errors.Is(err, ErrMalformed) {
			n.t.Errorf("a carrier sent a malformed text %x: %v", text[:min(len(text), 32)], err)
		}
	})
}

func (v view) SendFrame(_ context.Context, to peer.ID, text []byte) error {
	if len(text) > packet.MaxMessageSize {
		v.n.t.Errorf("a forward text of %d bytes", len(text))
	}
	if err := v.n.refuse.Load(); err != nil {
		return *err
	}
	v.n.deliver(to, text, false)
	return nil
}

func (v view) NewSessionReplyBlock(_ context.Context, _ peer.ID) ([]byte, []peer.ID, error) {
	if err := v.n.pool.Fill(); err != nil {
		return nil, nil, err
	}
	r, err := v.n.pool.NewRoute(rand.Reader, []*packet.PublicKey{v.n.key, v.n.key})
	if err != nil {
		return nil, nil, err
	}
	b, _, err := r.SealReply(rand.Reader, time.Now(), make([][packet.PoRSize]byte, 1))
	if err != nil {
		return nil, nil, err
	}
	raw, err := b.MarshalBinary()
	if err != nil {
		return nil, nil, err
	}
	v.n.mu.Lock()
	v.n.blocks[string(raw)] = v.self
	relayer := v.n.relayer
	v.n.byRelayer[string(raw)] = relayer
	v.n.mu.Unlock()
	return raw, []peer.ID{relayer}, nil
}

// Down says whether the relayer is down: its blocks carry nothing.
func (v view) Down(id peer.ID) bool {
	v.n.mu.Lock()
	defer v.n.mu.Unlock()
	return v.n.down[id]
}

func (v view) SendReply(_ context.Context, block []byte, text []byte) error {
	if len(text) > packet.MaxReplySize {
		v.n.t.Errorf("a reply text of %d bytes", len(text))
	}
	v.n.mu.Lock()
	to, ok := v.n.blocks[string(block)]
	used := v.n.used[string(block)]
	v.n.used[string(block)] = true
	v.n.mu.Unlock()
	if !ok || used {
		v.n.t.Errorf("a reply on a block that is unknown (%v) or used (%v)", !ok, used)
		return errors.New("bad block")
	}
	v.n.replies.Add(1)
	v.n.mu.Lock()
	dead := v.n.down[v.n.byRelayer[string(block)]]
	v.n.mu.Unlock()
	if dead {
		return nil
	}
	if v.n.lie != nil {
		text = bytes.Clone(text)
		v.n.lie(text)
	}
	v.n.deliver(to, text, true)
	return nil
}

// end is one node's session stack: a carrier and a mux.
type end struct {
	id  peer.ID
	c   *Carrier
	mux *session.Mux
}

func (n *memNet) node(t testing.TB, name string, accept bool, cfg Config) *end {
	e := &end{id: peer.ID(name)}
	cfg.Network = view{n, e.id}
	var err error
	if e.c, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.c.Close)
	scfg := session.Config{MinRTO: 200 * time.Millisecond, InitialRTO: 500 * time.Millisecond, AckDelay: 20 * time.Millisecond,
		Linger: 500 * time.Millisecond}
	if accept {
		scfg.AcceptLink = e.c.AcceptLink
	}
	if n.session != nil {
		n.session(&scfg)
	}
	if e.mux, err = session.NewMux(scfg); err != nil {
		t.Fatal(err)
	}
	e.c.Attach(e.mux)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = e.mux.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	probe, err := (&session.Frame{Flags: session.FlagACK}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return !errors.Is(e.mux.Receive(probe), session.ErrClosed) }, 5*time.Second, "the mux runs")
	n.mu.Lock()
	n.nodes[e.id] = e.c
	n.mu.Unlock()
	return e
}

// serve accepts sessions at the exit and answers each with size bytes of its request's seed,
// then closes.
func serve(t testing.TB, exit *end, size int) {
	go func() {
		for {
			conn, err := exit.mux.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if err := conn.Confirm(); err != nil {
					return
				}
				_, _ = io.Copy(conn, io.LimitReader(seeded(conn.Request()), int64(size)))
			}()
		}
	}()
}

// seeded is an endless stream of bytes drawn from seed.
func seeded(seed []byte) io.Reader {
	s := sha256.Sum256(seed)
	return &rngReader{mrand.New(mrand.NewChaCha8(s))}
}

type rngReader struct{ r *mrand.Rand }

func (r *rngReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.r.Uint32())
	}
	return len(p), nil
}

// TestAnswerOverBlocks: a session's answer (256 KiB, 600 answers) comes back whole on the reply
// blocks the entry supplies, over a lossless and a lossy network; the exit starts with the
// initial stock, every block is used once, and when the session ends both carriers forget it.
func TestAnswerOverBlocks(t *testing.T) {
	for _, loss := range []float64{0, 0.05} {
		t.Run(map[float64]string{0: "lossless", 0.05: "5% loss"}[loss], func(t *testing.T) {
			n := newMemNet(t, loss)
			entry := n.node(t, "entry", false, Config{})
			exit := n.node(t, "exit", true, Config{})
			const size = 256 << 10
			serve(t, exit, size)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			conn, err := entry.c.Dial(ctx, entry.mux, exit.id, session.ModeTCP, []byte("seed-1"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(conn)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := io.ReadAll(io.LimitReader(seeded([]byte("seed-1")), size))
			if !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d, equal %v", len(got), len(want), bytes.Equal(got, want))
			}
			conn.Close()
			st := exit.c.Stats()
			if st.BlocksReceived < uint64(size/maxAnswerSize) || entry.c.Stats().BlocksSent < st.BlocksReceived {
				t.Fatalf("exit assembled %d blocks, entry sent %d; the answer is %d segments", st.BlocksReceived, entry.c.Stats().BlocksSent, size/maxAnswerSize)
			}
			wait.For(t, func() bool {
				e, _, _ := entry.c.Sessions()
				_, x, _ := exit.c.Sessions()
				return e == 0 && x == 0
			}, 30*time.Second, "both carriers forget the session")
		})
	}
}

// TestLastAckOnAKeptBlock: the exit's acknowledgement of the entry's FIN is lost and the exit's
// session is gone (its Linger over) when the FIN comes again. The exit's link kept a block for
// such late answers: the ended session's last acknowledgement goes back on it, the entry ends
// cleanly within a few timeouts, and both carriers forget the session.
func TestLastAckOnAKeptBlock(t *testing.T) {
	n := newMemNet(t, 0)
	var finAck atomic.Uint32 // the ack that acknowledges the entry's FIN, once sent
	var dropped atomic.Int64
	n.drop = func(text []byte, reply bool) bool {
		if !reply {
			if f, err := session.Decode(text); err == nil && f.Flags&session.FlagFIN != 0 {
				finAck.Store(f.Seq + 1)
			}
			return false
		}
		f, err := session.Decode(text[answerHeader:])
		if a := finAck.Load(); err != nil || a == 0 || f.Flags&session.FlagACK == 0 || f.Ack != a {
			return false
		}
		return dropped.Add(1) == 1
	}
	entry := n.node(t, "entry", false, Config{})
	n.session = func(c *session.Config) { c.Linger = time.Millisecond }
	exit := n.node(t, "exit", true, Config{})
	go func() { // the exit answers, ends its direction and reads the entry's to its end
		conn, err := exit.mux.Accept(t.Context())
		if err != nil {
			return
		}
		defer conn.Close()
		if _, err := conn.Write(make([]byte, 1000)); err != nil {
			return
		}
		_ = conn.CloseWrite()
		_, _ = io.Copy(io.Discard, conn)
	}()
	conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("seed-4"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(conn); err != nil || len(got) != 1000 {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	conn.Close()
	wait.For(t, func() bool { return exit.mux.Sessions() == 0 }, 10*time.Second, "the exit's session ends")
	wait.For(t, func() bool {
		e, _, _ := entry.c.Sessions()
		_, x, _ := exit.c.Sessions()
		return entry.mux.Sessions() == 0 && e == 0 && x == 0
	}, 10*time.Second, "the entry's session ends, and both carriers forget it")
	if dropped.Load() == 0 {
		t.Fatal("no acknowledgement of the entry's FIN was dropped")
	}
	if st := conn.Stats(); st.Timeouts > 3 {
		t.Fatalf("the entry's FIN timed out %d times", st.Timeouts)
	}
}

// TestStats: the counters match across the two ends (every answer counted at both ends, on a
// block of its own), and a send the network refuses is counted by
// the reason Config.Reason gives, and named as the link's last failure.
func TestStats(t *testing.T) {
	n := newMemNet(t, 0)
	errBalance := errors.New("insufficient balance")
	reason := func(err error) string {
		if errors.Is(err, errBalance) {
			return "balance"
		}
		return "other"
	}
	entry := n.node(t, "entry", false, Config{Reason: reason})
	exit := n.node(t, "exit", true, Config{})
	accepted := make(chan *session.Conn, 1)
	go func() {
		conn, err := exit.mux.Accept(t.Context())
		if err == nil && conn.Confirm() == nil {
			accepted <- conn
		}
	}()
	conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	xc := <-accepted
	if _, err := xc.Write(make([]byte, 20<<10)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, make([]byte, 20<<10)); err != nil {
		t.Fatal(err)
	}
	if !wait.Until(func() bool {
		en, ex := entry.c.Stats(), exit.c.Stats()
		return ex.AnswersSent == en.AnswersReceived && xc.Stats().InFlight == 0
	}, 10*time.Second) {
		t.Fatalf("the counters of both ends disagree: entry %+v, exit %+v", entry.c.Stats(), exit.c.Stats())
	}
	en, ex := entry.c.Stats(), exit.c.Stats()
	if ex.BlocksReceived > en.BlocksSent || ex.BlocksUsed != ex.AnswersSent || ex.AnswersSent != ex.FramesSent || en.AnswersReceived != en.FramesReceived ||
		en.AnswersReceived < 20<<10/maxAnswerSize || len(en.Failures) != 0 {
		t.Fatalf("entry %+v, exit %+v", en, ex)
	}
	// The one link's counters are the carrier's, which may still grow (the entry keeps the
	// exit supplied): read between two snapshots, they lie between them.
	if l, ok := entry.c.Link(conn.ID()); !ok || !l.Entry || l.BlocksSent == 0 || l.LastAnswer.IsZero() ||
		l.AnswersReceived < en.AnswersReceived || l.AnswersReceived > entry.c.Stats().AnswersReceived {
		t.Fatalf("the entry's link: %+v, %v", l, ok)
	}
	if l, ok := exit.c.Link(conn.ID()); !ok || l.Entry || l.AnswersSent < ex.AnswersSent || l.AnswersSent > exit.c.Stats().AnswersSent ||
		l.BlocksReceived < ex.BlocksReceived || l.BlocksReceived > exit.c.Stats().BlocksReceived {
		t.Fatalf("the exit's link: %+v, %v (exit now %+v)", l, ok, exit.c.Stats())
	}

	n.refuse.Store(&errBalance)
	if _, err := conn.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return entry.c.Stats().Failures["balance"] > 0 }, 10*time.Second, "the refused send counted")
	if l, _ := entry.c.Link(conn.ID()); l.LastFailure != "balance" || l.LastFailureAt.IsZero() {
		t.Fatalf("the entry's link after a refused send: %+v", l)
	}
	if st := entry.c.Stats(); st.FramesDropped == 0 || st.Failures["other"] != 0 {
		t.Fatalf("after a refused send: %+v", st)
	}
}

// TestOpeningStock: the SYN goes with OpeningBlocks blocks only, enough for the SYN|ACK and the
// first answer, and the rest of the initial stock once the exit answered past its SYN|ACK, so
// that the SYN's answer does not queue behind the rest's packets; then the exit holds the
// initial stock.
func TestOpeningStock(t *testing.T) {
	n := newMemNet(t, 0)
	entry := n.node(t, "entry", false, Config{InitialBlocks: 12})
	exit := n.node(t, "exit", true, Config{})
	accepted := make(chan *session.Conn, 1)
	go func() {
		conn, err := exit.mux.Accept(t.Context())
		if err == nil {
			accepted <- conn
		}
	}()
	dialled := make(chan *session.Conn, 1)
	go func() {
		conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("x"))
		if err != nil {
			t.Error(err)
		}
		dialled <- conn
	}()
	conn := <-accepted
	stock := func() int {
		exit.c.mu.Lock()
		l := exit.c.exits[conn.ID()]
		exit.c.mu.Unlock()
		if l == nil {
			return -1
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.stock)
	}
	wait.For(t, func() bool { return stock() == 2 }, 10*time.Second, "the opening blocks at the exit")
	if n.replies.Load() != 0 {
		t.Fatalf("%d answers before the exit confirmed", n.replies.Load())
	}
	if err := conn.Confirm(); err != nil {
		t.Fatal(err)
	}
	ec := <-dialled
	if ec == nil {
		t.FailNow()
	}
	entry.c.mu.Lock()
	l := entry.c.entries[ec.ID()]
	entry.c.mu.Unlock()
	l.mu.Lock()
	total := l.total
	l.mu.Unlock()
	if total != 2 {
		t.Fatalf("the entry sent %d blocks by the SYN|ACK, want the 2 opening ones", total)
	}
	if _, err := conn.Write([]byte("answer")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(ec, buf); err != nil {
		t.Fatal(err)
	}
	wait.For(t, func() bool { return stock() >= 12 }, 10*time.Second, "the initial stock at the exit after its first answer")
}

// TestSendOrder: a frame goes before the blocks queued ahead of it, but after two frames in a
// row a waiting block goes; at most Parallel − 1 blocks are under way at once, so a frame always
// finds a slot.
func TestSendOrder(t *testing.T) {
	n := newMemNet(t, 0)
	entry := n.node(t, "entry", false, Config{Parallel: 4})
	l := &entryLink{c: entry.c, to: "exit", known: true}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addBlocks(5, time.Now())
	for i := range 3 {
		l.queue = append(l.queue, fwdJob{frame: []byte{byte(i)}})
	}
	frames := func() int {
		k := 0
		for _, j := range l.queue {
			if j.frame != nil {
				k++
			}
		}
		return k
	}
	var order []string
	for range 7 {
		before := frames()
		switch {
		case l.next() == nil:
			order = append(order, "none")
		case frames() < before:
			order = append(order, "frame")
		default:
			order = append(order, "block")
		}
	}
	want := []string{"frame", "frame", "block", "frame", "block", "block", "none"}
	if !slices.Equal(order, want) {
		t.Fatalf("sent %v, want %v", order, want)
	}
}

// TestSupplyFollowsAnswers: the entry sends blocks as the answers use them, so the exit's stock
// stays between the initial stock's order and MaxStock through a long answer, and the blocks
// sent stay within a small margin of those used.
func TestSupplyFollowsAnswers(t *testing.T) {
	n := newMemNet(t, 0)
	entry := n.node(t, "entry", false, Config{MaxStock: 64})
	exit := n.node(t, "exit", true, Config{MaxStock: 64})
	const size = 512 << 10
	serve(t, exit, size)
	conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("seed-2"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.Copy(io.Discard, conn); err != nil || got != size {
		t.Fatalf("read %d bytes: %v", got, err)
	}
	used, sent, dropped := n.replies.Load(), entry.c.Stats().BlocksSent, exit.c.Stats().BlocksDropped
	if dropped > 0 || sent > uint64(used)+64+16 {
		t.Fatalf("the entry sent %d blocks for %d answers; the exit dropped %d (over MaxStock) and %d halves", sent, used, dropped,
			exit.c.Stats().HalvesDropped)
	}
}

// TestRelayerDies: midway through an answer the relayer of every block made so far dies (the
// replies on them vanish) and new blocks go over another. The entry no longer counts the blocks
// through it and sends new ones; the exit answers on its newest blocks first; the answer
// completes within seconds, not once the dead stock is spent.
func TestRelayerDies(t *testing.T) {
	n := newMemNet(t, 0)
	entry := n.node(t, "entry", false, Config{})
	exit := n.node(t, "exit", true, Config{})
	const size = 512 << 10
	serve(t, exit, size)
	conn, err := entry.c.Dial(t.Context(), entry.mux, exit.id, session.ModeTCP, []byte("seed-3"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(io.Discard, conn, size/4); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	n.down[n.relayer], n.relayer = true, "relayer-1"
	killed := len(n.byRelayer)
	n.mu.Unlock()
	t0 := time.Now()
	if _, err := io.CopyN(io.Discard, conn, size-size/4); err != nil {
		t.Fatalf("after %d blocks died: %v", killed, err)
	}
	took := time.Since(t0)
	t.Logf("%d blocks died; the rest of the answer came in %v", killed, took)
	if took > 25*time.Second {
		t.Fatalf("the answer took %v to complete after %d blocks died", took, killed)
	}
}

// TestRefusalBeforeBlocks: an exit that refuses a session before any of its blocks came (the
// SYN overtook them) keeps the RST until a block comes, and the entry learns the reason.
// The halves that came before the SYN are kept for it: with the second halves of the blocks
// coming after the refusal, the RST goes on the first block whole, not after the entry's probe.
func TestRefusalBeforeBlocks(t *testing.T) {
	for name, delay := range map[string]struct{ part, half, seg time.Duration }{
		"blocks after the SYN":        {300 * time.Millisecond, 0, 0},
		"second halves after the SYN": {0, 300 * time.Millisecond, 50 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			n := newMemNet(t, 0)
			n.partDelay, n.halfDelay, n.segDelay = delay.part, delay.half, delay.seg
			entry := n.node(t, "entry", false, Config{})
			exit := n.node(t, "exit", true, Config{})
			go func() {
				conn, err := exit.mux.Accept(t.Context())
				if err == nil {
					_ = conn.Reset(session.ReasonNotAllowed)
				}
			}()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second) // the entry's first probe comes after 4 s
			defer cancel()
			_, err := entry.c.Dial(ctx, entry.mux, exit.id, session.ModeTCP, []byte("x"))
			if !errors.Is(err, session.ErrNotAllowed) {
				t.Fatalf("Dial: %v, want ErrNotAllowed", err)
			}
			wait.For(t, func() bool { _, x, _ := exit.c.Sessions(); return x == 0 }, 10*time.Second, "the exit forgets the refused session")
		})
	}
}

// TestReceiveRefuses: texts of the carrier's kinds that are malformed or come the wrong way are
// refused, counted and change nothing; blocks of sessions that never open stay bounded.
func TestReceiveRefuses(t *testing.T) {
	n := newMemNet(t, 0)
	exit := n.node(t, "exit", true, Config{MaxPending: 4})
	var id session.ID
	good := encodePart(id, 1, 0, make([]byte, partData))
	seg := encodeAnswer(answer{stock: 3, segment: append([]byte{session.KindSegment}, make([]byte, session.HeaderSize-1)...)})
	for name, tc := range map[string]struct {
		text  []byte
		reply bool
	}{
		"empty":              {nil, false},
		"part as reply":      {good, true},
		"short part":         {good[:PartSize-1], false},
		"long part":          {append(bytes.Clone(good), 0), false},
		"answer forward":     {seg, false},
		"short answer":       {seg[:answerHeader+3], true},
		"answer of no frame": {[]byte{KindAnswer, 1, 0, 0, 0, 0x11, 0, 0}, true},
		"segment as reply":   {seg[answerHeader:], true},
		"unknown kind":       {[]byte{0x23, 1, 2}, false},
	} {
		if err := exit.c.Receive(tc.text, tc.reply); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	if st := exit.c.Stats(); st.Malformed != 9 {
		t.Fatalf("counted %d malformed", st.Malformed)
	}
	// Halves of blocks of made-up sessions: at most MaxPending sessions' worth is kept.
	for i := range 50 {
		id[0] = byte(i)
		if err := exit.c.Receive(encodePart(id, 0, 0, make([]byte, partData)), false); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, pending := exit.c.Sessions(); pending != 4 {
		t.Fatalf("%d pending sessions, want 4", pending)
	}
	// Halves of many numbers for one made-up session: at most pendingHalves wait.
	id[0] = 100
	for i := range 300 {
		if err := exit.c.Receive(encodePart(id, uint16(i), 0, make([]byte, partData)), false); err != nil {
			t.Fatal(err)
		}
	}
	l := exit.c.exitFor(id)
	l.mu.Lock()
	waiting := len(l.parts)
	l.mu.Unlock()
	if waiting != pendingHalves {
		t.Fatalf("%d halves wait for a session without a SYN, want %d", waiting, pendingHalves)
	}
	// Two halves that make no reply block are dropped.
	id[0] = 200
	for half := range uint8(2) {
		if err := exit.c.Receive(encodePart(id, 5, half, bytes.Repeat([]byte{0xff}, partData)), false); err != nil {
			t.Fatal(err)
		}
	}
	if st := exit.c.Stats(); st.BlocksReceived != 0 || st.BlocksDropped == 0 {
		t.Fatalf("garbage blocks: %+v", st)
	}
}

// FuzzReceive: no text makes the carrier panic, and what it refuses as malformed is counted.
func FuzzReceive(f *testing.F) {
	var id session.ID
	f.Add(encodePart(id, 3, 1, make([]byte, partData)), false)
	f.Add(encodePart(id, blockNumbers-1, 0, make([]byte, partData)), false) // the widest number
	f.Add(encodePart(id, 3, 1, make([]byte, partData))[:PartSize-1], false)
	f.Add(encodeAnswer(answer{stock: 9, received: 1, toCome: 3, segment: append([]byte{session.KindSegment}, make([]byte, session.HeaderSize+4)...)}), true)
	f.Add(encodeAnswer(answer{stock: 255, received: 65535, toCome: 255, segment: append([]byte{session.KindSegment}, make([]byte, session.HeaderSize-1)...)}), true)
	f.Add([]byte{0x20, 1}, false)
	n := newMemNet(f, 0)
	exit := n.node(f, "exit", true, Config{})
	f.Fuzz(func(t *testing.T, text []byte, reply bool) {
		before := exit.c.Stats().Malformed
		err := exit.c.Receive(text, reply)
		if errors.Is(err, ErrMalformed) != (exit.c.Stats().Malformed == before+1) {
			t.Fatalf("%v, counted %d→%d", err, before, exit.c.Stats().Malformed)
		}
	})
}
