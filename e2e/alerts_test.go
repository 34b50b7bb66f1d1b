package e2e

import (
	"encoding/json"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The Prometheus alerting rules and the Grafana dashboard the project ships (docs/COCKPIT.md).
// e2e/cluster/dashboard_test.go checks that every metric they name exists on a running node.
const (
	alertRules     = "../packaging/prometheus/relayd-alerts.yml"
	alertRuleTests = "../packaging/prometheus/relayd-alerts.test.yml"
	dashboardFile  = "../packaging/grafana/relayd-dashboard.json"
)

// findPromtool returns promtool: on PATH, or in $GOBIN or $GOPATH/bin where scripts/setup.sh
// installs it. Without one the test is skipped, unless RELAYD_REQUIRE_PROMTOOL=1 (CI sets it in
// .ci/run), which fails it.
func findPromtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		gopath = build.Default.GOPATH
	}
	candidates := []string{filepath.Join(gopath, "bin", "promtool")}
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		candidates = append([]string{filepath.Join(gobin, "promtool")}, candidates...)
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if os.Getenv("RELAYD_REQUIRE_PROMTOOL") == "1" {
		t.Fatal("promtool not found on PATH, in $GOBIN or in $GOPATH/bin, and RELAYD_REQUIRE_PROMTOOL=1: run scripts/setup.sh")
	}
	t.Skip("promtool not installed (scripts/setup.sh installs it; RELAYD_REQUIRE_PROMTOOL=1 makes this a failure)")
	return ""
}

func promtool(t *testing.T, bin string, args ...string) {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestAlertRules runs `promtool check rules` on the shipped alerting rules and `promtool test
// rules` on their unit tests (each alert fires on its condition after its `for:` and not on
// healthy series).
func TestAlertRules(t *testing.T) {
	bin := findPromtool(t)
	promtool(t, bin, "check", "rules", alertRules)
	promtool(t, bin, "test", "rules", alertRuleTests)
}

// TestDashboardQueries checks that every query of the Grafana dashboard is PromQL that parses,
// with Grafana's variables replaced by values: promtool checks them as the expressions of
// recording rules. It fails, too, when the dashboard has no query or no datasource variable.
func TestDashboardQueries(t *testing.T) {
	bin := findPromtool(t)
	queries, variables := dashboardQueries(t)
	if len(queries) < 20 {
		t.Fatalf("the dashboard has %d queries: not read right?", len(queries))
	}
	if !variables["datasource"] {
		t.Error("the dashboard has no datasource template variable")
	}
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	grafana := strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h", "$instance", ".*", "${instance}", ".*")
	for i, q := range queries {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard_query_%d", i), Expr: grafana.Replace(q)})
	}
	doc := map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, bin, "check", "rules", path)
}

// dashboardQueries returns the PromQL of every panel target and query variable of the
// dashboard, and the names of its template variables.
func dashboardQueries(t *testing.T) (queries []string, variables map[string]bool) {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("a %s panel without a query", p.Type)
		}
		for _, tg := range p.Targets {
			queries = append(queries, tg.Expr)
		}
	}
	variables = map[string]bool{}
	for _, v := range dash.Templating.List {
		variables[v.Name] = true
		if v.Type == "query" {
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &q); err != nil {
				t.Fatalf("variable %s: %v", v.Name, err)
			}
			// label_values(metric, label) is Grafana's, not PromQL: its metric is what to check.
			if m, ok := strings.CutPrefix(q.Query, "label_values("); ok {
				m, _, _ = strings.Cut(m, ",")
				queries = append(queries, m)
			}
		}
	}
	return queries, variables
}
