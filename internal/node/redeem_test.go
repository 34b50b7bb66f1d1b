package node

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/chain"
)

// faultyProvider is a JSON-RPC proxy in front of the dev chain that lets a set number of
// transactions through and then fails every request with HTTP 500, as a provider that goes
// down in the middle of a run of redemptions.
type faultyProvider struct {
	srv *httptest.Server

	mu      sync.Mutex
	allowed int  // transactions still let through; -1 = no limit
	failing bool // the limit was reached: every request fails
}

func newFaultyProvider(t *testing.T, target string) *faultyProvider {
	p := &faultyProvider{allowed: -1}
	p.srv = newRPCProxy(t, target, func(tx bool) bool {
		return p.admit(tx)
	}, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "provider down", http.StatusInternalServerError)
	})
	return p
}

// newRPCProxy is a JSON-RPC proxy in front of the dev chain at target: a request that admit lets
// through (tx says whether it sends a transaction) goes to the chain, the others to refuse.
func newRPCProxy(t *testing.T, target string, admit func(tx bool) bool, refuse http.HandlerFunc) *httptest.Server {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if admit(bytes.Contains(body, []byte(`"eth_sendRawTransaction"`))) {
			proxy.ServeHTTP(w, r)
			return
		}
		refuse(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (p *faultyProvider) admit(tx bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tx && !p.failing && p.allowed >= 0 {
		if p.allowed == 0 {
			p.failing = true
		}
		p.allowed--
	}
	return !p.failing
}

// failAfter lets n more transactions through, then fails everything.
func (p *faultyProvider) failAfter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allowed, p.failing = n, false
}

// heal lets everything through again.
func (p *faultyProvider) heal() { p.failAfter(-1) }

// TestRedeemInterruptedByChainFault: R holds 10 acknowledged tickets from A and its provider
// fails after some redemptions were mined. The REST answer and the admin command's output say
// how many were redeemed and how many remain (not "nothing was sent"), and a later run redeems
// the rest.
func TestRedeemInterruptedByChainFault(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev chain and three nodes")
	}
	// One ticket a transaction, so that a provider failing after 3 transactions stops a run
	// after 3 tickets.
	oneTicketBatches := Options{RedeemOptions: []chain.RedeemOption{chain.WithRedeemBatchGas(chain.EstimateRedeemGas(1, 1))}}
	ch := startDevChain(t)
	net := &testNet{t: t, chain: ch}
	prov := newFaultyProvider(t, ch.RPCURL())
	for i := range 3 {
		cfg := fundedNodeConfig(t, ch, tokens(100))
		if i == 1 {
			cfg.Provider = prov.srv.URL
			cfg.LogLevel = "info" // the test reads R's log lines on its admin WebSocket
		}
		net.nodes = append(net.nodes, startNode(t, cfg, oneTicketBatches))
	}
	a, r, b := net.nodes[0], net.nodes[1], net.nodes[2]
	net.eventually("every node sees every announcement", func() bool {
		for _, n := range net.nodes {
			if info := nodeInfo(n); info.PeersAnnounced != 3 {
				return false
			}
		}
		return true
	})
	net.open(a, r, tokens(1))
	net.open(r, b, tokens(1))
	for i := range 10 {
		if _, err := a.router.SendPath(t.Context(), []peer.ID{r.id.PeerID(), b.id.PeerID()}, fmt.Sprintf("paid %d", i)); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	var list []ticketView
	net.eventually("R holds 10 acknowledged tickets", func() bool {
		net.mustCall(r, http.MethodGet, "/tickets", "", http.StatusOK, &list)
		return len(list) == 10
	})

	type failure struct {
		Status, Error       string
		Redeemed, Remaining int
	}
	wantPartial := func(what string, status int, got failure, redeemed, of, remaining int) {
		t.Helper()
		t.Logf("%s: %d %+v", what, status, got)
		text := fmt.Sprintf("redeemed %d of %d tickets (", redeemed, of)
		rest := fmt.Sprintf("; %d remain: the chain provider is unavailable", remaining)
		if status != http.StatusServiceUnavailable || got.Status != "UNKNOWN_FAILURE" || got.Redeemed != redeemed || got.Remaining != remaining ||
			!strings.HasPrefix(got.Error, text) || !strings.Contains(got.Error, rest) || strings.Contains(got.Error, "nothing was sent") {
			t.Fatalf("%s: %d %+v, want 503 with %q…%q and counts %d/%d", what, status, got, text, rest, redeemed, remaining)
		}
	}

	// REST, every channel: 3 redemptions are mined, then the provider fails.
	logs := watch(t, r)
	prov.failAfter(3)
	var f failure
	st := net.call(r, http.MethodPost, "/tickets/redeem", "", &f)
	wantPartial("POST /tickets/redeem", st, f, 3, 10, 7)
	prov.heal()
	var stats struct{ Redeemed, Unredeemed int }
	net.mustCall(r, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &stats)
	if stats.Redeemed != 3 || stats.Unredeemed != 7 {
		t.Fatalf("statistics after the interrupted run: %+v", stats)
	}

	// REST, one channel: 1 more, then the fault.
	prov.failAfter(1)
	f = failure{}
	st = net.call(r, http.MethodPost, "/channels/"+a.id.PeerID().String()+"/tickets/redeem", "", &f)
	wantPartial("POST /channels/{peerId}/tickets/redeem", st, f, 1, 7, 6)
	prov.heal()

	// The admin command: 2 more, then the fault.
	prov.failAfter(2)
	out := dialAdmin(t, r).run("redeemTickets", func(string) bool { return true })
	if want := "Error: redeemed 2 of 6 tickets ("; len(out) != 1 || !strings.HasPrefix(out[0], want) ||
		!strings.Contains(out[0], "; 4 remain: the chain provider is unavailable") {
		t.Fatalf("redeemTickets output %q, want %q…4 remain", out, want)
	}
	prov.heal()

	net.mustCall(r, http.MethodPost, "/tickets/redeem", "", http.StatusNoContent, nil)
	net.mustCall(r, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &stats)
	if stats.Redeemed != 10 || stats.Unredeemed != 0 {
		t.Fatalf("statistics after the last run: %+v", stats)
	}

	// The log: per run one start line and one summary, never a line per ticket (each
	// redemption changes the channel's balance, which is not news while it stays open). The
	// admin WebSocket replays earlier lines first: the channels' opening.
	var starts, stopped, done int
	poll(t, "the last run's summary reached the admin WebSocket", func() bool {
		for _, fr := range logs.drain() {
			switch {
			case strings.Contains(fr, `msg="redeeming tickets"`):
				starts++
			case strings.Contains(fr, `msg="ticket redemption stopped"`):
				stopped++
			case strings.Contains(fr, `msg="tickets redeemed"`):
				done++
				if !strings.Contains(fr, "redeemed=4 ") || !strings.Contains(fr, "of=4 ") {
					t.Errorf("summary %q, want 4 of 4 redeemed", fr)
				}
			case strings.Contains(fr, `msg="channel updated"`) && starts > 0: // not the channels' opening
				t.Errorf("a ticket redemption logged %q", fr)
			}
		}
		return done == 1
	})
	if starts != 4 || stopped != 3 {
		t.Fatalf("%d runs started, %d stopped; want 4 and 3", starts, stopped)
	}
}
