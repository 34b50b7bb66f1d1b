package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// correspondents lists each sender's correspondent: "1→5 2→4".
func correspondents(senders []int, corr map[int]int) string {
	parts := make([]string, len(senders))
	for i, s := range senders {
		parts[i] = fmt.Sprintf("%d→%d", s, corr[s])
	}
	return strings.Join(parts, " ")
}

// WriteTable writes the report for people: the counts, one line per
// recipient, the rates, the latency percentiles and one row per node.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	rate := "as fast as the API accepts"
	switch {
	case r.Patient != nil:
		p := r.Patient
		rate = fmt.Sprintf("each sender to one correspondent (%s) in bursts of %g msg/s (mean on %v, off %v, seed %d)",
			correspondents(r.Senders, r.Correspondents), p.Rate, p.On, p.Off, p.Seed)
	case r.Rate > 0:
		rate = fmt.Sprintf("%g msg/s", r.Rate)
	}
	to := "node " + joinInts(r.Recipients)
	if len(r.Recipients) > 1 {
		to = "nodes " + joinInts(r.Recipients)
	}
	fmt.Fprintf(&b, "run %s: %d messages of %d bytes from node(s) %s to %s, rate %s, concurrency %d\n\n",
		r.RunID, r.Messages, r.Size, joinInts(r.Senders), to, rate, r.Concurrency)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "sent (API accepted)\t%d\n", r.Sent)
	fmt.Fprintf(tw, "rejected\t%d\n", r.Rejected)
	for _, k := range sortedKeys(r.Rejections) {
		fmt.Fprintf(tw, "  %s\t%d\n", k, r.Rejections[k])
	}
	if r.NotSent > 0 {
		fmt.Fprintf(tw, "not sent (time or stop)\t%d\n", r.NotSent)
	}
	fmt.Fprintf(tw, "delivered\t%d\n", r.Delivered)
	fmt.Fprintf(tw, "lost (accepted, not delivered)\t%d\n", r.Lost)
	fmt.Fprintf(tw, "delivery ratio\t%.4f %%\n", 100*r.DeliveryRatio)
	if r.Unexpected > 0 {
		fmt.Fprintf(tw, "delivered though not accepted\t%d\n", r.Unexpected)
	}
	if r.Misrouted > 0 {
		fmt.Fprintf(tw, "MISROUTED (arrived at another recipient)\t%d\n", r.Misrouted)
	}

	if r.Duplicates > 0 || r.WSReconnects > 0 {
		fmt.Fprintf(tw, "duplicates / WS reconnects\t%d / %d\n", r.Duplicates, r.WSReconnects)
	}
	fmt.Fprintf(tw, "sent/s\t%.1f\t(%d in %.2f s)\n", r.SentPerSecond, r.Sent, r.SendSeconds)
	fmt.Fprintf(tw, "delivered/s\t%.1f\t(%d in %.2f s)\n", r.DeliveredPerSecond, r.Delivered, r.DeliverSeconds)
	tw.Flush()
	if r.Churn != nil {
		fmt.Fprintf(&b, "churn: %s\n", r.Churn)
	}

	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "recipient\tattempted\tsent\trejected\tdelivered\tlost\tmisrouted\t")
	for _, p := range r.PerRecipient {
		fmt.Fprintf(tw, "node %d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", p.Node, p.Attempted, p.Sent, p.Rejected, p.Delivered, p.Lost, p.Misrouted)
	}
	tw.Flush()

	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "latency (ms)\tcount\tp50\tp90\tp99\tmax\tmean\t")
	for _, row := range []struct {
		name string
		s    Summary
	}{{"send → WS frame", r.Latency}, {"node's Latency line", r.NodeLatency}, {"API answer", r.APILatency}} {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", row.name, row.s.Count, row.s.P50Ms, row.s.P90Ms, row.s.P99Ms, row.s.MaxMs, row.s.MeanMs)
	}
	tw.Flush()

	fmt.Fprintf(&b, "\nnodes (over %.2f s)\n", r.TotalSeconds)
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "node\trole\tCPU s\tCPU % of a core\tpeak RSS MB\tend RSS MB\tscrapes\t")
	for _, n := range r.Nodes {
		fmt.Fprintf(tw, "%d\t%s\t%.2f\t%.0f\t%.1f\t%.1f\t%d\t\n", n.Node, n.Role, n.CPUSeconds, n.CPUPercent,
			float64(n.PeakRSSBytes)/1e6, float64(n.EndRSSBytes)/1e6, n.Scrapes)
	}
	tw.Flush()
	fmt.Fprintf(&b, "this tool: %.2f CPU s", r.ToolCPUSeconds)
	if r.HostBusyPercent >= 0 {
		fmt.Fprintf(&b, "; the machine's CPUs were %.0f %% busy (all processes)", r.HostBusyPercent)
	}
	b.WriteString("\n")
	if r.Cost != nil {
		r.Cost.writeTable(&b)
	}
	for _, n := range r.Nodes {
		if n.ScrapeErrors > 0 {
			fmt.Fprintf(&b, "node %d: %d metric scrapes failed, last: %s\n", n.Node, n.ScrapeErrors, n.LastError)
		}
	}

	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
