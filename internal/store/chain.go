package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/channels"
)

var (
	bucketChainMeta     = bucket("chain")          // "cursor" → encoded ChainCursor
	bucketChainChannels = bucket("chain.channels") // channel id → JSON storedChannel
	bucketChainAnns     = bucket("chain.announce") // account → JSON storedAnnouncement
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
			anns = append(anns, channels.Announcement{Account: s.Account, PublicKey: s.PublicKey, Multiaddrs: s.Multiaddrs})
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
// genesis than the stored one first drops every stored channel and announcement.
func (db *DB) CommitChainState(cur ChainCursor, chans []channels.Channel, anns []channels.Announcement) error {
	err := db.bolt.Update(func(tx *bolt.Tx) error {
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
			b, err := json.Marshal(storedAnnouncement{Account: a.Account, PublicKey: a.PublicKey, Multiaddrs: a.Multiaddrs})
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

// ResetChainState deletes the chain indexer's cursor, channels and announcements.
func (db *DB) ResetChainState() error {
	if err := db.bolt.Update(resetChain); err != nil {
		return fmt.Errorf("reset chain state: %w", err)
	}
	return nil
}

func resetChain(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketChainMeta, bucketChainChannels, bucketChainAnns} {
		if err := tx.DeleteBucket(name); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(name); err != nil {
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
}
