// Package benchtest is a fake relayd network for tests of the bench tool:
// each node serves POST /api/v2/messages and GET /api/v2/node/metrics over
// httptest, and the real admin WebSocket server of internal/ws, on which a
// message the fake accepts is "received" by its recipient with the frames a
// node publishes.
package benchtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/relayd/relayd/internal/admin"
	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/ws"
)

// Token is the fake network's API token.
const Token = "S3cret!token"

// Options shape the fake's behaviour; the functions get the message's
// sequence number (bench.MessageText) and may be nil.
type Options struct {
	Nodes int // default 4
	// Reject answers a message with an error status and code instead of 202.
	Reject func(seq int) (status int, code string, reject bool)
	// Drop accepts a message but never delivers it.
	Drop func(seq int) bool
	// Misroute delivers a message addressed to node `to` (1-based) to
	// the node it returns instead; returning to delivers it right.
	Misroute func(seq, to int) int
	// NodeLatencyMs is the "Latency: n ms" line of every delivery.
	NodeLatencyMs int
}

// Network is a running fake network.
type Network struct {
	Env  bench.Env
	Hubs []*ws.Hub // the admin hub of node i+1

	mu       sync.Mutex
	posts    int
	scrapes  []int
	messages []string // every accepted text, in order of acceptance
	replies  []int    // the reply blocks each asked for
	routes   map[[2]int]int
}

// Start starts a fake network and stops it when the test ends.
func Start(t testing.TB, o Options) *Network {
	t.Helper()
	if o.Nodes == 0 {
		o.Nodes = 4
	}
	n := &Network{Env: bench.Env{APIToken: Token, ChainRPC: "http://127.0.0.1:1"}, scrapes: make([]int, o.Nodes), routes: map[[2]int]int{}}
	peers := map[string]int{}
	for i := range o.Nodes {
		peers[fmt.Sprintf("16Uiu2HAmFakePeer%d", i+1)] = i
	}
	for i := range o.Nodes {
		hub := ws.NewHub(nil)
		cmds, err := admin.NewCommands()
		if err != nil {
			t.Fatal(err)
		}
		wsSrv, err := ws.New(ws.Config{Token: Token, Hub: hub, Commands: cmds})
		if err != nil {
			t.Fatal(err)
		}
		adminSrv := httptest.NewServer(wsSrv)
		t.Cleanup(adminSrv.Close)
		n.Hubs = append(n.Hubs, hub)

		mux := http.NewServeMux()
		mux.HandleFunc("POST /api/v2/messages", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("x-auth-token") != Token {
				http.Error(w, `{"status":403}`, http.StatusForbidden)
				return
			}
			var req struct {
				Body, Recipient string
				Replies         int
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				writeError(w, http.StatusBadRequest, "INVALID_INPUT")
				return
			}
			to, ok := peers[req.Recipient]
			if !ok {
				writeError(w, http.StatusBadRequest, "INVALID_PEERID")
				return
			}
			_, seq, _ := bench.ParseMessageText(req.Body)
			if o.Reject != nil {
				if status, code, reject := o.Reject(seq); reject {
					writeError(w, status, code)
					return
				}
			}
			n.mu.Lock()
			n.posts++
			n.messages = append(n.messages, req.Body)
			n.replies = append(n.replies, req.Replies)
			n.routes[[2]int{i + 1, to + 1}]++
			n.mu.Unlock()
			if o.Misroute != nil {
				if got := o.Misroute(seq, to+1); got >= 1 && got <= o.Nodes {
					to = got - 1
				}
			}
			if o.Drop == nil || !o.Drop(seq) {
				// Delivered before the API answers: the tool must cope.
				now := n.Hubs[to].Now()
				n.Hubs[to].PublishSeq(
					ws.NewFrame(ws.TypeLog, "#### NODE RECEIVED MESSAGE ["+now.UTC().Format(ws.TimeFormat)+"] ####", now),
					ws.NewFrame(ws.TypeLog, "Message: "+req.Body, now),
					ws.NewFrame(ws.TypeLog, fmt.Sprintf("Latency: %d ms", o.NodeLatencyMs), now),
					ws.NewFrame(ws.TypeMessage, req.Body, now),
				)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `"0x020000000000000000000000000000000000000000000000000000000000000000"`)
		})
		mux.HandleFunc("GET /api/v2/node/metrics", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("x-auth-token") != Token {
				http.Error(w, `{"status":403}`, http.StatusForbidden)
				return
			}
			n.mu.Lock()
			k := n.scrapes[i]
			n.scrapes[i]++
			n.mu.Unlock()
			// CPU grows by 0.25 s per scrape; RSS peaks at the third scrape.
			rss := 50e6
			if k == 2 {
				rss = 80e6
			}
			fmt.Fprintf(w, "# HELP process_cpu_seconds_total x\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %g\n", 10+0.25*float64(k))
			fmt.Fprintf(w, "process_resident_memory_bytes %g\nrelayd_message_latency_seconds_bucket{le=\"0.005\"} 3\n", rss)
			// The relay's counters grow by 100 sent, 200 forwarded and 100 delivered packets per
			// scrape, so a node's CPU per packet is 2.5 ms (1.25 ms forwarded).
			fmt.Fprintf(w, "relayd_relay_packets_sent_total %d\nrelayd_relay_packets_forwarded_total %d\nrelayd_relay_packets_delivered_total %d\n", 100*k, 200*k, 100*k)
		})
		api := httptest.NewServer(mux)
		t.Cleanup(api.Close)
		n.Env.Nodes = append(n.Env.Nodes, bench.Node{Index: i + 1, PeerID: fmt.Sprintf("16Uiu2HAmFakePeer%d", i+1),
			NativeAddress: fmt.Sprintf("0x%040d", i+1), APIURL: api.URL, WSURL: strings.Replace(adminSrv.URL, "http://", "ws://", 1)})
	}
	return n
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"status":%q,"error":"fake failure"}`, code)
}

// Accepted returns the texts the fake accepted.
func (n *Network) Accepted() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.messages...)
}

// Replies returns the reply blocks each accepted message asked for, in the order of Accepted.
func (n *Network) Replies() []int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]int(nil), n.replies...)
}

// Routes returns how many messages the fake accepted from each sender to
// each recipient, keyed by {sender, recipient} (1-based).
func (n *Network) Routes() map[[2]int]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return maps.Clone(n.routes)
}

// Scrapes returns how often node i (1-based) was scraped.
func (n *Network) Scrapes(i int) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.scrapes[i-1]
}

// EnvFile renders the network's env as cluster.env does.
func (n *Network) EnvFile() string {
	var b strings.Builder
	fmt.Fprintf(&b, "export RELAY_API_TOKEN='%s'\nexport RELAY_CHAIN_RPC=%s\nexport RELAY_NODE_COUNT=%d\n", n.Env.APIToken, n.Env.ChainRPC, len(n.Env.Nodes))
	for _, nd := range n.Env.Nodes {
		fmt.Fprintf(&b, "export RELAY_NODE_%d_PEER_ID=%s\nexport RELAY_NODE_%d_NATIVE_ADDRESS=%s\nexport RELAY_NODE_%d_API_URL=%s\nexport RELAY_NODE_%d_WS_URL=%s\n",
			nd.Index, nd.PeerID, nd.Index, nd.NativeAddress, nd.Index, nd.APIURL, nd.Index, nd.WSURL)
	}
	return b.String()
}
