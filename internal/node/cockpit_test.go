package node

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/wait"
)

// TestHistoryAndAlertsOnANode: a node serves its alerts and its history over REST, refuses a
// resolution it does not keep, and the points it sampled are there again after a restart on the
// same data.
func TestHistoryAndAlertsOnANode(t *testing.T) {
	cfg := testConfig(t)
	ticks := make(chan time.Time)
	n, stop := runNode(t, cfg, Options{HistoryTicks: ticks})

	if status, body := restGet(t, n, http.MethodGet, "/api/v2/node/alerts", "", true); status != http.StatusOK {
		t.Fatalf("GET /node/alerts: %d %s", status, body)
	} else if av := (api.AlertsView{}); json.Unmarshal([]byte(body), &av) != nil || av.Alerts == nil {
		t.Fatalf("GET /node/alerts: %s", body)
	}
	if status, body := restGet(t, n, http.MethodGet, "/api/v2/node/history?resolution=year", "", true); status != http.StatusBadRequest {
		t.Fatalf("GET /node/history?resolution=year: %d %s, want 400", status, body)
	}
	points := func(n *Node) int {
		status, body := restGet(t, n, http.MethodGet, "/api/v2/node/history?resolution=hour", "", true)
		var v api.HistoryView
		if status != http.StatusOK || json.Unmarshal([]byte(body), &v) != nil {
			t.Fatalf("GET /node/history: %d %s", status, body)
		}
		return len(v.Times)
	}
	if got := points(n); got != 0 {
		t.Fatalf("%d points before the first sample", got)
	}
	for range 2 {
		select {
		case ticks <- time.Now():
		case <-time.After(10 * time.Second):
			t.Fatal("the history took no tick within 10 s")
		}
	}
	var before int
	if !wait.Until(func() bool { before = points(n); return before > 0 }, 10*time.Second) {
		t.Fatal("no point in the hour's history after two samples")
	}
	stop()
	n2 := startNode(t, cfg)
	if got := points(n2); got != before {
		t.Fatalf("after a restart the hour's history holds %d points, want the %d from before", got, before)
	}
}
