package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/common"
	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/channels"
)

var (
	bucketChainMeta     = bucket("chain")          // "cursor" → encoded ChainCursor
	bucketChainChannels = bucket("chain.channels") // channel id → JSON storedChannel
	bucketChainAnns     = bucket("chain.announce") // account → JSON storedAnnouncement
	bucketChainUndo     = bucket("chain.undo")     // block (8 bytes, big-endian) → JSON undoEntry
)

var keyCursor = []byte("cursor")

// ChainCursor says which chain, contract and block the chain indexer's persisted state belongs
// to. Next is the first block not yet indexed (0: nothing indexed); Hash is the hash of block
// Next-1 and Genesis the hash of block 0, so that the indexer can tell, after a restart, whether
// the provider still serves the chain it indexed (a restarted dev chain reuses chain id and
// addresses). Genesis is zero in cursors stored before it was kept.
type ChainCursor struct {
	ChainID  uint64
	Contract common.Address
	Next     uint64
	Hash     common.Hash
	Genesis  common.Hash
}

const (
	// cursorLenV1 is the cursor without the genesis hash, as stores before it hold it.
	cursorLenV1 = 8 + common.AddressLength + 8 + common.HashLength
	cursorLen   = cursorLenV1 + common.HashLength
)

// encodeCursor is the stored form of cur: chain id (8 bytes, big-endian) ‖ contract ‖ next
// (8 bytes, big-endian) ‖ hash ‖ genesis.
func encodeCursor(cur ChainCursor) []byte {
	v := make([]byte, cursorLen)
	binary.BigEndian.PutUint64(v, cur.ChainID)
	copy(v[8:], cur.Contract[:])
	binary.BigEndian.PutUint64(v[8+common.AddressLength:], cur.Next)
	copy(v[16+common.AddressLength:], cur.Hash[:])
	copy(v[cursorLenV1:], cur.Genesis[:])
	return v
}

// decodeCursor reads a stored cursor of either length.
func decodeCursor(v []byte) (ChainCursor, error) {
	var cur ChainCursor
	if len(v) != cursorLen && len(v) != cursorLenV1 {
		return cur, fmt.Errorf("chain cursor: %d bytes, want %d", len(v), cursorLen)
	}
	cur.ChainID = binary.BigEndian.Uint64(v)
	copy(cur.Contract[:], v[8:])
	cur.Next = binary.BigEndian.Uint64(v[8+common.AddressLength:])
	copy(cur.Hash[:], v[16+common.AddressLength:cursorLenV1])
	if len(v) == cursorLen {
		copy(cur.Genesis[:], v[cursorLenV1:])
	}
	return cur, nil
}

// LoadChainState returns the chain indexer's persisted cursor, channels and announcements. With
// nothing stored it returns the zero cursor and no entries.
func (db *DB) LoadChainState() (ChainCursor, []channels.Channel, []channels.Announcement, error) {
	var (
		cur   ChainCursor
		chans []channels.Channel
		anns  []channels.Announcement
	)
	err := db.bolt.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketChainMeta).Get(keyCursor); v != nil {
			var err error
			if cur, err = decodeCursor(v); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketChainChannels).ForEach(func(k, v []byte) error {
			var s storedChannel
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("channel %x: %w", k, err)
			}
			c, err := s.channel()
			if err != nil {
				return fmt.Errorf("channel %x: %w", k, err)
			}
			chans = append(chans, c)
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bucketChainAnns).ForEach(func(k, v []byte) error {
			var s storedAnnouncement
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("announcement %x: %w", k, err)
			}
			anns = append(anns, channels.Announcement{Account: s.Account, PublicKey: s.PublicKey, Multiaddrs: s.Multiaddrs, Block: s.Block})
			return nil
		})
	})
	if err != nil {
		return ChainCursor{}, nil, nil, fmt.Errorf("load chain state: %w", err)
	}
	return cur, chans, anns, nil
}

// CommitChainState stores cur and upserts chans (by id) and anns (by account) in one
// transaction: after a crash the store holds either all of it or none of it, so the indexer
// resumes from a cursor that matches its cache. A cursor for another chain id, contract or
// genesis than the stored one first drops every stored channel and announcement. It keeps no
// undo journal and drops the one stored (CommitChainRange keeps one).
func (db *DB) CommitChainState(cur ChainCursor, chans []channels.Channel, anns []channels.Announcement) error {
	return db.CommitChainRange(cur, chans, anns, 0)
}

