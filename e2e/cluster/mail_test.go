package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/wait"
)

// The courier's REST surface (docs/API.md, "Long, reliable and answerable messages"), as the
// tests of long, reliable and answerable messages drive it.

// longBody is the default ceiling of a message body (maxMessageBytes): 64 KiB.
const longBody = 64 << 10

// outgoing is one of a node's own messages as GET /messages/{id} shows it.
type outgoing struct {
	ID, Recipient, State, Reason               string
	Fragments, Acknowledged, Attempts, Replies int
	CreatedAt, UpdatedAt                       string
}

// kept is one message of a node's inbox as GET /messages lists it.
type kept struct {
	Seq                          uint64
	ID, Body, SentAt, ReceivedAt string
	Reply                        bool
	InReplyTo                    string
	RepliesLeft                  int
}

var messageIDFormat = regexp.MustCompile(`^0x[0-9a-f]{32}$`)

// randomText returns n characters (n a multiple of 4) of Base64 over random bytes: valid UTF-8
// that no two calls share.
func randomText(n int) string {
	b := make([]byte, n/4*3)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// call makes an authenticated REST call and decodes a 2xx JSON answer into out (when not nil).
// Unlike mustCall it returns what went wrong, so that it may run on any goroutine and against a
// node that is down (a kill, churn).
func (c *testCluster) call(ctx context.Context, n node, method, path string, body any, out any) (int, http.Header, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, n.apiURL+"/api/v2"+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Auth-Token", c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s on node %d: %w", method, path, n.index, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, resp.Header, fmt.Errorf("%s %s on node %d: read: %w", method, path, n.index, err)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, resp.Header, fmt.Errorf("%s %s on node %d: HTTP %d %s", method, path, n.index, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, resp.Header, fmt.Errorf("%s %s on node %d: %s: %w", method, path, n.index, raw, err)
		}
	}
	return resp.StatusCode, resp.Header, nil
}

// messageRequest is the body of POST /messages that the courier takes.
type messageRequest struct {
	Body      string `json:"body"`
	Recipient string `json:"recipient"`
	Replies   int    `json:"replies,omitempty"`
	Reliable  bool   `json:"reliable,omitempty"`
}

// postFramed asks from to send a courier message and returns its id; an error when the node
// refused it or could not be reached.
func (c *testCluster) postFramed(ctx context.Context, from node, req messageRequest) (string, error) {
	var id string
	status, header, err := c.call(ctx, from, http.MethodPost, "/messages", req, &id)
	switch {
	case err != nil:
		return "", err
	case status != http.StatusAccepted || !messageIDFormat.MatchString(id):
		return "", fmt.Errorf("POST /messages on node %d: HTTP %d id %q, want 202 and a message id", from.index, status, id)
	case header.Get("Location") != "/api/v2/messages/"+id:
		return "", fmt.Errorf("POST /messages on node %d: Location %q for id %s", from.index, header.Get("Location"), id)
	}
	return id, nil
}

// sendFramed is postFramed that fails the test on a refusal.
func (c *testCluster) sendFramed(from node, req messageRequest) string {
	c.t.Helper()
	id, err := c.postFramed(c.t.Context(), from, req)
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// status reads GET /messages/{id} on n.
func (c *testCluster) status(ctx context.Context, n node, id string) (outgoing, error) {
	var o outgoing
	_, _, err := c.call(ctx, n, http.MethodGet, "/messages/"+id, nil, &o)
	return o, err
}

// awaitFinished polls n's state of message id until it is delivered or failed, through restarts
// of n, and returns it; it fails the test after timeout.
func (c *testCluster) awaitFinished(n node, id string, timeout time.Duration) outgoing {
	c.t.Helper()
	var o outgoing
	c.waitFor(fmt.Sprintf("node %d's message %s is delivered or failed", n.index, id), timeout, func() bool {
		var err error
		o, err = c.status(c.t.Context(), n, id)
		return err == nil && (o.State == "delivered" || o.State == "failed")
	})
	return o
}

// waitFor polls cond (every 20 ms and more: conditions here make REST calls) until it holds,
// failing the test after timeout.
func (c *testCluster) waitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	if !waitUntilCtx(c.t.Context(), timeout, cond) {
		c.t.Fatalf("timed out after %s waiting until %s", timeout, what)
	}
}

