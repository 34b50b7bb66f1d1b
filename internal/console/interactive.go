package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"

	"github.com/relayd/relayd/internal/ws"
)

// Prompt is the interactive prompt, the node's own echo prefix.
const Prompt = "admin > "

// startWait is how long Interactive waits for the node's first reply (which
// follows the replay) before it shows the prompt anyway.
const startWait = 10 * time.Second

// peersRefresh is how old the peer list may get before a completion asks
// the node for it again.
const peersRefresh = 15 * time.Second

// Interactive runs an operator session on c. The node's replay is printed
// first, then the prompt; frames are printed above the prompt as they
// arrive; each entered line is sent as a command and its output printed
// below it (the typed line is the one echo). Tab completes command names,
// and peers, aliases and setting names as arguments; the lists come from the
// node's own help, alias, peers and settings commands, asked in the
// background. "exit" or Ctrl-D ends the session; "quit", which stops the
// node, asks for confirmation first. historyFile may be empty. When the
// node goes away, Interactive returns an error wrapping ErrClosed that says
// why.
func Interactive(ctx context.Context, c *Conn, historyFile string) error {
	s := &session{ctx: ctx, c: c, out: os.Stdout}
	ready := make(chan struct{})
	s.ask("help", func(lines []string) { s.setNames(parseHelp(lines)) })
	s.ask("alias", s.setAliases)
	s.ask("settings", s.setSettings)
	s.peersAt = time.Now()
	s.ask("peers", func(lines []string) { s.setPeers(lines); close(ready) })
	// The replies come after the whole replay, in order: print up to the
	// last one before the prompt appears, which can then complete at once.
	wait := time.NewTimer(startWait)
	defer wait.Stop()
	for starting := true; starting; {
		select {
		case f, ok := <-c.Frames():
			if !ok {
				return c.Err()
			}
			s.handle(f)
		case <-ready:
			starting = false
		case <-wait.C:
			starting = false
		case <-ctx.Done():
			return nil
		}
	}

	// Closing our own stdin is how a Readline in progress ends when the
	// node goes away (Instance.Close from another goroutine races).
	stdin := readline.NewCancelableStdin(os.Stdin)
	rl, err := readline.NewEx(&readline.Config{
		Stdin:           stdin,
		Prompt:          Prompt,
		HistoryFile:     historyFile,
		AutoComplete:    s,
		InterruptPrompt: "^C",
		EOFPrompt:       "exit",
	})
	if err != nil {
		return fmt.Errorf("terminal: %w", err)
	}
	defer rl.Close()
	s.setOut(rl.Stdout())

	ended := make(chan struct{})
	go func() {
		for f := range c.Frames() {
			s.handle(f)
		}
		close(ended)  // before Readline returns, so the loop below sees why
		stdin.Close() // unblock Readline: the node went away
	}()
	go func() {
		select {
		case <-ctx.Done():
			stdin.Close()
		case <-ended:
		}
	}()

	quitting := false
	for {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			continue
		}
		if err != nil {
			break // Ctrl-D, or closed because the node went away
		}
		line = strings.TrimSpace(line)
		name, _, _ := strings.Cut(line, " ")
		switch name {
		case "":
			continue
		case "exit":
			return nil
		case "quit":
			rl.SetPrompt("quit stops the node. Stop it? [y/N] ")
			answer, err := rl.Readline()
			rl.SetPrompt(Prompt)
			if err != nil || !strings.EqualFold(strings.TrimSpace(answer), "y") {
				s.print("Not stopped. Type 'exit' to leave relayctl.")
				continue
			}
		}
		if err := s.send(line, false, nil); err != nil {
			<-ended // the connection is gone, so its reader ends too
			return c.Err()
		}
		switch name {
		case "alias":
			s.ask("alias", s.setAliases)
		case "quit":
			quitting = true
		}
	}
	select {
	case <-ended:
		if quitting {
			return nil // the node stopped as asked
		}
		return c.Err()
	default:
		return nil
	}
}

// session is the state of an interactive session: where frames are printed,
// the commands sent and not yet answered, and the completion lists.
type session struct {
	ctx context.Context
	c   *Conn

	outMu sync.Mutex
	out   io.Writer

	mu       sync.Mutex
	pending  []*pending // commands sent, oldest first; the node answers in order
	names    []string
	aliases  map[string]string // alias -> PeerId
	peers    []string
	settings []string
	peersAt  time.Time // when the peer list was last asked for
}

// pending is a command waiting for its reply. A hidden one is relayctl's
// own (for completion): its reply is collected for done, not printed.
type pending struct {
	hidden bool
	lines  []string
	done   func(lines []string)
}

func (s *session) setOut(w io.Writer) {
	s.outMu.Lock()
	s.out = w
	s.outMu.Unlock()
}

func (s *session) print(line string) {
	s.outMu.Lock()
	fmt.Fprintln(s.out, line)
	s.outMu.Unlock()
}

// send sends a command line, queued for its reply; the lock keeps the
// queue in the order the node receives the lines.
func (s *session) send(line string, hidden bool, done func([]string)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.c.Send(s.ctx, line); err != nil {
		return err
	}
	s.pending = append(s.pending, &pending{hidden: hidden, done: done})
	return nil
}

// ask sends one of relayctl's own commands; done gets its output.
func (s *session) ask(line string, done func([]string)) { _ = s.send(line, true, done) }

