package relay

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// Defaults used by New for zero Config fields.
const (
	DefaultMixDelayMax = 20 * time.Millisecond
	DefaultAckTimeout  = time.Minute
	DefaultMaxPending  = 100_000
	DefaultQueueSize   = 1024
)

const (
	fwdStripes  = 64  // forwarding locks, by next hop
	ackBatchMax = 256 // acknowledged tickets per Payments.Acknowledge call
	// ackCommitWindow is how long the committer waits for more acknowledged tickets before it
	// writes a batch: fewer, larger fsynced transactions. Nothing waits for the commit but the
	// ticket's own record, so the window costs no message latency; at 2 ms a relayer at 500
	// msg/s committed almost every ticket alone, and its commits took a quarter of its CPU
	// (BENCHMARKS.md, Local network).
	ackCommitWindow = 20 * time.Millisecond
)

var errDuplicate = errors.New("relay: duplicate packet id")

// Layout of the PoR field of a relayer's routing information (packet.PoRSize bytes,
// PROTOCOL.md §2): T_i ‖ H(ack_{i+1}) ‖ T_{i+1}.
const (
	porChallenge = len(por.Challenge{})                    // end of T_i
	porNext      = porChallenge + len(por.AckCommitment{}) // end of H(ack_{i+1})
)

// Transport carries frames between nodes; *p2p.Host satisfies it.
type Transport interface {
	// Send queues frame for peer to on proto without waiting for the network; it copies frame.
	Send(ctx context.Context, to peer.ID, proto p2p.Protocol, frame []byte) error
	// Handle registers fn for inbound frames of proto. fn runs on the transport's read loop.
	Handle(proto p2p.Protocol, fn p2p.Handler) error
}

// Received is a message delivered to this node as the recipient.
type Received struct {
	// Text is the message text (at most packet.MaxMessageSize bytes).
	Text string
	// SentAt is the sender's clock when it sent the message (millisecond precision).
	SentAt time.Time
	// ReceivedAt is this node's clock when the packet was peeled.
	ReceivedAt time.Time
}

// Config configures a Relay. Key, Transport, Replay and Deliver are required; other zero
// fields get defaults.
type Config struct {
	// Key is the node's secp256k1 key: it peels packets, and its PeerId and chain address
	// name this node.
	Key *ecdsa.PrivateKey
	// Transport sends and receives msg and ack frames.
	Transport Transport
	// Payments validates, issues and records tickets. Nil is unpaid mode: no ticket is issued
	// or required (incoming tickets are ignored).
	Payments Payments
	// Replay is the replay-tag store Peel checks every packet against.
	Replay packet.ReplayChecker
	// Deliver receives every message for which this node is the recipient. It is called from
	// the relay's workers and must not block for long.
	Deliver func(Received)
	// OnAck, if set, is called with a sent message's ack challenge when its first hop
	// acknowledges it.
	OnAck func(por.AckChallenge)

	// MixDelayMin and MixDelayMax bound the uniformly random delay each relayed packet waits
	// before it is forwarded. Both zero means 0 to DefaultMixDelayMax; NoMixDelay forwards at
	// once (benchmarks, tests).
	MixDelayMin, MixDelayMax time.Duration
	NoMixDelay               bool
	// MixDelayMean, when positive, draws the delay from an exponential distribution of this
	// mean instead (Poisson mixing: memoryless, so how long a packet has waited says nothing
	// about when it leaves), added to MixDelayMin and capped at MixDelayMax (at MixDelayMin +
	// 10 × the mean when MixDelayMax is 0), so that one packet cannot stall for seconds.
	MixDelayMean time.Duration

	// AckTimeout is how long a forwarded packet waits for the next hop's acknowledgement
	// before its ticket is neglected (default DefaultAckTimeout).
	AckTimeout time.Duration
	// MaxPending bounds the packets awaiting acknowledgement (default DefaultMaxPending).
	MaxPending int
	// Workers is the number of packet workers (default and minimum: one per CPU).
	Workers int
	// QueueSize is the length of each worker's packet queue and of its acknowledgement queue,
	// which it empties first (default DefaultQueueSize); a full queue drops.
	QueueSize int

	// Clock is the time source (default: the system clock).
	Clock Clock
	// Rand is the randomness for packets, mixing delays and the first ticket's padding
	// (default crypto/rand.Reader). It must be safe for concurrent use.
	Rand io.Reader
	// Logger receives the relay's logs. Optional: nil discards them.
	Logger *slog.Logger
	// Registerer receives the relay's prometheus metrics. Optional.
	Registerer prometheus.Registerer
}

