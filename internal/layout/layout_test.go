package layout

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/relayd/relayd/"

// rule is what a package's comment says it may import.
type rule struct {
	// may lists the relayd packages (module-relative) it may import directly.
	may []string
	// pure packages import no I/O: no file system, network, process, database or chain client.
	pure bool
	// noTransport packages do not import the libp2p transport (internal/p2p, go-libp2p's host
	// and network stacks), even indirectly: they name peers through internal/identity.
	noTransport bool
}

// rules repeats the import rules of each package's doc comment; a package missing here fails
// the test, so a new package states its rules.
var rules = map[string]rule{
	"internal/tickets":    {pure: true},
	"internal/kdf":        {pure: true},
	"internal/por":        {may: []string{"internal/kdf"}, pure: true},
	"internal/packet":     {may: []string{"internal/kdf", "internal/por"}, pure: true},
	"internal/fragment":   {pure: true, noTransport: true},
	"internal/observe":    {pure: true},
	"internal/topology":   {pure: true, noTransport: true},
	"internal/layers":     {may: []string{"internal/channels", "internal/path", "internal/strategy", "internal/topology"}, pure: true, noTransport: true},
	"internal/path":       {pure: true},
	"internal/strategy":   {pure: true},
	"internal/channels":   {pure: true, noTransport: true},
	"internal/wait":       {pure: true},
	"internal/atomicfile": {noTransport: true},
	"internal/datadir":    {may: []string{"internal/identity"}, noTransport: true},
	"internal/testlog":    {pure: true},
	"internal/testnet":    {},
	"internal/identity":   {noTransport: true},
	"internal/store":      {may: []string{"internal/channels", "internal/packet", "internal/tickets"}},
	"internal/token":      {pure: true, noTransport: true},
	"internal/vrf":        {pure: true, noTransport: true},
	"internal/health":     {pure: true, noTransport: true},
	// The cockpit (docs/COCKPIT.md): the history the node keeps and its alerts.
	"internal/history":  {may: []string{"internal/peers", "internal/token"}, noTransport: true},
	"internal/alerts":   {may: []string{"internal/channels", "internal/health", "internal/peers", "internal/settings", "internal/token"}, noTransport: true},
	"internal/version":  {noTransport: true},
	"internal/logs":     {pure: true, noTransport: true},
	"internal/settings": {may: []string{"internal/exit", "internal/strategy", "internal/tickets", "internal/token"}, pure: true, noTransport: true},
	"internal/peers":    {may: []string{"internal/channels", "internal/identity"}, pure: true, noTransport: true},
	"internal/chain": {may: []string{"internal/chain/contracts", "internal/channels", "internal/health", "internal/store", "internal/tickets", "internal/token",
		"internal/vrf"}, noTransport: true},
	"internal/chain/contracts": {pure: true},
	"internal/networks":        {may: []string{"internal/atomicfile", "internal/chain", "internal/tickets", "internal/token", "internal/topology"}, noTransport: true},
	"internal/ledger": {may: []string{"internal/chain", "internal/chain/contracts", "internal/channels", "internal/packet",
		"internal/por", "internal/store", "internal/strategy", "internal/tickets", "internal/token", "internal/vrf"}, noTransport: true},
	"internal/relay": {may: []string{"internal/health", "internal/identity", "internal/ledger", "internal/p2p", "internal/packet", "internal/por",
		"internal/tickets", "internal/token"}},
	"internal/p2p": {may: []string{"internal/health", "internal/identity", "internal/peers"}},
	// The rooms of this node's own traffic: router sends and receives its messages through the
	// relay; cover sends its loops through the router; discovery turns announcements into peers.
	"internal/router": {may: []string{"internal/channels", "internal/ledger", "internal/p2p", "internal/packet", "internal/path",
		"internal/peers", "internal/por", "internal/relay", "internal/tickets"}},
	"internal/cover":  {may: []string{"internal/relay", "internal/router", "internal/token"}},
	"internal/stream": {may: []string{"internal/relay", "internal/router", "internal/token"}},
	// courier carries this node's messages of any length and keeps what arrives: it reaches the
	// network only through the router's interface and keeps its state in the store.
	"internal/courier":   {may: []string{"internal/fragment", "internal/packet", "internal/rto", "internal/store"}},
	"internal/discovery": {may: []string{"internal/chain", "internal/channels", "internal/peers"}},
	// The rooms of sessions (docs/SESSIONS.md): the transport, the exit's policy and the SOCKS5
	// entry import no relayd package; node wires them to the router.
	"internal/session": {may: []string{"internal/rto"}, noTransport: true},
	// carrier carries sessions' frames through the router's interface (forward packets, reply
	// blocks); gateway is the sessions' application ends, over the transport and the exit policy.
	"internal/carrier": {may: []string{"internal/packet", "internal/session"}, noTransport: true},
	"internal/rto":     {pure: true, noTransport: true},
	"internal/exit":    {noTransport: true},
	"internal/socks5":  {noTransport: true},
	"internal/gateway": {may: []string{"internal/carrier", "internal/exit", "internal/packet", "internal/session", "internal/socks5"}, noTransport: true},
	// The faces: api (REST) and admin (the console's language) call the rooms through interfaces
	// of their own and speak their vocabulary; neither imports the other, the transport, the chain
	// client or the store (the courier names the messages it hands out, courier.InboxMessage).
	"internal/api": {may: []string{"internal/alerts", "internal/api/openapi", "internal/channels", "internal/courier", "internal/gateway", "internal/health", "internal/history", "internal/identity",
		"internal/layers", "internal/ledger", "internal/origin", "internal/packet", "internal/peers", "internal/router", "internal/settings",
		"internal/tickets", "internal/token"}},
	"internal/admin": {may: []string{"internal/channels", "internal/courier", "internal/gateway", "internal/identity", "internal/layers", "internal/ledger", "internal/packet",
		"internal/peers", "internal/router", "internal/settings", "internal/token", "internal/ws"}},
	"internal/api/openapi":     {noTransport: true},
	"internal/ws":              {may: []string{"internal/origin", "internal/store", "internal/webui"}, noTransport: true},
	"internal/origin":          {noTransport: true},
	"internal/profile":         {noTransport: true},
	"internal/servers":         {noTransport: true},
	"internal/doctor":          {may: []string{"internal/chain", "internal/config", "internal/identity", "internal/networks", "internal/store", "internal/token"}},
	"internal/webui":           {noTransport: true},
	"internal/console":         {may: []string{"internal/ws"}, noTransport: true},
	"internal/config":          {may: []string{"internal/exit", "internal/origin", "internal/settings"}},
	"internal/hostnet":         {},
	"internal/capture":         {may: []string{"internal/observe"}},
	"internal/sim":             {may: []string{"internal/observe", "internal/path", "internal/strategy", "internal/tickets", "internal/token", "internal/topology"}},
	"internal/devchain":        {may: []string{"internal/chain", "internal/devfund", "internal/tickets"}, noTransport: true},
	"internal/devfund":         {may: []string{"internal/chain"}, noTransport: true},
	"internal/bench":           {may: []string{"internal/console", "internal/observe", "internal/por", "internal/ws", "internal/packet", "internal/tickets", "internal/kdf"}},
	"internal/bench/benchtest": {may: []string{"internal/admin", "internal/bench", "internal/ws"}},
	"internal/relayload":       {may: []string{"internal/bench", "internal/chain", "internal/channels", "internal/devfund", "internal/identity", "internal/ledger", "internal/p2p", "internal/packet", "internal/por", "internal/relay", "internal/store", "internal/tickets", "internal/token"}},
	"internal/cluster":         {may: []string{"internal/atomicfile", "internal/config", "internal/devchain", "internal/hostnet", "internal/identity", "internal/networks", "internal/settings", "internal/token"}},
	// node builds and wires every room; only the relayd command imports it.
	"internal/node":                  {may: []string{"*"}},
	"internal/layout":                {pure: true},
	"internal/channels/channelstest": {may: []string{"internal/channels"}, noTransport: true},
}

