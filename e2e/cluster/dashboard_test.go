package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/relayd/relayd/internal/wait"
)

// The files whose metric names must exist (docs/COCKPIT.md); e2e/alerts_test.go checks them with
// promtool.
var dashboardFiles = []string{
	"../../packaging/prometheus/relayd-alerts.yml",
	"../../packaging/grafana/relayd-dashboard.json",
}

// metricName is a relayd metric name wherever it stands: in PromQL, a legend or a description.
var metricName = regexp.MustCompile(`\brelayd_[a-z0-9_]+`)

// referencedMetrics returns every relayd metric name the files name, each with the files that
// name it.
func referencedMetrics(t *testing.T, files ...string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range metricName.FindAllString(string(raw), -1) {
			if !slices.Contains(out[name], f) {
				out[name] = append(out[name], f)
			}
		}
	}
	return out
}

// exposed returns the metric families n exposes now, by name.
func (c *testCluster) exposed(ctx context.Context, n node) (map[string]*dto.MetricFamily, error) {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.apiURL+"/api/v2/node/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Auth-Token", c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// missing returns the names in want that families lack: a name exists as a family, or as the
// _bucket, _sum or _count series of a histogram (or the _sum and _count of a summary).
func missing(want map[string][]string, families map[string]*dto.MetricFamily) []string {
	var out []string
	for name := range want {
		if _, ok := families[name]; ok {
			continue
		}
		found := false
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			base, ok := strings.CutSuffix(name, suffix)
			if !ok {
				continue
			}
			if f, ok := families[base]; ok {
				typ := f.GetType()
				found = typ == dto.MetricType_HISTOGRAM || (typ == dto.MetricType_SUMMARY && suffix != "_bucket")
			}
		}
		if !found {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func TestMissingMetricNames(t *testing.T) {
	families := map[string]*dto.MetricFamily{
		"relayd_a":         {Type: dto.MetricType_COUNTER.Enum()},
		"relayd_h_seconds": {Type: dto.MetricType_HISTOGRAM.Enum()},
		"relayd_s_seconds": {Type: dto.MetricType_SUMMARY.Enum()},
	}
	want := map[string][]string{"relayd_a": nil, "relayd_h_seconds_bucket": nil, "relayd_h_seconds_count": nil,
		"relayd_s_seconds_sum": nil, "relayd_s_seconds_bucket": nil, "relayd_a_count": nil, "relayd_b": nil}
	if got := missing(want, families); !slices.Equal(got, []string{"relayd_a_count", "relayd_b", "relayd_s_seconds_bucket"}) {
		t.Errorf("missing = %v", got)
	}
	refs := referencedMetrics(t, dashboardFiles...)
	for _, name := range []string{"relayd_chain_provider_up", "relayd_channel_available_tokens", "relayd_p2p_peer_quality"} {
		if len(refs[name]) == 0 {
			t.Errorf("the rules and the dashboard do not name %s: not read right?", name)
		}
	}
}

// TestDashboardMetricsExist starts a cluster of four nodes (the fewest it starts) (channels between them, no traffic
// yet) and checks that every metric the shipped alert rules and Grafana dashboard name exists on
// each node's GET /node/metrics: a metric that exists only after some traffic would leave a panel
// or an alert empty on a quiet node.
func TestDashboardMetricsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test; skipped with -short")
	}
	want := referencedMetrics(t, dashboardFiles...)
	if len(want) < 30 {
		t.Fatalf("the rules and the dashboard name %d relayd metrics: not read right?", len(want))
	}
	c := startCluster(t, "--nodes", "4")
	for _, n := range c.nodes {
		var lack []string
		// Counters and gauges are exposed from the start, but the collectors that read the chain
		// answer once the node has read it: wait (bounded) until nothing is missing.
		wait.Until(func() bool {
			families, err := c.exposed(t.Context(), n)
			if err != nil {
				t.Logf("metrics of node %d: %v", n.index, err)
				lack = []string{"(no metrics)"}
				return false
			}
			lack = missing(want, families)
			return len(lack) == 0
		}, waitTimeout)
		for _, name := range lack {
			t.Errorf("node %d lacks %s, which %s name", n.index, name, strings.Join(want[name], " and "))
		}
	}
}
