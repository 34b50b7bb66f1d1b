package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/tickets"
)

// Reply blocks (docs/PROTOCOL.md §3.9): this node makes a block over a return path that ends
// at itself (NewReplyBlock) and keeps its keys in the ReplyKeyring; a replier sends one message
// with it (SendReply), paying the first hop as a sender pays; the relayers relay and are paid as
// for any packet; this node receives the reply (receive, openReply) like a message, marked
// Received.Reply.

// ReplyKeyring keeps the keys of the reply blocks this node made until their reply arrives.
type ReplyKeyring interface {
	// Put stores keys (packet.ReplyKeys, encoded) under the block id; epoch is the block's
	// creation epoch: once packet.Expired(epoch, now) no hop accepts the reply, and the keys
	// may be forgotten.
	Put(id [16]byte, epoch uint32, keys []byte) error
	Take(id [16]byte) (keys []byte, ok bool, err error) // returns and deletes
}

// The ids the keyring's interface names are packet.ReplyIDSize bytes (a compile-time check).
const _ = uint(packet.ReplyIDSize-16) + uint(16-packet.ReplyIDSize)

// MemoryReplyKeyring is an in-memory ReplyKeyring (tests, and the default): a restart forgets
// the keys. It reads no clock: Put drops the keys of blocks whose epoch is expired at the
// newest epoch it has been given, the creator's current one, so it holds the blocks of about
// the last three epochs that got no reply.
type MemoryReplyKeyring struct {
	mu     sync.Mutex
	newest uint32
	keys   map[[16]byte]memoryReplyKeys
}

type memoryReplyKeys struct {
	epoch uint32
	keys  []byte
}

var _ ReplyKeyring = (*MemoryReplyKeyring)(nil)

// errReplyIDTaken: Put with an id the keyring holds (two blocks with one random id).
var errReplyIDTaken = errors.New("relay: reply block id already in the keyring")

// NewMemoryReplyKeyring returns an empty MemoryReplyKeyring.
func NewMemoryReplyKeyring() *MemoryReplyKeyring {
	return &MemoryReplyKeyring{keys: make(map[[16]byte]memoryReplyKeys)}
}

// Put implements ReplyKeyring; it keeps its own copy of keys.
func (k *MemoryReplyKeyring) Put(id [16]byte, epoch uint32, keys []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if epoch > k.newest {
		k.newest = epoch
		for old, e := range k.keys {
			if packet.Expired(e.epoch, k.newest) {
				clear(e.keys)
				delete(k.keys, old)
			}
		}
	}
	if _, ok := k.keys[id]; ok {
		return errReplyIDTaken
	}
	k.keys[id] = memoryReplyKeys{epoch: epoch, keys: append([]byte(nil), keys...)}
	return nil
}

// Take implements ReplyKeyring.
func (k *MemoryReplyKeyring) Take(id [16]byte) ([]byte, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.keys[id]
	if !ok {
		return nil, false, nil
	}
	delete(k.keys, id)
	return e.keys, true, nil
}

// Len returns how many blocks' keys the keyring holds.
func (k *MemoryReplyKeyring) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys)
}

// NewReplyBlock makes a reply block over hops, the relayers of the return path (1 to
// packet.MaxHops-1 peers, none of them this node, no peer twice in a row), with this node as its
// final hop, and returns it encoded (packet.ReplyBlockSize bytes) for a replier to use with
// SendReply. It computes the proof-of-relay data of every hop as Send does for a forward route,
// so each relayer is paid as on a forward path: the replier's ticket to the first hop is worth
// tickets.PaddedAmount(relayers, pad) for a pad drawn here from Config.Rand (PROTOCOL.md §4.5;
// 0 in a layered network, Config.Layered),
// each relayer issues the next hop 0.01 less, and the last one's ticket to this node, worth the
// pad, carries the challenge of this node's own + end scalars. It stores the block's keys in the
// ReplyKeyring (its error is returned) and refuses a bad route with ErrBadRoute. The block
// expires with its epoch (packet.ReplyBlock.InWindow): 10 to 20 minutes.
func (r *Relay) NewReplyBlock(ctx context.Context, hops []peer.ID) (block []byte, err error) {
	return r.newReplyBlock(ctx, hops, r.cfg.ReplyKeyring)
}

