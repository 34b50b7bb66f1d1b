package bench

import (
	"slices"
	"strings"
	"testing"
)

const sampleEnv = `export RELAY_API_TOKEN='it'\''s a token'
export RELAY_CHAIN_RPC=http://127.0.0.1:8545
export RELAY_NODE_COUNT=2
# a comment

export RELAY_NODE_1_PEER_ID=16Uiu2HAmA
export RELAY_NODE_1_NATIVE_ADDRESS=0x01
export RELAY_NODE_1_API_URL=http://127.0.0.1:13301/
export RELAY_NODE_1_WS_URL=ws://127.0.0.1:19501
export RELAY_NODE_2_PEER_ID=16Uiu2HAmB
export RELAY_NODE_2_NATIVE_ADDRESS=0x02
export RELAY_NODE_2_API_URL=http://127.0.0.1:13302
export RELAY_NODE_2_WS_URL=ws://127.0.0.1:19502
`

func TestParseEnv(t *testing.T) {
	e, err := ParseEnv(strings.NewReader(sampleEnv))
	if err != nil {
		t.Fatal(err)
	}
	if e.APIToken != "it's a token" || e.ChainRPC != "http://127.0.0.1:8545" || len(e.Nodes) != 2 {
		t.Fatalf("env %+v", e)
	}
	want := Node{Index: 1, PeerID: "16Uiu2HAmA", NativeAddress: "0x01", APIURL: "http://127.0.0.1:13301", WSURL: "ws://127.0.0.1:19501"}
	if e.Nodes[0] != want {
		t.Fatalf("node 1 %+v, want %+v", e.Nodes[0], want)
	}
	if n, err := e.Node(2); err != nil || n.PeerID != "16Uiu2HAmB" {
		t.Fatalf("Node(2) = %+v, %v", n, err)
	}
	for _, i := range []int{0, 3} {
		if _, err := e.Node(i); err == nil {
			t.Fatalf("Node(%d) has no error", i)
		}
	}
}

func TestParseEnvErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"no token", strings.Replace(sampleEnv, "export RELAY_API_TOKEN='it'\\''s a token'\n", "", 1), "RELAY_API_TOKEN"},
		{"bad count", strings.Replace(sampleEnv, "COUNT=2", "COUNT=two", 1), "RELAY_NODE_COUNT"},
		{"missing node", strings.Replace(sampleEnv, "COUNT=2", "COUNT=3", 1), "RELAY_NODE_3_PEER_ID"},
		{"missing ws", strings.Replace(sampleEnv, "export RELAY_NODE_2_WS_URL=ws://127.0.0.1:19502\n", "", 1), "RELAY_NODE_2_WS_URL"},
		{"no equals", sampleEnv + "export JUNK\n", "line 14"},
		{"unterminated", sampleEnv + "export X='abc\n", "unterminated"},
		{"double quotes", sampleEnv + "export X=\"abc\"\n", "unsupported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseEnv(strings.NewReader(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
		})
	}
}

func TestLoadEnvMissingFile(t *testing.T) {
	if _, err := LoadEnv(t.TempDir() + "/none.env"); err == nil || !strings.Contains(err.Error(), "read env file") {
		t.Fatalf("error %v", err)
	}
}

func TestDefaultSenders(t *testing.T) {
	e := Env{Nodes: make([]Node, 4)}
	got, err := DefaultSenders(e, 2, 1)
	if err != nil || len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("DefaultSenders = %v, %v", got, err)
	}
	if _, err := DefaultSenders(e, 4, 4); err == nil {
		t.Fatal("4 senders besides the recipient among 4 nodes")
	}
	if _, err := DefaultSenders(e, 0, 4); err == nil {
		t.Fatal("0 senders")
	}
}

func TestDefaultRecipientsAndSenders(t *testing.T) {
	e := Env{Nodes: make([]Node, 6)}
	rec, err := DefaultRecipients(e, 2)
	if err != nil || !slices.Equal(rec, []int{5, 6}) {
		t.Fatalf("DefaultRecipients = %v, %v", rec, err)
	}
	snd, err := DefaultSenders(e, 4, rec...)
	if err != nil || !slices.Equal(snd, []int{1, 2, 3, 4}) {
		t.Fatalf("DefaultSenders = %v, %v", snd, err)
	}
	if _, err := DefaultSenders(e, 5, rec...); err == nil || !strings.Contains(err.Error(), "among the 4 nodes that do not receive") {
		t.Fatalf("5 senders besides 2 recipients among 6 nodes: %v", err)
	}
	for _, n := range []int{0, -1, 6, 7} {
		if _, err := DefaultRecipients(e, n); err == nil || !strings.Contains(err.Error(), "between 1 and 5") {
			t.Fatalf("%d recipients among 6 nodes: %v", n, err)
		}
	}
}
