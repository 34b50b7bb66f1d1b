package bench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 < p ≤ 100) of sorted by the
// nearest-rank method: the smallest value such that at least p % of the
// values are less than or equal to it. It returns 0 for an empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Summary describes a set of latencies in milliseconds.
type Summary struct {
	Count  int     `json:"count"`
	MinMs  float64 `json:"minMs"`
	MeanMs float64 `json:"meanMs"`
	P50Ms  float64 `json:"p50Ms"`
	P90Ms  float64 `json:"p90Ms"`
	P99Ms  float64 `json:"p99Ms"`
	MaxMs  float64 `json:"maxMs"`
}

// Summarize sorts ds in place and returns their summary.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	slices.Sort(ds)
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return Summary{
		Count:  len(ds),
		MinMs:  ms(ds[0]),
		MeanMs: ms(sum / time.Duration(len(ds))),
		P50Ms:  ms(Percentile(ds, 50)),
		P90Ms:  ms(Percentile(ds, 90)),
		P99Ms:  ms(Percentile(ds, 99)),
		MaxMs:  ms(ds[len(ds)-1]),
	}
}

// ms converts d to milliseconds, rounded to the microsecond.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
