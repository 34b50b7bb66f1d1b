package api

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/wait"
)

// fakeBackup is the store's Backup: fakeBackupBytes, or err after half of them.
type fakeBackup struct{ err error }

var fakeBackupBytes = bytes.Repeat([]byte("relayd store page "), 1000)

func (b fakeBackup) Backup(w io.Writer) (int64, error) {
	if b.err != nil {
		n, _ := w.Write(fakeBackupBytes[:len(fakeBackupBytes)/2])
		return int64(n), b.err
	}
	n, err := w.Write(fakeBackupBytes)
	return int64(n), err
}

// errBackupDiskFull is how a write to a full disk fails.
var errBackupDiskFull = fmt.Errorf("write /var/lib/relayd/.relayd-backup-1: %w", syscall.ENOSPC)

// TestBackupAnswer: the copy comes whole, with its length, as an attachment; a failed copy
// sends none of its bytes; the temporary copy is removed either way.
func TestBackupAnswer(t *testing.T) {
	spool := t.TempDir()
	for _, tc := range []struct {
		name   string
		err    error
		status int
	}{
		{"whole", nil, http.StatusOK},
		{"failing", errStoreClosed, http.StatusInternalServerError},
		{"disk full", errBackupDiskFull, http.StatusInsufficientStorage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newFakeNode(t).config(false)
			cfg.Backup, cfg.BackupDir = fakeBackup{err: tc.err}, spool
			srv := serveConfig(t, cfg)
			resp, body := send(t, http.MethodGet, srv.URL+Prefix+"/node/backup", http.Header{"X-Auth-Token": {testToken}}, "")
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tc.status)
			}
			if tc.err == nil {
				if !bytes.Equal(body, fakeBackupBytes) || resp.Header.Get("Content-Length") != strconv.Itoa(len(fakeBackupBytes)) ||
					resp.Header.Get("Content-Type") != "application/octet-stream" || resp.Header.Get("Content-Disposition") == "" {
					t.Fatalf("answer of %d bytes, headers %v", len(body), resp.Header)
				}
			} else if bytes.Contains(body, fakeBackupBytes[:64]) || bytes.Contains(body, []byte("/var/lib/relayd")) {
				t.Fatalf("a failed backup answered %q", body)
			}
			// The handler removes its copy once the client has the answer.
			wait.For(t, func() bool {
				left, err := os.ReadDir(spool)
				return err == nil && len(left) == 0
			}, 5*time.Second, "the temporary copy removed")
		})
	}
}

// TestBackupOfAStore: the node's store serves the copy (store.DB is a StoreBackup), and the
// answer is a store holding what the node's held.
func TestBackupOfAStore(t *testing.T) {
	db, err := store.OpenWith(t.TempDir(), store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.SetAlias("alice", "16Uiu2HAmAlice"); err != nil {
		t.Fatal(err)
	}
	cfg := newFakeNode(t).config(false)
	cfg.Backup, cfg.BackupDir = db, t.TempDir()
	srv := serveConfig(t, cfg)
	resp, body := send(t, http.MethodGet, srv.URL+Prefix+"/node/backup", http.Header{"X-Auth-Token": {testToken}}, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, store.FileName), body, 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := store.CheckFile(filepath.Join(dir, store.FileName)); err != nil || v != store.FormatVersion {
		t.Fatalf("the copy: format version %d, %v", v, err)
	}
	c, err := store.OpenWith(dir, store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if id, ok, err := c.Alias("alice"); !ok || err != nil || id != "16Uiu2HAmAlice" {
		t.Fatalf("alias in the copy: %q, %v, %v", id, ok, err)
	}
}
