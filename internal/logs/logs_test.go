package logs

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
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
	log := New(&out, true, slog.LevelInfo, nil)
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
// other handler (the admin WebSocket's log frames) gets the same line.
func TestLoggerTextEIP55(t *testing.T) {
	var out bytes.Buffer
	var frames bytes.Buffer
	log := New(&out, false, slog.LevelInfo, slog.NewTextHandler(&frames, nil))
	addr := common.HexToAddress("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
	log.With("component", "chain").Info("funded", "account", addr)
	line := out.String()
	if !strings.Contains(line, "account="+addr.Hex()) || strings.Count(line, "component=") != 1 || !strings.Contains(line, "component=chain") {
		t.Fatalf("text line %q", line)
	}
	if strings.HasPrefix(line, "{") {
		t.Fatalf("text format wrote JSON: %q", line)
	}
	if !strings.Contains(frames.String(), "account="+addr.Hex()) {
		t.Fatalf("the other handler got %q", frames.String())
	}
}
