package bench

import (
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, c := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p90 of 1..100", ms(hundred...), 90, 90 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 of 1..100", ms(hundred...), 100, 100 * time.Millisecond},
		{"p50 of 4", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p51 of 4", ms(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{"p99 of 10", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"tiny p is the minimum", ms(5, 6), 0.001, 5 * time.Millisecond},
	} {
		if got := Percentile(c.sorted, c.p); got != c.want {
			t.Errorf("%s: Percentile(%g) = %v, want %v", c.name, c.p, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	ds := []time.Duration{4 * time.Millisecond, 1 * time.Millisecond, 3 * time.Millisecond, 2*time.Millisecond + 500*time.Microsecond}
	s := Summarize(ds)
	want := Summary{Count: 4, MinMs: 1, MeanMs: 2.625, P50Ms: 2.5, P90Ms: 4, P99Ms: 4, MaxMs: 4}
	if s != want {
		t.Fatalf("Summarize = %+v, want %+v", s, want)
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("summary of nothing is not zero")
	}
}

func TestMessageText(t *testing.T) {
	for _, size := range []int{1, 20, 100, 500} {
		text := MessageText("ab12cd34", 4711, size)
		if size >= 20 && len(text) != size {
			t.Fatalf("size %d: len %d", size, len(text))
		}
		run, seq, ok := ParseMessageText(text)
		if !ok || run != "ab12cd34" || seq != 4711 {
			t.Fatalf("size %d: parse %q = %q %d %v", size, text, run, seq, ok)
		}
	}
	for _, bad := range []string{"", "hello", "bench:", "bench:run", "bench:run:12", "bench::1:", "bench:run:x:", "bench:run:-1:", "bench:run:007:"} {
		if _, _, ok := ParseMessageText(bad); ok {
			t.Errorf("ParseMessageText(%q) ok", bad)
		}
	}
}

func TestParseNodeLatency(t *testing.T) {
	if d, ok := parseNodeLatency("Latency: 12 ms"); !ok || d != 12*time.Millisecond {
		t.Fatalf("got %v %v", d, ok)
	}
	for _, bad := range []string{"Latency: 12", "Latency: x ms", "latency: 1 ms", "Message: Latency: 1 ms"} {
		if _, ok := parseNodeLatency(bad); ok {
			t.Errorf("parseNodeLatency(%q) ok", bad)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	a, err := parseProcStat(strings.NewReader("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n"))
	if err != nil || !a.ok || a.busy != 150 || a.total != 1000 {
		t.Fatalf("%+v %v", a, err)
	}
	b, _ := parseProcStat(strings.NewReader("cpu  200 0 100 850 50 0 0 0 0 0\n"))
	if got := busyPercent(a, b); got != 75 {
		t.Fatalf("busy %v, want 75", got)
	}
	if got := busyPercent(hostCPU{}, b); got != -1 {
		t.Fatalf("unknown busy %v", got)
	}
	if _, err := parseProcStat(strings.NewReader("intr 1 2\n")); err == nil {
		t.Fatal("no cpu line accepted")
	}
}
