package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Node is one node of the network as cluster.env describes it.
type Node struct {
	Index         int    // 1-based, as in RELAY_NODE_<Index>_…
	PeerID        string // libp2p PeerId (16Uiu2HAm…)
	NativeAddress string // chain address
	APIURL        string // REST base without /api/v2, e.g. http://127.0.0.1:13301
	WSURL         string // admin WebSocket, e.g. ws://127.0.0.1:19501
}

// Env is the content of a cluster.env file (DESIGN.md section 8).
type Env struct {
	APIToken string
	ChainRPC string
	Nodes    []Node // in index order, Nodes[i].Index == i+1
}

// Node returns the node with the 1-based index i.
func (e Env) Node(i int) (Node, error) {
	if i < 1 || i > len(e.Nodes) {
		return Node{}, fmt.Errorf("node %d does not exist: the network has nodes 1 to %d", i, len(e.Nodes))
	}
	return e.Nodes[i-1], nil
}

// LoadEnv reads and parses the env file at path.
func LoadEnv(path string) (Env, error) {
	f, err := os.Open(path)
	if err != nil {
		return Env{}, fmt.Errorf("read env file: %w", err)
	}
	defer f.Close()
	e, err := ParseEnv(f)
	if err != nil {
		return Env{}, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// maxEnvLines bounds the file ParseEnv reads.
const maxEnvLines = 10000

// ParseEnv parses the `export NAME=value` lines of a cluster.env (values
// bare or single-quoted for POSIX shells; blank lines and # comments are
// skipped) and checks that every node up to RELAY_NODE_COUNT has a PeerId, a
// REST URL and an admin WebSocket URL.
func ParseEnv(r io.Reader) (Env, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if line > maxEnvLines {
			return Env{}, fmt.Errorf("more than %d lines", maxEnvLines)
		}
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		s = strings.TrimPrefix(s, "export ")
		name, raw, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return Env{}, fmt.Errorf("line %d: want export NAME=value, got %q", line, sc.Text())
		}
		v, err := unquote(raw)
		if err != nil {
			return Env{}, fmt.Errorf("line %d (%s): %w", line, name, err)
		}
		vars[strings.TrimSpace(name)] = v
	}
	if err := sc.Err(); err != nil {
		return Env{}, fmt.Errorf("read env: %w", err)
	}
	e := Env{APIToken: vars["RELAY_API_TOKEN"], ChainRPC: vars["RELAY_CHAIN_RPC"]}
	if e.APIToken == "" {
		return Env{}, errors.New("RELAY_API_TOKEN is missing")
	}
	count, err := strconv.Atoi(vars["RELAY_NODE_COUNT"])
	if err != nil || count < 1 || count > 1000 {
		return Env{}, fmt.Errorf("RELAY_NODE_COUNT %q is not a node count", vars["RELAY_NODE_COUNT"])
	}
	for i := 1; i <= count; i++ {
		p := fmt.Sprintf("RELAY_NODE_%d_", i)
		n := Node{Index: i, PeerID: vars[p+"PEER_ID"], NativeAddress: vars[p+"NATIVE_ADDRESS"],
			APIURL: strings.TrimRight(vars[p+"API_URL"], "/"), WSURL: strings.TrimRight(vars[p+"WS_URL"], "/")}
		for _, f := range []struct{ name, v string }{{"PEER_ID", n.PeerID}, {"API_URL", n.APIURL}, {"WS_URL", n.WSURL}} {
			if f.v == "" {
				return Env{}, fmt.Errorf("%s%s is missing", p, f.name)
			}
		}
		e.Nodes = append(e.Nodes, n)
	}
	return e, nil
}

// unquote reads one POSIX shell word made of bare and single-quoted parts
// (a quote inside a quoted value is written as the four characters
// quote, backslash, quote, quote), as cluster.env writes them.
func unquote(raw string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(raw); {
		switch c := raw[i]; c {
		case '\'':
			end := strings.IndexByte(raw[i+1:], '\'')
			if end < 0 {
				return "", errors.New("unterminated single quote")
			}
			b.WriteString(raw[i+1 : i+1+end])
			i += end + 2
		case '\\':
			if i+1 >= len(raw) {
				return "", errors.New("trailing backslash")
			}
			b.WriteByte(raw[i+1])
			i += 2
		case '"', ' ', '\t', '$', '`':
			return "", fmt.Errorf("unsupported character %q outside single quotes", c)
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}
