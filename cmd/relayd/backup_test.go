package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/store"
)

// backupNode is a running node's store behind a GET /node/backup that answers as the API does
// (the token, the copy with its length), or as serve says.
func backupNode(t *testing.T, serve func(w http.ResponseWriter, copy []byte)) (url string, db *store.DB) {
	t.Helper()
	db, err := store.OpenWith(t.TempDir(), store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.SetAlias("alice", "16Uiu2HAmAlice"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != api.Prefix+"/node/backup" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("X-Auth-Token") != "secret-token" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(api.ErrorBody{Status: "UNAUTHORIZED", Error: "authentication failed"})
			return
		}
		var b bytes.Buffer
		if _, err := db.Backup(&b); err != nil {
			t.Error(err)
		}
		if serve != nil {
			serve(w, b.Bytes())
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		w.Write(b.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv.URL, db
}

func noEnvBut(k, v string) func(string) string {
	return func(key string) string {
		if key == k {
			return v
		}
		return ""
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestBackupFromARunningNode(t *testing.T) {
	url, db := backupNode(t, nil)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "node.db")
	var stdout, stderr bytes.Buffer
	code := backup(t.Context(), []string{"--api", url + "/", "--out", out}, noEnvBut("RELAYD_API_TOKEN", "secret-token"), &stdout, &stderr)
	if code != exitOK || !strings.Contains(stdout.String(), "wrote "+out) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	// The node keeps running on its store; the copy opens on its own, with what the node held.
	if err := db.SetAlias("bob", "16Uiu2HAmBob"); err != nil {
		t.Fatal(err)
	}
	restored := t.TempDir()
	if err := os.Rename(out, filepath.Join(restored, store.FileName)); err != nil {
		t.Fatal(err)
	}
	c, err := store.OpenWith(restored, store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if id, ok, err := c.Alias("alice"); !ok || err != nil || id != "16Uiu2HAmAlice" {
		t.Fatalf("alias in the copy: %q, %v, %v", id, ok, err)
	}
	if _, ok, _ := c.Alias("bob"); ok {
		t.Fatal("the copy holds a change made after it")
	}
	if names := dirNames(t, outDir); len(names) != 0 {
		t.Fatalf("left in the output directory: %v", names)
	}
}

// TestBackupKeepsTheOldFileOnFailure: a refused request, a copy cut short and bytes that are no
// store leave the previous backup as it was, and no temporary file.
func TestBackupKeepsTheOldFileOnFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
		serve func(w http.ResponseWriter, copy []byte)
		want  string
	}{
		{"wrong token", "wrong-token", nil, "authentication failed"},
		{"cut short", "secret-token", func(w http.ResponseWriter, copy []byte) {
			w.Header().Set("Content-Length", strconv.Itoa(len(copy)))
			w.Write(copy[:len(copy)/2])
		}, "read the copy"},
		{"not a store", "secret-token", func(w http.ResponseWriter, copy []byte) {
			w.Write(bytes.Repeat([]byte{0xee}, len(copy)))
		}, "not a store"},
		{"server fault", "secret-token", func(w http.ResponseWriter, copy []byte) {
			w.WriteHeader(http.StatusInternalServerError)
		}, "500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := backupNode(t, tc.serve)
			outDir := t.TempDir()
			out := filepath.Join(outDir, "node.db")
			if err := os.WriteFile(out, []byte("the previous backup"), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := backup(t.Context(), []string{"--api", url, "--token", tc.token, "--out", out}, noEnv, &stdout, &stderr)
			if code != exitFailure || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitFailure, tc.want)
			}
			if b, err := os.ReadFile(out); err != nil || string(b) != "the previous backup" {
				t.Fatalf("the previous backup is now %q, %v", b, err)
			}
			if names := dirNames(t, outDir); len(names) != 1 {
				t.Fatalf("left in the output directory: %v", names)
			}
		})
	}
}

func TestBackupOfAStoppedNode(t *testing.T) {
	data := t.TempDir()
	db, err := store.OpenWith(data, store.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetAlias("alice", "16Uiu2HAmAlice"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "node.db")
	var stdout, stderr bytes.Buffer
	if code := backup(t.Context(), []string{"--data", data, "--out", out}, noEnv, &stdout, &stderr); code != exitFailure ||
		!strings.Contains(stderr.String(), "in use") {
		t.Fatalf("a store in use: exit %d, stderr %q", code, stderr.String())
	}
	db.Close()
	stderr.Reset()
	if code := backup(t.Context(), []string{"--data", data, "--out", out}, noEnv, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if _, err := store.CheckFile(out); err != nil {
		t.Fatal(err)
	}
}

func TestBackupUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--out"},
		{"--out", "x.db", "extra"},
		{"--out", "x.db", "--data", "d", "--token", "t"},
		{"--nonsense"},
	} {
		var stdout, stderr bytes.Buffer
		if code := backup(t.Context(), args, noEnv, &stdout, &stderr); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := runBackup([]string{"--help"}, &stdout, &stderr); code != exitOK || !strings.Contains(stderr.String(), "relayd backup --out FILE") {
		t.Errorf("--help: exit %d, %q", code, stderr.String())
	}
}