// Relay is the packet pipeline of one node. Create it with New and start it with Run; Send
// may be called concurrently once Run is running.
type Relay struct {
	cfg   Config
	log   *slog.Logger
	key   *packet.PrivateKey
	self  peer.ID
	addr  common.Address
	clock Clock
	rand  io.Reader
	paid  bool

	// ephemerals holds ephemeral keys for Send, refilled by Run.
	ephemerals *packet.EphemeralPool

	peers  *peerCache
	pend   *pendingTable
	m      *metrics
	seed   maphash.Seed
	queues []chan job
	// ackQueues are the workers' queues of acknowledgements, taken before their packets: an
	// acknowledgement settles a ticket for work already done and costs little, so an overloaded
	// relayer drops new packets, not the pay for the ones it forwarded.
	ackQueues []chan job
	// delayIn feeds the mixing stage; acked feeds the acknowledged-ticket committer.
	delayIn chan delayed
	acked   *ackQueue

	fwdLocks [fwdStripes]sync.Mutex
	bufs     sync.Pool // *[PaidMsgFrameLen]byte
	running  atomic.Bool
	ran      atomic.Bool
	// mixing is the current mixing delay (SetMixing); nil: cfg's bounds.
	mixing atomic.Pointer[Mixing]
}

type jobKind uint8

const (
	jobMsg jobKind = iota + 1
	jobAck
	jobForward
)

// job is one unit of work for a worker.
type job struct {
	kind jobKind
	from peer.ID
	buf  *[PaidMsgFrameLen]byte // jobMsg: the frame, n bytes
	n    int
	ack  [AckFrameLen]byte // jobAck: the frame
	f    forward           // jobForward
}

// forward is a peeled packet on its way to the next hop.
type forward struct {
	id        packetID
	entry     *pendingEntry
	next      *peerEntry
	pkt       []byte
	amount    uint256.Int
	challenge por.Challenge
}

// New checks cfg and returns a Relay. It starts nothing: Run registers the handlers and runs
// the workers.
func New(cfg Config) (*Relay, error) {
	switch {
	case cfg.Key == nil:
		return nil, fmt.Errorf("%w: Key is required", ErrInvalidConfig)
	case cfg.Transport == nil:
		return nil, fmt.Errorf("%w: Transport is required", ErrInvalidConfig)
	case cfg.Replay == nil:
		return nil, fmt.Errorf("%w: Replay is required", ErrInvalidConfig)
	case cfg.Deliver == nil:
		return nil, fmt.Errorf("%w: Deliver is required", ErrInvalidConfig)
	case cfg.MixDelayMin < 0 || cfg.MixDelayMax < 0 || cfg.MixDelayMean < 0 || (cfg.MixDelayMax != 0 && cfg.MixDelayMin > cfg.MixDelayMax):
		return nil, fmt.Errorf("%w: MixDelayMin, MixDelayMax and MixDelayMean must satisfy 0 <= min <= max and 0 <= mean", ErrInvalidConfig)
	case cfg.AckTimeout < 0 || cfg.MaxPending < 0 || cfg.Workers < 0 || cfg.QueueSize < 0:
		return nil, fmt.Errorf("%w: negative AckTimeout, MaxPending, Workers or QueueSize", ErrInvalidConfig)
	}
	switch {
	case cfg.NoMixDelay:
		cfg.MixDelayMin, cfg.MixDelayMax, cfg.MixDelayMean = 0, 0, 0
	case cfg.MixDelayMean > 0 && cfg.MixDelayMax == 0:
		cfg.MixDelayMax = cfg.MixDelayMin + 10*cfg.MixDelayMean
	case cfg.MixDelayMax == 0:
		cfg.MixDelayMax = DefaultMixDelayMax
	}
	if cfg.AckTimeout == 0 {
		cfg.AckTimeout = DefaultAckTimeout
	}
	mixing := Mixing{Min: cfg.MixDelayMin, Mean: cfg.MixDelayMean, Max: cfg.MixDelayMax}
	if cfg.MaxPending == 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	cfg.Workers = max(cfg.Workers, runtime.NumCPU())
	if cfg.QueueSize == 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key, err := packet.NewPrivateKey(crypto.FromECDSA(cfg.Key))
	if err != nil {
		return nil, fmt.Errorf("%w: Key: %w", ErrInvalidConfig, err)
	}
	self, err := identity.PeerIDFromPubKey(crypto.CompressPubkey(&cfg.Key.PublicKey))
	if err != nil {
		return nil, fmt.Errorf("%w: Key: %w", ErrInvalidConfig, err)
	}
	r := &Relay{
		cfg:       cfg,
		log:       log,
		key:       key,
		self:      self,
		addr:      crypto.PubkeyToAddress(cfg.Key.PublicKey),
		clock:     cfg.Clock,
		rand:      cfg.Rand,
		paid:      cfg.Payments != nil,
		peers:     newPeerCache(),
		pend:      newPendingTable(cfg.MaxPending),
		seed:      maphash.MakeSeed(),
		queues:    make([]chan job, cfg.Workers),
		ackQueues: make([]chan job, cfg.Workers),
		delayIn:   make(chan delayed, cfg.QueueSize),
		acked:     newAckQueue(cfg.QueueSize),
	}
	// Ephemeral keys for the node's own packets, computed in idle time: a send then does only
	// the work that depends on its path. Always from crypto/rand: cfg.Rand may be a test's
	// seeded reader, whose draws the pool's background reads would reorder.
	pool, err := packet.NewEphemeralPool(rand.Reader, ephemeralPoolSize)
	if err != nil {
		return nil, err
	}
	r.ephemerals = pool
	r.bufs.New = func() any { return new([PaidMsgFrameLen]byte) }
	for i := range r.queues {
		r.queues[i] = make(chan job, cfg.QueueSize)
		r.ackQueues[i] = make(chan job, cfg.QueueSize)
	}
	r.m = newMetrics(cfg.Registerer, func() float64 { return float64(r.pend.len()) })
	r.mixing.Store(&mixing)
	return r, nil
}