// CommitChainRange is CommitChainState for an indexed block range ending at block cur.Next-1,
// keeping an undo journal of the last journal blocks in the same transaction: a checkpoint
// (block cur.Next-1, cur.Hash) with the states chans and anns replace (none when an entry was
// not stored before). RewindChainState goes back to any journalled checkpoint. Checkpoints more
// than journal blocks below cur.Next-1 are pruned, but the newest of them is kept, so that a
// reorganisation up to journal blocks deep always finds its common ancestor. journal 0 keeps
// no journal and drops the stored one.
func (db *DB) CommitChainRange(cur ChainCursor, chans []channels.Channel, anns []channels.Announcement, journal uint64) error {
	err := db.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketChainMeta)
		if old, err := decodeCursor(meta.Get(keyCursor)); err == nil && (old.ChainID != cur.ChainID ||
			old.Contract != cur.Contract || (old.Genesis != common.Hash{} && cur.Genesis != common.Hash{} && old.Genesis != cur.Genesis)) {
			if err := resetChain(tx); err != nil {
				return err
			}
			meta = tx.Bucket(bucketChainMeta)
		}
		if err := meta.Put(keyCursor, encodeCursor(cur)); err != nil {
			return err
		}
		cb, ab := tx.Bucket(bucketChainChannels), tx.Bucket(bucketChainAnns)
		if journal == 0 || cur.Next == 0 {
			if err := clearBucket(tx, bucketChainUndo); err != nil {
				return err
			}
		} else if err := journalRange(tx, cur, chans, anns, journal); err != nil {
			return err
		}
		for _, c := range chans {
			b, err := json.Marshal(storedFrom(c))
			if err != nil {
				return err
			}
			if err := cb.Put(c.ID[:], b); err != nil {
				return err
			}
		}
		for _, a := range anns {
			b, err := json.Marshal(storedAnnouncement{Account: a.Account, PublicKey: a.PublicKey, Multiaddrs: a.Multiaddrs, Block: a.Block})
			if err != nil {
				return err
			}
			if err := ab.Put(a.Account[:], b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit chain state: %w", err)
	}
	return nil
}

// undoEntry is one checkpoint of the undo journal: the block a committed range ended with, its
// hash, and the stored records the range replaced, as they were before it (raw JSON, nil when
// there was none).
type undoEntry struct {
	Hash     common.Hash  `json:"hash"`
	Channels []undoRecord `json:"channels,omitempty"`
	Anns     []undoRecord `json:"anns,omitempty"`
}

type undoRecord struct {
	Key  []byte          `json:"key"`
	Prev json.RawMessage `json:"prev,omitempty"`
}

func blockKey(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// journalRange writes the checkpoint of cur with the records chans and anns are about to
// replace, and prunes the journal to journal blocks.
func journalRange(tx *bolt.Tx, cur ChainCursor, chans []channels.Channel, anns []channels.Announcement, journal uint64) error {
	ub := tx.Bucket(bucketChainUndo)
	block := cur.Next - 1
	key := blockKey(block)
	var e undoEntry
	if v := ub.Get(key); v != nil {
		// The same block committed again (the cursor persisted twice): the older previous
		// states are the ones to restore.
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("undo entry %d: %w", block, err)
		}
	}
	// Entries above the new checkpoint belong to blocks the cursor went back over: drop them.
	var above [][]byte
	c := ub.Cursor()
	for k, _ := c.Seek(blockKey(block + 1)); k != nil; k, _ = c.Next() {
		above = append(above, slices.Clone(k))
	}
	for _, k := range above {
		if err := ub.Delete(k); err != nil {
			return err
		}
	}
	e.Hash = cur.Hash
	add := func(recs []undoRecord, b *bolt.Bucket, k []byte) []undoRecord {
		if slices.ContainsFunc(recs, func(r undoRecord) bool { return bytes.Equal(r.Key, k) }) {
			return recs
		}
		var prev json.RawMessage
		if v := b.Get(k); v != nil {
			prev = slices.Clone(v)
		}
		return append(recs, undoRecord{Key: slices.Clone(k), Prev: prev})
	}
	cb, ab := tx.Bucket(bucketChainChannels), tx.Bucket(bucketChainAnns)
	for _, ch := range chans {
		e.Channels = add(e.Channels, cb, ch.ID[:])
	}
	for _, a := range anns {
		e.Anns = add(e.Anns, ab, a.Account[:])
	}
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := ub.Put(key, v); err != nil {
		return err
	}
	if block < journal {
		return nil
	}
	// Keep every checkpoint above block-journal and the newest one at or below it.
	var old [][]byte
	c = ub.Cursor()
	k, _ := c.Seek(blockKey(block - journal + 1))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if k != nil { // the newest checkpoint at or below block-journal: keep it, prune the older
		for k, _ = c.Prev(); k != nil; k, _ = c.Prev() {
			old = append(old, slices.Clone(k))
		}
	}
	for _, k := range old {
		if err := ub.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// ChainCheckpoint is a block of the undo journal: the end of a committed range and its hash.
type ChainCheckpoint struct {
	Block uint64
	Hash  common.Hash
}

// ChainJournal returns the undo journal's checkpoints, newest first.
func (db *DB) ChainJournal() ([]ChainCheckpoint, error) {
	var out []ChainCheckpoint
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketChainUndo).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var e undoEntry
			if len(k) != 8 {
				return fmt.Errorf("undo entry key %x", k)
			}
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("undo entry %x: %w", k, err)
			}
			out = append(out, ChainCheckpoint{Block: binary.BigEndian.Uint64(k), Hash: e.Hash})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load chain journal: %w", err)
	}
	return out, nil
}

