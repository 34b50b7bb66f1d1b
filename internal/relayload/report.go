package relayload

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Report is what a run measured. Rates and CPU are over Window: from the relayer's scrape just
// before the first frame was pushed to its first scrape by which its forwarded counter had
// stopped growing. Counts that lag behind forwarding (drops, acknowledged tickets, deliveries)
// are over the whole run, up to the last scrape.
type Report struct {
	Pushed         int           // frames G queued for the relayer
	PushTime       time.Duration // from the first frame queued to the last
	QueueFullWaits int           // times G's outbound queue was full and G waited

	Window          time.Duration
	Forwarded       float64 // packets the relayer forwarded in Window
	ForwardedPerSec float64
	PeakPerSec      float64 // the best rate over any span of at least a second between scrapes
	RelayerCPU      float64 // seconds of the relayer's CPU in Window
	CPUPercent      float64 // RelayerCPU over Window, in % of one core
	MicrosPerPacket float64 // RelayerCPU per forwarded packet, in µs (0 without packets)
	// HostCPUPercent is how busy the watched CPU (Config.CPU) was in Window, in %, with every
	// process on it: what is above CPUPercent went to others. -1 when not watched.
	HostCPUPercent float64

	Received     float64            // msg frames the relayer received, whole run
	Dropped      map[string]float64 // packets the relayer dropped, by reason (non-zero only)
	AcksDropped  map[string]float64 // acknowledgements the relayer dropped, by reason
	TicketsAcked float64            // G's tickets the relayer recorded as acknowledged
	Delivered    float64            // packets delivered at the recipient
	// RecipientCPU is the recipient's CPU in seconds over the whole run, and
	// RecipientMicrosPerPacket that per packet it acknowledged (TicketsAcked): on a machine whose
	// cores the relayer shares, what the rest of the path takes from it.
	RecipientCPU             float64
	RecipientMicrosPerPacket float64
	// GeneratorCPU is G's own CPU (this process, user and system) in seconds while it pushed.
	GeneratorCPU float64
	AcksReceived int64 // acknowledgements G received from the relayer

	// Timeline is the run scrape by scrape, up to the end of Window.
	Timeline []Interval
}

// Interval is what the relayer did between two consecutive scrapes.
type Interval struct {
	Start           time.Duration // since the first scrape
	Length          time.Duration
	ForwardedPerSec float64
	Dropped         float64 // packets dropped, every reason
	AcksDropped     float64
	CPUPercent      float64 // the relayer's CPU, in % of one core
	HostCPUPercent  float64 // the watched CPU's, -1 when not watched
}

// Compute builds a Report from the relayer's scrapes (in time order, the first taken just
// before the push, at least two) and the recipient's first and last scrapes.
func Compute(relayer []Snapshot, recipientStart, recipientEnd Snapshot, pushed int, pushTime time.Duration,
	queueFullWaits int, acks int64) (Report, error) {
	if len(relayer) < 2 {
		return Report{}, fmt.Errorf("need at least 2 scrapes of the relayer, have %d", len(relayer))
	}
	first, last := relayer[0], relayer[len(relayer)-1]
	// The window ends at the first scrape that shows the final forwarded count.
	end := len(relayer) - 1
	for end > 1 && relayer[end-1].Forwarded >= last.Forwarded {
		end--
	}
	w := relayer[end]
	r := Report{
		Pushed: pushed, PushTime: pushTime, QueueFullWaits: queueFullWaits,
		Window:       w.At.Sub(first.At),
		Forwarded:    w.Forwarded - first.Forwarded,
		RelayerCPU:   w.CPUSeconds - first.CPUSeconds,
		Received:     last.Received - first.Received,
		Dropped:      diff(first.Dropped, last.Dropped),
		AcksDropped:  diff(first.AcksDropped, last.AcksDropped),
		TicketsAcked: last.TicketsAcked - first.TicketsAcked,
		Delivered:    recipientEnd.Delivered - recipientStart.Delivered,
		AcksReceived: acks,
	}
	if s := r.Window.Seconds(); s > 0 {
		r.ForwardedPerSec = r.Forwarded / s
		r.CPUPercent = 100 * r.RelayerCPU / s
	}
	r.HostCPUPercent = -1
	if t := w.CPUTotal - first.CPUTotal; t > 0 {
		r.HostCPUPercent = 100 * (w.CPUBusy - first.CPUBusy) / t
	}
	if r.Forwarded > 0 {
		r.MicrosPerPacket = 1e6 * r.RelayerCPU / r.Forwarded
	}
	r.RecipientCPU = recipientEnd.CPUSeconds - recipientStart.CPUSeconds
	if r.TicketsAcked > 0 {
		r.RecipientMicrosPerPacket = 1e6 * r.RecipientCPU / r.TicketsAcked
	}
	r.PeakPerSec = peakRate(relayer[:end+1], time.Second)
	for i := 1; i <= end; i++ {
		a, b := relayer[i-1], relayer[i]
		d := b.At.Sub(a.At)
		if d <= 0 {
			continue
		}
		iv := Interval{Start: a.At.Sub(first.At), Length: d, ForwardedPerSec: (b.Forwarded - a.Forwarded) / d.Seconds(),
			Dropped: b.DroppedTotal() - a.DroppedTotal(), AcksDropped: sum(b.AcksDropped) - sum(a.AcksDropped),
			CPUPercent: 100 * (b.CPUSeconds - a.CPUSeconds) / d.Seconds(), HostCPUPercent: -1}
		if t := b.CPUTotal - a.CPUTotal; t > 0 {
			iv.HostCPUPercent = 100 * (b.CPUBusy - a.CPUBusy) / t
		}
		r.Timeline = append(r.Timeline, iv)
	}
	return r, nil
}