// ephemeralPoolSize is how many ephemeral keys a relay keeps ready for its own packets (one per
// hop): 64 three-relayer messages' worth, about 10 ms of CPU to fill; a burst beyond it computes
// the rest on the spot while the pool refills.
const ephemeralPoolSize = 256

// ID returns this node's PeerId.
func (r *Relay) ID() peer.ID { return r.self }

// Run registers the msg and ack handlers and processes packets until ctx ends. When it
// returns, every acknowledgement it verified has been handed to Payments. Call it once.
func (r *Relay) Run(ctx context.Context) error {
	if !r.ran.CompareAndSwap(false, true) {
		return errors.New("relay: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.running.Store(true)
	defer r.running.Store(false)
	if err := r.cfg.Transport.Handle(p2p.ProtocolMsg, r.onMsg); err != nil {
		return fmt.Errorf("relay: handle msg: %w", err)
	}
	if err := r.cfg.Transport.Handle(p2p.ProtocolAck, r.onAck); err != nil {
		return fmt.Errorf("relay: handle ack: %w", err)
	}
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		r.runCommitter(context.WithoutCancel(ctx))
	}()
	var wg sync.WaitGroup
	for i, q := range r.queues {
		wg.Go(func() { r.worker(ctx, q, r.ackQueues[i]) })
	}
	wg.Go(func() { r.runDelay(ctx) })
	wg.Go(func() { r.runExpiry(ctx) })
	wg.Go(func() {
		if err := r.ephemerals.Run(ctx); err != nil && ctx.Err() == nil {
			r.log.Error("relay: precomputing ephemeral keys stopped; sends compute their own", "err", err)
		}
	})
	<-ctx.Done()
	r.running.Store(false)
	wg.Wait()
	r.acked.close() // only workers push to it, and they are done
	<-committed
	return nil
}

func (r *Relay) shard(id peer.ID) uint64 { return maphash.String(r.seed, string(id)) }

// enqueue hands j to the worker of key without blocking.
func (r *Relay) enqueue(key peer.ID, j job) error {
	if !r.running.Load() {
		return errStopped
	}
	qs := r.queues
	if j.kind == jobAck {
		qs = r.ackQueues
	}
	select {
	case qs[r.shard(key)%uint64(len(qs))] <- j:
		return nil
	default:
		return ErrOverloaded
	}
}

var errStopped = errors.New("relay: not running")

func (r *Relay) worker(ctx context.Context, q, acks chan job) {
	for {
		select { // acknowledgements first (ackQueues)
		case j := <-acks:
			r.run(ctx, j)
			continue
		default:
		}
		select {
		case <-ctx.Done():
			return
		case j := <-acks:
			r.run(ctx, j)
		case j := <-q:
			r.run(ctx, j)
		}
	}
}

func (r *Relay) run(ctx context.Context, j job) {
	switch j.kind {
	case jobMsg:
		r.handleMsg(ctx, j.from, j.buf[:j.n])
		r.bufs.Put(j.buf)
	case jobAck:
		r.handleAck(j.from, j.ack[:])
	case jobForward:
		r.forward(ctx, j.f)
	}
}

// onMsg runs on the transport's read loop: it copies the frame and queues it for the sender's
// worker (one peer's frames stay in order).
func (r *Relay) onMsg(from peer.ID, frame []byte) {
	r.m.received.Inc()
	if len(frame) != MsgFrameLen && len(frame) != PaidMsgFrameLen {
		r.dropPacket(from, reasonFrameSize, ErrFrameSize)
		return
	}
	buf := r.bufs.Get().(*[PaidMsgFrameLen]byte)
	n := copy(buf[:], frame)
	if err := r.enqueue(from, job{kind: jobMsg, from: from, buf: buf, n: n}); err != nil {
		r.bufs.Put(buf)
		r.dropPacket(from, reasonForQueue(err), err)
	}
}

// onAck runs on the transport's read loop.
func (r *Relay) onAck(from peer.ID, frame []byte) {
	if len(frame) != AckFrameLen {
		r.dropAck(from, reasonFrameSize, ErrFrameSize)
		return
	}
	j := job{kind: jobAck, from: from}
	copy(j.ack[:], frame)
	if err := r.enqueue(from, j); err != nil {
		r.dropAck(from, reasonForQueue(err), err)
	}
}

func reasonForQueue(err error) string {
	if errors.Is(err, errStopped) {
		return reasonStopped
	}
	return reasonOverload
}

func (r *Relay) dropPacket(from peer.ID, reason string, err error) {
	r.m.dropped.WithLabelValues(reason).Inc()
	r.log.Debug("relay: packet dropped", slog.String("peer_id", from.String()), slog.String("reason", reason), slog.Any("err", err))
}

func (r *Relay) dropAck(from peer.ID, reason string, err error) {
	r.m.acksDropped.WithLabelValues(reason).Inc()
	r.log.Debug("relay: acknowledgement dropped", slog.String("peer_id", from.String()), slog.String("reason", reason), slog.Any("err", err))
}

// handleMsg processes one msg frame (docs/PROTOCOL.md §5.4): peel, check the ticket, then
// deliver, or acknowledge and forward after the mixing delay.
func (r *Relay) handleMsg(ctx context.Context, from peer.ID, frame []byte) {
	pkt, tb, err := decodeMsgFrame(frame)
	if err != nil {
		r.dropPacket(from, reasonOf(err), err)
		return
	}
	p, err := packet.Peel(r.key, pkt, r.clock.Now(), r.cfg.Replay)
	if err != nil {
		r.dropPacket(from, reasonOf(err), err)
		return
	}
	prev, err := r.peers.byPeer(from)
	if err != nil {
		r.dropPacket(from, reasonBadPeer, err)
		return
	}
	own, ack, err := por.DeriveOwnAck(p.Secret)
	if err != nil {
		r.dropPacket(from, reasonPayload, err)
		return
	}
	id := idOf(pkt)
	if p.Final {
		r.receive(from, prev, id, &p, tb, own, ack)
		return
	}

	next, err := r.peers.byPubKey(p.NextHop)
	if err != nil || next.id == r.self {
		r.dropPacket(from, reasonBadNextHop, err)
		return
	}
	// PoR field (PROTOCOL.md §2): T_i, the challenge this hop's ticket must carry; H(ack_{i+1}),
	// the commitment the next hop's acknowledgement must open; T_{i+1}, the challenge of the
	// ticket this hop issues. Checking them costs two comparisons and, per ack, one hash.
	now := r.clock.Now()
	e := newRelayedEntry(next.id, now.Add(r.cfg.AckTimeout), own, prev.addr)
	var want por.Challenge
	copy(want[:], p.PoR[:porChallenge])
	copy(e.commitment[:], p.PoR[porChallenge:porNext])
	f := forward{id: idOf(p.Next), entry: e, next: next, pkt: p.Next}
	copy(f.challenge[:], p.PoR[porNext:])
	if r.paid {
		if err := r.checkTicket(prev, tb, want, &e.ticket); err != nil {
			r.dropPacket(from, reasonOf(err), err)
			return
		}
		e.paid = true
		v := e.ticket.Value()
		f.amount.Sub(&v, &ledger.PricePerHop) // AcceptTicket checked the value is at least PricePerHop
	}
	if err := r.pend.add(f.id, e); err != nil {
		if e.paid {
			r.cfg.Payments.Neglect(e.prev, &e.ticket)
		}
		reason := reasonOverload
		if errors.Is(err, errDuplicate) {
			reason = reasonDuplicate
		}
		r.dropPacket(from, reason, err)
		return
	}
	// Acknowledge at once, not when forwarding: an acknowledgement sent after the delay would
	// show an observer which outgoing packet belongs to which incoming one.
	r.sendAck(ctx, from, id, ack)
	if d := r.mixDelay(); d > 0 {
		select {
		case r.delayIn <- delayed{due: now.Add(d), f: f}:
		default:
			r.dropForward(f, reasonOverload, ErrOverloaded)
		}
		return
	}
	r.forward(ctx, f)
}

// checkTicket decodes and validates a relayer's incoming ticket into t.
// The challenge must be T_i, which the sender put in this hop's routing information (where the
// previous hop can neither read nor change it): no curve arithmetic.
func (r *Relay) checkTicket(prev *peerEntry, tb []byte, want por.Challenge, t *tickets.Ticket) error {
	if tb == nil {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, ErrTicketMissing)
	}
	if err := t.UnmarshalBinary(tb); err != nil {
		return fmt.Errorf("%w: %w: %w", ErrInvalidTicket, ErrTicketMalformed, err)
	}
	if want != t.Challenge {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, ErrTicketChallenge)
	}
	if err := r.cfg.Payments.AcceptTicket(prev.addr, t, false); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	return nil
}