// ChainRewind says what RewindChainState restored. Each change holds the state the rewind undid
// (Undone) and the state it restored (Restored); a nil Restored means the entry was not stored
// before the removed blocks (a channel first opened, or an account first announced, in them)
// and is deleted.
type ChainRewind struct {
	Channels      []ChannelRewind
	Announcements []AnnouncementRewind
}

// ChannelRewind is one channel a rewind restored; see ChainRewind.
type ChannelRewind struct {
	Undone   channels.Channel
	Restored *channels.Channel
}

// AnnouncementRewind is one announcement a rewind restored; see ChainRewind.
type AnnouncementRewind struct {
	Undone   channels.Announcement
	Restored *channels.Announcement
}

// ErrNoCheckpoint means RewindChainState was asked for a block the undo journal holds no
// checkpoint of (or one with another hash).
var ErrNoCheckpoint = errors.New("no such checkpoint in the chain journal")

// RewindChainState undoes, in one transaction, every journalled range after the checkpoint to
// (newest first), deletes their checkpoints and sets the cursor to the block after to, so that
// the stored state is the one the chain had at the end of block to. It returns what it
// restored. It fails with ErrNoCheckpoint, changing nothing, when to is not a checkpoint of the
// journal.
func (db *DB) RewindChainState(to ChainCheckpoint) (ChainRewind, error) {
	var out ChainRewind
	err := db.update(func(tx *bolt.Tx) error {
		out = ChainRewind{}
		ub := tx.Bucket(bucketChainUndo)
		var e undoEntry
		if v := ub.Get(blockKey(to.Block)); v == nil {
			return fmt.Errorf("block %d: %w", to.Block, ErrNoCheckpoint)
		} else if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("undo entry %d: %w", to.Block, err)
		}
		if e.Hash != to.Hash {
			return fmt.Errorf("block %d has hash %s in the journal, not %s: %w", to.Block, e.Hash.Hex(), to.Hash.Hex(), ErrNoCheckpoint)
		}
		meta := tx.Bucket(bucketChainMeta)
		cur, err := decodeCursor(meta.Get(keyCursor))
		if err != nil {
			return err
		}
		cb, ab := tx.Bucket(bucketChainChannels), tx.Bucket(bucketChainAnns)
		// The states being undone are the stored ones now; what to restore is the previous state
		// of the oldest removed range that touched each entry, so undo newest first and let
		// older ranges overwrite.
		undoneCh, undoneAnn := map[string][]byte{}, map[string][]byte{}
		restoreCh, restoreAnn := map[string]json.RawMessage{}, map[string]json.RawMessage{}
		var chOrder, annOrder []string
		var removed [][]byte
		c := ub.Cursor()
		for k, v := c.Last(); k != nil && bytes.Compare(k, blockKey(to.Block)) > 0; k, v = c.Prev() {
			var e undoEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("undo entry %x: %w", k, err)
			}
			for _, r := range e.Channels {
				id := string(r.Key)
				if _, ok := restoreCh[id]; !ok {
					chOrder = append(chOrder, id)
					undoneCh[id] = slices.Clone(cb.Get(r.Key))
				}
				restoreCh[id] = r.Prev
			}
			for _, r := range e.Anns {
				acc := string(r.Key)
				if _, ok := restoreAnn[acc]; !ok {
					annOrder = append(annOrder, acc)
					undoneAnn[acc] = slices.Clone(ab.Get(r.Key))
				}
				restoreAnn[acc] = r.Prev
			}
			removed = append(removed, slices.Clone(k))
		}
		for _, k := range removed {
			if err := ub.Delete(k); err != nil {
				return err
			}
		}
		slices.Sort(chOrder)
		slices.Sort(annOrder)
		for _, id := range chOrder {
			undone, err := decodeChannel(undoneCh[id])
			if err != nil {
				return fmt.Errorf("channel %x: %w", id, err)
			}
			rw := ChannelRewind{Undone: undone}
			if prev := restoreCh[id]; prev != nil {
				ch, err := decodeChannel(prev)
				if err != nil {
					return fmt.Errorf("channel %x: %w", id, err)
				}
				rw.Restored = &ch
				err = cb.Put([]byte(id), prev)
				if err != nil {
					return err
				}
			} else if err := cb.Delete([]byte(id)); err != nil {
				return err
			}
			out.Channels = append(out.Channels, rw)
		}
		for _, acc := range annOrder {
			undone, err := decodeAnnouncement(undoneAnn[acc])
			if err != nil {
				return fmt.Errorf("announcement %x: %w", acc, err)
			}
			rw := AnnouncementRewind{Undone: undone}
			if prev := restoreAnn[acc]; prev != nil {
				a, err := decodeAnnouncement(prev)
				if err != nil {
					return fmt.Errorf("announcement %x: %w", acc, err)
				}
				rw.Restored = &a
				if err := ab.Put([]byte(acc), prev); err != nil {
					return err
				}
			} else if err := ab.Delete([]byte(acc)); err != nil {
				return err
			}
			out.Announcements = append(out.Announcements, rw)
		}
		cur.Next, cur.Hash = to.Block+1, to.Hash
		return meta.Put(keyCursor, encodeCursor(cur))
	})
	if err != nil {
		return ChainRewind{}, fmt.Errorf("rewind chain state: %w", err)
	}
	return out, nil
}

