package cluster_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/testlog"
	"github.com/relayd/relayd/internal/wait"
)

// TestOneMoreNodeJoins starts a node by hand beside a running cluster, the way docs/NETWORKS.md
// tells an operator: its chain and contract come only from cluster.env (RELAYD_PROVIDER,
// RELAYD_CHANNELS_CONTRACT), `relayd devchain fund` (with the same variables) funds it, and it
// announces itself: it sees every node's announcement and every node sees its own.
func TestOneMoreNodeJoins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds relayd and starts a dev chain and six node processes")
	}
	c := startCluster(t)
	ports := make([]int, 3)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	dir := t.TempDir()
	const apiToken = "one-more-node-token"
	env := []string{"RELAYD_PROVIDER=" + c.chainRPC, "RELAYD_CHANNELS_CONTRACT=" + c.channels,
		"RELAYD_API_TOKEN=" + apiToken, "RELAYD_PASSWORD=one-more-node-password"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RELAYD_") {
			env = append(env, kv)
		}
	}
	out := &testlog.Buffer{}
	cmd := exec.Command(c.bin, "--data", filepath.Join(dir, "data"), "--init", "--testUseWeakCrypto",
		"--host", "127.0.0.1:"+strconv.Itoa(ports[0]), "--apiPort", strconv.Itoa(ports[1]), "--adminPort", strconv.Itoa(ports[2]))
	cmd.Env, cmd.Stdout, cmd.Stderr = env, out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("the extra node's log:\n%s", out.String())
		}
	})
	extra := node{index: 6, apiURL: "http://127.0.0.1:" + strconv.Itoa(ports[1])}
	get := func(n node, path string, v any) bool {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.apiURL+"/api/v2"+path, nil)
		tok := c.token
		if n.index == extra.index {
			tok = apiToken
		}
		req.Header.Set("X-Auth-Token", tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(v) == nil
	}
	var addrs struct {
		NativeAddress string `json:"nativeAddress"`
	}
	wait.For(t, func() bool {
		select {
		case <-done:
			t.Fatalf("the extra node exited:\n%s", out.String())
		default:
		}
		return get(extra, "/account/addresses", &addrs)
	}, time.Minute, "the extra node serves its REST API")

	fund := exec.CommandContext(t.Context(), c.bin, "devchain", "fund", addrs.NativeAddress, "100", "1")
	fund.Env = env
	if b, err := fund.CombinedOutput(); err != nil {
		t.Fatalf("relayd devchain fund with cluster.env's variables: %v\n%s", err, b)
	}
	all := len(c.nodes) + 1
	announced := func(n node) func() bool {
		return func() bool {
			var info struct {
				PeersAnnounced int `json:"peersAnnounced"`
			}
			return get(n, "/node/info", &info) && info.PeersAnnounced == all
		}
	}
	wait.For(t, announced(extra), time.Minute, "the extra node sees every announcement, its own too")
	for _, n := range c.nodes {
		wait.For(t, announced(n), waitTimeout, "a cluster node sees the extra node's announcement")
	}
}
