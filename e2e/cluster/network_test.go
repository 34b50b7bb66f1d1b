package cluster_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/bench"
)

// TestSparseNetworkUnderChurn (root only) is the short form of the network run in BENCHMARKS.md:
// 10 nodes, each on a host of its own (--netns), open their channels by their promiscuous
// strategies; then, while nodes 3 to 8 are killed with SIGKILL and restarted (one every 15 s,
// down 5 s), nodes 1 and 2 send paid messages to nodes 9 and 10 for 45 s. At least 95 % of the
// messages the API accepted arrive, and no node lost an acknowledged ticket across a restart.
func TestSparseNetworkUnderChurn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relayd and runs ten node processes for a minute")
	}
	if os.Geteuid() != 0 {
		t.Skip("relayd cluster --netns creates network namespaces: needs root")
	}
	c := startCluster(t, "--netns", "--nodes", "10", "--topology", "sparse", "--maxChannels", "3",
		"--churn", "0.15", "--churnInterval", "15s", "--churnDowntime", "5s", "--churnExclude", "1,2,9,10")
	if !strings.Contains(c.output.String(), "opened 3 channels of") {
		t.Fatalf("the nodes did not open their channels by strategy:\n%s", c.output.String())
	}
	env, err := bench.LoadEnv(c.envPath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(t.Context(), bench.Config{
		Env: env, Senders: []int{1, 2}, Recipients: []int{9, 10},
		Messages: 900, Rate: 20, Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sent %d, rejected %d %v, delivered %d (%.2f %%), p50 %.1f ms, p99 %.1f ms",
		rep.Sent, rep.Rejected, rep.Rejections, rep.Delivered, 100*rep.DeliveryRatio, rep.Latency.P50Ms, rep.Latency.P99Ms)
	if rep.Sent < rep.Attempted*9/10 {
		t.Errorf("the API accepted only %d of %d messages: %v", rep.Sent, rep.Attempted, rep.Rejections)
	}
	if rep.DeliveryRatio < 0.95 || rep.Misrouted != 0 {
		t.Errorf("delivered %d of %d accepted (%.2f %%), misrouted %d; want ≥ 95 %%", rep.Delivered, rep.Sent, 100*rep.DeliveryRatio, rep.Misrouted)
	}
	if err, _ := c.stop(60 * time.Second); err != nil {
		t.Fatalf("relayd cluster exited with %v:\n%s", err, c.output.String())
	}
	m := regexp.MustCompile(`churn: (\d+) kills; acknowledged tickets kept on (\d+) restarts, lost on (\d+), not checked on (\d+)`).FindStringSubmatch(c.output.String())
	if m == nil {
		t.Fatalf("no churn summary:\n%s", c.output.String())
	}
	kills, _ := strconv.Atoi(m[1])
	if kills < 3 || m[3] != "0" || m[4] != "0" {
		t.Fatalf("churn: %s kills (want at least 3), tickets lost on %s restarts, not checked on %s:\n%s", m[1], m[3], m[4], c.output.String())
	}
	t.Logf("churn: %s kills, tickets kept on %s restarts", m[1], m[2])

	// Messages that travelled while every node was up cannot have met a killed node: nearly all
	// of them arrive.
	f, err := os.Open(filepath.Join(c.dataDir, "churn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	windows, err := bench.ReadChurnLog(f, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	split := bench.SplitByChurn(rep, windows, 2*time.Second)
	t.Logf("churn split: %s", split)
	if split.Clear < 100 || float64(split.ClearDelivered) < 0.99*float64(split.Clear) {
		t.Fatalf("of the messages sent while every node was up, %d of %d arrived; want ≥ 99 %%", split.ClearDelivered, split.Clear)
	}
}
