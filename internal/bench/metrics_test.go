package bench

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
process_cpu_seconds_total_other 3
process_resident_memory_bytes 8.4e+07 1700000000000
relayd_message_latency_seconds_bucket{le="0.005"} 3
`
	m, err := ParseMetrics(strings.NewReader(text), metricCPU, metricRSS, "absent")
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m[metricCPU] != 12.5 || m[metricRSS] != 84e6 {
		t.Fatalf("metrics %v", m)
	}
	if _, err := ParseMetrics(strings.NewReader("process_cpu_seconds_total NaNx\n"), metricCPU); err == nil {
		t.Fatal("bad value accepted")
	}
}

// scanAll returns every sample of text as "name|labels|value".
func scanAll(text string) ([]string, error) {
	var got []string
	err := ScanSamples(strings.NewReader(text), func(string, string) bool { return true }, func(name, labels string, v float64) {
		got = append(got, fmt.Sprintf("%s|%s|%g", name, labels, v))
	})
	return got, err
}

// TestScanSamples: every kind of sample reaches the callback with its name and its labels as the
// text format writes them (sorted by name), comments and timestamps are skipped, and families
// come in the order of their names.
func TestScanSamples(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		want []string
	}{
		{"empty", "", nil},
		{"comments and blank lines", "# HELP a x\n# just a comment\n\n# TYPE a gauge\n", nil},
		{"counter", "# HELP relayd_sent_total Packets sent.\n# TYPE relayd_sent_total counter\nrelayd_sent_total 12.5\n",
			[]string{"relayd_sent_total||12.5"}},
		{"gauge", "# TYPE rss gauge\nrss 8.4e+07\n", []string{"rss||8.4e+07"}},
		{"untyped, timestamp dropped", "a 1 1700000000000\n", []string{"a||1"}},
		{"special values", "a +Inf\nb -Inf\nc NaN\n", []string{"a||+Inf", "b||-Inf", "c||NaN"}},
		{"families by name, samples in text order", "b 2\na{x=\"2\"} 2\na{x=\"1\"} 1\n",
			[]string{`a|x="2"|2`, `a|x="1"|1`, "b||2"}},
		{"labelled series", "# TYPE dropped_total counter\n" +
			"dropped_total{reason=\"mac\"} 0\ndropped_total{x=\"1\",reason=\"overload\"} 7\ndropped_total{} 1\n",
			[]string{`dropped_total|reason="mac"|0`, `dropped_total|reason="overload",x="1"|7`, "dropped_total||1"}},
		{"escaped label values", `a{path="C:\\dir",q="say \"hi\"",nl="1\n2"} 1` + "\n",
			[]string{`a|nl="1\n2",path="C:\\dir",q="say \"hi\""|1`}},
		{"UTF-8 names", `{"my.metric","my.label"="x"} 1` + "\n", []string{`my.metric|"my.label"="x"|1`}},
		{"histogram", "# HELP lat Latency.\n# TYPE lat histogram\n" +
			"lat_bucket{le=\"0.005\"} 3\nlat_bucket{le=\"0.5\"} 5\nlat_bucket{le=\"+Inf\"} 6\nlat_sum 1.25\nlat_count 6\n",
			[]string{`lat_bucket|le="0.005"|3`, `lat_bucket|le="0.5"|5`, `lat_bucket|le="+Inf"|6`, "lat_sum||1.25", "lat_count||6"}},
		{"histogram without +Inf", "# TYPE lat histogram\nlat_bucket{op=\"a\",le=\"1\"} 2\nlat_sum{op=\"a\"} 1\nlat_count{op=\"a\"} 4\n",
			[]string{`lat_bucket|le="1",op="a"|2`, `lat_sum|op="a"|1`, `lat_count|op="a"|4`, `lat_bucket|le="+Inf",op="a"|4`}},
		{"summary", "# TYPE gc summary\ngc{quantile=\"0.5\"} 0.001\ngc{quantile=\"1\"} 0.01\ngc_sum 0.5\ngc_count 40\n",
			[]string{`gc|quantile="0.5"|0.001`, `gc|quantile="1"|0.01`, "gc_sum||0.5", "gc_count||40"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := scanAll(c.text)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
				t.Fatalf("samples\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestScanSamplesKeep: keep sees every sample's name and labels, and only what it keeps reaches
// got.
func TestScanSamplesKeep(t *testing.T) {
	text := "a 1\nb{reason=\"mac\"} 2\nb{reason=\"overload\"} 3\nc 4\n"
	var seen, got []string
	keep := func(name, labels string) bool {
		seen = append(seen, name+"|"+labels)
		return name == "b" && labels != `reason="mac"`
	}
	err := ScanSamples(strings.NewReader(text), keep, func(name, labels string, v float64) {
		got = append(got, fmt.Sprintf("%s|%s|%g", name, labels, v))
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a|", `b|reason="mac"`, `b|reason="overload"`, "c|"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("keep saw %q, want %q", seen, want)
	}
	if want := []string{`b|reason="overload"|3`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestScanSamplesMalformed: text that does not parse is an error, even where keep would drop
// the sample, and no sample of it is handed on.
func TestScanSamplesMalformed(t *testing.T) {
	for _, c := range []struct{ name, text string }{
		{"bad value", "a 1\nb not-a-number\n"},
		{"no value", "a\n"},
		{"no final newline", "a 1"},
		{"spurious text after the timestamp", "a 1 1700000000000 x\n"},
		{"bad timestamp", "a 1 soon\n"},
		{"unterminated labels", "a{x=\"1\" 1\n"},
		{"unquoted label value", "a{x=1} 1\n"},
		{"bad escape", "a{x=\"\\q\"} 1\n"},
		{"duplicate label", "a{x=\"1\",x=\"2\"} 1\n"},
		{"second TYPE line", "# TYPE a counter\n# TYPE a gauge\na 1\n"},
		{"unknown type", "# TYPE a meter\na 1\n"},
		{"quantile not a number", "# TYPE s summary\ns{quantile=\"high\"} 1\n"},
		{"binary", "\x00\xff\xfe{\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			called := false
			err := ScanSamples(strings.NewReader(c.text), func(string, string) bool { return false },
				func(string, string, float64) { called = true })
			if err == nil {
				t.Fatalf("%q parsed", c.text)
			}
			if called {
				t.Fatal("a sample of malformed text was handed on")
			}
		})
	}
}

// FuzzScanSamples: ScanSamples never panics, and the labels it hands on are valid text format.
func FuzzScanSamples(f *testing.F) {
	for _, s := range []string{
		"# TYPE a counter\na{x=\"1\"} 1\n",
		"# TYPE lat histogram\nlat_bucket{le=\"1\"} 2\nlat_sum 1\nlat_count 4\n",
		"# TYPE gc summary\ngc{quantile=\"0.5\"} 0.001\ngc_sum 0.5\ngc_count 40\n",
		`{"my.metric","my.label"="a\"b\\c\nd"} 1` + "\n",
		"a 1",
		"a{x=\"\\q\"} 1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		err := ScanSamples(strings.NewReader(text), func(string, string) bool { return true }, func(name, labels string, _ float64) {
			if _, err := scanAll("x{" + labels + "} 1\n"); err != nil {
				t.Fatalf("labels %q of %s do not parse: %v", labels, name, err)
			}
		})
		_ = err // malformed text is an error; all that matters here is that it is not a panic
	})
}
