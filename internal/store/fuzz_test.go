package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	bolt "go.etcd.io/bbolt"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/tickets"
)

// The store's records are written by this node, but a disk, a crash or a hand edit can
// corrupt them: every decoder must turn any bytes into a value or an error, never a panic,
// and what it accepts must be what its encoder writes.

// fuzzDB opens a store for one fuzz worker. It does not fsync: the targets test decoding,
// and an fsync per exec would make them crawl.
func fuzzDB(f *testing.F) *DB {
	f.Helper()
	db, err := Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	db.bolt.NoSync = true
	f.Cleanup(func() { db.Close() })
	return db
}

// put replaces the content of bucket with the one entry k → v.
func put(t testing.TB, db *DB, bucket, k, v []byte) {
	t.Helper()
	err := db.update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucket); err != nil {
			return err
		}
		b, err := tx.CreateBucket(bucket)
		if err != nil {
			return err
		}
		return b.Put(k, v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// get returns a copy of the value of k in bucket.
func get(t testing.TB, db *DB, bucket, k []byte) []byte {
	t.Helper()
	var v []byte
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		v = bytes.Clone(tx.Bucket(bucket).Get(k))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

func testTicket() tickets.Ticket {
	tk := tickets.Ticket{ChannelID: [32]byte{1}, Amount: *uint256.NewInt(1e16), Index: 7, Epoch: 2,
		WinProb: tickets.MaxWinProb, Challenge: [20]byte{2}}
	tk.Signature[0], tk.Signature[32], tk.Signature[64] = 1, 1, 27
	return tk
}

// FuzzDecodeAcked: an acknowledged-ticket record decodes only at its exact length and with a
// ticket that could be valid, and then re-encodes to the same bytes.
func FuzzDecodeAcked(f *testing.F) {
	tk := testTicket()
	b, err := tk.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	valid := append(append(common.Address{3}.Bytes(), b...), bytes.Repeat([]byte{4}, 32)...)
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(make([]byte, ackedValueLen))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		a, err := decodeAcked(v)
		if err != nil {
			return
		}
		if len(v) != ackedValueLen {
			t.Fatalf("decoded %d bytes", len(v))
		}
		re, err := a.Ticket.AppendBinary(a.Source.Bytes())
		if err != nil {
			t.Fatalf("decoded ticket does not encode: %v", err)
		}
		if re = append(re, a.Response[:]...); !bytes.Equal(re, v) {
			t.Fatalf("re-encoded %x, stored %x", re, v)
		}
	})
}

// FuzzDecodeCursor: a chain cursor decodes only at one of its two lengths and re-encodes to
// the same bytes (the older length with a zero genesis hash appended).
func FuzzDecodeCursor(f *testing.F) {
	cur := ChainCursor{ChainID: 1337, Contract: common.Address{5}, Next: 99, Hash: common.Hash{6}, Genesis: common.Hash{7}}
	f.Add(encodeCursor(cur))
	f.Add(encodeCursor(cur)[:cursorLenV1])
	f.Add(encodeCursor(cur)[:cursorLenV1+1])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		got, err := decodeCursor(v)
		if err != nil {
			if len(v) == cursorLen || len(v) == cursorLenV1 {
				t.Fatalf("refused %d bytes: %v", len(v), err)
			}
			return
		}
		want := append(bytes.Clone(v), make([]byte, cursorLen-len(v))...)
		if re := encodeCursor(got); !bytes.Equal(re, want) {
			t.Fatalf("re-encoded %x, stored %x", re, v)
		}
	})
}

