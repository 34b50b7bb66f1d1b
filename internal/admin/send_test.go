package admin

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSend(t *testing.T) {
	tests := []struct {
		in   string
		want sendArgs
		ok   bool
	}{
		{"bob hello", sendArgs{Path: []string{"bob"}, Auto: true, Text: "hello"}, true},
		{",bob hello  there ", sendArgs{Path: []string{"bob"}, Direct: true, Text: "hello  there "}, true},
		{"r1,r2,bob hi", sendArgs{Path: []string{"r1", "r2", "bob"}, Text: "hi"}, true},
		{"r1,bob hi", sendArgs{Path: []string{"r1", "bob"}, Text: "hi"}, true},
		{"bob", sendArgs{}, false},
		{"bob   ", sendArgs{}, false},
		{", hi", sendArgs{}, false},
		{",a,b hi", sendArgs{}, false},
		{"r1,,bob hi", sendArgs{}, false},
		{"r1,bob, hi", sendArgs{}, false},
		{"", sendArgs{}, false},
	}
	for _, tt := range tests {
		got, ok := parseSend(tt.in)
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseSend(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzParseSend(f *testing.F) {
	for _, s := range []string{"bob hello", ",bob hi", "a,b,c text", ",", "a,,b x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseSend(s)
		if !ok {
			return
		}
		if got.Text == "" || len(got.Path) == 0 || (got.Direct && got.Auto) {
			t.Fatalf("inconsistent parse of %q: %+v", s, got)
		}
		for _, p := range got.Path {
			if p == "" || strings.ContainsAny(p, ", \t\n") {
				t.Fatalf("bad path element %q from %q", p, s)
			}
		}
		if !strings.HasSuffix(s, got.Text) {
			t.Fatalf("text %q is not the tail of %q", got.Text, s)
		}
	})
}
