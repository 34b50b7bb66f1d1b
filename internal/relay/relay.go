package relay

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
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
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
)

// Defaults used by New for zero Config fields.
const (
	DefaultMixDelayMax = 20 * time.Millisecond
	DefaultAckTimeout  = time.Minute
	DefaultMaxPending  = 100_000
	DefaultQueueSize   = 1024
)

const (
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
	// Relayed: the packet came over relayers (with a ticket); a direct message did not. In a
	// layered network (Config.Layered) every packet counts as relayed.
	Relayed bool
	// Reply: the message is a reply made with a reply block this node created
	// (NewReplyBlock); its sender is not known to this node, and SentAt is the replier's clock.
	Reply bool
	// Framed: the text is a relayd frame (docs/PROTOCOL.md §8), not an app's message.
	Framed bool
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
	// Layered, when set and true, means the network has a layered topology (issue 30,
	// docs/NETWORK.md): this node's packets carry no padding (a relayer knows its position from
	// its layer anyway), so the last relayer's ticket to the recipient is worth 0; such a
	// ticket is not issued where no open channel leads to the next hop (the last layer keeps
	// none to the recipients): the packet goes without one; and every packet that reaches this
	// node as its recipient counts as relayed (Received.Relayed), since one without a ticket
	// came from the last layer. Nil or false: free routes.
	Layered func() bool
	// Replay is the replay-tag store Peel checks every packet against.
	Replay packet.ReplayChecker
	// Deliver receives every message for which this node is the recipient. It is called from
	// the relay's workers and must not block for long.
	Deliver func(Received)
	// OnAck, if set, is called with a sent message's ack challenge (Sent.Ack) when its first
	// hop acknowledges it.
	OnAck func(por.AckChallenge)
	// ReplyKeyring keeps the keys of the reply blocks this node made (NewReplyBlock) until their
	// reply arrives. Default: a MemoryReplyKeyring, which a restart empties (replies to blocks
	// made before it are then dropped as unknown).
	ReplyKeyring ReplyKeyring

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
	// MaxPending bounds the packets awaiting acknowledgement (default DefaultMaxPending); the
	// packets relayed for one previous hop take at most half of it.
	MaxPending int
	// Workers is the number of packet workers (default and minimum: one per CPU). Every worker
	// takes any packet, so that one busy link keeps every core busy (turns.go).
	Workers int
	// QueueSize is, per worker, the room in the workers' shared packet queue and in their shared
	// acknowledgement queue, which they empty first (default DefaultQueueSize); a full queue
	// drops. The packets of one previous hop (one line of them, turns.go) take at most
	// QueueSize of the packet queue (which holds at least two workers' worth), and the workers
	// serve the links in turn (fairqueue.go).
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

	peers *peerCache
	pend  *pendingTable
	m     *metrics
	seed  maphash.Seed
	queue *fairQueue // the workers' packets and due forwards, fair between links (fairqueue.go)
	// ackQueue is the workers' queue of acknowledgements, taken before their packets: an
	// acknowledgement settles a ticket for work already done and costs little, so an overloaded
	// relayer drops new packets, not the pay for the ones it forwarded.
	ackQueue chan job
	// inLanes order the accepting of incoming tickets by previous hop, outLanes the sending of
	// outgoing ones by next hop (turns.go); both striped by peer.
	inLanes, outLanes [laneStripes]turns
	// delayIn feeds the mixing stage; acked feeds the acknowledged-ticket committer.
	delayIn chan delayed
	acked   *ackQueue

	// split is Payments when it can verify and sign tickets apart from accepting and issuing
	// them, which lets the workers do that public-key work in parallel; nil otherwise.
	split   splitPayments
	bufs    sync.Pool // *[PaidMsgFrameLen]byte
	running atomic.Bool
	ran     atomic.Bool
	// storeFailing is set while Payments refuses to record acknowledged tickets (commit).
	storeFailing atomic.Bool
	// mixing is the current mixing delay (SetMixing); nil: cfg's bounds.
	mixing atomic.Pointer[Mixing]
	// volatile keeps the keys of NewVolatileReplyBlock's blocks.
	volatile *MemoryReplyKeyring
}

type jobKind uint8

const (
	jobMsg jobKind = iota + 1
	jobAck
	jobForward
)