// FuzzLoadChainState stores an arbitrary cursor, channel record and announcement record and
// loads them as the indexer does at start: never a panic; a channel loads only with a
// balance a uint256 holds (what the contract has); and what loads, committed again, loads
// back the same.
func FuzzLoadChainState(f *testing.F) {
	db := fuzzDB(f)
	cur := ChainCursor{ChainID: 1337, Contract: common.Address{5}, Next: 99, Hash: common.Hash{6}}
	ch := channels.Channel{ID: [32]byte{1}, Source: common.Address{2}, Destination: common.Address{3},
		Balance: big.NewInt(1e18), TicketIndex: 4, Epoch: 2, Status: channels.Open, ClosureTime: time.Unix(1700000000, 0)}
	chJSON, _ := json.Marshal(storedFrom(ch))
	annJSON, _ := json.Marshal(storedAnnouncement{Account: common.Address{2}, PublicKey: []byte{2, 1},
		Multiaddrs: []string{"/ip4/127.0.0.1/tcp/1"}})
	f.Add(encodeCursor(cur), chJSON, annJSON)
	f.Add(encodeCursor(cur)[:cursorLenV1], []byte(`{"balance":"-1"}`), []byte(`{}`))
	f.Add([]byte{}, []byte(`{"balance":"1e3"}`), []byte(`null`))
	f.Add(encodeCursor(cur), []byte(`{"balance":"115792089237316195423570985008687907853269984665640564039457584007913129639936"}`), []byte(`[]`))
	maxUint256 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	f.Fuzz(func(t *testing.T, cursor, channel, ann []byte) {
		put(t, db, bucketChainMeta, keyCursor, cursor)
		put(t, db, bucketChainChannels, ch.ID[:], channel)
		put(t, db, bucketChainAnns, common.Address{2}.Bytes(), ann)
		gotCur, chans, anns, err := db.LoadChainState()
		if err != nil {
			return
		}
		for _, c := range chans {
			if c.Balance == nil || c.Balance.Sign() < 0 || c.Balance.Cmp(maxUint256) > 0 {
				t.Fatalf("loaded balance %v from %q", c.Balance, channel)
			}
		}
		if err := db.CommitChainState(gotCur, chans, anns); err != nil {
			t.Fatalf("commit what loaded: %v", err)
		}
		cur2, chans2, anns2, err := db.LoadChainState()
		if err != nil || cur2 != gotCur {
			t.Fatalf("reload: %v, %+v vs %+v", err, cur2, gotCur)
		}
		// A record stored under another key than its id or account comes back twice.
		for _, c := range chans {
			if !slices.ContainsFunc(chans2, c.Equal) {
				t.Fatalf("channel %+v does not reload", c)
			}
		}
		for _, a := range anns {
			if !slices.ContainsFunc(anns2, func(b channels.Announcement) bool {
				return a.Account == b.Account && bytes.Equal(a.PublicKey, b.PublicKey) && slices.Equal(a.Multiaddrs, b.Multiaddrs)
			}) {
				t.Fatalf("announcement %+v does not reload", a)
			}
		}
	})
}

// FuzzIssuedTickets stores an arbitrary issued-ticket record: it loads only when it is the
// through index and whole runs, and then saves back to the same bytes.
func FuzzIssuedTickets(f *testing.F) {
	db := fuzzDB(f)
	id, epoch := [32]byte{9}, uint32(3)
	rec := IssuedTickets{Through: 10, Runs: []IssuedRun{{First: 1, Last: 5, Amount: *uint256.NewInt(1e16)}, {First: 6, Last: 10, Amount: *uint256.NewInt(2e16)}}}
	if err := db.SaveIssuedTickets(id, epoch, rec); err != nil {
		f.Fatal(err)
	}
	valid := get(f, db, bucketTicketIssued, issuedKey(id, epoch))
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(binary.BigEndian.AppendUint64(nil, IssuedComplete))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		put(t, db, bucketTicketIssued, issuedKey(id, epoch), v)
		got, found, _, err := db.IssuedTicketsOf(id, epoch)
		wellFormed := len(v) >= 8 && (len(v)-8)%issuedRunLen == 0
		if (err == nil) != wellFormed || found != wellFormed {
			t.Fatalf("%d bytes: found %v, err %v", len(v), found, err)
		}
		if !found {
			return
		}
		if err := db.SaveIssuedTickets(id, epoch, got); err != nil {
			t.Fatal(err)
		}
		if re := get(t, db, bucketTicketIssued, issuedKey(id, epoch)); !bytes.Equal(re, v) {
			t.Fatalf("saved back as %x, stored %x", re, v)
		}
	})
}

// FuzzReplayTags stores one arbitrary replay-tag batch and loads the tags as a restarted node
// does: an entry of an epoch still accepted loads (or, malformed, fails the load), and then
// every tag in it is refused as a replay; an entry of an expired epoch is deleted.
func FuzzReplayTags(f *testing.F) {
	db := fuzzDB(f)
	const now = 2_945_376 // an epoch in 2026
	clock := func() time.Time { return epochStart(now).Add(time.Minute) }
	key := func(e uint32, seq uint64) []byte {
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(nil, e), seq)
	}
	tags := bytes.Repeat([]byte{0xab}, 64)
	tags[32] = 0xcd
	f.Add(key(now, 1), tags)
	f.Add(key(now-packet.EpochSkew, 2), tags[:32])
	f.Add(key(now-packet.EpochSkew-1, 3), tags)
	f.Add(key(now+5, 4), tags)
	f.Add(key(now, 5), tags[:33])
	f.Add([]byte("0123456789abcdef0123456789abcdef"), tags[:32])
	f.Fuzz(func(t *testing.T, k, v []byte) {
		if len(k) == 0 || len(k) > bolt.MaxKeySize {
			return // bbolt stores no such key
		}
		put(t, db, bucketReplay, k, v)
		r, err := db.ReplayTags(clock)
		stored := get(t, db, bucketReplay, k)
		if len(k) != replayKeyLen {
			if err != nil || stored != nil {
				t.Fatalf("entry with a %d-byte key: err %v, kept %v", len(k), err, stored != nil)
			}
			return
		}
		e := binary.BigEndian.Uint32(k)
		if packet.Expired(e, now) {
			if err != nil || stored != nil || r.Len() != 0 {
				t.Fatalf("expired epoch %d: err %v, kept %v", e, err, stored != nil)
			}
			return
		}
		if len(v)%32 != 0 {
			if err == nil {
				t.Fatalf("loaded a %d-byte batch", len(v))
			}
			return
		}
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		for ; len(v) > 0; v = v[32:] {
			if fresh, err := r.CheckAndAdd(e, [32]byte(v)); fresh || err != nil {
				t.Fatalf("stored tag of epoch %d accepted again (%v)", e, err)
			}
		}
	})
}

