package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/relayd/relayd/internal/doctor"
)

// doctorMain is `relayd doctor [node flags]`: with the flags, environment and config file a node
// would start with, it checks what the start needs (docs/CONFIG.md, "relayd doctor") and prints
// one line per check. Exit 0 when every check passed, 1 when one failed, 2 on a usage error.
func doctorMain(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	l, code := load(args, getenv, stdout, stderr)
	if l == nil {
		return code
	}
	err := l.Config.LoadPasswordFile()
	if err == nil {
		err = l.Config.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "relayd doctor: %v\n", l.Annotate(err))
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := doctor.Run(ctx, l.Config, stdout); err != nil {
		if errors.Is(err, doctor.ErrFailed) {
			fmt.Fprintln(stderr, "relayd doctor: a check failed; the node would not start or not work as configured")
		} else {
			fmt.Fprintf(stderr, "relayd doctor: %v\n", err)
		}
		return exitFailure
	}
	return exitOK
}