// receive handles a packet for which this node is the recipient. A ticket worth more than 0
// (the sender's padding, PROTOCOL.md §4.5) is acknowledged at once: the recipient knows its
// response own + end.
func (r *Relay) receive(from peer.ID, prev *peerEntry, id packetID, p *packet.Peeled, tb []byte, own, ack por.Scalar) {
	if r.paid && tb != nil {
		t, response, err := r.checkFinalTicket(prev, tb, p.Secret, own)
		if err != nil {
			r.dropPacket(from, reasonOf(err), err)
			return
		}
		if !t.Amount.IsZero() {
			// Blocking, as for a relayer's acknowledged ticket: it is money.
			r.acked.push(ledger.AckedTicket{Source: prev.addr, Ticket: t, Response: response, Unverified: true})
		}
	}
	r.sendAck(context.Background(), from, id, ack)
	r.m.delivered.Inc()
	r.cfg.Deliver(Received{
		Text:       string(p.Message.Text),
		SentAt:     time.UnixMilli(int64(p.Message.Timestamp)),
		ReceivedAt: r.clock.Now(),
	})
}

// checkFinalTicket decodes and validates the recipient's ticket and returns it with the
// response that redeems it, own + end.
func (r *Relay) checkFinalTicket(prev *peerEntry, tb []byte, secret [packet.SecretSize]byte, own por.Scalar) (tickets.Ticket, [32]byte, error) {
	var t tickets.Ticket
	if err := t.UnmarshalBinary(tb); err != nil {
		return t, [32]byte{}, fmt.Errorf("%w: %w: %w", ErrInvalidTicket, ErrTicketMalformed, err)
	}
	end, err := por.DeriveEnd(secret)
	if err != nil {
		return t, [32]byte{}, fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	// Whether own + end opens the ticket's challenge is left to the ledger (AckedTicket's
	// Unverified): it costs a scalar multiplication, worth spending only on a ticket the
	// recipient keeps, a winner.
	if err := r.cfg.Payments.AcceptTicket(prev.addr, &t, true); err != nil {
		return t, [32]byte{}, fmt.Errorf("%w: %w", ErrInvalidTicket, err)
	}
	return t, por.Response(own, end), nil
}

func (r *Relay) sendAck(ctx context.Context, to peer.ID, id packetID, ack por.Scalar) {
	f := ackFrame(id, ack)
	if err := r.cfg.Transport.Send(ctx, to, p2p.ProtocolAck, f[:]); err != nil {
		r.log.Debug("relay: sending acknowledgement failed", slog.String("peer_id", to.String()), slog.Any("err", err))
		return
	}
	r.m.acksSent.Inc()
}

// mixDelay draws a packet's mixing delay: Min plus an exponential draw of mean Mean capped at
// Max, or, without a mean, uniform in [Min, Max] (Mixing).
func (r *Relay) mixDelay() time.Duration {
	m := r.currentMixing()
	lo, hi := m.Min, m.Max
	if hi <= lo {
		return lo
	}
	var b [8]byte
	if _, err := io.ReadFull(r.rand, b[:]); err != nil {
		return hi
	}
	x := binary.LittleEndian.Uint64(b[:])
	if mean := m.Mean; mean > 0 {
		u := (float64(x>>11) + 1) / (1 << 53) // uniform in (0, 1]
		d := lo + time.Duration(-math.Log(u)*float64(mean))
		return min(d, hi)
	}
	return lo + time.Duration(x%uint64(hi-lo+1))
}

// dispatchForward hands a due packet to the worker of its next hop.
func (r *Relay) dispatchForward(f forward) {
	if err := r.enqueue(f.next.id, job{kind: jobForward, f: f}); err != nil {
		r.dropForward(f, reasonForQueue(err), err)
	}
}

// forward issues the next hop's ticket and sends the packet. Issue and send happen under the
// next hop's lock, so tickets reach it in index order.
func (r *Relay) forward(ctx context.Context, f forward) {
	mu := &r.fwdLocks[r.shard(f.next.id)%fwdStripes]
	mu.Lock()
	defer mu.Unlock()
	var tp *tickets.Ticket
	if r.paid {
		t, err := r.cfg.Payments.IssueTicket(ctx, f.next.addr, &f.amount, f.challenge)
		if err != nil {
			reason := reasonIssue
			if errors.Is(err, ledger.ErrNotEnoughBalance) || errors.Is(err, ledger.ErrChannelNotOpen) || errors.Is(err, ledger.ErrChannelNotFound) {
				reason = reasonNoBalance
			}
			r.dropForward(f, reason, err)
			return
		}
		tp = &t
	}
	if err := r.sendPacket(ctx, f.next.id, f.pkt, tp); err != nil {
		r.dropForward(f, reasonSend, err)
		return
	}
	r.m.forwarded.Inc()
}

func (r *Relay) sendPacket(ctx context.Context, to peer.ID, pkt []byte, t *tickets.Ticket) error {
	buf := r.bufs.Get().(*[PaidMsgFrameLen]byte)
	defer r.bufs.Put(buf)
	frame, err := appendMsgFrame(buf[:0], pkt, t)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	return r.cfg.Transport.Send(ctx, to, p2p.ProtocolMsg, frame)
}

// dropForward gives up a packet that was accepted but cannot be forwarded.
func (r *Relay) dropForward(f forward, reason string, err error) {
	r.dropPacket(f.next.id, reason, err)
	if f.entry != nil && r.pend.remove(f.id, f.entry) {
		r.settleUnacked(f.entry)
	}
}

// settleUnacked ends a pending entry that will not be acknowledged.
func (r *Relay) settleUnacked(e *pendingEntry) {
	switch {
	case e.sent():
		r.pend.settleSent(e, sentExpired)
	case e.paid:
		r.cfg.Payments.Neglect(e.prev, &e.ticket)
		r.m.ticketsNeglected.Inc()
	}
}

// handleAck processes one ack frame: find the pending packet, check the acknowledgement,
// and turn the ticket into an acknowledged one.
func (r *Relay) handleAck(from peer.ID, frame []byte) {
	id, ack, err := decodeAckFrame(frame)
	if err != nil {
		r.dropAck(from, reasonOf(err), err)
		return
	}
	e := r.pend.get(id)
	if e == nil {
		r.dropAck(from, reasonUnknownAck, ErrUnknownAck)
		return
	}
	if e.next != from {
		r.dropAck(from, reasonWrongPeer, ErrBadAck)
		return
	}
	// The sender knows the ack scalar it expects; a relayer checks it against the commitment
	// in its routing information (one hash).
	if e.sent() && !por.EqualScalars(ack, e.ack) || !e.sent() && por.CommitAck(ack) != e.commitment {
		r.dropAck(from, reasonBadAck, ErrBadAck)
		return
	}
	if !r.pend.remove(id, e) {
		r.dropAck(from, reasonUnknownAck, ErrUnknownAck) // expired or acknowledged meanwhile
		return
	}
	r.m.acksReceived.Inc()
	switch {
	case e.sent():
		r.pend.settleSent(e, sentAcked)
		if r.cfg.OnAck != nil {
			r.cfg.OnAck(e.challenge)
		}
	case e.paid:
		// Blocking: acknowledged tickets are money. The committer drains until Run ends.
		r.acked.push(ledger.AckedTicket{Source: e.prev, Ticket: e.ticket, Response: por.Response(e.own, ack)})
	}
}

// runCommitter hands acknowledged tickets to Payments in batches until r.acked is closed and
// drained: group commit. A batch is written ackCommitWindow after its first ticket arrived, and
// no sooner than ackCommitWindow after the previous batch (ackQueue.next), up to ackBatchMax in
// one fsynced store transaction. No ticket is reported before it is on disk.
func (r *Relay) runCommitter(ctx context.Context) {
	batch := make([]ledger.AckedTicket, 0, ackBatchMax)
	for {
		var closed bool
		batch, closed = r.acked.next(batch, ackBatchMax, ackCommitWindow)
		if len(batch) == 0 && closed {
			return
		}
		if len(batch) > 0 {
			r.commit(ctx, batch)
		}
	}
}

func (r *Relay) commit(ctx context.Context, batch []ledger.AckedTicket) {
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := r.cfg.Payments.Acknowledge(ctx, batch)
		if err == nil {
			r.m.ticketsAcked.Add(float64(len(batch)))
			return
		}
		r.log.Error("relay: recording acknowledged tickets failed", slog.Int("tickets", len(batch)),
			slog.Int("attempt", attempt), slog.Any("err", err))
		if attempt == 10 {
			return
		}
		t := r.clock.NewTimer(backoff)
		<-t.C()
		backoff = min(2*backoff, 5*time.Second)
	}
}

