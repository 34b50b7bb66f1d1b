package node

import (
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
)

// gateProvider is a JSON-RPC proxy in front of the dev chain that lets a set number of
// transactions through and then holds every further one (the request hangs) until the test
// ends: a node sending its next transaction is then stuck at a known point, where the test can
// kill it.
type gateProvider struct {
	srv     *httptest.Server
	release chan struct{}

	mu      sync.Mutex
	allowed int // transactions still let through
	held    int // transactions held
}

func newGateProvider(t *testing.T, target string, allowed int) *gateProvider {
	p := &gateProvider{allowed: allowed, release: make(chan struct{})}
	p.srv = newRPCProxy(t, target, func(tx bool) bool { return !tx || p.pass() }, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-p.release:
		case <-r.Context().Done():
		}
		http.Error(w, "held", http.StatusServiceUnavailable)
	})
	t.Cleanup(func() { close(p.release) }) // runs before the proxy's Close (LIFO), freeing held requests
	return p
}

func (p *gateProvider) pass() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.allowed > 0 {
		p.allowed--
		return true
	}
	p.held++
	return false
}

func (p *gateProvider) holding() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held > 0
}

// TestRedeemerKilledMidBatch: a relayer running as its own process redeems its tickets one a
// transaction and is killed with SIGKILL after some were mined and before it could mark them in
// its store. Started again on the same data, it finishes the redemption: every ticket is paid
// once, none is lost, and its statistics count each once.
func TestRedeemerKilledMidBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dev chain, two nodes and a node process")
	}
	ch := startDevChain(t)
	net := &testNet{t: t, chain: ch}
	a, b := startNode(t, fundedNodeConfig(t, ch, tokens(100))), startNode(t, fundedNodeConfig(t, ch, tokens(100)))
	net.nodes = []*Node{a, b}

	rcfg := onFixedPorts(t, fundedNodeConfig(t, ch, tokens(100)))
	child := startChild(t, rcfg)
	rid := child.id
	net.eventually("every node sees the three announcements", func() bool {
		for _, n := range net.nodes {
			if info := nodeInfo(n); info.PeersAnnounced != 3 {
				return false
			}
		}
		return true
	})
	if s := net.call(a, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":%q}`, rid.PeerID(), tokens(10).String()), nil); s != http.StatusCreated {
		t.Fatalf("open A → R: %d", s)
	}
	if s := net.callURL(child.url, http.MethodPost, "/channels", fmt.Sprintf(`{"peerId":%q,"amount":%q}`, b.id.PeerID(), tokens(10).String()), nil); s != http.StatusCreated {
		t.Fatalf("open R → B: %d", s)
	}
	net.eventually("A sees both channels", func() bool {
		_, ok1 := a.chain.graph.Channel(a.id.Address(), rid.Address())
		_, ok2 := a.chain.graph.Channel(rid.Address(), b.id.Address())
		return ok1 && ok2
	})
	// A hop refuses a ticket on a channel it has not indexed yet, and under load the indexers of
	// R and B can lag A's: every packet was once dropped at B as channel_not_found.
	net.eventually("R and B see the channels to them", func() bool {
		var c channelView
		_, ok := b.chain.graph.Channel(rid.Address(), b.id.Address())
		return ok && net.callURL(child.url, http.MethodGet, "/channels/"+a.id.PeerID().String()+"/incoming", "", &c) == http.StatusOK &&
			c.Status == "Open"
	})
	const msgs = 12
	for i := range msgs {
		if _, err := a.router.SendPath(t.Context(), []peer.ID{rid.PeerID(), b.id.PeerID()}, fmt.Sprintf("paid %d", i)); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	var held []ticketView
	net.eventually("R holds the tickets", func() bool {
		net.callURL(child.url, http.MethodGet, "/tickets", "", &held)
		return len(held) == msgs
	})
	owed := new(big.Int)
	for _, tk := range held {
		v, _ := new(big.Int).SetString(tk.Amount, 10)
		owed.Add(owed, v)
	}
	child.kill() // stopped to restart it behind the gate: 5 redemptions get through, then it hangs

	gate := newGateProvider(t, ch.RPCURL(), 5)
	gcfg := rcfg
	gcfg.Provider = gate.srv.URL
	child = startChild(t, gcfg, childOneTicketBatchesEnv+"=1")
	net.eventually("R is ready again", func() bool {
		resp, err := http.Get(child.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	var bal struct{ Relay string }
	net.callURL(child.url, http.MethodGet, "/account/balances", "", &bal)
	balanceBefore, ok := new(big.Int).SetString(bal.Relay, 10)
	if !ok {
		t.Fatalf("R's token balance %q", bal.Relay)
	}
	go func() { // never answered: the node is killed while it waits at the gate
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, child.url+"/api/v2/tickets/redeem", nil)
		req.Header.Set("x-auth-token", testToken)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	net.eventually("R is stuck sending its sixth redemption", gate.holding)
	net.eventually("A's view shows five redeemed", func() bool {
		c, _ := a.chain.graph.Channel(a.id.Address(), rid.Address())
		return c.TicketIndex > 0
	})
	child.kill()

	r := startNode(t, rcfg) // the same data, straight to the chain
	net.nodes = append(net.nodes, r)
	net.mustCall(r, http.MethodPost, "/tickets/redeem", "", http.StatusNoContent, nil)
	var stats struct {
		Redeemed, Unredeemed uint64
		RedeemedValue        string
	}
	net.mustCall(r, http.MethodGet, "/tickets/statistics", "", http.StatusOK, &stats)
	paid := new(big.Int).Sub(net.tokenBalance(r), balanceBefore)
	if paid.Cmp(owed) != 0 || stats.Redeemed != msgs || stats.Unredeemed != 0 || stats.RedeemedValue != owed.String() {
		t.Fatalf("after the crash and a second run: paid %s of %s owed; statistics %+v", paid, owed, stats)
	}
	// Nothing more to do, and nothing is sent again.
	net.mustCall(r, http.MethodPost, "/tickets/redeem", "", http.StatusNoContent, nil)
	if again := new(big.Int).Sub(net.tokenBalance(r), balanceBefore); again.Cmp(owed) != 0 {
		t.Fatalf("a third run changed the balance: %s", again)
	}
}
