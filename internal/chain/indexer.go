package chain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/store"
)

// Defaults of IndexerConfig's optional fields.
const (
	DefaultIndexPoll  = 200 * time.Millisecond
	DefaultMaxRange   = 2000
	DefaultMaxBackoff = 10 * time.Second
	// DefaultReorgDepth is how many indexed blocks the undo journal covers by default: far more
	// than any reorganisation of a proof-of-stake chain past its confirmations (a reorg of
	// Ethereum mainnet deeper than a few blocks needs a third of the validators to misbehave).
	DefaultReorgDepth  = 128
	cursorPersistEvery = 5 * time.Second
)

// DevChainID is the chain id of development chains: relayd's dev chain (go-ethereum's simulated
// backend) and `geth --dev`.
const DevChainID = 1337

// DefaultConfirmations returns how many blocks behind the head the indexer should stay on the
// chain with the given id: 0 on a development chain (DevChainID, 31337 of Hardhat and Anvil),
// which never reorganises and where tests want events at once; 8 on any other chain, which
// outlasts the reorganisations a proof-of-stake chain has in practice (one or two blocks) at a
// delay of 8 block times (about 96 s on Ethereum, 16 s on a 2 s chain). A reorganisation
// deeper than the confirmations is still handled, by the undo journal (ReorgDepth).
func DefaultConfirmations(chainID uint64) uint64 {
	return Confirmations(-1, chainID)
}

// Confirmations is a node's --confirmations flag for chainID: the flag's value, or
// DefaultConfirmations for a negative one.
func Confirmations(flag int, chainID uint64) uint64 {
	if flag >= 0 {
		return uint64(flag)
	}
	switch chainID {
	case DevChainID, 31337:
		return 0
	default:
		return 8
	}
}

// Source is what the Indexer reads from the chain. *Client implements it; its errors wrap
// ErrProviderUnavailable when the provider is down.
type Source interface {
	BlockNumber(ctx context.Context) (uint64, error)
	HeaderHash(ctx context.Context, n uint64) (common.Hash, error)
	FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error)
}

// StateStore persists the Indexer's cursor, cache and undo journal; *store.DB implements it.
// CommitChainRange commits a range with its undo journal entry in one transaction;
// RewindChainState restores the state of a journalled checkpoint (see package store).
type StateStore interface {
	LoadChainState() (store.ChainCursor, []channels.Channel, []channels.Announcement, error)
	CommitChainRange(cur store.ChainCursor, chans []channels.Channel, anns []channels.Announcement, journal uint64) error
	ChainJournal() ([]store.ChainCheckpoint, error)
	RewindChainState(to store.ChainCheckpoint) (store.ChainRewind, error)
	ResetChainState() error
}

// EventKind says what an Event reports.
type EventKind int

// Event kinds.
const (
	// ChannelEvent: a channel's state changed (ChannelUpdated).
	ChannelEvent EventKind = iota + 1
	// AnnouncementEvent: an account announced its key and addresses.
	AnnouncementEvent
	// MinWinProbEvent: the contract's owner set the network's minimum win probability
	// (MinWinProbUpdated). It is reported, not stored: a node reads the current minimum with
	// Client.MinWinProb when it starts.
	MinWinProbEvent
)

// Event is one indexed contract event, reported to IndexerConfig.OnEvent after it is committed,
// or a state restored by a reorganisation (Reorg).
type Event struct {
	Kind   EventKind
	Block  uint64
	TxHash common.Hash
	// Channel is the channel's new state (ChannelEvent).
	Channel channels.Channel
	// Previous is the channel's state before, or nil when the indexer had not seen it.
	Previous *channels.Channel
	// Announcement is the new announcement (AnnouncementEvent).
	Announcement channels.Announcement
	// MinWinProb is the new network minimum win probability, the tickets' 56-bit field
	// (MinWinProbEvent).
	MinWinProb uint64
	// Reorg is set when a reorganisation removed the blocks that made the state Previous (or the
	// announcement the account had), and the indexer rolled back to the state at the end of Block,
	// the common ancestor; TxHash is zero. A channel whose opening was removed is reported in the
	// state the contract gives a channel never opened (Closed, epoch 0, no balance) and is no
	// longer in the Graph; an account whose first announcement was removed is reported with an
	// Announcement with only Account set, and is no longer in the Graph. The events of the new
	// branch follow as usual.
	Reorg bool
}