// clearBuckets empties the given buckets.
func clearBuckets(t testing.TB, db *DB, buckets ...[]byte) {
	t.Helper()
	err := db.update(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzDecodeInbox: an inbox record decodes or is ErrCorrupt, and what decodes re-encodes to
// the same bytes.
func FuzzDecodeInbox(f *testing.F) {
	m := testInbox(1, "block a", "b")
	m.Reply, m.InReplyTo = true, [16]byte{5}
	valid, err := encodeInbox(&m)
	if err != nil {
		f.Fatal(err)
	}
	empty, _ := encodeInbox(&InboxMessage{})
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(append(bytes.Clone(valid), 0))
	f.Add(empty)
	f.Add([]byte{inboxVersion})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		m, err := decodeInbox(7, v)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		re, err := encodeInbox(&m)
		if err != nil || !bytes.Equal(re, v) {
			t.Fatalf("re-encoded %x (%v), stored %x", re, err, v)
		}
	})
}

// FuzzDecodeOutbox: an outbox record decodes or is ErrCorrupt, and what decodes re-encodes to
// the same bytes.
func FuzzDecodeOutbox(f *testing.F) {
	m := testOutbox(1, OutboxSent)
	m.Reason, m.Acked, m.Attempts, m.Fragments, m.Replies = "why", []byte{3}, 2, 3, 4
	valid, err := encodeOutbox(&m)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(append(bytes.Clone(valid), 0))
	f.Add([]byte{outboxVersion, 9})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		m, err := decodeOutbox([16]byte{1}, v)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		re, err := encodeOutbox(&m)
		if err != nil || !bytes.Equal(re, v) {
			t.Fatalf("re-encoded %x (%v), stored %x", re, err, v)
		}
	})
}

// FuzzInboxRecord stores an arbitrary record as inbox message 1 and works on it as the node
// does: never a panic; it reads (and gives a reply block) only when it decodes; DeleteInbox
// removes it whatever it holds and leaves the counters right.
func FuzzInboxRecord(f *testing.F) {
	db := fuzzDB(f)
	valid, _ := encodeInbox(&InboxMessage{ID: [16]byte{1}, Body: []byte("hi"), ReplyBlocks: [][]byte{[]byte("b")}})
	f.Add(valid)
	f.Add(valid[:len(valid)-2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		clearBuckets(t, db, bucketInbox, bucketInboxIDs, bucketInboxSeen, bucketInboxMeta)
		put(t, db, bucketInbox, seqKey(1), v)
		put(t, db, bucketInboxMeta, counterInboxCount, seqKey(1))
		var id [16]byte
		if len(v) >= 17 {
			id = [16]byte(v[1:17])
		}
		put(t, db, bucketInboxIDs, id[:], seqKey(1))
		want, decodeErr := decodeInbox(1, v)
		got, ok, err := db.GetInbox(1)
		if (err == nil) != (decodeErr == nil) || !ok && err == nil {
			t.Fatalf("get: %v, %v; decode: %v", ok, err, decodeErr)
		}
		if _, _, err := db.ListInbox(0, 10); (err == nil) != (decodeErr == nil) {
			t.Fatalf("list: %v; decode: %v", err, decodeErr)
		}
		b, left, err := db.TakeReplyBlock(1)
		switch {
		case decodeErr != nil:
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("take from a corrupt record: %v", err)
			}
		case len(want.ReplyBlocks) == 0:
			if !errors.Is(err, ErrNoReplyBlock) {
				t.Fatalf("take from a record without blocks: %v", err)
			}
		case err != nil || !bytes.Equal(b, got.ReplyBlocks[0]) || left != len(got.ReplyBlocks)-1:
			t.Fatalf("take: %x, %d, %v", b, left, err)
		}
		if ok, err := db.DeleteInbox(1); !ok || err != nil {
			t.Fatalf("delete: %v, %v", ok, err)
		}
		if n, size, err := db.InboxUsage(); n != 0 || size != 0 || err != nil {
			t.Fatalf("usage after the delete: %d, %d, %v", n, size, err)
		}
		if seen, _ := db.SeenInbox(id); !seen {
			t.Fatal("the deleted record's id is not remembered")
		}
	})
}

