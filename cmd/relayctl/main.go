// Command relayctl is the operator console of a relayd node: an interactive
// terminal client of its WebSocket admin server. Everything but flag parsing
// lives in internal/console.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/relayd/relayd/internal/console"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// defaultURL is the admin server of a node started with the defaults.
const defaultURL = "ws://127.0.0.1:3000"

const usage = `usage: relayctl [--url ws://127.0.0.1:3000] [--apiToken TOKEN] [-c 'command']
       relayctl send|inbox|reply|status [flags] …
       relayctl sessions [flags] [list | open … | close <id>]
       relayctl bench [flags]
       relayctl observe capture|analyze [flags]
       relayctl load [flags]

Without -c, relayctl is an interactive console of the node's admin server:
Tab completes commands and their peer, alias and setting arguments; type
'help' for the node's commands, 'exit' or Ctrl-D to leave.
With -c, it runs one command, prints its output and exits: 0 once the
command's output is complete, 1 if the command failed (the node marks its
reply so: an unknown command, bad arguments, an error), if the node cannot be
reached or the connection ends first. The node's log lines meanwhile go to
stderr.

Subcommands:
  send, inbox, reply, status
          messages over the node's REST API: send one (long, reliable, with
          reply blocks), list or pop the inbox, answer a message on its reply
          blocks, follow a message's state (relayctl send -h)
  sessions
          sessions over the node's REST API: list them with their rates, open
          one to an exit (a local address whose connections go to a target
          or service through the network), close one (relayctl sessions -h)
  bench   load generator: sends messages through a network over REST and
          measures delivery and latency on the admin WebSockets
          (relayctl bench -h)
  observe capture every link of a namespace network and run the observer's
          attacks on what it saw (relayctl observe -h)
  load    pushes pre-built paid packets into one relayer of a dev network
          over libp2p and reports what it forwarded and its CPU
          (relayctl load -h)

Flags:
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "bench" {
		return runBench(args[1:])
	}
	if len(args) > 0 && args[0] == "observe" {
		return runObserve(args[1:])
	}
	if len(args) > 0 && args[0] == "load" {
		return runLoad(args[1:])
	}
	if len(args) > 0 && args[0] == "sessions" {
		return runSessions(args[1:])
	}
	if len(args) > 0 && messagesCommands[args[0]] {
		return runMessages(args[0], args[1:])
	}
	fs := flag.NewFlagSet("relayctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// No flag defaults from the environment: -h prints defaults, and the
	// token (which a URL may also carry) must not be printed.
	url := fs.String("url", "", "admin WebSocket URL of the node (env RELAYCTL_URL; default "+defaultURL+")")
	token := fs.String("apiToken", "", "the node's API token (env RELAYD_API_TOKEN)")
	cmd := fs.String("c", "", "run one command, print its output and exit")
	timeout := fs.Duration("timeout", 0, "with -c: give up after this long (0: wait as long as the command runs)")
	fs.Duration("wait", 0, "ignored: -c waits for the end of the command's output (kept for old scripts)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "relayctl: unexpected argument %q (a command goes in -c '...'; subcommands: send, inbox, reply, status, sessions, bench, observe, load)\n",
			console.Redact(fs.Arg(0), *token))
		return 2
	}
	if *url == "" {
		*url = envOr("RELAYCTL_URL", defaultURL)
	}
	if *token == "" {
		*token = os.Getenv("RELAYD_API_TOKEN")
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "relayctl: %s\n", console.Redact(err.Error(), *token))
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := console.Dial(dctx, *url, *token)
	cancel()
	if err != nil {
		return fail(err)
	}
	defer conn.Close()

	if *cmd != "" {
		if *timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, *timeout)
			defer cancel()
		}
		err := console.RunOnce(ctx, conn, *cmd, stdout, stderr)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return fail(fmt.Errorf("no complete reply within %v", *timeout))
		case errors.Is(err, context.Canceled):
			return fail(errors.New("interrupted"))
		case errors.Is(err, console.ErrCommandFailed):
			return 1 // the output says why
		case err != nil:
			return fail(err)
		}
		return 0
	}
	history := ""
	if home, err := os.UserHomeDir(); err == nil {
		history = filepath.Join(home, ".relayctl_history")
	}
	if err := console.Interactive(ctx, conn, history); err != nil {
		return fail(err)
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