// NewVolatileReplyBlock is NewReplyBlock with the block's keys kept in memory only, not in the
// ReplyKeyring: for the blocks of a session (docs/SESSIONS.md), which live no longer than the
// process and come by the hundred a second, where the keyring syncs each to disk. A reply to
// such a block that arrives after a restart is dropped as unknown.
func (r *Relay) NewVolatileReplyBlock(ctx context.Context, hops []peer.ID) (block []byte, err error) {
	return r.newReplyBlock(ctx, hops, r.volatile)
}

func (r *Relay) newReplyBlock(ctx context.Context, hops []peer.ID, keyring ReplyKeyring) (block []byte, err error) {
	if len(hops) == 0 || len(hops) > packet.MaxHops-1 {
		return nil, fmt.Errorf("reply block: %d relayers: %w", len(hops), ErrBadRoute)
	}
	n := len(hops) + 1
	keys := make([]*packet.PublicKey, n)
	for i, h := range hops {
		if h == r.self || (i > 0 && h == hops[i-1]) {
			return nil, fmt.Errorf("reply block: relayer %d: %w", i, ErrBadRoute)
		}
		e, err := r.peers.byPeer(h)
		if err != nil {
			return nil, fmt.Errorf("reply block: relayer %d: %w: %w", i, ErrBadRoute, err)
		}
		keys[i] = e.key
	}
	keys[n-1] = r.key.PublicKey()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	route, err := r.ephemerals.NewRoute(r.rand, keys)
	if err != nil {
		return nil, fmt.Errorf("reply block: %w", err)
	}
	pd, err := derivePoR(route, false)
	if err != nil {
		return nil, fmt.Errorf("reply block: %w", err)
	}
	pad := 0 // a layered network pads nothing (Config.Layered)
	if !r.layered() {
		if pad, err = tickets.DrawPad(r.rand); err != nil {
			return nil, fmt.Errorf("reply block: %w", err)
		}
	}
	b, k, err := route.SealReply(r.rand, r.clock.Now(), pd.fields[:n-1])
	if err != nil {
		return nil, fmt.Errorf("reply block: %w", err)
	}
	b.Challenge = pd.t0
	b.AckCommitment = por.CommitAck(pd.ack0)
	b.Amount = uint8(len(hops) + pad)
	kb, err := k.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("reply block: %w", err)
	}
	defer clear(kb)
	if err := keyring.Put(k.ID(), k.Epoch(), kb); err != nil {
		return nil, fmt.Errorf("reply block: keep its keys: %w", err)
	}
	r.m.replyBlocks.Inc()
	return b.MarshalBinary()
}

// maxReplyAmount is the most units of 0.01 a reply block may ask its replier to pay: the
// longest return path with the largest padding, what a forward sender pays at most.
const maxReplyAmount = packet.MaxHops - 1 + tickets.PadMax