// FuzzOutboxRecord stores an arbitrary record as an outbox message and works on it as the
// node does: never a panic; it reads and updates only when it decodes (and an update that
// changes nothing writes the same bytes); PruneOutbox removes it when corrupt or finished,
// and leaves the pending count right.
func FuzzOutboxRecord(f *testing.F) {
	db := fuzzDB(f)
	id := [16]byte{1}
	for _, state := range outboxStates {
		m := testOutbox(1, state)
		v, _ := encodeOutbox(&m)
		f.Add(v)
	}
	f.Add([]byte{outboxVersion, 1})
	f.Fuzz(func(t *testing.T, v []byte) {
		clearBuckets(t, db, bucketOutbox, bucketOutboxMeta)
		put(t, db, bucketOutbox, id[:], v)
		want, decodeErr := decodeOutbox(id, v)
		if !want.Finished() && decodeErr == nil {
			put(t, db, bucketOutboxMeta, counterOutboxPending, seqKey(1))
		}
		if _, ok, err := db.GetOutbox(id); (err == nil) != (decodeErr == nil) || err == nil && !ok {
			t.Fatalf("get: %v, %v; decode: %v", ok, err, decodeErr)
		}
		if _, err := db.ListOutbox(); (err == nil) != (decodeErr == nil) {
			t.Fatalf("list: %v; decode: %v", err, decodeErr)
		}
		err := db.UpdateOutbox(id, func(*OutboxMessage) error { return nil })
		if (err == nil) != (decodeErr == nil) {
			t.Fatalf("update: %v; decode: %v", err, decodeErr)
		}
		if err == nil && !bytes.Equal(get(t, db, bucketOutbox, id[:]), v) {
			t.Fatal("an update that changed nothing rewrote the record")
		}
		n, err := db.PruneOutbox(time.UnixMilli(math.MaxInt64), 0)
		if err != nil || (n == 1) != (decodeErr != nil || want.Finished()) {
			t.Fatalf("prune: %d, %v; decode: %v", n, err, decodeErr)
		}
		if p, _, _ := db.OutboxUsage(); p != 1-n {
			t.Fatalf("%d pending after pruning %d", p, n)
		}
	})
}

// FuzzReplyKeys stores an arbitrary keyring entry and index value, then takes and expires
// keys as the node does: never a panic; the entry is taken only through an index that
// names its epoch; an entry with a malformed key is expired.
func FuzzReplyKeys(f *testing.F) {
	db := fuzzDB(f)
	id := [16]byte{1}
	const now = 2_945_376
	f.Add(replyKey(now, id), []byte{0, 0x2c, 0xf1, 0x60})
	f.Add(replyKey(now-5, id), []byte{0, 0x2c, 0xf1, 0x5b})
	f.Add(replyKey(now, id), []byte{0, 0x2c, 0xf1})
	f.Add([]byte("short"), []byte{1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, k, epoch []byte) {
		if len(k) == 0 || len(k) > bolt.MaxKeySize {
			return // bbolt stores no such key
		}
		clearBuckets(t, db, bucketReplyKeys, bucketReplyKeyIDs, bucketReplyKeyMeta)
		put(t, db, bucketReplyKeys, k, []byte("keys"))
		put(t, db, bucketReplyKeyIDs, id[:], epoch)
		put(t, db, bucketReplyKeyMeta, counterReplyKeys, seqKey(1))
		indexed := len(epoch) == 4 && bytes.Equal(k, replyKey(binary.BigEndian.Uint32(epoch), id))
		keys, ok, err := db.ReplyKeys().Take(id)
		if indexed && (!ok || err != nil || string(keys) != "keys") || !indexed && (ok || !errors.Is(err, ErrCorrupt)) {
			t.Fatalf("take: %q, %v, %v (indexed %v)", keys, ok, err, indexed)
		}
		n, err := db.ExpireReplyKeys(now)
		if err != nil {
			t.Fatal(err)
		}
		if !indexed && len(k) != replyKeyLen && n != 1 {
			t.Fatalf("a malformed key was not expired")
		}
		if _, err := db.ExpireReplyKeys(^uint32(0)); err != nil {
			t.Fatal(err)
		}
		if l, _ := db.ReplyKeys().Len(); l != entries(t, db, bucketReplyKeys) {
			t.Fatalf("len %d, %d entries", l, entries(t, db, bucketReplyKeys))
		}
	})
}
