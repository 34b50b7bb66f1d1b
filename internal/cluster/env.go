package cluster

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/relayd/relayd/internal/atomicfile"

	"github.com/relayd/relayd/internal/config"
)

// NodeInfo is what the cluster publishes about one ready node.
type NodeInfo struct {
	Index         int    // 1-based
	PeerID        string // 16Uiu2HAm…
	NativeAddress string // EIP-55 chain address
	APIURL        string // REST base without /api/v2, e.g. http://127.0.0.1:13301
	WSURL         string // admin WebSocket, e.g. ws://127.0.0.1:19501
}

// UIURL is the node's reference UI (Swagger UI).
func (n NodeInfo) UIURL() string { return n.APIURL + "/api/v2/_swagger/" }

// ConsoleURL is the node's web admin console, served by the admin server
// beside its WebSocket: WSURL with the scheme http (wss gives https).
func (n NodeInfo) ConsoleURL() string {
	if rest, ok := strings.CutPrefix(n.WSURL, "wss://"); ok {
		return "https://" + rest + "/"
	}
	return "http://" + strings.TrimPrefix(n.WSURL, "ws://") + "/"
}

// Env is the content of cluster.env (DESIGN.md section 8).
type Env struct {
	APIToken string
	ChainRPC string
	// Channels and Token are the dev chain's RelayChannels and RelayToken addresses (0x, EIP-55).
	Channels string
	Token    string
	Nodes    []NodeInfo
}

// Vars lists the variables of the env file in the order they are written:
// RELAY_API_TOKEN, RELAY_CHAIN_RPC, then what one more node needs to join
// the cluster's network, under the names relayd reads (config.EnvName):
// RELAYD_PROVIDER (the chain, as RELAY_CHAIN_RPC) and RELAYD_CHANNELS_CONTRACT,
// and RELAY_TOKEN_ADDRESS for scripts (a node reads the token from the
// channels contract); then RELAY_NODE_COUNT and for each node N
// RELAY_NODE_N_PEER_ID, _NATIVE_ADDRESS, _API_URL and _WS_URL. The nodes of
// `relayd cluster` never read the RELAYD_ variables of its environment.
func (e Env) Vars() [][2]string {
	vars := [][2]string{
		{"RELAY_API_TOKEN", e.APIToken},
		{"RELAY_CHAIN_RPC", e.ChainRPC},
		{config.EnvName("provider"), e.ChainRPC},
		{config.EnvName("channelsContract"), e.Channels},
		{"RELAY_TOKEN_ADDRESS", e.Token},
		{"RELAY_NODE_COUNT", fmt.Sprint(len(e.Nodes))},
	}
	for _, n := range e.Nodes {
		p := fmt.Sprintf("RELAY_NODE_%d_", n.Index)
		vars = append(vars,
			[2]string{p + "PEER_ID", n.PeerID},
			[2]string{p + "NATIVE_ADDRESS", n.NativeAddress},
			[2]string{p + "API_URL", n.APIURL},
			[2]string{p + "WS_URL", n.WSURL},
		)
	}
	return vars
}

// Render returns the env file: one `export NAME=value` line per variable of
// Vars, nothing else. A value holding anything but letters, digits and
// `-_.:/@%+,=` is single-quoted for POSIX shells (a quote inside becomes '\”).
func (e Env) Render() []byte {
	var b bytes.Buffer
	for _, kv := range e.Vars() {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
	return b.Bytes()
}

// shellQuote returns v as a POSIX shell word with the same value.
func shellQuote(v string) string {
	safe := v != ""
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@%+,=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// WriteEnvFile writes e to path atomically: into a temporary file in the same
// directory (mode 0600: it holds the API token), synced, then renamed over
// path, so a reader never sees a partial file.
func WriteEnvFile(path string, e Env) error {
	if err := atomicfile.WriteBytes(path, e.Render(), atomicfile.Options{}); err != nil {
		return fmt.Errorf("write env file: %w", err)
	}
	return nil
}

// RenderTable returns the table `relayd cluster` prints once the cluster is
// ready: one row per node with its peer ID, REST URL, reference UI URL,
// admin WebSocket URL and admin console URL.
func RenderTable(nodes []NodeInfo) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tPEER ID\tREST API\tREFERENCE UI\tADMIN WEBSOCKET\tADMIN CONSOLE")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", n.Index, n.PeerID, n.APIURL, n.UIURL(), n.WSURL, n.ConsoleURL())
	}
	tw.Flush()
	return b.String()
}