// handle prints one frame, or collects it for the hidden command it
// answers. The echo of the operator's own command is not printed: the line
// typed at the prompt is on the screen already.
func (s *session) handle(f ws.Frame) {
	if f.Reply == "" {
		s.print(Format(f))
		return
	}
	s.mu.Lock()
	var p *pending
	if len(s.pending) > 0 {
		p = s.pending[0]
		if f.Reply == ws.ReplyEnd {
			s.pending = s.pending[1:]
		}
	}
	s.mu.Unlock()
	switch {
	case p == nil: // a reply to nothing we sent: show it
		s.print(ws.Escape(f.Msg))
	case p.hidden:
		if f.Reply != ws.ReplyEcho {
			p.lines = append(p.lines, f.Msg)
		}
	case f.Reply != ws.ReplyEcho:
		s.print(ws.Escape(f.Msg))
	}
	if p != nil && f.Reply == ws.ReplyEnd && p.done != nil {
		p.done(p.lines)
	}
}

func (s *session) setNames(names []string) {
	s.mu.Lock()
	s.names = names
	s.mu.Unlock()
}

func (s *session) setAliases(lines []string) {
	a := parseAliases(lines)
	s.mu.Lock()
	s.aliases = a
	s.mu.Unlock()
}

func (s *session) setPeers(lines []string) {
	p := parsePeers(lines)
	s.mu.Lock()
	s.peers = p
	s.mu.Unlock()
}

func (s *session) setSettings(lines []string) {
	var names []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	s.mu.Lock()
	s.settings = names
	s.mu.Unlock()
}

// sendOptions are the options of send, which come before its peer.
var sendOptions = []string{"--reliable", "--replies"}

// sessionVerbs are what session does: session open <peer> <tcp|udp> …, session close <id>.
var sessionVerbs = []string{"open", "close", "list"}

// peerCommands are the commands whose first argument names a peer (alias
// takes a PeerId only).
var peerCommands = map[string]bool{"ping": true, "open": true, "close": true, "send": true, "addresses": true, "alias": true}

// Do completes the word before the cursor (readline.AutoCompleter): a
// command name first, then a peer, alias or setting name as the argument
// that takes one. It returns the candidates' remaining text and the length
// of the word they complete.
func (s *session) Do(line []rune, pos int) ([][]rune, int) {
	head := string(line[:pos])
	i := strings.LastIndexAny(head, " \t")
	if i < 0 {
		s.mu.Lock()
		names := append(slices.Clone(s.names), "exit")
		s.mu.Unlock()
		return complete(head, names, " ")
	}
	before := strings.Fields(head[:i])
	if len(before) == 0 {
		return nil, 0
	}
	cmd, arg, word := before[0], len(before)-1, head[i+1:]
	if cmd == "send" {
		// The options come first: --replies <n>, --reliable.
		opts := 0
		for opts < arg && strings.HasPrefix(before[1+opts], "--") {
			if before[1+opts] == "--replies" {
				opts++ // its value
			}
			opts++
		}
		switch {
		case opts > arg:
			return nil, 0 // the number of --replies
		case opts == arg && strings.HasPrefix(word, "-"):
			return complete(word, sendOptions, " ")
		}
		arg -= opts
	}

	s.mu.Lock()
	stale := (peerCommands[cmd] || cmd == "session") && time.Since(s.peersAt) > peersRefresh
	if stale {
		s.peersAt = time.Now()
	}
	var ids, names []string
	for name, id := range s.aliases {
		names = append(names, name)
		ids = append(ids, id)
	}
	ids = append(ids, s.peers...)
	settings := s.settings
	s.mu.Unlock()
	if stale {
		go s.ask("peers", s.setPeers) // for the next Tab
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	slices.Sort(names)

	switch {
	case cmd == "send" && arg == 0:
		// A path: complete the hop after the last comma.
		hop := word[strings.LastIndex(word, ",")+1:]
		return complete(hop, append(names, ids...), "")
	case cmd == "alias" && arg == 0:
		return complete(word, ids, " ")
	case peerCommands[cmd] && arg == 0:
		return complete(word, append(names, ids...), " ")
	case cmd == "close" && arg == 1:
		return complete(word, []string{"incoming", "outgoing"}, "")
	case cmd == "settings" && arg == 0:
		return complete(word, settings, " ")
	case cmd == "session" && arg == 0:
		return complete(word, sessionVerbs, " ")
	case cmd == "session" && arg == 1 && before[1] == "open":
		return complete(word, append(names, ids...), " ")
	case cmd == "session" && arg == 2 && before[1] == "open":
		return complete(word, []string{"tcp", "udp"}, " ")
	}
	return nil, 0
}

// complete returns the rest of each candidate that starts with word,
// followed by suffix, and the length of word in runes.
func complete(word string, candidates []string, suffix string) ([][]rune, int) {
	var out [][]rune
	seen := map[string]bool{}
	for _, c := range candidates {
		if strings.HasPrefix(c, word) && !seen[c] {
			seen[c] = true
			out = append(out, []rune(c[len(word):]+suffix))
		}
	}
	return out, len([]rune(word))
}

// parseHelp reads command names from the output of help: a header, then
// one line per command that starts with its usage.
func parseHelp(lines []string) []string {
	var names []string
	for _, l := range lines {
		if !strings.HasPrefix(l, " ") {
			continue
		}
		if f := strings.Fields(l); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// parseAliases reads the output of alias: "name -> PeerId" lines.
func parseAliases(lines []string) map[string]string {
	a := map[string]string{}
	for _, l := range lines {
		name, id, ok := strings.Cut(l, " -> ")
		if ok && !strings.ContainsAny(name, " \t") && !strings.ContainsAny(id, " \t") {
			a[name] = id
		}
	}
	return a
}

// parsePeers reads PeerIds from the output of peers: "- id: <PeerId>, …"
// lines.
func parsePeers(lines []string) []string {
	var ids []string
	for _, l := range lines {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "- id: ")
		if !ok {
			continue
		}
		id, _, _ := strings.Cut(rest, ",")
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}
