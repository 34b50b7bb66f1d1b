package cluster

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func twoNodes() Env {
	return Env{
		APIToken: "relayd-local-cluster",
		ChainRPC: "http://127.0.0.1:8545",
		Channels: "0xdB7d6AB1f17c6b31909aE466702703dAEf9269Cf",
		Token:    "0x3A220f351252089D385b29beca14e27F204c296A",
		Nodes: []NodeInfo{
			{1, "16Uiu2HAmA", "0x00000000000000000000000000000000000000A1", "http://127.0.0.1:13301", "ws://127.0.0.1:19501"},
			{2, "16Uiu2HAmB", "0x00000000000000000000000000000000000000B2", "http://127.0.0.1:13302", "ws://127.0.0.1:19502"},
		},
	}
}

// TestEnvRender: exactly the export lines of DESIGN.md section 8, in order.
func TestEnvRender(t *testing.T) {
	want := `export RELAY_API_TOKEN=relayd-local-cluster
export RELAY_CHAIN_RPC=http://127.0.0.1:8545
export RELAYD_PROVIDER=http://127.0.0.1:8545
export RELAYD_CHANNELS_CONTRACT=0xdB7d6AB1f17c6b31909aE466702703dAEf9269Cf
export RELAY_TOKEN_ADDRESS=0x3A220f351252089D385b29beca14e27F204c296A
export RELAY_NODE_COUNT=2
export RELAY_NODE_1_PEER_ID=16Uiu2HAmA
export RELAY_NODE_1_NATIVE_ADDRESS=0x00000000000000000000000000000000000000A1
export RELAY_NODE_1_API_URL=http://127.0.0.1:13301
export RELAY_NODE_1_WS_URL=ws://127.0.0.1:19501
export RELAY_NODE_2_PEER_ID=16Uiu2HAmB
export RELAY_NODE_2_NATIVE_ADDRESS=0x00000000000000000000000000000000000000B2
export RELAY_NODE_2_API_URL=http://127.0.0.1:13302
export RELAY_NODE_2_WS_URL=ws://127.0.0.1:19502
`
	if got := string(twoNodes().Render()); got != want {
		t.Fatalf("env file:\n%s\nwant:\n%s", got, want)
	}
}

// TestEnvQuoting: tokens with shell metacharacters survive `source` in sh.
func TestEnvQuoting(t *testing.T) {
	for _, tok := range []string{"S3cret!token", "with space$HOME", `it's "q"`, "a`b`;c", "plain-token_1.2"} {
		t.Run(tok, func(t *testing.T) {
			e := twoNodes()
			e.APIToken = tok
			line := strings.SplitN(string(e.Render()), "\n", 2)[0]
			if tok == "plain-token_1.2" && line != "export RELAY_API_TOKEN=plain-token_1.2" {
				t.Fatalf("safe token quoted: %s", line)
			}
			sh, err := exec.LookPath("sh")
			if err != nil {
				t.Skip("no sh")
			}
			out, err := exec.Command(sh, "-c", line+"\nprintf %s \"$RELAY_API_TOKEN\"").Output()
			if err != nil || string(out) != tok {
				t.Fatalf("sh read %q (%v) from %s, want %q", out, err, line, tok)
			}
		})
	}
}

// TestWriteEnvFile: the file appears whole with mode 0600, replaces an old
// one and leaves no temporary file behind.
func TestWriteEnvFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cluster.env")
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteEnvFile(path, twoNodes()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(twoNodes().Render()) {
		t.Fatalf("read %q, %v", got, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 (it holds the token)", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only cluster.env", len(entries))
	}
	if err := WriteEnvFile(filepath.Join(dir, "missing", "cluster.env"), twoNodes()); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}

// TestRenderTable: a header and one aligned row per node with the five
// URLs and the peer ID.
func TestRenderTable(t *testing.T) {
	want := `NODE  PEER ID     REST API                REFERENCE UI                             ADMIN WEBSOCKET       ADMIN CONSOLE
1     16Uiu2HAmA  http://127.0.0.1:13301  http://127.0.0.1:13301/api/v2/_swagger/  ws://127.0.0.1:19501  http://127.0.0.1:19501/
2     16Uiu2HAmB  http://127.0.0.1:13302  http://127.0.0.1:13302/api/v2/_swagger/  ws://127.0.0.1:19502  http://127.0.0.1:19502/
`
	if got := RenderTable(twoNodes().Nodes); got != want {
		t.Fatalf("table:\n%s\nwant:\n%s", got, want)
	}
}

