package node

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/store"
)

// TestUpgradeInPlace: a node started on a store written by the first format (the committed
// fixture, internal/store/testdata/v1.db) migrates it and serves what it held: the inbox's
// messages; a backup over the API is a whole store of the current format.
func TestUpgradeInPlace(t *testing.T) {
	cfg := testConfig(t)
	fixture, err := os.ReadFile(filepath.Join("..", "store", "testdata", "v1.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Data, store.FileName), fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, cfg)
	tn := &testNet{t: t}
	var inbox json.RawMessage
	if st := tn.call(n, http.MethodGet, "/messages", "", &inbox); st != http.StatusOK ||
		!strings.Contains(string(inbox), `"first"`) || !strings.Contains(string(inbox), `"an answer"`) {
		t.Fatalf("GET /messages on the migrated store: %d %s, want the fixture's messages", st, inbox)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+n.APIAddr().String()+"/api/v2/node/backup", nil)
	req.Header.Set("x-auth-token", testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	copyPath := filepath.Join(t.TempDir(), "backup.db")
	f, err := os.Create(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil || f.Close() != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /node/backup: %d: %v", resp.StatusCode, err)
	}
	v, err := store.CheckFile(copyPath)
	if err != nil || v != store.FormatVersion || v < 2 {
		t.Fatalf("the backup of the migrated store: format %d (this build writes %d): %v", v, store.FormatVersion, err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/octet-stream") {
		t.Errorf("GET /node/backup Content-Type %q", ct)
	}
}
