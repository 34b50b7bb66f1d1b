// Command relayd is the relay node daemon. It parses the configuration,
// handles signals and runs the node; everything else lives in
// internal/node.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/node"
	"github.com/relayd/relayd/internal/version"
)

// subcommands are what `relayd <name>` runs instead of a node, in the order -h lists them.
var subcommands = []struct{ name, summary string }{
	{"cluster", "start a local relay network: a dev chain and N funded, connected nodes"},
	{"devchain", "run the embedded development chain; `devchain fund` funds an account on it"},
	{"version", "print the version, the VCS revision and the Go version"},
}

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
		case "version":
			return versionMain(args[1:], os.Stdout, os.Stderr)
		case "help":
			args = []string{"-h"}
		default:
			if !strings.HasPrefix(args[0], "-") {
				fmt.Fprintf(os.Stderr, "relayd: unknown subcommand %q (relayd -h lists them)\n", args[0])
				return 2
			}
		}
	}
	cfg, err := config.Parse(args, os.Getenv, os.Stderr)
	if errors.Is(err, config.ErrHelp) {
		printSubcommands(os.Stderr)
		return 0
	}
	if err == nil {
		err = cfg.LoadPasswordFile()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "relayd: %v\n", err)
		return 2
	}
	n, err := node.New(cfg, os.Stderr, node.Options{})
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

// printSubcommands follows the flags' usage text of `relayd -h`.
func printSubcommands(w io.Writer) {
	fmt.Fprintf(w, "\nWithout a subcommand relayd runs a node with the flags above (each also read from\nRELAYD_<UPPER_SNAKE_NAME>, e.g. RELAYD_API_TOKEN). Subcommands (relayd <subcommand> -h):\n")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
}

// versionMain is `relayd version`.
func versionMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: relayd version")
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			return 0
		}
		return 2
	}
	fmt.Fprintln(stdout, version.ReadBuildInfo())
	return 0
}
