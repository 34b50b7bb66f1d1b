package chain_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/channels"
)

// laggingHead is a provider in front of a dev chain that always takes the path through
// go-ethereum's window between a block's receipts becoming readable and its head moving to the
// block (core.BlockChain.writeHeadBlock writes the canonical hash and transaction lookup entries,
// then stores the head): once it has answered a receipt of block B, it answers "latest" as block
// B-1 (eth_blockNumber, and eth_call, eth_estimateGas, eth_getCode, eth_getBlockByNumber at
// "latest"), until it has answered one request for the head with B-1. On the real chain the head
// moves a few microseconds later; here it moves only once somebody has seen it lag.
type laggingHead struct {
	t      *testing.T
	target string
	srv    *httptest.Server

	mu     sync.Mutex
	behind uint64 // when not 0: the block answered as "latest", one below a receipt's
	lagged uint64 // the newest receipt block a lag was started for
	lags   int    // how many lags the head has caught up from
}

func newLaggingHead(t *testing.T, target string) *laggingHead {
	l := &laggingHead{t: t, target: target}
	l.srv = httptest.NewServer(http.HandlerFunc(l.serve))
	t.Cleanup(l.srv.Close)
	return l
}

type rpcRequest struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id"`
	Method  string            `json:"method"`
	Params  []json.RawMessage `json:"params"`
}

func (l *laggingHead) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "laggingHead takes single JSON-RPC requests only", http.StatusBadRequest)
		return
	}
	l.mu.Lock()
	behind := l.behind
	if behind != 0 && (req.Method == "eth_blockNumber" || req.Method == "eth_getBlockByNumber" && isLatest(req.Params)) {
		l.behind, l.lags = 0, l.lags+1 // seen lagging once: the head moves now
	}
	l.mu.Unlock()
	if behind != 0 {
		at, _ := json.Marshal(hexutil.EncodeUint64(behind))
		if req.Method == "eth_blockNumber" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + string(at) + `}`))
			return
		}
		switch req.Method {
		case "eth_estimateGas":
			if len(req.Params) == 1 { // no block: the provider's "latest"
				req.Params = append(req.Params, at)
			}
			fallthrough
		default:
			for i, p := range req.Params {
				if string(p) == `"latest"` {
					req.Params[i] = at
				}
			}
		}
		if body, err = json.Marshal(req); err != nil {
			l.t.Error(err)
		}
	}
	resp, err := http.Post(l.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if req.Method == "eth_getTransactionReceipt" && resp.StatusCode == http.StatusOK {
		var rr struct {
			Result *struct {
				BlockNumber hexutil.Uint64 `json:"blockNumber"`
			} `json:"result"`
		}
		if json.Unmarshal(out, &rr) == nil && rr.Result != nil && uint64(rr.Result.BlockNumber) > 0 {
			l.mu.Lock()
			if b := uint64(rr.Result.BlockNumber); b > l.lagged {
				l.lagged, l.behind = b, b-1
			}
			l.mu.Unlock()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(out)
}

func isLatest(params []json.RawMessage) bool {
	return len(params) > 0 && string(params[0]) == `"latest"`
}

// caughtUp returns how many times the head has caught up with a receipt it lagged behind.
func (l *laggingHead) caughtUp() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lags
}

// TestTransactionsReadable: when an operation of the Client returns, what its transaction did is
// what the provider answers at "latest", even where the provider serves the receipt before it
// moves its head (go-ethereum does, for a moment: laggingHead). Without that, a read right after
// the operation sees the state before it (TestChannelLifecycleIndexed's chain read of a closed
// channel, or its syncTo reading a head below the transaction, so the graph lagged), and a
// transaction that depends on the previous one is estimated against the state before it (a
// top-up's fund after its approve: ERC20InsufficientAllowance).
func TestTransactionsReadable(t *testing.T) {
	e := newEnv(t)
	_, key := e.account("readable", tokens(100))
	bob := common.Address{0xb0}

	t.Run("read after a transfer", func(t *testing.T) {
		c := e.dial(key, newLaggingHead(t, e.chain.RPCURL()).srv.URL)
		before := must[*big.Int](t)(c.TokenBalance(t.Context(), bob))
		must[common.Hash](t)(c.TransferToken(t.Context(), bob, tokens(1)))
		if got := must[*big.Int](t)(c.TokenBalance(t.Context(), bob)); new(big.Int).Sub(got, before).Cmp(tokens(1)) != 0 {
			t.Fatalf("balance %v right after the transfer, want %v more than %v", got, tokens(1), before)
		}
	})
	t.Run("fund after approve, then read", func(t *testing.T) {
		l := newLaggingHead(t, e.chain.RPCURL())
		c := e.dial(key, l.srv.URL)
		h := must[common.Hash](t)(c.FundChannel(t.Context(), bob, tokens(10)))
		ch := must[channels.Channel](t)(c.Channel(t.Context(), c.Address(), bob))
		if ch.Status != channels.Open || ch.Balance.Cmp(tokens(10)) != 0 {
			t.Fatalf("channel %+v right after funding it, want open with 10 tokens", ch)
		}
		eth, err := ethclient.DialContext(t.Context(), e.chain.RPCURL())
		if err != nil {
			t.Fatal(err)
		}
		defer eth.Close()
		r, err := eth.TransactionReceipt(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		if head := must[uint64](t)(c.BlockNumber(t.Context())); head < r.BlockNumber.Uint64() {
			t.Fatalf("head %d right after funding in block %d", head, r.BlockNumber)
		}
		if got := l.caughtUp(); got != 2 {
			t.Fatalf("the head lagged %d receipts, want 2 (approve, fund): the test did not take the window", got)
		}
	})
	t.Run("dial after deploy", func(t *testing.T) {
		l := newLaggingHead(t, e.chain.RPCURL())
		eth, err := ethclient.DialContext(t.Context(), l.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer eth.Close()
		d, err := chain.Deploy(t.Context(), eth, key, time.Hour, tokens(1))
		if err != nil {
			t.Fatal(err)
		}
		c2, err := chain.Dial(t.Context(), chain.Config{ProviderURL: l.srv.URL, Key: key, Channels: d.Channels, Logger: quiet})
		if err != nil {
			t.Fatalf("dial right after deploying: %v", err)
		}
		c2.Close()
	})
}
