package admin

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/relayd/relayd/internal/ws"
)

// Line is a parsed command line: the command name and the rest of the line with its leading and
// trailing spaces removed (Args), or exactly as typed after the one space or tab that ends the
// name (Raw).
type Line struct {
	Name string
	Args string
	Raw  string
}

// Errors of ParseLine.
var (
	ErrEmptyLine   = errors.New("empty command line")
	ErrLongLine    = fmt.Errorf("command line longer than %d bytes", ws.MaxLineBytes)
	ErrInvalidText = errors.New("command line is not valid UTF-8 text")
)

// ParseLine splits an operator's command line into the command name and its
// arguments. Control characters other than tab are refused.
func ParseLine(s string) (Line, error) {
	if len(s) > ws.MaxLineBytes {
		return Line{}, ErrLongLine
	}
	if !utf8.ValidString(s) {
		return Line{}, ErrInvalidText
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return Line{}, ErrInvalidText
		}
	}
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	if strings.TrimSpace(s) == "" {
		return Line{}, ErrEmptyLine
	}
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return Line{Name: s}, nil
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return Line{Name: s[:i], Args: strings.TrimSpace(s[i:]), Raw: s[i+size:]}, nil
}

// Command is an operator command. Run returns the output lines, each sent as
// one log frame; an error is sent as one log frame with its text.
type Command struct {
	Name  string
	Usage string // e.g. "send <peer> <message>"
	Help  string // one sentence
	Run   func(ctx context.Context, args string) ([]string, error)
	// RawArgs hands Run the arguments exactly as typed (Line.Raw), not trimmed: for a command
	// whose argument is text (sign).
	RawArgs bool
	// After, if set, runs once the reply of a successful Run has been
	// queued for the client, e.g. to stop the node after saying so.
	After func()
}

// UsageError is returned by a command whose arguments are wrong; the server
// answers with the command's usage line.
type UsageError struct{ Reason string }

func (e *UsageError) Error() string { return e.Reason }

// Commands is a set of operator commands, with a built-in "help".
type Commands struct {
	byName map[string]Command
}

// NewCommands returns a command set holding cmds and help.
func NewCommands(cmds ...Command) (*Commands, error) {
	c := &Commands{byName: map[string]Command{}}
	for _, cmd := range cmds {
		if cmd.Name == "" || cmd.Run == nil || strings.ContainsAny(cmd.Name, " \t") {
			return nil, fmt.Errorf("admin: invalid command %q", cmd.Name)
		}
		if _, dup := c.byName[cmd.Name]; dup || cmd.Name == "help" {
			return nil, fmt.Errorf("admin: duplicate command %q", cmd.Name)
		}
		c.byName[cmd.Name] = cmd
	}
	c.byName["help"] = Command{Name: "help", Usage: "help", Help: "Show the available commands.", Run: c.help}
	return c, nil
}

func (c *Commands) help(context.Context, string) ([]string, error) {
	names := make([]string, 0, len(c.byName))
	width := 0
	for n, cmd := range c.byName {
		names = append(names, n)
		width = max(width, len(cmd.Usage))
	}
	sort.Strings(names)
	out := []string{"Available commands:"}
	for _, n := range names {
		cmd := c.byName[n]
		out = append(out, fmt.Sprintf("  %-*s  %s", width, cmd.Usage, cmd.Help))
	}
	return out, nil
}

// Run executes one command line (ws.Interpreter): its output lines, whether it failed (a line
// that does not parse, an unknown command, bad arguments, an error) and, when it succeeded, its
// After hook.
func (c *Commands) Run(ctx context.Context, raw string) ws.Reply {
	line, err := ParseLine(raw)
	if err != nil {
		return failed("Invalid command: " + err.Error() + ". Type 'help'.")
	}
	cmd, ok := c.byName[line.Name]
	if !ok {
		if near := c.suggest(line.Name); near != "" {
			return failed("Unknown command: " + line.Name + ". Did you mean '" + near + "'? Type 'help'.")
		}
		return failed("Unknown command: " + line.Name + ". Type 'help'.")
	}
	args := line.Args
	if cmd.RawArgs {
		args = line.Raw
	}
	out, err := cmd.Run(ctx, args)
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		return failed(ue.Reason + ". Usage: " + cmd.Usage)
	case err != nil:
		return ws.Reply{Lines: append(out, "Error: "+err.Error()), Failed: true}
	}
	return ws.Reply{Lines: out, After: cmd.After}
}

// failed is a reply of one line that says why a command failed.
func failed(line string) ws.Reply { return ws.Reply{Lines: []string{line}, Failed: true} }

// Names returns the command names, sorted.
func (c *Commands) Names() []string {
	names := make([]string, 0, len(c.byName))
	for n := range c.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// suggest returns the command the operator most likely meant by name, or ""
// when none is close: the same name in other case, else the nearest within
// an edit distance of 2 (1 for names of up to 4 letters), else the only
// command name starts with (at least 3 letters).
func (c *Commands) suggest(name string) string {
	lower := strings.ToLower(name)
	best, bestDist := "", 0
	var prefixed []string
	for _, n := range c.Names() {
		ln := strings.ToLower(n)
		if ln == lower {
			return n
		}
		if len(lower) >= 3 && strings.HasPrefix(ln, lower) {
			prefixed = append(prefixed, n)
		}
		d := editDistance(lower, ln)
		limit := 2
		if len([]rune(ln)) <= 4 {
			limit = 1
		}
		if d <= limit && (best == "" || d < bestDist) {
			best, bestDist = n, d
		}
	}
	if best == "" && len(prefixed) == 1 {
		return prefixed[0]
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment) between a and b in runes: insertions, deletions, substitutions
// and swaps of adjacent runes each count 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > ws.MaxLineBytes || len(rb) > ws.MaxLineBytes {
		return max(len(ra), len(rb))
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
