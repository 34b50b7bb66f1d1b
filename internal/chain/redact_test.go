package chain_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/testlog"
	"github.com/relayd/relayd/internal/wait"
)

// secrets are what the provider URLs of these tests hide in their path, query and user info.
var secrets = []string{"SECRETKEY", "SECRET2", "pw"}

func wantNoSecret(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Fatalf("%s contains the provider URL's secret %q: %s", what, s, text)
		}
	}
}

// closedPort returns a loopback host:port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// failing500 is an HTTP provider that answers every request with a 500 whose body echoes the
// request's path, query and credentials, as some gateways do.
func failing500(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pw, _ := r.BasicAuth()
		http.Error(w, fmt.Sprintf("upstream failed for %s (%s:%s)", r.URL.RequestURI(), user, pw), http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestDialErrorsHideProviderSecrets dials providers that fail (a closed port, HTTP 500s) through
// URLs with an API key in the path, the query and the user info: the error is still
// ErrProviderUnavailable, names scheme and host, and carries none of the secrets.
func TestDialErrorsHideProviderSecrets(t *testing.T) {
	closed := closedPort(t)
	srv := failing500(t)
	host500 := strings.TrimPrefix(srv.URL, "http://")
	for name, tc := range map[string]struct{ url, display string }{
		"key in path and query, closed port": {"http://" + closed + "/v3/SECRETKEY?apikey=SECRET2", "http://" + closed},
		"user info, closed port":             {"http://user:pw@" + closed + "/", "http://" + closed},
		"user info and key, closed ws port":  {"ws://user:pw@" + closed + "/ws/SECRETKEY?apikey=SECRET2", "ws://" + closed},
		"key in path and query, HTTP 500":    {"http://" + host500 + "/v3/SECRETKEY?apikey=SECRET2", srv.URL},
		"user info and key, HTTP 500":        {"http://user:pw@" + host500 + "/v3/SECRETKEY", srv.URL},
	} {
		t.Run(name, func(t *testing.T) {
			var logs testlog.Buffer
			key, _ := crypto.GenerateKey()
			_, err := chain.Dial(t.Context(), chain.Config{
				ProviderURL: tc.url, Key: key, Channels: common.Address{1},
				CallTimeout: time.Second, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			if !errors.Is(err, chain.ErrProviderUnavailable) {
				t.Fatalf("Dial: %v, want ErrProviderUnavailable", err)
			}
			wantNoSecret(t, "Dial's error", err.Error())
			wantNoSecret(t, "the log", logs.String())
			if !strings.Contains(err.Error(), tc.display) {
				t.Fatalf("Dial's error %q does not name the provider as %s", err, tc.display)
			}
		})
	}
}

func TestProviderDisplay(t *testing.T) {
	for in, want := range map[string]string{
		"https://mainnet.infura.io/v3/SECRETKEY":            "https://mainnet.infura.io",
		"wss://user:pw@node.example:8546/ws?apikey=SECRET2": "wss://node.example:8546",
		"http://127.0.0.1:8545":                             "http://127.0.0.1:8545",
		"not a url with SECRETKEY":                          "(provider)",
		"http://%zz/SECRETKEY":                              "(provider)",
	} {
		if got := chain.ProviderDisplay(in); got != want {
			t.Errorf("ProviderDisplay(%q) = %q, want %q", in, got, want)
		}
	}
}

// switchable is a provider in front of a dev chain that can be made to answer 500s, or be closed.
type switchable struct {
	srv  *httptest.Server
	fail atomic.Bool
}

func newSwitchable(t *testing.T, target string) *switchable {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u) // the dev chain serves JSON-RPC on /
		r.Out.URL.Path, r.Out.URL.RawPath, r.Out.URL.RawQuery = "/", "", ""
		r.Out.Header.Del("Authorization")
	}}
	s := &switchable{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.fail.Load() {
			user, pw, _ := r.BasicAuth()
			http.Error(w, fmt.Sprintf("upstream failed for %s (%s:%s)", r.URL.RequestURI(), user, pw), http.StatusInternalServerError)
			return
		}
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// TestChainErrorsAndLogsHideProviderSecrets runs a client and an indexer through a provider URL
// with secrets in path, query and user info, makes the provider answer 500s and then closes it:
// the errors the client returns and everything the client and indexer log (start-up line, indexer
// warnings with go-ethereum's errors) show scheme and host only.
func TestChainErrorsAndLogsHideProviderSecrets(t *testing.T) {
	e := newEnv(t)
	_, key := e.account("redact", nil)
	prov := newSwitchable(t, e.chain.RPCURL())
	host := strings.TrimPrefix(prov.srv.URL, "http://")
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := chain.Dial(t.Context(), chain.Config{
		ProviderURL: "http://user:pw@" + host + "/v3/SECRETKEY?apikey=SECRET2", Key: key,
		Channels: e.chain.ChannelsAddress(), Logger: log, CallTimeout: time.Second, ReceiptPoll: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !strings.Contains(logs.String(), "provider="+prov.srv.URL) {
		t.Fatalf("the start-up log does not name the provider by scheme and host: %s", logs.String())
	}
	db := openStore(t, t.TempDir())
	defer db.Close()
	ix, _ := newIndexer(t, e, c, db, nil, func(cfg *chain.IndexerConfig) { cfg.Logger = log.With("component", "indexer") })
	stop := runIndexer(t, ix)
	syncTo(t, ix, c) // a first round while the provider works

	prov.fail.Store(true)
	_, err = c.BlockNumber(t.Context())
	if !errors.Is(err, chain.ErrProviderUnavailable) || !strings.Contains(err.Error(), "500") {
		t.Fatalf("BlockNumber from a provider answering 500: %v", err)
	}
	wantNoSecret(t, "BlockNumber's error", err.Error())
	_, err = c.TransferNative(t.Context(), common.Address{1}, big1)
	if !errors.Is(err, chain.ErrProviderUnavailable) {
		t.Fatalf("TransferNative through a provider answering 500: %v", err)
	}
	wantNoSecret(t, "TransferNative's error", err.Error())
	eventually(t, 5*time.Second, "an indexer warning about the 500s", func() bool {
		return strings.Contains(logs.String(), "cannot read the chain") && strings.Contains(logs.String(), "500")
	})

	prov.srv.CloseClientConnections()
	prov.srv.Close()
	_, err = c.BlockNumber(t.Context())
	if !errors.Is(err, chain.ErrProviderUnavailable) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("BlockNumber from a closed provider: %v", err)
	}
	wantNoSecret(t, "BlockNumber's error", err.Error())
	eventually(t, 5*time.Second, "an indexer retry over the closed port", func() bool {
		return strings.Contains(logs.String(), "connection refused")
	})
	stop()
	wantNoSecret(t, "the log", logs.String())
}

var big1 = common.Big1

// eventually polls cond until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.For(t, cond, timeout, what)
}
