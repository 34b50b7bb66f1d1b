package admin

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSend(t *testing.T) {
	tests := []struct {
		in   string
		want sendArgs
		err  string // the usage error's reason, "" when it parses
	}{
		{"bob hello", sendArgs{Path: []string{"bob"}, Auto: true, Text: "hello"}, ""},
		{",bob hello  there ", sendArgs{Path: []string{"bob"}, Direct: true, Text: "hello  there "}, ""},
		{"r1,r2,bob hi", sendArgs{Path: []string{"r1", "r2", "bob"}, Text: "hi"}, ""},
		{"r1,bob hi", sendArgs{Path: []string{"r1", "bob"}, Text: "hi"}, ""},
		{"--replies 3 bob hi  there", sendArgs{Path: []string{"bob"}, Auto: true, Text: "hi  there", Replies: 3}, ""},
		{"--replies=16 --reliable bob --replies 2", sendArgs{Path: []string{"bob"}, Auto: true, Text: "--replies 2", Replies: 16, Reliable: true}, ""},
		{"--reliable  bob hi", sendArgs{Path: []string{"bob"}, Auto: true, Text: "hi", Reliable: true}, ""},
		{"--replies 0 r1,bob hi", sendArgs{Path: []string{"r1", "bob"}, Text: "hi"}, ""},
		{"bob", sendArgs{}, "send needs a peer (or a path) and a message"},
		{"bob   ", sendArgs{}, "send needs a peer (or a path) and a message"},
		{", hi", sendArgs{}, "send needs a peer (or a path) and a message"},
		{",a,b hi", sendArgs{}, "send needs a peer (or a path) and a message"},
		{"r1,,bob hi", sendArgs{}, "send needs a peer (or a path) and a message"},
		{"r1,bob, hi", sendArgs{}, "send needs a peer (or a path) and a message"},
		{"", sendArgs{}, "send needs a peer (or a path) and a message"},
		{"--reliable", sendArgs{}, "send needs a peer (or a path) and a message"},
		{"--replies 17 bob hi", sendArgs{}, "--replies takes a whole number from 0 to 16"},
		{"--replies bob hi", sendArgs{}, "--replies takes a whole number from 0 to 16"},
		{"--replies=-1 bob hi", sendArgs{}, "--replies takes a whole number from 0 to 16"},
		{"--reliable=yes bob hi", sendArgs{}, "--reliable takes no value"},
		{"--fast bob hi", sendArgs{}, `unknown option "--fast" (the options are --replies <n> and --reliable)`},
		{"--reliable ,bob hi", sendArgs{}, "--replies and --reliable need a path the node picks (send <peer> <message>)"},
		{"--replies 1 r1,bob hi", sendArgs{}, "--replies and --reliable need a path the node picks (send <peer> <message>)"},
	}
	for _, tt := range tests {
		got, err := parseSend(tt.in)
		var ue *UsageError
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("parseSend(%q): %v", tt.in, err)
		case tt.err != "" && (!errors.As(err, &ue) || ue.Reason != tt.err):
			t.Errorf("parseSend(%q) = %v; want the usage error %q", tt.in, err, tt.err)
		case !reflect.DeepEqual(got, tt.want):
			t.Errorf("parseSend(%q) = %+v; want %+v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseSend(f *testing.F) {
	for _, s := range []string{"bob hello", ",bob hi", "a,b,c text", ",", "a,,b x", "--replies 2 bob hi", "--replies=3 --reliable a b", "--x a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSend(s)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) || !reflect.DeepEqual(got, sendArgs{}) {
				t.Fatalf("parse of %q failed with %v and %+v", s, err, got)
			}
			return
		}
		if got.Text == "" || len(got.Path) == 0 || (got.Direct && got.Auto) {
			t.Fatalf("inconsistent parse of %q: %+v", s, got)
		}
		if got.Replies < 0 || got.Replies > 16 || (got.Replies > 0 || got.Reliable) && !got.Auto {
			t.Fatalf("options of %q: %+v", s, got)
		}
		for _, p := range got.Path {
			if p == "" || strings.ContainsAny(p, ", \t\n") {
				t.Fatalf("bad path element %q from %q", p, s)
			}
		}
		if !got.Direct && strings.HasPrefix(got.Path[0], "--") {
			t.Fatalf("an option %q read as a peer from %q", got.Path[0], s)
		}
		if !strings.HasSuffix(s, got.Text) {
			t.Fatalf("text %q is not the tail of %q", got.Text, s)
		}
	})
}
