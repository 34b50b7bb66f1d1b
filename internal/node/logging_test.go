package node

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/ws"
)

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

// TestLoggerJSONOneComponentEIP55: each line is one JSON object with one component (a logger
// derived twice with a component, as p2p's is, replaces it) and chain addresses in EIP-55 form.
func TestLoggerJSONOneComponentEIP55(t *testing.T) {
	var out bytes.Buffer
	log := newLogger(&out, config.LogJSON, slog.LevelInfo, ws.NewHub(time.Now))
	addr := common.HexToAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
	const want = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" // EIP-55 test vector
	log.Info("own line", "account", addr)
	log.With("component", "p2p").With(slog.String("component", "p2p")).Info("p2p line", "account", &addr)
	log.With("component", "chain").Info("record component wins", "component", "indexer", "accounts", []common.Address{addr})
	log.With(slog.Group("g", slog.Any("account", addr))).Info("grouped")

	recs := checkJSONLines(t, out.Bytes())
	if len(recs) != 4 {
		t.Fatalf("%d lines: %s", len(recs), out.String())
	}
	for i, comp := range []string{"node", "p2p", "indexer", "node"} {
		if recs[i]["component"] != comp {
			t.Errorf("line %d component %v, want %s", i, recs[i]["component"], comp)
		}
	}
	if recs[0]["account"] != want || recs[1]["account"] != want {
		t.Errorf("addresses %v, %v; want %s", recs[0]["account"], recs[1]["account"], want)
	}
	if as, _ := recs[2]["accounts"].([]any); len(as) != 1 || as[0] != want {
		t.Errorf("address list %v", recs[2]["accounts"])
	}
	if g, _ := recs[3]["g"].(map[string]any); g["account"] != want {
		t.Errorf("grouped address %v", recs[3]["g"])
	}
}

// TestLoggerTextEIP55: the default text format writes addresses checksummed too, and the
// admin WebSocket's log frames get the same line.
func TestLoggerTextEIP55(t *testing.T) {
	var out bytes.Buffer
	hub := ws.NewHub(time.Now)
	log := newLogger(&out, config.LogText, slog.LevelInfo, hub)
	addr := common.HexToAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
	log.With("component", "chain").Info("funded", "account", addr)
	line := out.String()
	if !strings.Contains(line, "account="+addr.Hex()) || strings.Count(line, "component=") != 1 || !strings.Contains(line, "component=chain") {
		t.Fatalf("text line %q", line)
	}
	if strings.HasPrefix(line, "{") {
		t.Fatalf("text format wrote JSON: %q", line)
	}
}

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
	n, err := New(cfg, f)
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
