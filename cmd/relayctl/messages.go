package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/relayd/relayd/internal/console"
	"github.com/relayd/relayd/internal/ws"
)

const messagesUsage = `usage: relayctl send [flags] [--replies N] [--reliable] <recipient> <text… | ->
       relayctl inbox [flags] [--since SEQ] [--limit N] [--pop]
       relayctl reply [flags] <seq> <text… | ->
       relayctl status [flags] <message id>

Messages through a node's REST API (` + "`" + `--api` + "`" + `, env RELAYCTL_API_URL; default ` + defaultAPI + `):

  send    POST /api/v2/messages: sends the text (the remaining arguments joined by spaces, or
          standard input with -) to the recipient (a PeerId or an alias). A text longer than one
          packet (500 bytes), --reliable or --replies N (reply blocks for anonymous answers, up
          to 16) goes through the node's courier and prints the message's id; otherwise it
          prints the packet's acknowledgement challenge.
  inbox   GET /api/v2/messages: lists the received messages the node keeps, oldest first, after
          --since (--limit at most, 100 by default); --pop takes the oldest one out instead
          (POST /api/v2/messages/pop; nothing is printed when the inbox is empty).
  reply   POST /api/v2/messages/inbox/<seq>/reply: answers message <seq> on its reply blocks.
  status  GET /api/v2/messages/<id>: what became of a message sent through the courier.

Flags go before the arguments. Received text is printed with control characters escaped;
--json prints the node's JSON answer as it came. Exit status: 0 done, 1 the node refused or
failed (its answer on stderr), 2 bad usage.

Flags:
`

// defaultAPI is the REST API of a node started with the defaults.
const defaultAPI = "http://127.0.0.1:3001"

// messagesCommands are the subcommands of relayctl that call the REST message operations.
var messagesCommands = map[string]bool{"send": true, "inbox": true, "reply": true, "status": true}

// runMessages is `relayctl send|inbox|reply|status`; args exclude the subcommand name.
func runMessages(cmd string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return messagesMain(ctx, cmd, args, os.Stdin, os.Stdout, os.Stderr)
}

// messagesOptions are the flags of the message subcommands.
type messagesOptions struct {
	api, token string
	timeout    time.Duration
	json       bool
	// send
	replies  int
	reliable bool
	// inbox
	since uint64
	limit int
	pop   bool
}

func messagesMain(ctx context.Context, cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o messagesOptions
	fs := flag.NewFlagSet("relayctl "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, messagesUsage); fs.PrintDefaults() }
	fs.StringVar(&o.api, "api", "", "REST API URL of the node (env RELAYCTL_API_URL; default "+defaultAPI+")")
	fs.StringVar(&o.token, "apiToken", "", "the node's API token (env RELAYD_API_TOKEN)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up on the node's answer after this long")
	fs.BoolVar(&o.json, "json", false, "print the node's JSON answer as it came")
	switch cmd {
	case "send":
		fs.IntVar(&o.replies, "replies", 0, "reply blocks the message carries for anonymous answers (0 to 16)")
		fs.BoolVar(&o.reliable, "reliable", false, "send through the courier even a text one packet holds (acknowledged, sent again)")
	case "inbox":
		fs.Uint64Var(&o.since, "since", 0, "list the messages after this seq")
		fs.IntVar(&o.limit, "limit", 0, "list at most this many (1 to 1000; default 100)")
		fs.BoolVar(&o.pop, "pop", false, "take the oldest message out of the inbox and print it")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.api == "" {
		o.api = envOr("RELAYCTL_API_URL", defaultAPI)
	}
	if o.token == "" {
		o.token = os.Getenv("RELAYD_API_TOKEN")
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "relayctl %s: %s\n", cmd, console.Redact(fmt.Sprintf(format, a...), o.token))
		return 2
	}
	c, err := newRESTClient(o.api, o.token, o.timeout)
	if err != nil {
		return usageErr("%v", err)
	}
	rest := fs.Args()
	var req restRequest
	switch cmd {
	case "send":
		if len(rest) < 2 {
			return usageErr("send needs a recipient and a text (or - for standard input)")
		}
		text, err := textArg(rest[1:], stdin)
		if err != nil {
			return usageErr("%v", err)
		}
		body := map[string]any{"body": text, "recipient": rest[0]}
		if o.replies != 0 {
			body["replies"] = o.replies
		}
		if o.reliable {
			body["reliable"] = true
		}
		req = restRequest{method: http.MethodPost, path: "/messages", body: body}
	case "inbox":
		if len(rest) > 0 {
			return usageErr("inbox takes no arguments, only flags (--since, --limit, --pop)")
		}
		if o.pop {
			req = restRequest{method: http.MethodPost, path: "/messages/pop"}
			break
		}
		q := url.Values{}
		if o.since > 0 {
			q.Set("since", strconv.FormatUint(o.since, 10))
		}
		if o.limit != 0 {
			q.Set("limit", strconv.Itoa(o.limit))
		}
		req = restRequest{method: http.MethodGet, path: "/messages", query: q}
	case "reply":
		if len(rest) < 2 {
			return usageErr("reply needs a message's seq and a text (or - for standard input)")
		}
		seq, err := strconv.ParseUint(rest[0], 10, 64)
		if err != nil || seq == 0 {
			return usageErr("%q is not a message's seq (a whole number of at least 1; relayctl inbox lists them)", rest[0])
		}
		text, err := textArg(rest[1:], stdin)
		if err != nil {
			return usageErr("%v", err)
		}
		req = restRequest{method: http.MethodPost, path: "/messages/inbox/" + strconv.FormatUint(seq, 10) + "/reply", body: map[string]any{"body": text}}
	case "status":
		if len(rest) != 1 {
			return usageErr("status needs one message id (0x and 32 hexadecimal digits)")
		}
		req = restRequest{method: http.MethodGet, path: "/messages/" + url.PathEscape(rest[0])}
	}
	status, raw, err := c.do(ctx, req)
	if err != nil {
		fmt.Fprintf(stderr, "relayctl %s: %s\n", cmd, console.Redact(err.Error(), o.token))
		return 1
	}
	if status >= 300 {
		fmt.Fprintf(stderr, "relayctl %s: %d %s\n", cmd, status, refusal(raw))
		return 1
	}
	if o.json {
		stdout.Write(raw)
		return 0
	}
	if err := printAnswer(stdout, cmd, req, status, raw); err != nil {
		fmt.Fprintf(stderr, "relayctl %s: the node's answer: %v\n", cmd, err)
		return 1
	}
	return 0
}