// IndexerConfig configures an Indexer. Source, Store, Graph, ChainID and Channels are required.
type IndexerConfig struct {
	Source   Source
	Store    StateStore
	Graph    *channels.Graph
	ChainID  uint64
	Channels common.Address
	// StartBlock is the first block scanned when nothing is stored, normally the channels
	// contract's deployment block.
	StartBlock uint64
	// Confirmations is how many blocks behind the head the indexer stays, so that a reorg of up
	// to that depth never reaches the graph (DefaultConfirmations gives the usual value for a
	// chain id). 0 suits the dev chain, which never reorgs.
	Confirmations uint64
	// ReorgDepth is how many indexed blocks the undo journal covers (DefaultReorgDepth): a
	// reorganisation that removes up to that many indexed blocks is rolled back (the Graph, the
	// store and OnEvent return to the common ancestor's states, then the new branch is indexed);
	// a deeper one is ErrChainReplaced, or with ReindexOnNewChain a re-index from StartBlock.
	ReorgDepth uint64
	// PollInterval is how often the head is polled once caught up (DefaultIndexPoll).
	PollInterval time.Duration
	// MaxRange bounds the blocks of one eth_getLogs query (DefaultMaxRange); it is halved while
	// the provider rejects a range.
	MaxRange uint64
	// MaxBackoff caps the retry delay while the provider is down (DefaultMaxBackoff); with the
	// jitter a wait is up to 1.5 × MaxBackoff.
	MaxBackoff time.Duration
	// ReindexOnNewChain makes the indexer drop its stored state and index again from StartBlock
	// when the provider serves another chain than the one indexed (another chain id, contract or
	// genesis, or a head far below the indexed blocks: a dev chain restarted fresh). Without it,
	// Load and Run return ErrChainReplaced.
	ReindexOnNewChain bool
	// OnEvent, when set, is called from Run's goroutine for every event, in chain order, after
	// the batch holding it is committed to the store and the graph. It must not block for long.
	OnEvent func(Event)
	// EpochBlocks, when not 0, makes every range end at the last block of an epoch of that many
	// blocks (a layered network's, networks.Topology.EpochBlocks), and OnEpoch is called from
	// Run's goroutine with an epoch's first block while the Graph holds the state the chain had
	// just before it (every event of the blocks before, none of its own): when the indexer
	// reaches that block, and at a first start from StartBlock for the epoch holding it (nothing
	// before StartBlock is indexed). It is called again for a block indexed again (a reorg, a
	// restart before the cursor was stored). Its error stops the step as a store's does.
	EpochBlocks uint64
	OnEpoch     func(first uint64) error
	// Logger receives the indexer's logs (slog.Default() when nil).
	Logger *slog.Logger
	// Registerer, when set, receives the indexer's metrics: relayd_chain_head_block,
	// relayd_chain_indexed_block, relayd_chain_provider_up and relayd_chain_provider_failures_total.
	Registerer prometheus.Registerer
}

// Indexer follows the channels contract's ChannelUpdated and Announcement events (which carry
// full states, PROTOCOL.md section 4.6, so replaying them is idempotent) into a Graph and the
// store. Each step queries one bounded block range ending at most Confirmations behind the head,
// commits the cursor with every changed channel and announcement in one store transaction, and
// then applies them to the Graph in one batch: the Graph and the store only ever hold the state
// the chain had at the end of an indexed block. The same store transaction keeps an undo journal
// of the states each committed range replaced, for the last ReorgDepth blocks. Before each range,
// and at start, it checks that the last indexed block's hash is still on the provider's chain;
// when it is not, a reorganisation deeper than Confirmations removed indexed blocks: the indexer
// finds the newest journalled block still on the chain (the common ancestor), restores the
// states the removed blocks replaced (store, Graph, and OnEvent with Event.Reorg), and indexes
// the new branch from there. Provider outages are retried with backoff and logged once.
type Indexer struct {
	cfg   IndexerConfig
	log   *slog.Logger
	rng   uint64 // current query range
	topic []common.Hash

	loaded  bool        // Load has put the stored state into the Graph
	genesis common.Hash // the provider's block 0 (zero until read)

	mu      sync.Mutex
	next    uint64        // first block not yet indexed
	hash    common.Hash   // hash of block next-1 (zero when unknown)
	ready   bool          // next is verified to be on the provider's chain
	changed chan struct{} // closed and replaced when next or ready change

	head      atomic.Uint64 // the provider's head as last read
	storeFull atomic.Bool   // the last range could not be committed: the disk is full
	// providerUp is whether the indexer's last step had its answers from the provider (false
	// until the first); providerFailures counts the steps that failed with ErrProviderUnavailable
	// (relayd_chain_provider_up, relayd_chain_provider_failures_total).
	providerUp       atomic.Bool
	providerFailures atomic.Uint64

	lastPersist time.Time
	persisted   uint64 // next as last committed to the store
	// epochSeen is 1 + the first block of the epoch OnEpoch was last called for (0: none).
	epochSeen uint64
}

