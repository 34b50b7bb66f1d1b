package admin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/ws"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		in   string
		want Line
		err  error
	}{
		{"help", Line{Name: "help"}, nil},
		{"  send ,16Uiu2 hello there ", Line{Name: "send", Args: ",16Uiu2 hello there", Raw: ",16Uiu2 hello there "}, nil},
		{"send\t,x  msg", Line{Name: "send", Args: ",x  msg", Raw: ",x  msg"}, nil},
		{"sign  two spaces ", Line{Name: "sign", Args: "two spaces", Raw: " two spaces "}, nil},
		{"", Line{}, ErrEmptyLine},
		{" \t ", Line{}, ErrEmptyLine},
		{"a\x00b", Line{}, ErrInvalidText},
		{"\xff", Line{}, ErrInvalidText},
		{strings.Repeat("a", ws.MaxLineBytes+1), Line{}, ErrLongLine},
	}
	for _, tt := range tests {
		got, err := ParseLine(tt.in)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("ParseLine(%q) = %+v, %v; want %+v, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{"help", "send ,16Uiu2HAm hi", " send a,b,c text ", "", "\x00", "é ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLine(s)
		if err != nil {
			if l != (Line{}) {
				t.Fatalf("error with non-empty result %+v", l)
			}
			return
		}
		if l.Name == "" || strings.ContainsFunc(l.Name, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
			t.Fatalf("bad name %q from %q", l.Name, s)
		}
		if l.Args != strings.TrimSpace(l.Args) || l.Args != strings.TrimSpace(l.Raw) || !strings.HasSuffix(s, l.Raw) {
			t.Fatalf("args %q, raw %q of %q", l.Args, l.Raw, s)
		}
		if !strings.Contains(s, l.Name) || !strings.Contains(s, l.Args) {
			t.Fatalf("parse of %q invented text: %+v", s, l)
		}
	})
}

func TestTypoSuggestion(t *testing.T) {
	cmds, err := NewCommands(
		Command{Name: "balance", Usage: "balance", Help: "b", Run: func(context.Context, string) ([]string, error) { return nil, nil }},
		Command{Name: "redeemTickets", Usage: "redeemTickets", Help: "r", Run: func(context.Context, string) ([]string, error) { return nil, nil }},
		Command{Name: "tickets", Usage: "tickets", Help: "t", Run: func(context.Context, string) ([]string, error) { return nil, nil }},
		Command{Name: "peers", Usage: "peers", Help: "p", Run: func(context.Context, string) ([]string, error) { return nil, nil }},
		Command{Name: "ping", Usage: "ping", Help: "p", Run: func(context.Context, string) ([]string, error) { return nil, nil }},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{"blance", "Unknown command: blance. Did you mean 'balance'? Type 'help'."},
		{"balacne", "Unknown command: balacne. Did you mean 'balance'? Type 'help'."},
		{"redeemtickets", "Unknown command: redeemtickets. Did you mean 'redeemTickets'? Type 'help'."},
		{"redeem", "Unknown command: redeem. Did you mean 'redeemTickets'? Type 'help'."},
		{"ticket", "Unknown command: ticket. Did you mean 'tickets'? Type 'help'."},
		{"pign", "Unknown command: pign. Did you mean 'ping'? Type 'help'."},
		{"hlep", "Unknown command: hlep. Did you mean 'help'? Type 'help'."},
		{"frobnicate", "Unknown command: frobnicate. Type 'help'."},
		{"pe", "Unknown command: pe. Type 'help'."},
		{"xyz", "Unknown command: xyz. Type 'help'."},
	} {
		if got := cmds.Run(t.Context(), tt.in); len(got.Lines) != 1 || got.Lines[0] != tt.want || !got.Failed {
			t.Errorf("%q: got %q, want %q", tt.in, got.Lines, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"balance", "blance", 1}, {"balance", "balacne", 1}, {"kitten", "sitting", 3}, {"日本", "本日", 1}} {
		if got := editDistance(tt.a, tt.b); got != tt.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}

// TestRun: a command's output, its usage line on bad arguments, its error, an unknown or empty
// line, and help; every failure marked as one, After only on success.
func TestRun(t *testing.T) {
	ran := 0
	cmds, err := NewCommands(
		Command{Name: "echo", Usage: "echo <text>", Help: "Repeat the text.", Run: func(_ context.Context, args string) ([]string, error) {
			if args == "" {
				return nil, &UsageError{"missing text"}
			}
			return []string{args}, nil
		}, After: func() { ran++ }},
		Command{Name: "fail", Usage: "fail", Help: "Always fails.", Run: func(context.Context, string) ([]string, error) {
			return []string{"partial"}, errors.New("it failed")
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		line   string
		out    []string
		failed bool
	}{
		{"echo hello world", []string{"hello world"}, false},
		{"  echo   spaced  ", []string{"spaced"}, false},
		{"echo", []string{"missing text. Usage: echo <text>"}, true},
		{"fail", []string{"partial", "Error: it failed"}, true},
		{"frobnicate now", []string{"Unknown command: frobnicate. Type 'help'."}, true},
		{"   ", []string{"Invalid command: empty command line. Type 'help'."}, true},
		{"help", []string{"Available commands:", "  echo <text>  Repeat the text.", "  fail         Always fails.",
			"  help         Show the available commands."}, false},
	} {
		rep := cmds.Run(t.Context(), tt.line)
		if strings.Join(rep.Lines, "\n") != strings.Join(tt.out, "\n") || rep.Failed != tt.failed {
			t.Errorf("%q: %q failed=%v, want %q failed=%v", tt.line, rep.Lines, rep.Failed, tt.out, tt.failed)
		}
		if rep.After != nil {
			rep.After()
		}
	}
	if ran != 2 {
		t.Fatalf("After ran %d times, want 2 (the two echoes that worked)", ran)
	}
	for _, bad := range [][]Command{{{Name: "", Run: func(context.Context, string) ([]string, error) { return nil, nil }}},
		{{Name: "a b", Run: func(context.Context, string) ([]string, error) { return nil, nil }}},
		{{Name: "help", Run: func(context.Context, string) ([]string, error) { return nil, nil }}},
		{{Name: "x"}}} {
		if _, err := NewCommands(bad...); err == nil {
			t.Errorf("NewCommands(%q) accepted", bad[0].Name)
		}
	}
}