// importers lists the only packages that may import a package; absent: anyone may.
var importers = map[string][]string{
	"internal/node":      {"cmd/relayd"},
	"internal/devchain":  {"cmd/relayd", "internal/cluster"},
	"internal/relayload": {"cmd/relayctl"},
}

// io is what a pure package must not import directly.
var io_ = []string{"os", "os/exec", "net", "net/http", "syscall", "io/ioutil", "go.etcd.io/bbolt",
	"github.com/ethereum/go-ethereum/ethclient", "github.com/ethereum/go-ethereum/rpc", "github.com/libp2p/go-libp2p"}

// transport is what a noTransport package must not reach, even through others.
var transport = []string{module + "internal/p2p", "github.com/libp2p/go-libp2p", "github.com/libp2p/go-libp2p/core/host",
	"github.com/libp2p/go-libp2p/core/network", "github.com/libp2p/go-libp2p/p2p/net/swarm"}

type pkg struct {
	Dir        string
	ImportPath string
	Imports    []string
	Deps       []string
}

func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json=Dir,ImportPath,Imports,Deps", module+"...")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
		touch(t, p.Dir)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	return pkgs
}

// touch stats every Go file of dir: go test's cache then knows the test depends on them (it
// records the files a test stats), so a changed import reruns it instead of reusing a result
// that `go list`, another process, produced from older files.
func touch(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") {
			if _, err := os.Stat(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestImportRules(t *testing.T) {
	for _, p := range list(t) {
		name := strings.TrimPrefix(p.ImportPath, module)
		if strings.HasPrefix(name, "cmd/") || strings.HasPrefix(name, "e2e") {
			continue
		}
		r, ok := rules[name]
		if !ok {
			t.Errorf("%s: no import rule; add one to rules (and say it in the package comment)", name)
			continue
		}
		for _, imp := range p.Imports {
			if rel, ours := strings.CutPrefix(imp, module); ours {
				if !slices.Contains(r.may, "*") && !slices.Contains(r.may, rel) {
					t.Errorf("%s imports %s, which its rule does not allow", name, rel)
				}
				if who, limited := importers[rel]; limited && !slices.Contains(who, name) {
					t.Errorf("%s imports %s, which only %v may import", name, rel, who)
				}
			}
			if r.pure && slices.Contains(io_, imp) {
				t.Errorf("%s is pure but imports %s", name, imp)
			}
		}
		if r.noTransport {
			for _, dep := range p.Deps {
				if slices.Contains(transport, dep) {
					t.Errorf("%s reaches the libp2p transport (%s) through its imports", name, dep)
				}
			}
		}
	}
}

// TestRulesCatchAViolation: the checks above do fail on a package that breaks its rule (so the
// test is not vacuous): the relay's actual imports break the ledger's rule.
func TestRulesCatchAViolation(t *testing.T) {
	var relay pkg
	for _, p := range list(t) {
		if p.ImportPath == module+"internal/relay" {
			relay = p
		}
	}
	ledgerRule := rules["internal/ledger"]
	broken := false
	for _, imp := range relay.Imports {
		if rel, ours := strings.CutPrefix(imp, module); ours && !slices.Contains(ledgerRule.may, rel) {
			broken = true
		}
	}
	if !broken {
		t.Fatal("the relay's imports fit the ledger's rule: the rule check cannot tell packages apart")
	}
}

// never are imports no edit of rules may allow: the faces (api, admin) never import each other,
// the transport, the chain client or the store; the rooms of traffic and money never import a
// face; nothing but cmd/relayd imports the node.
var never = map[string][]string{
	"internal/api":     {"internal/admin", "internal/ws", "internal/node", "internal/p2p", "internal/chain", "internal/store"},
	"internal/admin":   {"internal/api", "internal/node", "internal/p2p", "internal/chain", "internal/store"},
	"internal/router":  {"internal/api", "internal/ws", "internal/admin", "internal/node"},
	"internal/relay":   {"internal/api", "internal/ws", "internal/admin", "internal/node", "internal/router"},
	"internal/ledger":  {"internal/api", "internal/ws", "internal/admin", "internal/node", "internal/relay", "internal/router"},
	"internal/cover":   {"internal/api", "internal/ws", "internal/admin", "internal/node"},
	"internal/stream":  {"internal/api", "internal/ws", "internal/admin", "internal/node"},
	"internal/courier": {"internal/api", "internal/ws", "internal/admin", "internal/node", "internal/relay", "internal/router", "internal/p2p"},
	"internal/ws":      {"internal/admin", "internal/api", "internal/node"},
}

func TestNeverImports(t *testing.T) {
	for _, p := range list(t) {
		name := strings.TrimPrefix(p.ImportPath, module)
		for _, imp := range p.Imports {
			if rel, ours := strings.CutPrefix(imp, module); ours && slices.Contains(never[name], rel) {
				t.Errorf("%s imports %s", name, rel)
			}
		}
	}
}

// nodeBudget is the most lines of non-test Go internal/node may hold: it only builds and wires.
// Sessions (issue 28) pushed it to 753 lines for a while; the servers' life moved to
// internal/servers to make room. Session 12 wired two rooms more (history and alerts) and moved
// the data directory's and the keystore's opening to internal/datadir to stay within it.
const nodeBudget = 700

// goFiles lists the non-test Go files of dir.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// TestNodeOnlyWires: internal/node stays within its line budget and declares no package
// variable (what tests changed that way comes in node.Options now).
func TestNodeOnlyWires(t *testing.T) {
	lines := 0
	for _, f := range goFiles(t, "../node") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
		for i, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "var ") || l == "var (" {
				t.Errorf("%s:%d: a package variable in node: %q", f, i+1, l)
			}
		}
	}
	if lines > nodeBudget || lines < 100 {
		t.Fatalf("internal/node holds %d lines of non-test Go; the budget is %d", lines, nodeBudget)
	}
}

// TestNoContextValues: no non-test code under internal/ passes a value through a context; what a
// call needs comes in its arguments or its callee's Config.
func TestNoContextValues(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "context.WithValue(") {
			t.Errorf("%s calls context.WithValue", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