// peakRate is the highest forwarded rate between two scrapes at least span apart, taking for
// each scrape the nearest later one that is.
func peakRate(s []Snapshot, span time.Duration) float64 {
	var best float64
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			d := s[j].At.Sub(s[i].At)
			if d < span {
				continue
			}
			best = max(best, (s[j].Forwarded-s[i].Forwarded)/d.Seconds())
			break
		}
	}
	return best
}

func sum(m map[string]float64) float64 {
	var n float64
	for _, v := range m {
		n += v
	}
	return n
}

// diff returns b - a per key, keeping only the keys that changed.
func diff(a, b map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Write prints r for a person.
func (r Report) Write(w io.Writer) {
	fmt.Fprintf(w, "pushed            %d paid packets in %.2f s (%.0f/s offered; G's queue full %d times)\n",
		r.Pushed, r.PushTime.Seconds(), rate(float64(r.Pushed), r.PushTime), r.QueueFullWaits)
	fmt.Fprintf(w, "relayer received  %.0f msg frames\n", r.Received)
	fmt.Fprintf(w, "relayer forwarded %.0f in %.2f s: %.0f packets/s (best 1 s: %.0f/s)\n",
		r.Forwarded, r.Window.Seconds(), r.ForwardedPerSec, r.PeakPerSec)
	fmt.Fprintf(w, "relayer CPU       %.2f s: %.1f %% of one core, %.1f µs per forwarded packet\n",
		r.RelayerCPU, r.CPUPercent, r.MicrosPerPacket)
	if r.HostCPUPercent >= 0 {
		fmt.Fprintf(w, "relayer's core    %.1f %% busy in all (%.1f %% for other processes)\n",
			r.HostCPUPercent, max(r.HostCPUPercent-r.CPUPercent, 0))
	}
	if r.MicrosPerPacket > 0 {
		fmt.Fprintf(w, "at that cost      one core would forward %.0f packets/s\n", 1e6/r.MicrosPerPacket)
	}
	fmt.Fprintf(w, "relayer dropped   %s\n", formatCounts(r.Dropped))
	fmt.Fprintf(w, "relayer dropped acknowledgements %s\n", formatCounts(r.AcksDropped))
	fmt.Fprintf(w, "relayer acknowledged tickets from G: %.0f\n", r.TicketsAcked)
	fmt.Fprintf(w, "recipient delivered %.0f; its CPU %.2f s: %.1f µs per packet it acknowledged\n", r.Delivered,
		r.RecipientCPU, r.RecipientMicrosPerPacket)
	if r.Pushed > 0 {
		fmt.Fprintf(w, "G's CPU           %.2f s while it pushed: %.1f µs per pushed packet\n", r.GeneratorCPU,
			1e6*r.GeneratorCPU/float64(r.Pushed))
	}
	fmt.Fprintf(w, "G received %d acknowledgements\n", r.AcksReceived)
}

// WriteTimeline prints r.Timeline, one line per interval.
func (r Report) WriteTimeline(w io.Writer) {
	fmt.Fprintf(w, "%8s %8s %12s %9s %9s %11s %10s\n", "start s", "length s", "forwarded/s", "dropped", "acks drop", "relayer CPU", "core busy")
	for _, iv := range r.Timeline {
		host := "-"
		if iv.HostCPUPercent >= 0 {
			host = fmt.Sprintf("%.0f %%", iv.HostCPUPercent)
		}
		fmt.Fprintf(w, "%8.2f %8.2f %12.0f %9.0f %9.0f %9.0f %% %10s\n", iv.Start.Seconds(), iv.Length.Seconds(),
			iv.ForwardedPerSec, iv.Dropped, iv.AcksDropped, iv.CPUPercent, host)
	}
}

func rate(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}

// formatCounts renders a by-reason map as "reason=n, …" in reason order, or "none".
func formatCounts(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%.0f", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
