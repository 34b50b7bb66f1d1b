package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/chzyer/readline"
)

// Commands offered for tab completion.
var completions = []string{"help", "address", "balance", "channels", "send ", "alias", "open ", "close ",
	"tickets", "redeemTickets", "peers", "ping ", "info", "withdraw ", "version"}

// Interactive runs an operator session on c: frames are printed above the
// prompt as they arrive, each entered line is sent as a command, "exit" or
// Ctrl-D ends the session. historyFile may be empty.
func Interactive(ctx context.Context, c *Conn, historyFile string) error {
	items := make([]readline.PrefixCompleterInterface, 0, len(completions))
	for _, s := range completions {
		items = append(items, readline.PcItem(s))
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          "admin > ",
		HistoryFile:     historyFile,
		AutoComplete:    readline.NewPrefixCompleter(items...),
		InterruptPrompt: "^C",
		EOFPrompt:       "exit",
	})
	if err != nil {
		return fmt.Errorf("terminal: %w", err)
	}
	defer rl.Close()

	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for f := range c.Frames() {
			fmt.Fprintln(rl.Stdout(), Format(f))
		}
		rl.Close() // unblock Readline: the node went away
	}()

	for {
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			continue
		}
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line == "exit" || line == "quit" {
			break
		}
		if err := c.Send(ctx, line); err != nil {
			return fmt.Errorf("send: %w", err)
		}
	}
	select {
	case <-ended:
		if err := c.Err(); err != nil {
			return fmt.Errorf("connection to the node ended: %w", err)
		}
	default:
	}
	return nil
}