// waitUntilCtx polls cond (every 20 ms and more) until it holds (true), timeout passes or ctx
// ends (false).
func waitUntilCtx(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	return wait.Until(func() bool {
		if ctx.Err() != nil || cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
		return false
	}, timeout) && ctx.Err() == nil
}

// inbox lists everything n keeps for its app, oldest first, page by page.
func (c *testCluster) inbox(ctx context.Context, n node) ([]kept, error) {
	var all []kept
	var since uint64
	for {
		var page []kept
		if _, _, err := c.call(ctx, n, http.MethodGet, fmt.Sprintf("/messages?since=%d&limit=1000", since), nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < 1000 {
			return all, nil
		}
		since = page[len(page)-1].Seq
	}
}

// mustInbox is inbox that fails the test on an error.
func (c *testCluster) mustInbox(n node) []kept {
	c.t.Helper()
	list, err := c.inbox(c.t.Context(), n)
	if err != nil {
		c.t.Fatal(err)
	}
	return list
}

// metrics reads the named counters and gauges (without labels) from n's GET /node/metrics.
func (c *testCluster) metrics(ctx context.Context, n node, names ...string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.apiURL+"/api/v2/node/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Auth-Token", c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics of node %d: %w", n.index, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics of node %d: HTTP %d", n.index, resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && slices.Contains(names, name) {
			if v, err := strconv.ParseFloat(value, 64); err == nil {
				out[name] = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("metrics of node %d: %w", n.index, err)
	}
	for _, name := range names {
		if _, ok := out[name]; !ok {
			return nil, fmt.Errorf("metrics of node %d lack %s", n.index, name)
		}
	}
	return out, nil
}

// metric reads one metric of n, failing the test on an error.
func (c *testCluster) metric(n node, name string) float64 {
	c.t.Helper()
	m, err := c.metrics(c.t.Context(), n, name)
	if err != nil {
		c.t.Fatal(err)
	}
	return m[name]
}

// appFrame is one frame of the app message stream (GET /api/v2/messages/websocket), with the
// time the test read it.
type appFrame struct {
	Type      string `json:"type"`
	ID        json.RawMessage
	MessageID string `json:"messageId"`
	Body      string `json:"body"`
	Reply     bool   `json:"reply"`
	InReplyTo string `json:"inReplyTo"`
	Reason    string `json:"reason"`
	read      time.Time
}

// seq is a message frame's inbox seq.
func (f appFrame) seq() uint64 {
	s, _ := strconv.ParseUint(string(f.ID), 10, 64)
	return s
}

// appStream connects to n's app message stream (live frames only) and returns its frames.
func (c *testCluster) appStream(n node) <-chan appFrame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), waitTimeout)
	defer cancel()
	u := strings.Replace(n.apiURL, "http://", "ws://", 1) + "/api/v2/messages/websocket?apiToken=" + url.QueryEscape(c.token)
	conn, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		c.t.Fatalf("dial node %d's message stream: %v", n.index, err)
	}
	conn.SetReadLimit(1 << 20)
	c.t.Cleanup(func() { conn.CloseNow() })
	frames := make(chan appFrame, 1024)
	go func() {
		defer close(frames)
		for {
			_, b, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			f := appFrame{Type: "invalid"}
			if json.Unmarshal(b, &f) != nil {
				f = appFrame{Type: "invalid", Body: string(b)}
			}
			f.read = time.Now()
			frames <- f
		}
	}()
	return frames
}

// nextFrame returns the first frame of frames that matches, within timeout.
func (c *testCluster) nextFrame(frames <-chan appFrame, timeout time.Duration, what string, match func(appFrame) bool) appFrame {
	c.t.Helper()
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				c.t.Fatalf("message stream closed waiting for %s", what)
			}
			if match(f) {
				return f
			}
		case <-t.C:
			c.t.Fatalf("no %s within %s", what, timeout)
		}
	}
}

// quantile returns the q-quantile (nearest rank) of ds, which it sorts.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(q*float64(len(ds))+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
