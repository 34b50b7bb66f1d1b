// Command relayd is the relay node daemon. It parses the configuration,
// handles signals and runs the node; everything else lives in
// internal/node.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/node"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "devchain":
			return runDevchain(args[1:])
		case "cluster":
			return runCluster(args[1:])
		}
	}
	cfg, err := config.Parse(args, os.Getenv, os.Stderr)
	if errors.Is(err, config.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "relayd: %v\n", err)
		return 2
	}
	n, err := node.New(cfg, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "relayd: %v\n", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the next signal takes the default action: exit at once
	}()
	if err := n.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "relayd: %v\n", err)
		return 1
	}
	return 0
}
