package node

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/ws"
)

// restGet calls the node's REST port and returns the status and body.
func restGet(t *testing.T, n *Node, method, path, body string, token bool) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+n.APIAddr().String()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token {
		req.Header.Set("X-Auth-Token", "S3cret!token")
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMessageStreamOnRESTPort: an app on the REST port receives what the
// node delivers, as numbered message frames, and the admin stream carries
// the admin frames; both end when the node stops.
func TestMessageStreamOnRESTPort(t *testing.T) {
	n, stop := runNode(t, testConfig(t))
	base := "ws://" + n.APIAddr().String() + api.Prefix
	dial := func(path string) *websocket.Conn {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		c, _, err := websocket.Dial(ctx, base+path+sep+"apiToken="+url.QueryEscape("S3cret!token"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		return c
	}
	// With since=0 the client also gets what arrives while it connects.
	msgs, admin := dial("/messages/websocket?since=0"), dial("/node/stream/websocket")
	read := func(c *websocket.Conn) []byte {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	now := time.Now()
	n.inbox.Deliver(relay.Received{Text: "hello app", SentAt: now, ReceivedAt: now})
	var m ws.AppMessage
	if err := json.Unmarshal(read(msgs), &m); err != nil {
		t.Fatal(err)
	}
	if m.Body != "hello app" || m.Type != "message" || m.ID < 1 || m.ReceivedAt == "" {
		t.Fatalf("frame %+v", m)
	}
	for found := false; !found; {
		var f ws.Frame
		json.Unmarshal(read(admin), &f)
		found = f.Type == ws.TypeMessage && f.Msg == "hello app"
	}
	stop()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := msgs.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusGoingAway {
				t.Fatalf("after stop: %v, want going away", err)
			}
			break
		}
	}
}

// TestSignMessage: REST and the admin command sign sha256 of the prefixed
// message with the node's key; the signature verifies with its public key.
func TestSignMessage(t *testing.T) {
	n := startNode(t, testConfig(t))
	status, body := restGet(t, n, "POST", api.Prefix+"/messages/sign", `{"message":"hello"}`, true)
	var got api.SignResponse
	if status != 200 || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("%d %s", status, body)
	}
	sig, err := hexutil.Decode(got.Signature)
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature %q", got.Signature)
	}
	digest := sha256.Sum256([]byte("RELAY Signed Message: hello"))
	if !crypto.VerifySignature(n.id.PublicKey(), digest[:], sig) {
		t.Fatal("the signature does not verify with the node's key over the prefixed message")
	}
	other := sha256.Sum256([]byte("hello"))
	if crypto.VerifySignature(n.id.PublicKey(), other[:], sig) {
		t.Fatal("the signature verifies without the prefix")
	}
	out := dialAdmin(t, n).run("sign hello", func(string) bool { return true })
	if out[0] != "Signed message: "+got.Signature {
		t.Fatalf("admin sign: %q, want the REST signature %s", out[0], got.Signature)
	}
}

// TestHealthEndpoints: /healthz and /readyz answer without a token; a node
// without a chain is ready once its transport listens (and its relay records tickets).
func TestHealthEndpoints(t *testing.T) {
	n := startNode(t, testConfig(t))
	if status, body := restGet(t, n, "GET", "/healthz", "", false); status != 200 || !strings.Contains(body, `"ok"`) {
		t.Fatalf("healthz: %d %s", status, body)
	}
	status, body := restGet(t, n, "GET", "/readyz", "", false)
	var r api.Readiness
	if status != 200 || json.Unmarshal([]byte(body), &r) != nil || !r.Ready || len(r.Checks) != 4 {
		t.Fatalf("readyz: %d %s", status, body)
	}
}

// TestEntryNodesAndPeerAddresses: the static peers are entry nodes; the
// transport's addresses of a peer are its observed ones.
func TestEntryNodesAndPeerAddresses(t *testing.T) {
	other, _ := identity.Generate()
	cfg := testConfig(t)
	cfg.Peers = []string{"/ip4/127.0.0.1/tcp/1/p2p/" + other.PeerID().String()}
	n := startNode(t, cfg)
	status, body := restGet(t, n, "GET", api.Prefix+"/node/entryNodes", "", true)
	var entries map[string]api.EntryNode
	if status != 200 || json.Unmarshal([]byte(body), &entries) != nil {
		t.Fatalf("%d %s", status, body)
	}
	e, ok := entries[other.PeerID().String()]
	if !ok || !e.IsEligible || len(e.Multiaddrs) != 1 || e.Multiaddrs[0] != "/ip4/127.0.0.1/tcp/1" {
		t.Fatalf("entry nodes %s", body)
	}
	status, body = restGet(t, n, "GET", api.Prefix+"/peerInfo/"+other.PeerID().String(), "", true)
	if status != 200 || body != `{"announced":[],"observed":["/ip4/127.0.0.1/tcp/1"]}`+"\n" {
		t.Fatalf("peerInfo: %d %s", status, body)
	}
}

// TestReadyzWithChain: a node with a chain is ready once its indexer has
// caught up; when the chain provider goes away, /readyz is 503 naming it.
func TestReadyzWithChain(t *testing.T) {
	ch := startDevChain(t)
	n := startNode(t, fundedNodeConfig(t, ch, tokens(10)))
	ready := func(want int) api.Readiness {
		t.Helper()
		var r api.Readiness
		deadline := time.Now().Add(30 * time.Second)
		for {
			status, body := restGet(t, n, "GET", "/readyz", "", false)
			if status == want {
				if err := json.Unmarshal([]byte(body), &r); err != nil {
					t.Fatalf("%d %s", status, body)
				}
				return r
			}
			if time.Now().After(deadline) {
				t.Fatalf("readyz never %d: %d %s", want, status, body)
			}
			time.Sleep(20 * time.Millisecond) // polling interval
		}
	}
	r := ready(http.StatusOK)
	var names []string
	for _, c := range r.Checks {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "chain,indexer,p2p,relay,alerts" || !r.Ready {
		t.Fatalf("ready: %+v", r)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	r = ready(http.StatusServiceUnavailable)
	if r.Ready || len(r.NotReady) == 0 || r.NotReady[0] != "chain" {
		t.Fatalf("provider gone: %+v", r)
	}
}