// SendReply sends msg (its Text at most packet.MaxReplySize bytes) with block, a reply block
// another node made (NewReplyBlock), to the block's first hop, and stamps it with this node's
// clock. It refuses, before anything is sent or paid: bytes that are no reply block, and in
// paid mode a block asking for no ticket or more than maxReplyAmount (ErrBadReplyBlock); a
// block outside its epoch window (ErrReplyBlockExpired); a block whose first hop is this node
// (ErrBadRoute); a text too long (packet.ErrReplyTooLarge) or a drop with text
// (packet.ErrDropText); a block this node used within AckTimeout (ErrReplyBlockUsed). In paid
// mode it issues the first hop the ticket the block asks for, with the block's challenge, from
// this node's channel to it (ErrNotEnoughBalance, ErrChannelNotOpen, ErrChannelNotFound as for
// Send: nothing is sent), and queues the packet. The first hop's acknowledgement is accepted iff
// it hashes to the block's commitment; WaitAck waits for it under Sent.Ack. Sent.Cost is the
// ticket's expected value. A block makes one reply: a second one, once this node has forgotten
// the first (after AckTimeout), is sent and paid for but refused by the first hop as a replay
// (PROTOCOL.md §3.9).
func (r *Relay) SendReply(ctx context.Context, block []byte, msg packet.Message) (Sent, error) {
	var zero Sent
	var b packet.ReplyBlock
	if err := b.UnmarshalBinary(block); err != nil {
		return zero, fmt.Errorf("send reply: %w: %w", ErrBadReplyBlock, err)
	}
	if r.paid && (b.Amount == 0 || b.Amount > maxReplyAmount || b.Challenge == (por.Challenge{})) {
		return zero, fmt.Errorf("send reply: %w: ticket of %d units, challenge set %v", ErrBadReplyBlock, b.Amount, b.Challenge != (por.Challenge{}))
	}
	now := r.clock.Now()
	if !b.InWindow(now) {
		return zero, fmt.Errorf("send reply: epoch %d at %d: %w", b.Epoch, packet.Epoch(now), ErrReplyBlockExpired)
	}
	first, err := r.peers.byPubKey(b.FirstHop)
	if err != nil {
		return zero, fmt.Errorf("send reply: first hop: %w: %w", ErrBadReplyBlock, err)
	}
	if first.id == r.self {
		return zero, fmt.Errorf("send reply: this node is the first hop: %w", ErrBadRoute)
	}
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	msg.Timestamp = uint64(now.UnixMilli())
	pkt, err := b.Seal(r.rand, msg)
	if err != nil {
		return zero, fmt.Errorf("send reply: %w", err)
	}
	id := idOf(pkt)
	e := newReplyEntry(first.id, now.Add(r.cfg.AckTimeout), b.AckCommitment)
	if err := r.pend.add(id, e); err != nil {
		if errors.Is(err, errDuplicate) {
			return zero, fmt.Errorf("send reply: %w", ErrReplyBlockUsed)
		}
		return zero, fmt.Errorf("send reply: %w", ErrOverloaded)
	}
	var amount uint256.Int
	if r.paid {
		amount = tickets.AmountFor(int(b.Amount))
	}
	cost, err := r.sendFirst(ctx, first, pkt, &amount, b.Challenge)
	if err != nil {
		r.pend.forgetSent(id, e)
		return zero, fmt.Errorf("send reply: %w", err)
	}
	r.m.sent.Inc()
	r.m.repliesSent.Inc()
	return Sent{Ack: e.challenge, Cost: cost}, nil
}

// openReply takes the keys of a reply's block from the keyring and opens it. On failure it
// returns the drop reason.
func (r *Relay) openReply(p *packet.Peeled) (packet.Message, string, error) {
	kb, ok, _ := r.volatile.Take(p.ReplyID)
	var err error
	if !ok {
		kb, ok, err = r.cfg.ReplyKeyring.Take(p.ReplyID)
	}
	if err != nil {
		return packet.Message{}, reasonReplyKeyring, fmt.Errorf("reply keyring: %w", err)
	}
	if !ok {
		return packet.Message{}, reasonReplyUnknown, ErrUnknownReply
	}
	defer clear(kb)
	var keys packet.ReplyKeys
	if err := keys.UnmarshalBinary(kb); err != nil {
		return packet.Message{}, reasonReplyKeyring, err
	}
	msg, err := packet.OpenReply(&keys, p)
	if err != nil {
		return packet.Message{}, reasonReplyPayload, err
	}
	return msg, "", nil
}