// NewIndexer checks cfg and returns an Indexer; it reads nothing until Run.
func NewIndexer(cfg IndexerConfig) (*Indexer, error) {
	switch {
	case cfg.Source == nil, cfg.Store == nil, cfg.Graph == nil:
		return nil, fmt.Errorf("%w: indexer needs a source, a store and a graph", ErrBadConfig)
	case cfg.ChainID == 0 || cfg.Channels == (common.Address{}):
		return nil, fmt.Errorf("%w: indexer needs the chain id and the channels address", ErrBadConfig)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultIndexPoll
	}
	if cfg.MaxRange == 0 {
		cfg.MaxRange = DefaultMaxRange
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.ReorgDepth == 0 {
		cfg.ReorgDepth = DefaultReorgDepth
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	abi := channelsABI.GetABI()
	ix := &Indexer{
		cfg:     cfg,
		log:     cfg.Logger,
		rng:     cfg.MaxRange,
		topic:   []common.Hash{abi.Events["ChannelUpdated"].ID, abi.Events["Announcement"].ID, abi.Events["MinWinProbUpdated"].ID},
		changed: make(chan struct{}),
	}
	if reg := cfg.Registerer; reg != nil {
		head := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "relayd_chain_head_block",
			Help: "The chain provider's latest block as the indexer last read it."}, func() float64 { return float64(ix.Head()) })
		indexed := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "relayd_chain_indexed_block",
			Help: "The last block the indexer has read into the channel graph; the head minus this is the indexer's lag."},
			func() float64 { return float64(max(ix.Next(), 1) - 1) })
		up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "relayd_chain_provider_up",
			Help: "1 when the chain provider answered the indexer's last poll, 0 when it did not answer (or before its first answer)."},
			func() float64 { return b2f(ix.providerUp.Load()) })
		failures := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "relayd_chain_provider_failures_total",
			Help: "The indexer's polls of the chain provider that failed because it could not be reached or did not answer in time."},
			func() float64 { return float64(ix.providerFailures.Load()) })
		for _, c := range []prometheus.Collector{head, indexed, up, failures} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("%w: register metrics: %w", ErrBadConfig, err)
			}
		}
	}
	return ix, nil
}

// maxHeadLag is how many blocks the provider's head may stay below the last indexed block
// (a load-balanced provider answering from a node that lags) before the indexer takes the chain
// for another one.
const maxHeadLag = 16

// Load puts the stored state into the Graph, so that the caller can use the indexed channels and
// announcements before Run (and while the provider is still unreachable), after checking that it
// belongs to the configured chain id and contract and, when the provider answers, to the same
// genesis block. A mismatch returns ErrChainReplaced, or with ReindexOnNewChain drops the stored
// state. It returns an error too when the store cannot be read. Run calls Load when the caller
// has not; call it before Run, not concurrently.
func (ix *Indexer) Load(ctx context.Context) error {
	if ix.loaded {
		return nil
	}
	cur, chans, anns, err := ix.cfg.Store.LoadChainState()
	if err != nil {
		return fmt.Errorf("indexer: %w", err)
	}
	if g, err := ix.cfg.Source.HeaderHash(ctx, 0); err == nil {
		ix.genesis = g
	}
	if cur.Next != 0 {
		var why string
		switch {
		case cur.ChainID != ix.cfg.ChainID:
			why = fmt.Sprintf("the store indexed chain id %d, the provider serves chain id %d", cur.ChainID, ix.cfg.ChainID)
		case cur.Contract != ix.cfg.Channels:
			why = fmt.Sprintf("the store indexed the channels contract at %s, not %s", cur.Contract.Hex(), ix.cfg.Channels.Hex())
		case cur.Genesis != (common.Hash{}) && ix.genesis != (common.Hash{}) && cur.Genesis != ix.genesis:
			why = fmt.Sprintf("the store indexed a chain with genesis block %s, the provider's is %s", cur.Genesis.Hex(), ix.genesis.Hex())
		}
		if why != "" {
			if err := ix.replaced(why); err != nil {
				return err
			}
			cur, chans, anns = store.ChainCursor{}, nil, nil
		}
	}
	ix.cfg.Graph.Reset()
	ix.cfg.Graph.ApplyAll(chans, anns)
	ix.setNext(max(cur.Next, ix.cfg.StartBlock), cur.Hash)
	ix.persisted, ix.lastPersist = cur.Next, time.Now()
	ix.loaded = true
	return nil
}