// refusal is what a failed answer says: the envelope's code and text, or the authentication
// failure's message, escaped.
func refusal(raw []byte) string {
	var e struct {
		Status  any    `json:"status"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	switch json.Unmarshal(raw, &e); {
	case e.Error != "":
		return fmt.Sprint(e.Status) + ": " + ws.Escape(e.Error)
	case e.Message != "":
		return ws.Escape(e.Message)
	}
	return "(no explanation)"
}

// textArg is the text of send and reply: the arguments joined by spaces, or standard input for a
// lone "-" (as it is, but for one final newline).
func textArg(args []string, stdin io.Reader) (string, error) {
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, 64<<20))
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		if !utf8.Valid(b) {
			return "", errors.New("standard input is not UTF-8 text")
		}
		if len(b) == 0 {
			return "", errors.New("standard input is empty")
		}
		return string(b), nil
	}
	text := strings.Join(args, " ")
	if text == "" {
		return "", errors.New("the text is empty")
	}
	return text, nil
}

// printAnswer prints a successful answer for people.
func printAnswer(w io.Writer, cmd string, req restRequest, status int, raw []byte) error {
	switch {
	case cmd == "send":
		var id string
		if err := json.Unmarshal(raw, &id); err != nil {
			return err
		}
		fmt.Fprintln(w, id)
	case cmd == "inbox" && status == http.StatusNoContent:
	case cmd == "inbox" && req.path == "/messages/pop":
		var m inboxMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		fmt.Fprintln(w, m.line())
	case cmd == "inbox":
		var list []inboxMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return err
		}
		for _, m := range list {
			fmt.Fprintln(w, m.line())
		}
	case cmd == "reply":
		var r struct {
			ID          string `json:"id"`
			RepliesLeft int    `json:"repliesLeft"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s (%d reply blocks left)\n", r.ID, r.RepliesLeft)
	case cmd == "status":
		var m struct {
			ID, Recipient, State, Reason string
			Fragments, Acknowledged      int
			Attempts, Replies            int
			CreatedAt                    string `json:"createdAt"`
			UpdatedAt                    string `json:"updatedAt"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s to %s: %s, %d of %d packets acknowledged, %d rounds, %d reply blocks; accepted %s, last change %s\n",
			m.ID, m.Recipient, m.State, m.Acknowledged, m.Fragments, m.Attempts, m.Replies, m.CreatedAt, m.UpdatedAt)
		if m.Reason != "" {
			fmt.Fprintf(w, "reason: %s\n", ws.Escape(m.Reason))
		}
	}
	return nil
}

// inboxMessage is a kept message as the REST API shows it.
type inboxMessage struct {
	Seq         uint64 `json:"seq"`
	ID          string `json:"id"`
	Body        string `json:"body"`
	SentAt      string `json:"sentAt"`
	ReceivedAt  string `json:"receivedAt"`
	Reply       bool   `json:"reply"`
	InReplyTo   string `json:"inReplyTo"`
	RepliesLeft int    `json:"repliesLeft"`
}

// line is the message on one line, its text escaped: it comes from a remote peer.
func (m inboxMessage) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", m.Seq, m.ReceivedAt)
	if m.Reply {
		fmt.Fprintf(&b, ", reply to %s", m.InReplyTo)
	}
	if m.RepliesLeft > 0 {
		fmt.Fprintf(&b, ", %d replies left", m.RepliesLeft)
	}
	b.WriteString(": ")
	b.WriteString(ws.Escape(m.Body))
	return b.String()
}

// restClient calls one node's REST API with its token.
type restClient struct {
	base  *url.URL
	token string
	http  *http.Client
}

// restRequest is one call: a path under /api/v2, a query, a JSON body.
type restRequest struct {
	method, path string
	query        url.Values
	body         any
}

func newRESTClient(api, token string, timeout time.Duration) (*restClient, error) {
	u, err := url.Parse(strings.TrimSuffix(api, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--api must be the node's REST URL, such as %s", defaultAPI)
	}
	u.Path = strings.TrimSuffix(u.Path, "/api/v2")
	return &restClient{base: u, token: token, http: &http.Client{Timeout: timeout}}, nil
}

// do makes the call and returns the status and the body.
func (c *restClient) do(ctx context.Context, r restRequest) (int, []byte, error) {
	u := *c.base
	u.Path += "/api/v2" + r.path
	u.RawQuery = r.query.Encode()
	var body io.Reader
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("x-auth-token", c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", r.method, u.Redacted(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", r.method, u.Redacted(), err)
	}
	return resp.StatusCode, raw, nil
}