// runExpiry neglects pending packets whose acknowledgement did not come in AckTimeout.
func (r *Relay) runExpiry(ctx context.Context) {
	every := max(r.cfg.AckTimeout/8, time.Millisecond)
	t := r.clock.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			for _, e := range r.pend.expire(r.clock.Now()) {
				r.settleUnacked(e)
			}
			t.Reset(every)
		}
	}
}

// Send sends text to the last of hops over the others: hops lists the relayers in order, then
// the recipient (1 to packet.MaxHops peers; 1 is a direct message, which carries no ticket).
// It refuses a text over packet.MaxMessageSize bytes (packet.ErrMessageTooLarge) and a bad
// route (ErrBadRoute) before any work, builds the packet with its proof-of-relay data, issues
// the first hop's ticket worth tickets.PaddedAmount(relayers, pad) for a pad it draws from
// Config.Rand (tickets.DrawPad, PROTOCOL.md §4.5; ErrNotEnoughBalance when the channel cannot
// pay that amount, ErrChannelNotOpen, ErrChannelNotFound: nothing is sent) and queues it. It
// returns the ack challenge A_1 that the first hop's acknowledgement opens; WaitAck waits for it.
func (r *Relay) Send(ctx context.Context, hops []peer.ID, text string) (por.AckChallenge, error) {
	var zero por.AckChallenge
	if len(text) > packet.MaxMessageSize {
		return zero, fmt.Errorf("send: %d bytes: %w", len(text), packet.ErrMessageTooLarge)
	}
	if len(hops) == 0 || len(hops) > packet.MaxHops {
		return zero, fmt.Errorf("send: %d hops: %w", len(hops), ErrBadRoute)
	}
	keys := make([]*packet.PublicKey, len(hops))
	var first *peerEntry
	for i, h := range hops {
		// The sender itself may be the recipient behind relayers: loop cover traffic.
		loop := h == r.self && i == len(hops)-1 && i > 0
		if (h == r.self && !loop) || (i > 0 && h == hops[i-1]) {
			return zero, fmt.Errorf("send: hop %d: %w", i, ErrBadRoute)
		}
		e, err := r.peers.byPeer(h)
		if err != nil {
			return zero, fmt.Errorf("send: hop %d: %w: %w", i, ErrBadRoute, err)
		}
		keys[i] = e.key
		if i == 0 {
			first = e
		}
	}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	n := len(hops)
	route, err := r.ephemerals.NewRoute(r.rand, keys)
	if err != nil {
		return zero, fmt.Errorf("send: %w", err)
	}
	// Per hop i: own_i, ack_i, and the response r_i = own_i + ack_{i+1} (end for the recipient)
	// whose address(r_i·G) = T_i is the challenge of the ticket to hop i. One more point,
	// A_1 = ack_0·G, names the message's acknowledgement.
	var own, ack, ks [packet.MaxHops + 1]por.Scalar
	for i := range n {
		if own[i], ack[i], err = por.DeriveOwnAck(route.Secret(i)); err != nil {
			return zero, fmt.Errorf("send: %w", err)
		}
	}
	end, err := por.DeriveEnd(route.Secret(n - 1))
	if err != nil {
		return zero, fmt.Errorf("send: %w", err)
	}
	for i := range n {
		after := end
		if i+1 < n {
			after = ack[i+1]
		}
		if ks[i], err = por.Sum(own[i], after); err != nil {
			return zero, fmt.Errorf("send: %w", err)
		}
	}
	ks[n] = ack[0]
	first0 := 0
	if n == 1 {
		first0 = 1 // a direct message: no ticket, no T_0
	}
	pts, err := por.MulBase(ks[first0 : n+1]...)
	if err != nil {
		return zero, fmt.Errorf("send: %w", err)
	}
	pts = append(make([]por.Point, first0), pts...)
	var fields [packet.MaxHops - 1][packet.PoRSize]byte
	for i := range n - 1 {
		ti, next := pts[i].Address(), pts[i+1].Address()
		h := por.CommitAck(ack[i+1])
		copy(fields[i][:porChallenge], ti[:])
		copy(fields[i][porChallenge:porNext], h[:])
		copy(fields[i][porNext:], next[:])
	}
	a0 := pts[n].Compress()
	var c0 por.Challenge
	if r.paid && n > 1 {
		c0 = pts[0].Address()
	}
	now := r.clock.Now()
	pkt, err := route.Seal(packet.Message{Text: []byte(text), Timestamp: uint64(now.UnixMilli())}, fields[:n-1])
	if err != nil {
		return zero, fmt.Errorf("send: %w", err)
	}
	id := idOf(pkt)
	e := newSentEntry(first.id, now.Add(r.cfg.AckTimeout), a0, ack[0])
	if err := r.pend.add(id, e); err != nil {
		return zero, fmt.Errorf("send: %w", ErrOverloaded)
	}
	var amount uint256.Int
	if r.paid && n > 1 {
		pad, err := tickets.DrawPad(r.rand)
		if err != nil {
			r.pend.forgetSent(id, e)
			return zero, fmt.Errorf("send: %w", err)
		}
		amount = tickets.PaddedAmount(n-1, pad)
	}
	if err := r.sendFirst(ctx, first, pkt, &amount, c0); err != nil {
		r.pend.forgetSent(id, e)
		return zero, fmt.Errorf("send: %w", err)
	}
	r.m.sent.Inc()
	return a0, nil
}

