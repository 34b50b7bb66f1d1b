package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/wait"
)

// TestRestartedNodesReachPeersAtOnce: a sender S and a relayer R1, each its own process, are
// killed with SIGKILL while paid messages flow S → R1 → R2 → B, and started again on the same
// data. Within 5 s of the restart both know and reach every peer again (from the announcements
// they stored, not from new chain events: nothing is announced meanwhile), S sends a paid message
// and R1 forwards it to B.
func TestRestartedNodesReachPeersAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev chain, two nodes and two node processes")
	}
	ch := startDevChain(t)
	net := &testNet{t: t, chain: ch}
	r2, b := startNode(t, fundedNodeConfig(t, ch, tokens(100))), startNode(t, fundedNodeConfig(t, ch, tokens(100)))
	net.nodes = []*Node{r2, b}
	scfg := onFixedPorts(t, fundedNodeConfig(t, ch, tokens(100)))
	r1cfg := onFixedPorts(t, fundedNodeConfig(t, ch, tokens(100)))
	s, r1 := startChild(t, scfg), startChild(t, r1cfg)

	announced := func(url string) int {
		var info api.Info
		if post(t, url, http.MethodGet, "/node/info", "", &info) != http.StatusOK {
			return 0
		}
		return info.PeersAnnounced
	}
	net.eventually("every node sees the four announcements", func() bool {
		for _, url := range []string{s.url, r1.url, nodeURL(r2), nodeURL(b)} {
			if announced(url) != 4 {
				return false
			}
		}
		return true
	})
	open := func(fromURL string, to string) {
		t.Helper()
		if st := net.callURL(fromURL, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":%q}`, to, tokens(50).String()), nil); st != http.StatusCreated {
			t.Fatalf("open channel: %d", st)
		}
	}
	open(s.url, r1.id.PeerID().String())
	open(r1.url, r2.id.PeerID().String())
	open(nodeURL(r2), b.id.PeerID().String())

	delivered := func() int {
		v, _ := strconv.Atoi(net.metricURL(nodeURL(b), "relayd_message_latency_seconds_count"))
		return v
	}
	send := func(text string) int {
		return post(t, s.url, http.MethodPost, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, text, b.id.PeerID()), nil)
	}
	net.eventually("S's messages arrive over R1 and R2", func() bool {
		before := delivered()
		return send("first") == http.StatusAccepted && pollUntil(2*time.Second, func() bool { return delivered() > before })
	})

	// Traffic, then SIGKILL of both while it flows.
	stopTraffic := traffic(func(i int) { send(fmt.Sprintf("before the crash %d", i)) })
	net.eventually("R1 reports acknowledged tickets", func() bool {
		n, _ := strconv.Atoi(net.metricURL(r1.url, "relayd_relay_tickets_acknowledged_total"))
		return n >= 20
	})
	s.kill()
	r1.kill()
	stopTraffic()

	restarted := time.Now()
	s, r1 = startChild(t, scfg), startChild(t, r1cfg)
	others := map[string][]string{
		s.url:  {r1.id.PeerID().String(), r2.id.PeerID().String(), b.id.PeerID().String()},
		r1.url: {s.id.PeerID().String(), r2.id.PeerID().String(), b.id.PeerID().String()},
	}
	reachesAll := func(url string) bool {
		var peers api.PeerList
		if post(t, url, http.MethodGet, "/node/peers", "", &peers) != http.StatusOK {
			return false
		}
		connected := map[string]bool{}
		for _, p := range peers.Connected {
			connected[p.PeerID] = true
		}
		for _, id := range others[url] {
			if !connected[id] {
				return false
			}
		}
		return true
	}
	within := func(what string, cond func() bool) {
		t.Helper()
		if !pollUntil(time.Until(restarted.Add(5*time.Second)), cond) {
			t.Fatalf("%s: not within 5 s of the restart", what)
		}
	}
	within("the restarted sender reaches every peer", func() bool { return reachesAll(s.url) })
	within("the restarted relayer reaches every peer", func() bool { return reachesAll(r1.url) })
	before := delivered()
	within("the restarted sender sends a paid message", func() bool { return send("after the restart") == http.StatusAccepted })
	within("the restarted relayer forwards it", func() bool { return delivered() > before })
	t.Logf("restarted nodes served again in %v", time.Since(restarted).Round(time.Millisecond))
}

// traffic calls send(0), send(1), … in a goroutine until the returned stop is called; stop
// returns once the last call has.
func traffic(send func(i int)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			default:
			}
			send(i)
		}
	}()
	return func() { close(quit); <-done }
}

// nodeURL is the REST server of an in-process node.
func nodeURL(n *Node) string { return "http://" + n.APIAddr().String() }

// post makes a REST call that may fail (a node being killed or not up yet): 0 when no answer came.
func post(t *testing.T, base, method, path, body string, out any) int {
	req, _ := http.NewRequestWithContext(t.Context(), method, base+"/api/v2"+path, bytes.NewBufferString(body))
	req.Header.Set("x-auth-token", testToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if out != nil && json.NewDecoder(resp.Body).Decode(out) != nil {
		return 0
	}
	return resp.StatusCode
}

// pollUntil polls cond every 20 ms until it holds (true) or d passes (false).
func pollUntil(d time.Duration, cond func() bool) bool { return wait.Until(cond, d) }