func decodeChannel(v []byte) (channels.Channel, error) {
	var s storedChannel
	if err := json.Unmarshal(v, &s); err != nil {
		return channels.Channel{}, err
	}
	return s.channel()
}

func decodeAnnouncement(v []byte) (channels.Announcement, error) {
	var s storedAnnouncement
	if err := json.Unmarshal(v, &s); err != nil {
		return channels.Announcement{}, err
	}
	return channels.Announcement{Account: s.Account, PublicKey: s.PublicKey, Multiaddrs: s.Multiaddrs, Block: s.Block}, nil
}

func clearBucket(tx *bolt.Tx, name []byte) error {
	if err := tx.DeleteBucket(name); err != nil {
		return err
	}
	_, err := tx.CreateBucket(name)
	return err
}

// ResetChainState deletes the chain indexer's cursor, channels, announcements and undo journal.
func (db *DB) ResetChainState() error {
	if err := db.update(resetChain); err != nil {
		return fmt.Errorf("reset chain state: %w", err)
	}
	return nil
}

func resetChain(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketChainMeta, bucketChainChannels, bucketChainAnns, bucketChainUndo} {
		if err := clearBucket(tx, name); err != nil {
			return err
		}
	}
	return nil
}

// storedChannel is the JSON form of a channels.Channel in the store. Balance is a decimal string
// and ClosureTime Unix seconds, as the contract has them.
type storedChannel struct {
	ID          common.Hash    `json:"id"`
	Source      common.Address `json:"source"`
	Destination common.Address `json:"destination"`
	Balance     string         `json:"balance"`
	TicketIndex uint64         `json:"ticketIndex"`
	Epoch       uint32         `json:"epoch"`
	Status      uint8          `json:"status"`
	ClosureTime int64          `json:"closureTime,omitempty"`
}

func storedFrom(c channels.Channel) storedChannel {
	s := storedChannel{
		ID: c.ID, Source: c.Source, Destination: c.Destination, Balance: "0",
		TicketIndex: c.TicketIndex, Epoch: c.Epoch, Status: uint8(c.Status),
	}
	if c.Balance != nil {
		s.Balance = c.Balance.String()
	}
	if !c.ClosureTime.IsZero() {
		s.ClosureTime = c.ClosureTime.Unix()
	}
	return s
}

func (s storedChannel) channel() (channels.Channel, error) {
	// The contract's balances are uint256; anything else is a corrupted record.
	bal, ok := new(big.Int).SetString(s.Balance, 10)
	if !ok || bal.Sign() < 0 || bal.BitLen() > 256 {
		return channels.Channel{}, fmt.Errorf("bad balance %q", s.Balance)
	}
	c := channels.Channel{
		ID: s.ID, Source: s.Source, Destination: s.Destination, Balance: bal,
		TicketIndex: s.TicketIndex, Epoch: s.Epoch, Status: channels.Status(s.Status),
	}
	if s.ClosureTime != 0 {
		c.ClosureTime = time.Unix(s.ClosureTime, 0)
	}
	return c, nil
}

type storedAnnouncement struct {
	Account    common.Address `json:"account"`
	PublicKey  []byte         `json:"publicKey"`
	Multiaddrs []string       `json:"multiaddrs"`
	Block      uint64         `json:"block,omitempty"` // absent in a store written before it: 0
}