// replaced handles a provider serving another chain than the one indexed: ErrChainReplaced, or
// with ReindexOnNewChain the stored state dropped and the cursor back at StartBlock.
func (ix *Indexer) replaced(why string) error {
	if !ix.cfg.ReindexOnNewChain {
		return fmt.Errorf("indexer: %w: %s", ErrChainReplaced, why)
	}
	ix.log.Warn("the provider serves another chain than the one indexed; dropping the index and re-indexing", "why", why)
	return ix.reindex()
}

// reindex drops the stored state and the graph and puts the cursor back at StartBlock.
func (ix *Indexer) reindex() error {
	if err := ix.cfg.Store.ResetChainState(); err != nil {
		return &storeError{err}
	}
	ix.cfg.Graph.Reset()
	ix.persisted = 0
	ix.setNext(ix.cfg.StartBlock, common.Hash{})
	return nil
}

// Run loads the stored state into the Graph (unless Load did), checks it against the provider's
// chain, and follows the chain until ctx ends; it then returns nil. It returns an error when the
// store cannot be read or written (a full disk excepted: Run retries, and Checks reports it), and ErrChainReplaced when the provider turns out to serve
// another chain than the one indexed (unless ReindexOnNewChain).
func (ix *Indexer) Run(ctx context.Context) error {
	if err := ix.Load(ctx); err != nil {
		return err
	}
	verified := ix.persisted == 0

	// While the provider is down: exponential backoff with jitter, from PollInterval up to
	// MaxBackoff, so that nodes that lost one provider together do not retry in step.
	retry := &backoff.ExponentialBackOff{InitialInterval: ix.cfg.PollInterval, RandomizationFactor: 0.5,
		Multiplier: 2, MaxInterval: ix.cfg.MaxBackoff}
	retry.Reset()
	var outageSince time.Time
	if verified {
		ix.setReady()
	}
	for {
		caughtUp, err := ix.step(ctx, &verified)
		if ctx.Err() != nil {
			return nil
		}
		var fatal *storeError
		if errors.As(err, &fatal) && !errors.Is(err, store.ErrFull) {
			return fmt.Errorf("indexer: %w", err)
		}
		ix.setStoreFull(errors.Is(err, store.ErrFull))
		ix.recordProvider(err)
		if errors.Is(err, ErrChainReplaced) {
			return err
		}
		wait := ix.cfg.PollInterval
		switch {
		case err != nil:
			if outageSince.IsZero() {
				outageSince = time.Now()
				what := "cannot read the chain"
				if fatal != nil {
					what = "cannot write to the store (the disk is full)"
				}
				ix.log.Warn("chain indexer "+what+"; retrying", "err", err, "block", ix.Next())
			} else {
				ix.log.Debug("chain indexer retry failed", "err", err)
			}
			wait = retry.NextBackOff()
		case !outageSince.IsZero():
			ix.log.Info("chain indexer indexes the chain again", "after", time.Since(outageSince).Round(time.Millisecond))
			outageSince = time.Time{}
			retry.Reset()
		}
		if err == nil && !caughtUp {
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// recordProvider records whether a step's calls reached the provider (relayd_chain_provider_*):
// an error other than ErrProviderUnavailable came after an answer, or from the store.
func (ix *Indexer) recordProvider(err error) {
	switch {
	case errors.Is(err, ErrProviderUnavailable):
		ix.providerUp.Store(false)
		ix.providerFailures.Add(1)
	case err == nil:
		ix.providerUp.Store(true)
	}
}

// ProviderUp reports whether the chain provider answered the indexer's last poll (false before
// the first answer).
func (ix *Indexer) ProviderUp() bool { return ix.providerUp.Load() }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// storeError marks a failure of the store, which Run does not retry, unless the disk is full
// (store.ErrFull: the range is indexed again once space is freed).
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// step indexes one block range; caughtUp is true when there was nothing left to index.
func (ix *Indexer) step(ctx context.Context, verified *bool) (caughtUp bool, err error) {
	if err := ix.checkGenesis(ctx, false); err != nil {
		return false, err
	}
	next, hash := ix.cursor()
	src := ix.cfg.Source
	if !*verified {
		if err := ix.verify(ctx, next, hash); err != nil {
			return false, err
		}
		*verified = true
		ix.setReady()
		next, hash = ix.cursor()
	}
	if err := ix.atEpoch(next); err != nil {
		return false, err
	}
	head, err := src.BlockNumber(ctx)
	if err != nil {
		return false, err
	}
	ix.head.Store(head)
	if head+1 < next {
		// The chain the indexer followed reached block next-1. A provider below it lags, or
		// serves another chain (a dev chain restarted fresh mines only when sent transactions).
		if err := ix.checkGenesis(ctx, true); err != nil {
			return false, err
		}
		if farBelow(head, next) {
			return false, ix.replaced(fmt.Sprintf("the provider's head %d is far below block %d, the last indexed", head, next-1))
		}
		if n, _ := ix.cursor(); n != next {
			return false, nil // re-indexing from StartBlock
		}
	}
	if head < ix.cfg.Confirmations || next > head-ix.cfg.Confirmations {
		return true, nil
	}
	to := min(head-ix.cfg.Confirmations, next+ix.rng-1)
	if e := ix.cfg.EpochBlocks; e > 0 {
		to = min(to, next-next%e+e-1) // the epoch's last block: OnEpoch sees the next one's start
	}
	if next > 0 && hash != (common.Hash{}) {
		// The block before the range must still be the one indexed: otherwise a reorg deeper than
		// Confirmations happened and what is stored is not on the chain any more.
		if err := ix.verify(ctx, next, hash); err != nil {
			return false, err
		}
		if n, _ := ix.cursor(); n != next {
			return false, nil // re-indexing from StartBlock
		}
	}
	toHash, err := src.HeaderHash(ctx, to)
	if err != nil {
		return false, err
	}
	logs, err := src.FilterLogs(ctx, ethereum.FilterQuery{
		FromBlock: new(big.Int).SetUint64(next),
		ToBlock:   new(big.Int).SetUint64(to),
		Addresses: []common.Address{ix.cfg.Channels},
		Topics:    [][]common.Hash{ix.topic},
	})
	if err != nil {
		if !errors.Is(err, ErrProviderUnavailable) && ix.rng > 1 {
			ix.rng /= 2 // providers limit ranges and result sizes
		}
		return false, err
	}
	for _, l := range logs {
		if l.BlockNumber == to && l.BlockHash != toHash {
			return false, fmt.Errorf("block %d changed while indexing it", to)
		}
	}
	if err := ix.apply(logs, store.ChainCursor{ChainID: ix.cfg.ChainID, Contract: ix.cfg.Channels, Next: to + 1, Hash: toHash, Genesis: ix.genesis}); err != nil {
		return false, err
	}
	ix.rng = min(ix.rng*2, ix.cfg.MaxRange)
	return to == head-ix.cfg.Confirmations, nil
}

// atEpoch calls OnEpoch when the indexer is at an epoch's first block (next) or, at a first
// start, at StartBlock, unless it did for that epoch at that block already.
func (ix *Indexer) atEpoch(next uint64) error {
	e := ix.cfg.EpochBlocks
	if e == 0 || ix.cfg.OnEpoch == nil {
		return nil
	}
	first := next - next%e
	if ix.epochSeen > next+1 {
		ix.epochSeen = 0 // a reorg or a re-index went back before that epoch's first block
	}
	fresh := ix.persisted == 0 && next == ix.cfg.StartBlock
	if (next%e != 0 && !fresh) || ix.epochSeen == first+1 {
		return nil
	}
	if err := ix.cfg.OnEpoch(first); err != nil {
		return &storeError{fmt.Errorf("epoch at block %d: %w", first, err)}
	}
	ix.epochSeen = first + 1
	return nil
}

// checkGenesis compares the provider's genesis block with the one indexed (read before, or the
// stored cursor's). It reads the provider's once, and again when again is set (the provider's
// chain looks shorter or different than the one indexed).
func (ix *Indexer) checkGenesis(ctx context.Context, again bool) error {
	if ix.genesis != (common.Hash{}) && !again {
		return nil
	}
	g, err := ix.cfg.Source.HeaderHash(ctx, 0)
	if err != nil {
		return err
	}
	known := ix.genesis
	if known == (common.Hash{}) {
		cur, _, _, err := ix.cfg.Store.LoadChainState()
		if err != nil {
			return &storeError{err}
		}
		known = cur.Genesis
	}
	ix.genesis = g
	if known != (common.Hash{}) && known != g {
		return ix.replaced(fmt.Sprintf("the store indexed a chain with genesis block %s, the provider's is %s", known.Hex(), g.Hex()))
	}
	return nil
}

// farBelow reports whether the provider's head is too far below block next-1, the last indexed,
// for a provider that lags: the provider serves another chain.
func farBelow(head, next uint64) bool { return next > maxHeadLag+1 && head < next-1-maxHeadLag }

// verify checks that block next-1 still has hash. When the block is gone and the provider's head
// is far below it, the provider serves another chain (replaced); when the block has another hash,
// a reorg deeper than Confirmations happened, and verify rolls back to the common ancestor
// (rewind).
func (ix *Indexer) verify(ctx context.Context, next uint64, hash common.Hash) error {
	if next == 0 || hash == (common.Hash{}) {
		return nil
	}
	got, err := ix.cfg.Source.HeaderHash(ctx, next-1)
	switch {
	case err == nil && got == hash:
		return nil
	case err != nil && !isNotFound(err):
		return err
	}
	if err := ix.checkGenesis(ctx, true); err != nil {
		return err
	}
	if n, _ := ix.cursor(); n != next {
		return nil // the chain was replaced and ReindexOnNewChain reset the cursor
	}
	if err != nil {
		head, err := ix.cfg.Source.BlockNumber(ctx)
		if err != nil {
			return err
		}
		if !farBelow(head, next) {
			return nil // a lagging provider: the block will be there
		}
		return ix.replaced(fmt.Sprintf("the provider's head %d is far below block %d, the last indexed", head, next-1))
	}
	return ix.rewind(ctx, next)
}

// apply decodes logs (in chain order), commits them with cur, updates the graph and notifies.
func (ix *Indexer) apply(logs []types.Log, cur store.ChainCursor) error {
	var (
		events  []Event
		chans   = map[[32]byte]channels.Channel{}
		anns    = map[common.Address]channels.Announcement{}
		chOrder [][32]byte
		anOrder []common.Address
	)
	snap := ix.cfg.Graph.Snapshot()
	for i := range logs {
		l := &logs[i]
		if l.Removed || len(l.Topics) == 0 {
			continue
		}
		ev := Event{Block: l.BlockNumber, TxHash: l.TxHash}
		switch l.Topics[0] {
		case ix.topic[0]:
			u, err := channelsABI.UnpackChannelUpdatedEvent(l)
			if err == nil && u.Balance == nil {
				err = errors.New("no event data") // the binding decodes nothing from empty data
			}
			if err != nil {
				ix.log.Error("undecodable ChannelUpdated event", "block", l.BlockNumber, "err", err)
				continue
			}
			ch := channels.Channel{
				ID: u.ChannelId, Source: u.Source, Destination: u.Destination, Balance: u.Balance,
				TicketIndex: u.TicketIndex, Epoch: u.Epoch, Status: channels.Status(u.Status),
			}
			if u.ClosureTime != 0 {
				ch.ClosureTime = time.Unix(int64(u.ClosureTime), 0)
			}
			if prev, ok := chans[ch.ID]; ok {
				ev.Previous = &prev
			} else if prev, ok := snap.ByID(ch.ID); ok {
				ev.Previous = &prev
				chOrder = append(chOrder, ch.ID)
			} else {
				chOrder = append(chOrder, ch.ID)
			}
			chans[ch.ID] = ch
			ev.Kind, ev.Channel = ChannelEvent, ch
		case ix.topic[1]:
			a, err := channelsABI.UnpackAnnouncementEvent(l)
			if err != nil {
				ix.log.Error("undecodable Announcement event", "block", l.BlockNumber, "err", err)
				continue
			}
			pub, err := channels.PublicKeyFromContract(a.PublicKey)
			if err != nil {
				ix.log.Error("announcement with a bad public key", "account", a.Account, "err", err)
				continue
			}
			ann := channels.Announcement{Account: a.Account, PublicKey: pub, Multiaddrs: channels.DecodeMultiaddrs(a.Multiaddr), Block: l.BlockNumber}
			if prev, ok := anns[ann.Account]; ok {
				ann.Block = prev.Block // the first announcement's block stays
			} else {
				anOrder = append(anOrder, ann.Account)
				if prev, ok := snap.Announced(ann.Account); ok {
					ann.Block = prev.Block
				}
			}
			anns[ann.Account] = ann
			ev.Kind, ev.Announcement = AnnouncementEvent, ann
		case ix.topic[2]:
			u, err := channelsABI.UnpackMinWinProbUpdatedEvent(l)
			if err != nil {
				ix.log.Error("undecodable MinWinProbUpdated event", "block", l.BlockNumber, "err", err)
				continue
			}
			ev.Kind, ev.MinWinProb = MinWinProbEvent, u.MinWinProb
		default:
			continue
		}
		events = append(events, ev)
	}
	changedChans := make([]channels.Channel, 0, len(chOrder))
	for _, id := range chOrder {
		changedChans = append(changedChans, chans[id])
	}
	changedAnns := make([]channels.Announcement, 0, len(anOrder))
	for _, a := range anOrder {
		changedAnns = append(changedAnns, anns[a])
	}
	if len(events) > 0 || time.Since(ix.lastPersist) >= cursorPersistEvery || ix.persisted == 0 {
		if err := ix.cfg.Store.CommitChainRange(cur, changedChans, changedAnns, ix.cfg.ReorgDepth); err != nil {
			return &storeError{err}
		}
		ix.persisted, ix.lastPersist = cur.Next, time.Now()
	}
	ix.cfg.Graph.ApplyAll(changedChans, changedAnns)
	// WaitSynced returns only once the range's callbacks have run.
	defer ix.setNext(cur.Next, cur.Hash)
	for _, ev := range events {
		if ix.cfg.OnEvent != nil {
			ix.cfg.OnEvent(ev)
		}
		switch ev.Kind {
		case ChannelEvent:
			ix.log.Debug("channel updated", "source", ev.Channel.Source, "destination", ev.Channel.Destination,
				"status", ev.Channel.Status, "balance", ev.Channel.Balance, "epoch", ev.Channel.Epoch, "block", ev.Block)
		case AnnouncementEvent:
			ix.log.Debug("node announced", "account", ev.Announcement.Account, "block", ev.Block)
		}
	}
	return nil
}

func (ix *Indexer) cursor() (uint64, common.Hash) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.next, ix.hash
}

func (ix *Indexer) setNext(next uint64, hash common.Hash) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.next, ix.hash = next, hash
	close(ix.changed)
	ix.changed = make(chan struct{})
}

// setReady marks the cursor as verified against the provider's chain.
// setStoreFull records whether the last step failed for a full disk, and says when that ends.
func (ix *Indexer) setStoreFull(full bool) {
	if ix.storeFull.Swap(full) && !full {
		ix.log.Info("chain indexer writes to the store again")
	}
}

func (ix *Indexer) setReady() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.ready = true
	close(ix.changed)
	ix.changed = make(chan struct{})
}

