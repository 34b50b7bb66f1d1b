package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/relayd/relayd/internal/console"
	"github.com/relayd/relayd/internal/ws"
)

const sessionsUsage = `usage: relayctl sessions [flags] [list]
       relayctl sessions [flags] open [--listen HOST:PORT] <destination> <tcp|udp> <host:port | service:NAME>
       relayctl sessions [flags] close <id>

Sessions through a node's REST API (` + "`" + `--api` + "`" + `, env RELAYCTL_API_URL; default ` + defaultAPI + `): a
session listens on a local address and carries every TCP connection (or UDP flow) accepted there
through the network to the destination (a PeerId or an alias), which connects it to the target
(host:port, when its exitAllow setting allows it) or to the service it offers by that name.

  list    GET /api/v2/sessions: the open sessions, oldest first: id, protocol, where each listens
          and goes, its connections (active/in all), what went out and came in (rate over the
          last 10 s, and total), retransmissions. --watch 2s prints them again every 2 seconds
          until interrupted.
  open    POST /api/v2/sessions: prints the session's id and the address it listens on
          (--listen; a free loopback port by default), separated by a space.
  close   DELETE /api/v2/sessions/<id>.

Flags go before the arguments (--listen after open). --json prints the node's JSON answer as it
came. Exit status: 0 done, 1 the node refused or failed (its answer on stderr), 2 bad usage.

Flags:
`

// runSessions is `relayctl sessions`; args exclude the subcommand name.
func runSessions(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return sessionsMain(ctx, args, os.Stdout, os.Stderr)
}

func sessionsMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var (
		api, token string
		timeout    time.Duration
		watch      time.Duration
		asJSON     bool
	)
	fs := flag.NewFlagSet("relayctl sessions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, sessionsUsage); fs.PrintDefaults() }
	fs.StringVar(&api, "api", "", "REST API URL of the node (env RELAYCTL_API_URL; default "+defaultAPI+")")
	fs.StringVar(&token, "apiToken", "", "the node's API token (env RELAYD_API_TOKEN)")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "give up on the node's answer after this long")
	fs.BoolVar(&asJSON, "json", false, "print the node's JSON answer as it came")
	fs.DurationVar(&watch, "watch", 0, "list: print the sessions again at this interval until interrupted (at least 1s)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if api == "" {
		api = envOr("RELAYCTL_API_URL", defaultAPI)
	}
	if token == "" {
		token = os.Getenv("RELAYD_API_TOKEN")
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "relayctl sessions: %s\n", console.Redact(fmt.Sprintf(format, a...), token))
		return 2
	}
	c, err := newRESTClient(api, token, timeout)
	if err != nil {
		return usageErr("%v", err)
	}
	verb, rest := "list", fs.Args()
	if len(rest) > 0 {
		verb, rest = rest[0], rest[1:]
	}
	if watch != 0 && (verb != "list" || watch < time.Second) {
		return usageErr("--watch takes an interval of at least 1s, and only lists")
	}
	var req restRequest
	switch verb {
	case "list", "ls":
		if len(rest) > 0 {
			return usageErr("list takes no arguments")
		}
		req = restRequest{method: http.MethodGet, path: "/sessions"}
	case "open":
		ofs := flag.NewFlagSet("relayctl sessions open", flag.ContinueOnError)
		ofs.SetOutput(stderr)
		ofs.Usage = fs.Usage
		listen := ofs.String("listen", "", "the local host:port to listen on (default: a free port on 127.0.0.1)")
		if err := ofs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		body, err := sessionBody(ofs.Args(), *listen)
		if err != nil {
			return usageErr("%v", err)
		}
		req = restRequest{method: http.MethodPost, path: "/sessions", body: body}
	case "close":
		if len(rest) != 1 {
			return usageErr("close needs one session id (relayctl sessions lists them)")
		}
		req = restRequest{method: http.MethodDelete, path: "/sessions/" + url.PathEscape(rest[0])}
	default:
		return usageErr("%q is not list, open or close", verb)
	}
	for {
		status, raw, err := c.do(ctx, req)
		switch {
		case err != nil && ctx.Err() != nil && watch > 0:
			return 0 // interrupted while watching
		case err != nil:
			fmt.Fprintf(stderr, "relayctl sessions: %s\n", console.Redact(err.Error(), token))
			return 1
		case status >= 300:
			fmt.Fprintf(stderr, "relayctl sessions: %d %s\n", status, refusal(raw))
			return 1
		}
		if asJSON {
			stdout.Write(raw)
		} else if err := printSessions(stdout, verb, raw); err != nil {
			fmt.Fprintf(stderr, "relayctl sessions: the node's answer: %v\n", err)
			return 1
		}
		if watch == 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return 0
		case <-time.After(watch):
		}
		if !asJSON {
			fmt.Fprintln(stdout)
		}
	}
}