// TestConsoleURL: the admin console is the admin WebSocket's address over
// HTTP (HTTPS for wss).
func TestConsoleURL(t *testing.T) {
	for ws, want := range map[string]string{
		"ws://127.0.0.1:19501":   "http://127.0.0.1:19501/",
		"ws://10.77.0.2:19501":   "http://10.77.0.2:19501/",
		"wss://node.example:443": "https://node.example:443/",
	} {
		if got := (NodeInfo{WSURL: ws}).ConsoleURL(); got != want {
			t.Errorf("%s: %s, want %s", ws, got, want)
		}
	}
}

func validConfig() Config {
	c := DefaultConfig()
	c.Executable = "/bin/relayd"
	return c
}

// TestValidate: each bad field is reported with its flag.
func TestValidate(t *testing.T) {
	if err := validConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		flag string
		mod  func(*Config)
	}{
		{"executable", func(c *Config) { c.Executable = "" }},
		{"nodes", func(c *Config) { c.Nodes = 3 }},
		{"nodes", func(c *Config) { c.Nodes = MaxNodes + 1 }},
		{"apiToken", func(c *Config) { c.APIToken = "short" }},
		{"closurePeriod", func(c *Config) { c.ClosurePeriod = 1500 * time.Millisecond }},
		{"closurePeriod", func(c *Config) { c.ClosurePeriod = 0 }},
		{"mixDelayMax", func(c *Config) { c.MixDelayMax = -time.Millisecond }},
		{"blockTime", func(c *Config) { c.BlockTime = -time.Second }},
		{"blockTime", func(c *Config) { c.BlockTime = time.Minute }},
		{"mixDelayMean", func(c *Config) { c.MixDelayMean = -time.Millisecond }},
		{"mixDelayMean", func(c *Config) { c.MixDelayMean = 11 * time.Second }},
		{"mixDelayMax", func(c *Config) { c.MixDelayMean, c.MixDelayMax = 50*time.Millisecond, 20*time.Millisecond }},
		{"coverRate", func(c *Config) { c.CoverRate = -1 }},
		{"coverRate", func(c *Config) { c.CoverRate = 101 }},
		{"relayers", func(c *Config) { c.Relayers = 4 }},
		{"channelFunding", func(c *Config) { c.ChannelFunding = big.NewInt(0) }},
		{"channelFunding", func(c *Config) { c.ChannelFunding = nil }},
		{"env", func(c *Config) { c.EnvFile = "" }},
		{"stageTimeout", func(c *Config) { c.StageTimeout = 0 }},
		{"stopTimeout", func(c *Config) { c.StopTimeout = 0 }},
		{"chainPort", func(c *Config) { c.ChainPort = 0 }},
		{"apiPortBase", func(c *Config) { c.APIPortBase = 65533 }},
		{"p2pPortBase", func(c *Config) { c.P2PPortBase = 70000 }},
		{"adminPortBase", func(c *Config) { c.AdminPortBase = c.APIPortBase + 2 }},
		{"apiPortBase", func(c *Config) { c.APIPortBase = c.ChainPort - 1 }},
		{"profilePortBase", func(c *Config) { c.ProfilePortBase = c.P2PPortBase + 1 }},
		{"profilePortBase", func(c *Config) { c.ProfilePortBase = 65534 }},
		{"linkRate", func(c *Config) { c.LinkRate = "10mbit" }},
		{"layers", func(c *Config) { c.Layers = 1 }},
		{"layers", func(c *Config) { c.Layers = 4 }},
		{"layerWidth", func(c *Config) { c.Layers, c.LayerWidth = 2, 0 }},
		{"layerWidth", func(c *Config) { c.Nodes, c.Layers, c.LayerWidth = 6, 2, 3 }},
		{"epochBlocks", func(c *Config) { c.Layers, c.LayerWidth, c.EpochBlocks = 2, 1, MinEpochBlocks-1 }},
		{"relayerCoverRate", func(c *Config) { c.RelayerCoverRate = -1 }},
		{"relayerCoverRate", func(c *Config) { c.RelayerCoverRate = math.NaN() }},
		{"profilePortBase", func(c *Config) { c.NetNS, c.ProfilePortBase = true, 16000 }},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			c := validConfig()
			tc.mod(&c)
			err := c.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Flag != tc.flag {
				t.Fatalf("got %v, want a FieldError for --%s", err, tc.flag)
			}
			if !strings.HasPrefix(err.Error(), "--"+tc.flag+" ") {
				t.Fatalf("message %q does not start with the flag", err)
			}
		})
	}
}

