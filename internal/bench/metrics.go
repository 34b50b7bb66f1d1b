package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric names read from GET /api/v2/node/metrics.
const (
	metricCPU = "process_cpu_seconds_total"
	metricRSS = "process_resident_memory_bytes"
	// The relay's packet counters, to divide a node's CPU by the packets it handled in its
	// role: messages it sent (cover loops included), packets it forwarded as a relayer,
	// packets delivered to it.
	metricSent      = "relayd_relay_packets_sent_total"
	metricForwarded = "relayd_relay_packets_forwarded_total"
	metricDelivered = "relayd_relay_packets_delivered_total"
)

// packetMetrics are the counters read besides CPU and RSS; a node without them (an older
// build) still gets its CPU and memory reported.
var packetMetrics = []string{metricSent, metricForwarded, metricDelivered}

// ParseMetrics returns the values of the unlabelled samples named in names
// from a Prometheus text exposition; names missing from the text are
// missing from the map.
func ParseMetrics(r io.Reader, names ...string) (map[string]float64, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	err := ScanSamples(r, func(name, labels string) bool { return labels == "" && want[name] },
		func(name, _ string, v float64) { out[name] = v })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ScanSamples reads a Prometheus text exposition (format 0.0.4, whose last line ends with a
// newline) and calls got with every sample whose name and labels keep accepts: family by family
// in the order of their names, within a family in the order of the text. labels is the
// sample's label set as the text format writes it between the braces, sorted by name
// (`reason="mac",x="1"`; "" for none). A histogram or summary gives a sample per line of its
// exposition (name_bucket with le, plus an le="+Inf" bucket if the text has none; name with
// quantile; name_sum; name_count). Timestamps are dropped. Text that does not parse is an
// error, whether or not keep would have kept its samples.
func ScanSamples(r io.Reader, keep func(name, labels string) bool, got func(name, labels string, v float64)) error {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return fmt.Errorf("read metrics: %w", err)
	}
	for _, family := range slices.Sorted(maps.Keys(families)) {
		samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, families[family])
		if err != nil {
			return fmt.Errorf("metric %s: %w", family, err)
		}
		for _, s := range samples {
			name, labels := string(s.Metric[model.MetricNameLabel]), labelText(s.Metric)
			if keep(name, labels) {
				got(name, labels, float64(s.Value))
			}
		}
	}
	return nil
}

// labelText writes the labels of m but its name as the text format writes them between the
// braces: sorted by name, a name outside the legacy character set quoted.
func labelText(m model.Metric) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if name == model.MetricNameLabel {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if model.LegacyValidation.IsValidLabelName(string(name)) {
			b.WriteString(string(name))
		} else {
			b.WriteByte('"')
			textEscaper.WriteString(&b, string(name))
			b.WriteByte('"')
		}
		b.WriteString(`="`)
		textEscaper.WriteString(&b, string(m[name]))
		b.WriteByte('"')
	}
	return b.String()
}

// textEscaper escapes a quoted name or label value as the text format does.
var textEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// NodeUsage is what one node spent during a run, from its process metrics.
type NodeUsage struct {
	Node         int     `json:"node"`
	Role         string  `json:"role"`       // sender, recipient or relayer
	CPUSeconds   float64 `json:"cpuSeconds"` // process CPU (user+system) used between the first and last scrape
	CPUPercent   float64 `json:"cpuPercent"` // CPUSeconds over the run's wall time, in % of one core
	PeakRSSBytes int64   `json:"peakRssBytes"`
	EndRSSBytes  int64   `json:"endRssBytes"`
	Scrapes      int     `json:"scrapes"`
	ScrapeErrors int     `json:"scrapeErrors"`
	LastError    string  `json:"lastError,omitempty"`
	// PacketsSent, PacketsForwarded and PacketsDelivered are the node's relay counters over
	// the same scrapes as CPUSeconds; -1 when its metrics do not have them.
	PacketsSent      float64 `json:"packetsSent"`
	PacketsForwarded float64 `json:"packetsForwarded"`
	PacketsDelivered float64 `json:"packetsDelivered"`
}

// usage accumulates the scrapes of one node.
type usage struct {
	mu       sync.Mutex
	node     Node
	firstCPU float64
	lastCPU  float64
	// first and last values of packetMetrics, by name; a name is missing when a scrape lacked it.
	first, last map[string]float64
	peakRSS     float64
	lastRSS     float64
	ok, errs    int
	lastErr     string
}

// scrape reads the node's metrics once.
func (u *usage) scrape(ctx context.Context, c *http.Client, token string) {
	vals, err := fetchMetrics(ctx, c, u.node.APIURL, token)
	if err != nil && ctx.Err() != nil {
		return // the run ended during the scrape: not the node's failure
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		u.errs++
		u.lastErr = err.Error()
		return
	}
	cpu, okCPU := vals[metricCPU]
	rss, okRSS := vals[metricRSS]
	if !okCPU || !okRSS {
		u.errs++
		u.lastErr = "the metrics have no " + metricCPU + " or " + metricRSS
		return
	}
	if u.ok == 0 {
		u.firstCPU = cpu
		u.first = map[string]float64{}
		for _, name := range packetMetrics {
			if v, ok := vals[name]; ok {
				u.first[name] = v
			}
		}
	}
	u.last = map[string]float64{}
	for _, name := range packetMetrics {
		if v, ok := vals[name]; ok {
			u.last[name] = v
		}
	}
	u.ok++
	u.lastCPU, u.lastRSS = cpu, rss
	u.peakRSS = max(u.peakRSS, rss)
}

func (u *usage) result(role string, wallSeconds float64) NodeUsage {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := NodeUsage{Node: u.node.Index, Role: role, CPUSeconds: u.lastCPU - u.firstCPU,
		PeakRSSBytes: int64(u.peakRSS), EndRSSBytes: int64(u.lastRSS), Scrapes: u.ok, ScrapeErrors: u.errs, LastError: u.lastErr}
	if wallSeconds > 0 {
		r.CPUPercent = 100 * r.CPUSeconds / wallSeconds
	}
	r.PacketsSent, r.PacketsForwarded, r.PacketsDelivered = u.delta(metricSent), u.delta(metricForwarded), u.delta(metricDelivered)
	return r
}

// delta is how much counter name grew between the first and the last scrape, -1 when either
// lacked it.
func (u *usage) delta(name string) float64 {
	a, okA := u.first[name]
	b, okB := u.last[name]
	if !okA || !okB {
		return -1
	}
	return b - a
}

func fetchMetrics(ctx context.Context, c *http.Client, apiURL, token string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/api/v2/node/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("metrics request: %w", err)
	}
	req.Header.Set("x-auth-token", token)
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", apiURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil, fmt.Errorf("scrape %s: HTTP %d", apiURL, resp.StatusCode)
	}
	return ParseMetrics(io.LimitReader(resp.Body, 8<<20), append([]string{metricCPU, metricRSS}, packetMetrics...)...)
}
