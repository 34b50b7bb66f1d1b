package api

import (
	"context"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// stuckChain never gets its transaction mined.
type stuckChain struct{ *fakeChain }

func (stuckChain) Withdraw(ctx context.Context, _ bool, _ *big.Int, _ common.Address) (common.Hash, error) {
	<-ctx.Done()
	return common.Hash{}, ctx.Err()
}

func TestOperationTimeout(t *testing.T) {
	f := newFakeNode(t)
	cfg := f.config(false)
	cfg.Chain = stuckChain{f.chain}
	cfg.Timeout = 50 * time.Millisecond
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	status, _, body := doBody(t, http.MethodPost, srv.URL+"/api/v2/account/withdraw", auth,
		`{"amount":"1","currency":"NATIVE","recipient":"0x059c779Fd53Eb799aF70Bb720960F6787eB4548D"}`)
	if status != http.StatusGatewayTimeout || !strings.Contains(body, `"status":"TIMEOUT"`) {
		t.Fatalf("stuck withdraw: %d %s", status, body)
	}
}
