package relayload

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/bench"
)

// Metric names read from a node's GET /api/v2/node/metrics.
const (
	metricCPU          = "process_cpu_seconds_total"
	metricReceived     = "relayd_relay_packets_received_total"
	metricForwarded    = "relayd_relay_packets_forwarded_total"
	metricDelivered    = "relayd_relay_packets_delivered_total"
	metricTicketsAcked = "relayd_relay_tickets_acknowledged_total"
	metricDropped      = "relayd_relay_packets_dropped_total"
	metricAcksDropped  = "relayd_relay_acks_dropped_total"
)

// Snapshot is one scrape of a node's counters.
type Snapshot struct {
	At           time.Time
	CPUSeconds   float64
	Received     float64
	Forwarded    float64
	Delivered    float64
	TicketsAcked float64
	// Dropped and AcksDropped are relayd_relay_packets_dropped_total and
	// relayd_relay_acks_dropped_total by their reason label.
	Dropped     map[string]float64
	AcksDropped map[string]float64
	// CPUBusy and CPUTotal are, when the run watches one CPU of this machine (Config.CPU), the
	// clock ticks that CPU had spent busy and in all (parseProcStat) at the time of the scrape.
	CPUBusy, CPUTotal float64
}

// DroppedTotal is the sum of Dropped over every reason.
func (s Snapshot) DroppedTotal() float64 {
	var n float64
	for _, v := range s.Dropped {
		n += v
	}
	return n
}

// ParseSnapshot reads the counters Snapshot holds from a Prometheus text exposition; a counter
// missing from the text reads as 0. at is the time of the scrape.
func ParseSnapshot(r io.Reader, at time.Time) (Snapshot, error) {
	s := Snapshot{At: at, Dropped: map[string]float64{}, AcksDropped: map[string]float64{}}
	fields := map[string]*float64{
		metricCPU: &s.CPUSeconds, metricReceived: &s.Received, metricForwarded: &s.Forwarded,
		metricDelivered: &s.Delivered, metricTicketsAcked: &s.TicketsAcked,
	}
	keep := func(name, _ string) bool {
		_, ok := fields[name]
		return ok || name == metricDropped || name == metricAcksDropped
	}
	err := bench.ScanSamples(r, keep, func(name, labels string, v float64) {
		switch name {
		case metricDropped:
			s.Dropped[labelValue(labels, "reason")] += v
		case metricAcksDropped:
			s.AcksDropped[labelValue(labels, "reason")] += v
		default:
			*fields[name] = v
		}
	})
	if err != nil {
		return Snapshot{}, err
	}
	return s, nil
}

// labelValue returns the value of label key in labels (the text after '{', e.g.
// `reason="mac"}`), or "" when absent.
func labelValue(labels, key string) string {
	labels = strings.TrimSuffix(labels, "}")
	for labels != "" {
		var kv string
		kv, labels, _ = strings.Cut(labels, ",")
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.TrimSpace(k) == key {
			if u, err := strconv.Unquote(strings.TrimSpace(v)); err == nil {
				return u
			}
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// ProcStatPath is the kernel's CPU time accounting file (Linux).
const ProcStatPath = "/proc/stat"

// parseProcStat returns, from a /proc/stat text, how many clock ticks CPU cpu spent busy (user,
// nice, system, irq, softirq, steal) and in all (busy, idle and iowait).
func parseProcStat(r io.Reader, cpu int) (busy, total float64, err error) {
	want := "cpu" + strconv.Itoa(cpu)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != want {
			continue
		}
		var v [8]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(f[i+1], 64); err != nil {
				return 0, 0, fmt.Errorf("%s: field %d: %w", want, i+1, err)
			}
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		busy = user + nice + system + irq + softirq + steal
		return busy, busy + idle + iowait, nil
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	return 0, 0, fmt.Errorf("no %s line", want)
}