// sendFirst issues the first hop's ticket worth amount (paid mode, at least one relayer: amount
// is not 0) and queues the packet, under the first hop's forwarding lock.
func (r *Relay) sendFirst(ctx context.Context, first *peerEntry, pkt []byte, amount *uint256.Int, challenge por.Challenge) error {
	mu := &r.fwdLocks[r.shard(first.id)%fwdStripes]
	mu.Lock()
	defer mu.Unlock()
	var tp *tickets.Ticket
	if r.paid && !amount.IsZero() {
		t, err := r.cfg.Payments.IssueTicket(ctx, first.addr, amount, challenge)
		if err != nil {
			return fmt.Errorf("first ticket: %w", err)
		}
		tp = &t
	}
	return r.sendPacket(ctx, first.id, pkt, tp)
}

// WaitAck waits until the first hop of a message this node sent acknowledges it (nil), its
// AckTimeout passes (ErrAckTimeout) or ctx ends. It returns ErrUnknownAck for a challenge Send
// did not return or that was forgotten (AckTimeout after sending).
func (r *Relay) WaitAck(ctx context.Context, challenge por.AckChallenge) error {
	e, state, done := r.pend.waitSent(challenge)
	if e == nil {
		return ErrUnknownAck
	}
	if state == sentPending {
		select {
		case <-done:
			state = e.state // written before done was closed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if state == sentAcked {
		return nil
	}
	return ErrAckTimeout
}
