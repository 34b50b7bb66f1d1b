package node

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
)

// randomPeer is the PeerId of a fresh secp256k1 key nobody runs.
func randomPeer(t *testing.T) peer.ID {
	t.Helper()
	key, _, err := crypto.GenerateSecp256k1Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(key.GetPublic())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// rest calls the node's REST API with its token and returns the status and
// the error envelope's code (empty on success).
func rest(t *testing.T, n *Node, method, path, body string) (int, api.ErrorBody) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+n.APIAddr().String()+api.Prefix+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-auth-token", "S3cret!token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e api.ErrorBody
	if resp.StatusCode >= 400 {
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("%s %s: %d %q is not the envelope", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, e
}

// TestPeerIdBeforeAlias: a PeerId names itself in every command, even when
// the store holds an alias spelt like it (one written before such aliases
// were refused); new ones are refused by the alias command and by REST.
func TestPeerIdBeforeAlias(t *testing.T) {
	a := startNode(t, testConfig(t))
	cfgB := testConfig(t)
	cfgB.Peers = []string{a.host.Addrs()[0].String()}
	b := startNode(t, cfgB)
	admin := dialAdmin(t, b)
	alice, stranger := a.id.PeerID().String(), randomPeer(t).String()

	// An old store: alice's PeerId is an alias of a stranger.
	if err := b.db.SetAlias(alice, stranger); err != nil {
		t.Fatal(err)
	}
	out := admin.run("ping "+alice, func(string) bool { return true })
	if !strings.HasSuffix(out[0], " ms, from "+alice+")") {
		t.Fatalf("ping by PeerId: %q", out)
	}
	out = admin.run("send ,"+alice+" hello", func(string) bool { return true })
	if !strings.HasPrefix(out[0], "Message sent to "+alice) {
		t.Fatalf("send by PeerId: %q", out)
	}

	out = admin.run("alias "+stranger+" "+alice, func(string) bool { return true })
	if want := "alias \"" + alice + "\" is a PeerId; an alias cannot be one. Usage: alias [<peerId> <name>]"; out[0] != want {
		t.Fatalf("alias named like a PeerId: %q, want %q", out[0], want)
	}
	if st, e := rest(t, b, http.MethodPost, "/aliases", `{"peerId":"`+stranger+`","alias":"`+alice+`"}`); st != http.StatusBadRequest || e.Status != api.CodeInvalidInput {
		t.Fatalf("POST /aliases named like a PeerId: %d %+v", st, e)
	}
	// Ordinary aliases still resolve.
	admin.run("alias "+alice+" alice", func(string) bool { return true })
	out = admin.run("ping alice", func(string) bool { return true })
	if !strings.HasSuffix(out[0], " ms, from "+alice+")") {
		t.Fatalf("ping by alias: %q", out)
	}
}

// TestUnknownNamesOverREST: a peer the node knows nothing of and an alias
// that is not set are 404 PEERID_NOT_FOUND, through the real p2p host and
// store.
func TestUnknownNamesOverREST(t *testing.T) {
	n := startNode(t, testConfig(t))
	if st, e := rest(t, n, http.MethodPost, "/node/ping", `{"peerId":"`+randomPeer(t).String()+`"}`); st != http.StatusNotFound || e.Status != api.CodePeerIDNotFound {
		t.Fatalf("ping an unknown peer: %d %+v", st, e)
	}
	if st, e := rest(t, n, http.MethodDelete, "/aliases/nobody", ""); st != http.StatusNotFound || e.Status != api.CodePeerIDNotFound {
		t.Fatalf("delete an alias never set: %d %+v", st, e)
	}
	if st, _ := rest(t, n, http.MethodPost, "/aliases", `{"peerId":"`+randomPeer(t).String()+`","alias":"bob"}`); st != http.StatusCreated {
		t.Fatalf("set alias: %d", st)
	}
	if st, _ := rest(t, n, http.MethodDelete, "/aliases/bob", ""); st != http.StatusNoContent {
		t.Fatalf("delete alias: %d", st)
	}
}

// TestOversizedHeaderGetsTheEnvelope: the node's REST server answers
// headers over 1 MiB with 431 in the JSON envelope, not net/http's text.
func TestOversizedHeaderGetsTheEnvelope(t *testing.T) {
	n := startNode(t, testConfig(t))
	conn, err := net.Dial("tcp", n.APIAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go io.WriteString(conn, "GET /api/v2/node/version HTTP/1.1\r\nHost: x\r\nx-big: "+strings.Repeat("a", 1<<20+8<<10)+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e api.ErrorBody
	if err := json.NewDecoder(resp.Body).Decode(&e); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || err != nil || e.Status != api.CodeInvalidInput {
		t.Fatalf("got %d %q %+v (%v)", resp.StatusCode, resp.Header.Get("Content-Type"), e, err)
	}
}

// TestWithdrawCommandChecksAddress: the withdraw command refuses a
// mixed-case address with a wrong EIP-55 checksum before anything else
// (here a node without a chain says so for a good address).
func TestWithdrawCommandChecksAddress(t *testing.T) {
	n := startNode(t, testConfig(t))
	admin := dialAdmin(t, n)
	const usage = ". Usage: withdraw <amount> <currency> <0x address>"
	for _, tt := range []struct{ addr, want string }{
		{"0x035c68d5251AfF759Ea945A05783F2290EA0Accf", `"0x035c68d5251AfF759Ea945A05783F2290EA0Accf" has a wrong EIP-55 checksum (mixed case): check the address` + usage},
		{"0x12", `"0x12" is not a 0x address` + usage},
		{"0x035C68d5251AfF759Ea945A05783F2290EA0Accf", "Error: this node runs without a chain (--provider and --channelsContract)"},
		{"0x035c68d5251aff759ea945a05783f2290ea0accf", "Error: this node runs without a chain (--provider and --channelsContract)"},
		{"0x035C68D5251AFF759EA945A05783F2290EA0ACCF", "Error: this node runs without a chain (--provider and --channelsContract)"},
	} {
		out := admin.run("withdraw 1 NATIVE "+tt.addr, func(string) bool { return true })
		if out[0] != tt.want {
			t.Errorf("withdraw to %s: %q, want %q", tt.addr, out[0], tt.want)
		}
	}
}
