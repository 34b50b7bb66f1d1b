package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/config"
)

// TestNodeLogsJSON starts a node with --logFormat json: every line it writes, the p2p host's
// included, is a JSON object with one component.
func TestNodeLogsJSON(t *testing.T) {
	cfg := testConfig(t)
	cfg.LogFormat = config.LogJSON
	f, err := os.Create(filepath.Join(t.TempDir(), "relayd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := New(cfg, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n.close()
	out, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	sawP2P := false
	for _, rec := range checkJSONLines(t, out) {
		sawP2P = sawP2P || rec["component"] == "p2p" && rec["msg"] == "p2p host listening"
	}
	if !sawP2P {
		t.Fatalf("no p2p line in %s", out)
	}
}

// checkJSONLines parses every line of out as one JSON object with exactly one component and
// returns the objects.
func checkJSONLines(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not a JSON line: %q (%v)", line, err)
		}
		if n := strings.Count(line, `"component":`); n != 1 {
			t.Fatalf("%d component attributes in %q", n, line)
		}
		recs = append(recs, rec)
	}
	return recs
}