// job is one unit of work for a worker.
type job struct {
	kind  jobKind
	from  peer.ID
	at    time.Time              // when it was queued (relayd_relay_queue_wait_seconds)
	place uint64                 // jobMsg: its place in the line of its previous hop (inLanes)
	buf   *[PaidMsgFrameLen]byte // jobMsg: the frame, n bytes
	n     int
	ack   [AckFrameLen]byte // jobAck: the frame
	f     forward           // jobForward
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
		cfg.MixDelayMax = min(cfg.MixDelayMin+10*cfg.MixDelayMean, MaxMixDelay)
	case cfg.MixDelayMax == 0:
		cfg.MixDelayMax = DefaultMixDelayMax
	}
	if cfg.AckTimeout == 0 {
		cfg.AckTimeout = DefaultAckTimeout
	}
	mixing := Mixing{Min: cfg.MixDelayMin, Mean: cfg.MixDelayMean, Max: cfg.MixDelayMax}
	if err := mixing.validate(); err != nil {
		return nil, err
	}
	if 2*mixing.Max > cfg.AckTimeout {
		return nil, fmt.Errorf("%w: the mixing delay's cap %v is more than half the acknowledgement timeout %v", ErrInvalidConfig, mixing.Max, cfg.AckTimeout)
	}
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
	if cfg.ReplyKeyring == nil {
		cfg.ReplyKeyring = NewMemoryReplyKeyring()
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
		cfg:      cfg,
		log:      log,
		key:      key,
		self:     self,
		addr:     crypto.PubkeyToAddress(cfg.Key.PublicKey),
		clock:    cfg.Clock,
		rand:     cfg.Rand,
		paid:     cfg.Payments != nil,
		peers:    newPeerCache(),
		pend:     newPendingTable(cfg.MaxPending),
		seed:     maphash.MakeSeed(),
		volatile: NewMemoryReplyKeyring(),
		queue:    newFairQueue(cfg.QueueSize*max(cfg.Workers, 2), cfg.QueueSize),
		ackQueue: make(chan job, cfg.QueueSize*cfg.Workers),
		delayIn:  make(chan delayed, cfg.QueueSize),
		acked:    newAckQueue(cfg.QueueSize),
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
	for i := range r.inLanes {
		r.inLanes[i].init()
		r.outLanes[i].init()
	}
	r.split, _ = cfg.Payments.(splitPayments)
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
		r.runCommitter(ctx)
	}()
	var wg sync.WaitGroup
	for range r.cfg.Workers {
		wg.Go(func() { r.worker(ctx) })
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

// enqueue hands j to the workers without blocking.
func (r *Relay) enqueue(j job) error {
	if !r.running.Load() {
		return errStopped
	}
	// The wall clock, not r.clock: the wait is the machine's (a test's clock may jump).
	j.at = time.Now()
	switch j.kind {
	case jobAck:
		select {
		case r.ackQueue <- j:
			return nil
		default:
			return ErrOverloaded
		}
	case jobForward:
		return r.queue.push(forwardFlow, j)
	default:
		return r.queue.push(r.laneOf(j.from), j)
	}
}

func (r *Relay) laneOf(from peer.ID) int    { return int(r.shard(from) % laneStripes) }
func (r *Relay) inLane(from peer.ID) *turns { return &r.inLanes[r.laneOf(from)] }
func (r *Relay) outLane(to peer.ID) *turns  { return &r.outLanes[r.shard(to)%laneStripes] }

var errStopped = errors.New("relay: not running")

func (r *Relay) worker(ctx context.Context) {
	q, acks := r.queue, r.ackQueue
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
		case <-q.ready:
			r.run(ctx, q.pop())
		}
	}
}

func (r *Relay) run(ctx context.Context, j job) {
	r.m.queueWait.Observe(time.Since(j.at).Seconds())
	switch j.kind {
	case jobMsg:
		r.handleMsgAt(ctx, j.from, j.buf[:j.n], j.place)
		r.bufs.Put(j.buf)
	case jobAck:
		r.handleAck(j.from, j.ack[:])
	case jobForward:
		r.forward(ctx, j.f)
	}
}

// layered reports whether the network has a layered topology (Config.Layered).
func (r *Relay) layered() bool { return r.cfg.Layered != nil && r.cfg.Layered() }
