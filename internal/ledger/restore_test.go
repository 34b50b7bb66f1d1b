package ledger

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels/channelstest"
	"github.com/relayd/relayd/internal/por"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/tickets"
)

// TestLedgerRestoredBackupReusesNoIndex: a node issues tickets, its store is backed up while it
// runs, and it issues more, which the next hop holds unredeemed; then the backup is restored
// (twice, the second time after the restored node issued tickets too). No ticket the node
// issues after a restore has an index it used before: none can collide with a ticket the next
// hop holds (docs/STORE.md, "Restoring"). The small index batch makes the node use indexes
// the backup never reserved.
func TestLedgerRestoredBackupReusesNoIndex(t *testing.T) {
	dir := t.TempDir()
	self, selfAddr := newKeyPair(t)
	dst := common.Address{0xd7}
	chans := channelstest.New()
	chans.Open(selfAddr, dst, tickets.AmountFor(1<<20))
	clock := time.Unix(1_790_000_000, 0)
	var db *store.DB
	var l *Ledger
	open := func() {
		t.Helper()
		clock = clock.Add(time.Minute) // a restore takes a stop and a start
		now := clock
		var err error
		db, err = store.OpenWith(dir, store.Options{Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		l, err = New(Config{Key: self, ChainID: testChainID, Contract: testContract, Channels: chans, Store: db, IndexBatch: 2})
		if err != nil {
			t.Fatal(err)
		}
	}
	used := map[uint64]string{}
	issue := func(n int, when string) {
		t.Helper()
		for range n {
			tk, err := l.IssueTicket(t.Context(), dst, &PricePerHop, por.Challenge{1})
			if err != nil {
				t.Fatal(err)
			}
			if before, ok := used[tk.Index]; ok {
				t.Fatalf("%s: index %d again, used %s", when, tk.Index, before)
			}
			used[tk.Index] = when
		}
	}
	stop := func() {
		t.Helper()
		l.fetches.Wait() // the background reservations end before the store closes
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}

	open()
	issue(3, "before the backup")
	var backup bytes.Buffer
	if _, err := db.Backup(&backup); err != nil {
		t.Fatal(err)
	}
	issue(10, "after the backup")
	for _, round := range []string{"after the first restore", "after the second restore"} {
		stop()
		if err := os.WriteFile(filepath.Join(dir, store.FileName), backup.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		open()
		issue(10, round)
	}
	stop()
}
