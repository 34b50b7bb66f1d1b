package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/api"
)

// runHealthcheck is `relayd healthcheck`: it asks a running node's REST server whether the node
// is ready (GET /readyz) and exits 0 when it is, 1 when it is not or does not answer, 2 on a usage
// error. The container image runs it as its health check, having neither shell nor curl
// (docs/PACKAGING.md).
func runHealthcheck(args []string, stdout, stderr io.Writer) int {
	return healthcheck(context.Background(), args, os.Getenv, stdout, stderr)
}

// healthcheck is runHealthcheck with the environment given. Without --url it asks the node the
// same RELAYD_API_HOST and RELAYD_API_PORT configure, on the loopback address when the node
// listens on every interface.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relayd healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the node's REST server (default: http://RELAYD_API_HOST:RELAYD_API_PORT, 127.0.0.1:3001 when unset; a wildcard host is asked on the loopback address)")
	live := fs.Bool("live", false, "ask GET /healthz (the process serves) instead of GET /readyz (the node can do its work)")
	timeout := fs.Duration("timeout", 8*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: relayd healthcheck [flags]\n\nExits 0 when the node answers that it is ready (GET /readyz; --live: GET /healthz),\n1 when it is not or does not answer, 2 on a usage error.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	base := *url
	if base == "" {
		base = apiURL(getenv)
	}
	path := api.ReadyPath
	if *live {
		path = api.HealthPath
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+path, nil)
	if err != nil {
		fmt.Fprintf(stderr, "relayd healthcheck: --url: %v\n", err)
		return exitUsage
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stdout, "unhealthy: %v\n", err)
		return exitFailure
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if *live {
		if resp.StatusCode != http.StatusOK {
			fmt.Fprintf(stdout, "unhealthy: %s answered %s\n", path, resp.Status)
			return exitFailure
		}
		fmt.Fprintln(stdout, "live")
		return exitOK
	}
	var r api.Readiness
	if err := json.Unmarshal(body, &r); err != nil {
		fmt.Fprintf(stdout, "unhealthy: %s answered %s, not a readiness report\n", path, resp.Status)
		return exitFailure
	}
	if resp.StatusCode != http.StatusOK || !r.Ready {
		fmt.Fprintf(stdout, "not ready: %s\n", notReady(r))
		return exitFailure
	}
	fmt.Fprintln(stdout, "ready")
	return exitOK
}

// apiURL is the node's REST server as RELAYD_API_HOST and RELAYD_API_PORT configure it.
func apiURL(getenv func(string) string) string {
	host, port := getenv("RELAYD_API_HOST"), getenv("RELAYD_API_PORT")
	if host == "" || host == "0.0.0.0" || host == "::" || host == "[::]" {
		host = "127.0.0.1"
	}
	if port == "" {
		port = "3001"
	}
	return "http://" + net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// notReady names the parts that are not ready, each with its detail.
func notReady(r api.Readiness) string {
	var parts []string
	for _, c := range r.Checks {
		if c.Ready {
			continue
		}
		if c.Detail != "" {
			parts = append(parts, c.Name+" ("+c.Detail+")")
		} else {
			parts = append(parts, c.Name)
		}
	}
	if len(parts) == 0 {
		return "the node says so without naming a part"
	}
	return strings.Join(parts, ", ")
}