// sessionBody is the body of POST /sessions from open's arguments: destination, protocol, and
// host:port or service:NAME.
func sessionBody(args []string, listen string) (map[string]any, error) {
	if len(args) != 3 {
		return nil, errors.New("open needs a destination, tcp or udp, and host:port or service:NAME")
	}
	protocol := strings.ToLower(args[1])
	if protocol != "tcp" && protocol != "udp" {
		return nil, fmt.Errorf("%q is neither tcp nor udp", args[1])
	}
	body := map[string]any{"destination": args[0], "protocol": protocol}
	if name, ok := strings.CutPrefix(args[2], "service:"); ok {
		body["service"] = name
	} else {
		body["target"] = args[2]
	}
	if listen != "" {
		body["listen"] = listen
	}
	return body, nil
}

// sessionView is a session as the REST API shows it.
type sessionView struct {
	ID          string  `json:"id"`
	Destination string  `json:"destination"`
	Protocol    string  `json:"protocol"`
	Target      string  `json:"target"`
	Service     string  `json:"service"`
	Listen      string  `json:"listen"`
	Opened      string  `json:"opened"`
	Active      int     `json:"active"`
	Total       int     `json:"total"`
	BytesOut    float64 `json:"bytesOut"`
	BytesIn     float64 `json:"bytesIn"`
	RateOut     float64 `json:"rateOut"`
	RateIn      float64 `json:"rateIn"`
	Retransmits uint64  `json:"retransmits"`
}

// what is the session's target, or service:NAME.
func (s sessionView) what() string {
	if s.Service != "" {
		return "service:" + s.Service
	}
	return s.Target
}

// printSessions prints a successful answer for people, the node's strings escaped.
func printSessions(w io.Writer, verb string, raw []byte) error {
	switch verb {
	case "open":
		var s sessionView
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		fmt.Fprintln(w, ws.Escape(s.ID), ws.Escape(s.Listen))
	case "close":
	default:
		var list []sessionView
		if err := json.Unmarshal(raw, &list); err != nil {
			return err
		}
		if len(list) == 0 {
			fmt.Fprintln(w, "No open sessions.")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPROTO\tLISTEN\tDESTINATION\tTARGET\tCONNS\tOUT\tIN\tRETRANS\tOPENED")
		for _, s := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\t%s (%s)\t%s (%s)\t%d\t%s\n",
				ws.Escape(s.ID), ws.Escape(s.Protocol), ws.Escape(s.Listen), ws.Escape(s.Destination), ws.Escape(s.what()),
				s.Active, s.Total, byteRate(s.RateOut), byteCount(s.BytesOut), byteRate(s.RateIn), byteCount(s.BytesIn),
				s.Retransmits, ws.Escape(s.Opened))
		}
		return tw.Flush()
	}
	return nil
}

// byteCount is a number of bytes in SI units: 512 B, 5.1 kB, 1.0 MB (as the admin console
// writes them).
func byteCount(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		v = 0
	}
	const units = "kMGTPE"
	if v < 1000 {
		return fmt.Sprintf("%.0f B", v)
	}
	i := -1
	for v >= 999.95 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, units[i])
}

// byteRate is a rate in bytes per second in SI units.
func byteRate(v float64) string { return byteCount(v) + "/s" }