// freeBase finds count consecutive ports free on 127.0.0.1 (TCP and UDP), below Linux's
// ephemeral range (32768 and up), where the connections of the tests running beside it take
// their ports: a range drawn there was often taken again before the test bound it.
func freeBase(t *testing.T, count int) int {
	t.Helper()
	for attempt := 0; attempt < 200; attempt++ {
		base := 20000 + rand.IntN(32768-20000-count)
		ok := true
		for p := base; p < base+count && ok; p++ {
			ok = portFree(p, true) == nil
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// TestCheckPorts: free ranges pass; a busy port names its flag, port and
// node, in one line.
func TestCheckPorts(t *testing.T) {
	c := validConfig()
	c.Nodes = 4
	base := freeBase(t, 13)
	c.ChainPort, c.APIPortBase, c.AdminPortBase, c.P2PPortBase = base, base+1, base+5, base+9
	if err := CheckPorts(c); err != nil {
		t.Fatalf("free ports: %v", err)
	}
	for _, tc := range []struct {
		flag string
		port int
		udp  bool
		node string
	}{
		{"chainPort", c.ChainPort, false, "dev chain"},
		{"apiPortBase", c.APIPortBase + 2, false, "node 3's REST API"},
		{"adminPortBase", c.AdminPortBase + 3, false, "node 4's admin WebSocket"},
		{"p2pPortBase", c.P2PPortBase + 1, true, "node 2's p2p"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			addr := "127.0.0.1:" + strconv.Itoa(tc.port)
			if tc.udp {
				pc, err := net.ListenPacket("udp", addr)
				if err != nil {
					t.Skip(err)
				}
				defer pc.Close()
			} else {
				l, err := net.Listen("tcp", addr)
				if err != nil {
					t.Skip(err)
				}
				defer l.Close()
			}
			err := CheckPorts(c)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Flag != tc.flag {
				t.Fatalf("got %v, want a FieldError for --%s", err, tc.flag)
			}
			msg := err.Error()
			if !strings.Contains(msg, strconv.Itoa(tc.port)) || !strings.Contains(msg, tc.node) || strings.Contains(msg, "\n") {
				t.Fatalf("message %q should name port %d and %q on one line", msg, tc.port, tc.node)
			}
		})
	}
}

// TestLogTail: the last lines of a log, and of a missing file nothing.
func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "relayd.log")
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	os.WriteFile(path, []byte(b.String()), 0o600)
	if got := logTail(path, 3); got != "line 98\nline 99\nline 100" {
		t.Fatalf("tail %q", got)
	}
	if got := logTail(path+".missing", 3); got != "" {
		t.Fatalf("tail of a missing file %q", got)
	}
	e := &NodeError{Index: 2, Err: errors.New("exited unexpectedly: exit status 1"), LogPath: path, Tail: "boom"}
	if want := "node 2: exited unexpectedly: exit status 1 (log: " + path + ")\n--- last lines of node 2's log ---\nboom\n--- end of node 2's log ---"; e.Error() != want {
		t.Fatalf("NodeError text %q", e.Error())
	}
}

// TestDataDirInUse: a --data directory that holds a previous cluster is
// refused before anything starts.
func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "node-1"), 0o700)
	c := validConfig()
	c.DataDir = dir
	cl := &cluster{cfg: c}
	err := cl.prepareDataDir()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Flag != "data" {
		t.Fatalf("got %v, want a FieldError for --data", err)
	}
}

// TestLayeredShape: a layered cluster's ready line names its layers, not the sparse network's
// channels per node the layered strategy does not open.
func TestLayeredShape(t *testing.T) {
	c := Config{Topology: Sparse, Nodes: 20, MaxChannels: 8, Layers: 3, LayerWidth: 3, EpochBlocks: 600}
	want := "a layered network of 3 layers of up to 3 relayers, drawn every 600 blocks, with the channels the nodes' strategies open into the first layer and from each layer into the next,"
	if got := c.layeredShape("mesh"); got != want {
		t.Fatalf("sparse:\n%s, want\n%s", got, want)
	}
	c.Topology = Mesh
	if got := c.layeredShape("a full mesh of 380 channels"); got != "a full mesh of 380 channels, paths across 3 layers of up to 3 relayers, drawn every 600 blocks," {
		t.Fatalf("mesh: %s", got)
	}
}
