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
	{"backup", "copy a running node's store (through its API) or a stopped node's (--data) to a file"},
	{"cluster", "start a local relay network: a dev chain and N funded, connected nodes"},
	{"config", "print the effective configuration (flags, RELAYD_*, config file, defaults), secrets redacted"},
	{"deploy", "deploy the token (or take one) and the channels contract on a chain; write a networks file"},
	{"devchain", "run the embedded development chain; `devchain fund` funds an account on it"},
	{"doctor", "check what a node's start needs (keystore, data, ports, announce, provider, network, balances)"},
	{"healthcheck", "exit 0 when a node's /readyz says ready, 1 when not (for container health checks)"},
	{"version", "print the version, the VCS revision and the Go version"},
}

// Exit codes of relayd and its subcommands.
const (
	exitOK      = 0 // a clean stop, or what was asked was printed
	exitFailure = 1 // a runtime failure: the node could not start or stopped with an error
	exitUsage   = 2 // a usage error: a bad flag, value, environment variable or config file
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
		case "version":
			return versionMain(args[1:], os.Stdout, os.Stderr)
		case "config":
			return configMain(args[1:], os.Getenv, os.Stdout, os.Stderr)
		case "backup":
			return runBackup(args[1:], os.Stdout, os.Stderr)
		case "deploy":
			return runDeploy(args[1:], os.Stdout, os.Stderr)
		case "doctor":
			return doctorMain(args[1:], os.Getenv, os.Stdout, os.Stderr)
		case "healthcheck":
			return runHealthcheck(args[1:], os.Stdout, os.Stderr)
		case "help":
			args = []string{"-h"}
		default:
			if !strings.HasPrefix(args[0], "-") {
				fmt.Fprintf(os.Stderr, "relayd: unknown subcommand %q (relayd -h lists them)\n", args[0])
				return exitUsage
			}
		}
	}
	l, code := load(args, os.Getenv, os.Stdout, os.Stderr)
	if l == nil {
		return code
	}
	err := l.Config.LoadPasswordFile()
	if err == nil {
		err = l.Config.Validate()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "relayd: %v\n", l.Annotate(err))
		return exitUsage
	}
	n, err := node.New(l.Config, os.Stderr, node.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "relayd: %v\n", l.Annotate(err))
		return exitFailure
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the next signal takes the default action: exit at once
	}()
	if err := n.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "relayd: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// load reads the node's configuration (config.Load). When it did not get one, because the user
// asked for usage text or the version (printed here) or made a usage error (reported here), it
// returns nil and the exit code.
func load(args []string, getenv func(string) string, stdout, stderr io.Writer) (*config.Loaded, int) {
	l, err := config.Load(args, getenv, stderr)
	switch {
	case err == nil:
		return l, exitOK
	case errors.Is(err, config.ErrHelp):
		printSubcommands(stderr)
		return nil, exitOK
	case errors.Is(err, config.ErrVersion):
		fmt.Fprintln(stdout, version.ReadBuildInfo())
		return nil, exitOK
	}
	fmt.Fprintf(stderr, "relayd: %v\n", err)
	return nil, exitUsage
}

// configMain is `relayd config [flags]`: it prints the configuration a node started with the
// same flags, environment and config file would run with, where each value came from, secrets
// redacted; then it validates it (exit 2 when it is not valid).
func configMain(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	l, code := load(args, getenv, stdout, stderr)
	if l == nil {
		return code
	}
	pwErr := l.Config.LoadPasswordFile()
	if err := l.WriteEffective(stdout); err != nil {
		fmt.Fprintf(stderr, "relayd: %v\n", err)
		return exitFailure
	}
	err := pwErr
	if err == nil {
		err = l.Config.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "relayd: %v\n", l.Annotate(err))
		return exitUsage
	}
	return exitOK
}

// printSubcommands follows the flags' usage text of `relayd -h`.
func printSubcommands(w io.Writer) {
	fmt.Fprintf(w, "\nWithout a subcommand relayd runs a node with the flags above. Each is also read from\n"+
		"RELAYD_<UPPER_SNAKE_NAME> (e.g. RELAYD_API_TOKEN) and from the --config file (key: the flag name);\n"+
		"a flag wins over its variable, which wins over the file. Exit codes: 0 clean stop, 1 runtime\n"+
		"failure, 2 usage error. Subcommands (relayd <subcommand> -h):\n")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
}

// versionMain is `relayd version`.
func versionMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: relayd version")
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			return exitOK
		}
		return exitUsage
	}
	fmt.Fprintln(stdout, version.ReadBuildInfo())
	return exitOK
}
