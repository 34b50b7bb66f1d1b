// Command relayctl is the operator console of a relayd node: an interactive
// terminal client of its WebSocket admin server. Everything but flag parsing
// lives in internal/console.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/relayd/relayd/internal/console"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) > 0 && args[0] == "bench" {
		return runBench(args[1:])
	}
	if len(args) > 0 && args[0] == "observe" {
		return runObserve(args[1:])
	}
	fs := flag.NewFlagSet("relayctl", flag.ContinueOnError)
	url := fs.String("url", envOr("RELAYCTL_URL", "ws://127.0.0.1:3000"), "admin WebSocket URL of the node (env RELAYCTL_URL)")
	token := fs.String("apiToken", os.Getenv("RELAYD_API_TOKEN"), "the node's API token (env RELAYD_API_TOKEN)")
	cmd := fs.String("c", "", "run one command, print its output and exit")
	idle := fs.Duration("wait", 2*time.Second, "with -c: how long the node may stay quiet before the output is taken as complete")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: relayctl [--url ws://127.0.0.1:3000] [--apiToken TOKEN] [-c 'command']")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := console.Dial(dctx, *url, *token)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "relayctl: %v\n", err)
		return 1
	}
	defer conn.Close()

	if *cmd != "" {
		if err := console.RunOnce(ctx, conn, *cmd, os.Stdout, *idle); err != nil {
			fmt.Fprintf(os.Stderr, "relayctl: %v\n", err)
			return 1
		}
		return 0
	}
	history := ""
	if home, err := os.UserHomeDir(); err == nil {
		history = filepath.Join(home, ".relayctl_history")
	}
	if err := console.Interactive(ctx, conn, history); err != nil {
		fmt.Fprintf(os.Stderr, "relayctl: %v\n", err)
		return 1
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
