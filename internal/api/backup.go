package api

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"syscall"
)

// StoreBackup makes a consistent copy of the node's store: the whole file as one read
// transaction sees it, written to w; it returns the bytes written (store.DB's Backup).
type StoreBackup interface {
	Backup(w io.Writer) (int64, error)
}

// ErrBackupSpace means the disk the copy of the store is made on (Config.BackupDir) has no room
// for it: nothing was sent.
var ErrBackupSpace = errors.New("no room on the node's disk for the copy of its store")

// getBackup answers GET /node/backup with a consistent copy of the node's store, which a node
// started on it resumes from (docs/STORE.md, "Backup and restore"). The copy is made into a
// temporary file first (in Config.BackupDir), so that the store's read transaction lasts as
// long as a local copy takes, not as long as the client reads (bbolt's writers cannot grow the
// file while a read transaction is open), and so that the answer has a Content-Length the
// client can check the copy against.
func (s *Server) getBackup(w http.ResponseWriter, r *http.Request) {
	const op = "back up the store"
	if s.cfg.Backup == nil {
		writeError(w, http.StatusServiceUnavailable, CodeUnknownFailure, "this node has no store to back up")
		return
	}
	f, err := os.CreateTemp(s.cfg.BackupDir, ".relayd-backup-*")
	if err != nil {
		s.fail(w, op, backupErr(err))
		return
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	n, err := s.cfg.Backup.Backup(f)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		s.fail(w, op, backupErr(err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="relayd.db"`)
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if _, err := io.CopyN(w, f, n); err != nil {
		s.log.Debug("api: the client did not take the whole backup", slog.Any("err", err))
	}
}

// backupErr is err, as ErrBackupSpace when the file system refused a write for want of space.
func backupErr(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrBackupSpace, err)
	}
	return err
}
