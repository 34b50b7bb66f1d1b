package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// maxPlotPoints bounds the points drawn; beyond it, samples are thinned
// evenly (percentile lines still use every sample).
const maxPlotPoints = 20000

// WriteSVG draws every delivered message's latency (ms) against its send
// time (s since the start) as an SVG image, with the p50 and p99 lines, and
// marks lost messages in red along the top edge.
func (r *Report) WriteSVG(w io.Writer) error {
	const (
		width, height          = 900.0, 480.0
		left, right, top, bott = 70.0, 20.0, 40.0, 50.0
	)
	pw, ph := width-left-right, height-top-bott

	var maxX, maxY float64
	for _, s := range r.Samples {
		maxX = max(maxX, s.SentAt.Seconds())
		if s.Delivered {
			maxY = max(maxY, durMs(s.Latency))
		}
	}
	maxX = niceCeil(max(maxX, 0.001))
	maxY = niceCeil(max(maxY, 1))
	x := func(v float64) float64 { return left + pw*v/maxX }
	y := func(v float64) float64 { return top + ph*(1-v/maxY) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	rate := "max rate"
	switch {
	case r.Patient != nil:
		rate = fmt.Sprintf("bursts of %g msg/s per sender", r.Patient.Rate)
	case r.Rate > 0:
		rate = fmt.Sprintf("%g msg/s", r.Rate)
	}
	fmt.Fprintf(&b, `<text x="%g" y="20" font-size="14">relayctl bench %s: %d sent, %d delivered, %d lost, %s; p50 %.1f ms, p99 %.1f ms</text>`+"\n",
		left, xmlEscape(r.RunID), r.Sent, r.Delivered, r.Lost, rate, r.Latency.P50Ms, r.Latency.P99Ms)
	// Axes and grid.
	for i := 0; i <= 5; i++ {
		vx, vy := maxX*float64(i)/5, maxY*float64(i)/5
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(vx), top, x(vx), top+ph)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(vy), left+pw, y(vy))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(vx), top+ph+18, trimFloat(vx))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(vy)+4, trimFloat(vy))
	}
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="black"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">send time (s since start)</text>`+"\n", left+pw/2, height-12)
	fmt.Fprintf(&b, `<text transform="translate(16 %g) rotate(-90)" text-anchor="middle">latency, send to delivery (ms)</text>`+"\n", top+ph/2)

	step := 1
	if n := len(r.Samples); n > maxPlotPoints {
		step = (n + maxPlotPoints - 1) / maxPlotPoints
	}
	b.WriteString(`<g fill="#1f77b4" fill-opacity="0.5">` + "\n")
	for i := 0; i < len(r.Samples); i += step {
		if s := r.Samples[i]; s.Delivered {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.5"/>`+"\n", x(s.SentAt.Seconds()), y(durMs(s.Latency)))
		}
	}
	b.WriteString("</g>\n")
	b.WriteString(`<g stroke="#d62728">` + "\n")
	for _, s := range r.Samples {
		if s.Accepted && !s.Delivered {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g"/>`+"\n", x(s.SentAt.Seconds()), top, x(s.SentAt.Seconds()), top+8)
		}
	}
	b.WriteString("</g>\n")
	for _, p := range []struct {
		name  string
		v     float64
		color string
	}{{"p50", r.Latency.P50Ms, "#2ca02c"}, {"p99", r.Latency.P99Ms, "#ff7f0e"}} {
		if r.Latency.Count == 0 {
			break
		}
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s" stroke-dasharray="6 3"/>`+"\n", left, y(p.v), left+pw, y(p.v), p.color)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" fill="%s" text-anchor="end">%s %.1f ms</text>`+"\n", left+pw-4, y(p.v)-4, p.color, p.name, p.v)
	}
	b.WriteString("</svg>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	return nil
}

func durMs(d time.Duration) float64 { return float64(d) / 1e6 }

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.3g", v), ".0") }

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