// Next returns the first block the indexer has not indexed yet: every event of blocks below it
// is in the Graph.
func (ix *Indexer) Next() uint64 {
	n, _ := ix.cursor()
	return n
}

// Head returns the provider's latest block as Run last read it, 0 before the first read.
func (ix *Indexer) Head() uint64 { return ix.head.Load() }

// WaitSynced blocks until every event up to and including block is in the Graph and has been
// passed to OnEvent, or ctx ends. After a restart it waits at least until the stored cursor has
// been checked against the provider's chain.
// With Confirmations > 0 that is only once the head is Confirmations past block.
func (ix *Indexer) WaitSynced(ctx context.Context, block uint64) error {
	for {
		ix.mu.Lock()
		next, ready, changed := ix.next, ix.ready, ix.changed
		ix.mu.Unlock()
		if ready && next > block {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for block %d (indexed below %d): %w", block, next, ctx.Err())
		case <-changed:
		}
	}
}

// Announcement returns addr's latest announcement from the graph, or ErrNotAnnounced.
func (ix *Indexer) Announcement(addr common.Address) (channels.Announcement, error) {
	a, ok := ix.cfg.Graph.Announced(addr)
	if !ok {
		return channels.Announcement{}, fmt.Errorf("%s: %w", addr, ErrNotAnnounced)
	}
	return a, nil
}
