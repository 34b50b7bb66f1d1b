package networks_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/tickets"
)

// example is a valid network; tests change one field at a time.
func example() networks.Network {
	return networks.Network{
		Name: "testnet", Description: "a test network", ChainID: 11155111, Provider: "https://rpc.example.org",
		Token:      common.HexToAddress("0x1111111111111111111111111111111111111111"),
		Channels:   common.HexToAddress("0x2222222222222222222222222222222222222222"),
		StartBlock: 4_200_000, MinWinProb: must(tickets.ParseWinProb("0.01")), ClosurePeriod: time.Hour,
		Peers: []string{"/ip4/203.0.113.7/tcp/9091/p2p/16Uiu2HAmKkvw5nYY7UCghPJNgMtbtz5Nk6kKkmvrRdsvA9pL5Mya"},
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// entry is one network of a file as JSON text with the fields given, on top of valid ones.
func file(fields string) string {
	return `{"version": 1, "networks": [{"name": "n", "chainId": 5, "token": "0x1111111111111111111111111111111111111111",
		"channels": "0x2222222222222222222222222222222222222222", "startBlock": 7, "minWinProb": "1", "closurePeriod": "60s"` + fields + `}]}`
}

// TestParseNamesTheField: every malformed file fails with a *FieldError (ErrBadNetwork) whose
// field is the one at fault and whose text names the file.
func TestParseNamesTheField(t *testing.T) {
	if _, err := networks.Parse([]byte(file("")), "f.json"); err != nil {
		t.Fatalf("the base file: %v", err)
	}
	for _, tt := range []struct {
		name, data, field, says string
	}{
		{"not JSON", `{"version": 1,`, "", "not valid JSON"},
		{"empty", ``, "", "empty"},
		{"two values", `{"version": 1, "networks": []} {}`, "", "more than one"},
		{"no version", `{"networks": []}`, "version", "missing"},
		{"a future version", `{"version": 2, "networks": []}`, "version", "reads version 1"},
		{"no networks", `{"version": 1}`, "networks", "missing"},
		{"unknown top field", `{"version": 1, "networks": [], "extra": 1}`, "extra", "not a field"},
		{"misspelt field", file(`, "chain_id": 5`), "chain_id", "not a field"},
		{"chain id a string", strings.Replace(file(""), `"chainId": 5`, `"chainId": "5"`, 1), "chainId", "JSON string"},
		{"negative start block", strings.Replace(file(""), `"startBlock": 7`, `"startBlock": -1`, 1), "startBlock", "want a whole number"},
		{"no name", strings.Replace(file(""), `"name": "n"`, `"name": ""`, 1), "name", "missing"},
		{"upper-case name", strings.Replace(file(""), `"name": "n"`, `"name": "Main"`, 1), "name", "lowercase"},
		{"name with a slash", strings.Replace(file(""), `"name": "n"`, `"name": "a/b"`, 1), "name", "only lowercase"},
		{"no chain id", strings.Replace(file(""), `"chainId": 5,`, ``, 1), "chainId", "missing"},
		{"chain id 0", strings.Replace(file(""), `"chainId": 5`, `"chainId": 0`, 1), "chainId", "not be 0"},
		{"no token", strings.Replace(file(""), `"token": "0x1111111111111111111111111111111111111111",`, ``, 1), "token", "missing"},
		{"short token", strings.Replace(file(""), `0x1111111111111111111111111111111111111111`, `0x1111`, 1), "token", "40 hex digits"},
		{"zero channels", strings.Replace(file(""), `0x2222222222222222222222222222222222222222`, `0x0000000000000000000000000000000000000000`, 1), "channels", "zero address"},
		{"channels = token", strings.Replace(file(""), `0x2222222222222222222222222222222222222222`, `0x1111111111111111111111111111111111111111`, 1), "channels", "token's address"},
		{"bad checksum", strings.Replace(file(""), `0x2222222222222222222222222222222222222222`, `0xdb7d6AB1f17c6b31909aE466702703dAEf9269Cf`, 1), "channels", "EIP-55 checksum"},
		{"no start block", strings.Replace(file(""), `"startBlock": 7,`, ``, 1), "startBlock", "missing"},
		{"no win probability", strings.Replace(file(""), `"minWinProb": "1",`, ``, 1), "minWinProb", "missing"},
		{"win probability 0", strings.Replace(file(""), `"minWinProb": "1"`, `"minWinProb": "0"`, 1), "minWinProb", "not a probability"},
		{"win probability above 1", strings.Replace(file(""), `"minWinProb": "1"`, `"minWinProb": "1.5"`, 1), "minWinProb", "not a probability"},
		{"win probability a number", strings.Replace(file(""), `"minWinProb": "1"`, `"minWinProb": 1`, 1), "minWinProb", "JSON number"},
		{"no closure period", strings.Replace(file(""), `, "closurePeriod": "60s"`, ``, 1), "closurePeriod", "missing"},
		{"closure period not a duration", strings.Replace(file(""), `"60s"`, `"60"`, 1), "closurePeriod", "not a duration"},
		{"closure period fractional", strings.Replace(file(""), `"60s"`, `"1.5s"`, 1), "closurePeriod", "whole number of seconds"},
		{"closure period negative", strings.Replace(file(""), `"60s"`, `"-60s"`, 1), "closurePeriod", "positive"},
		{"closure period too long", strings.Replace(file(""), `"60s"`, `"9000h"`, 1), "closurePeriod", "at most"},
		{"provider not a URL", file(`, "provider": "localhost:8545"`), "provider", "URL"},
		{"provider with credentials", file(`, "provider": "https://user:pw@rpc.example.org"`), "provider", "user info"},
		{"peer without id", file(`, "peers": ["/ip4/203.0.113.7/tcp/9091"]`), "peers", "/p2p/"},
		{"peer not a multiaddr", file(`, "peers": ["203.0.113.7:9091"]`), "peers", "not a multiaddr"},
		{"description with a newline", file(`, "description": "a\nb"`), "description", "control character"},
		{"a name twice", `{"version": 1, "networks": [` + strings.TrimSuffix(strings.TrimPrefix(file(""), `{"version": 1, "networks": [`), `]}`) + `,` +
			strings.TrimSuffix(strings.TrimPrefix(file(""), `{"version": 1, "networks": [`), `]}`) + `]}`, "name", "twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := networks.Parse([]byte(tt.data), "f.json")
			var fe *networks.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, networks.ErrBadNetwork) {
				t.Fatalf("Parse: %v, want a *FieldError", err)
			}
			if fe.Field != tt.field || !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), "f.json") {
				t.Fatalf("Parse: field %q, %q; want field %q saying %q and naming the file", fe.Field, err, tt.field, tt.says)
			}
		})
	}
}

// TestParseNamesTheEntry: an error in the second entry names it, by name when it has a valid
// one, by position otherwise.
func TestParseNamesTheEntry(t *testing.T) {
	good := strings.TrimSuffix(strings.TrimPrefix(file(""), `{"version": 1, "networks": [`), `]}`)
	for _, tt := range []struct{ second, want string }{
		{strings.Replace(strings.Replace(good, `"name": "n"`, `"name": "other"`, 1), `"chainId": 5`, `"chainId": 0`, 1), `network "other": chainId`},
		{strings.Replace(good, `"name": "n"`, `"name": "Bad Name"`, 1), `network "#2": name`},
	} {
		_, err := networks.Parse([]byte(`{"version": 1, "networks": [`+good+`,`+tt.second+`]}`), "f.json")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse: %v, want it to name %s", err, tt.want)
		}
	}
}

// TestEncodeRoundTrip: Encode writes what Parse reads back as the same networks, in a form an
// operator reads (checksummed addresses, "0.01", "1h").
func TestEncodeRoundTrip(t *testing.T) {
	in := []networks.Network{example(), networks.Shipped()[0]}
	data, err := networks.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"version": 1`, `"minWinProb": "0.01"`, `"closurePeriod": "1h"`, `"closurePeriod": "1m"`, example().Token.Hex()} {
		if !strings.Contains(string(data), want) {
			t.Errorf("encoded file lacks %s:\n%s", want, data)
		}
	}
	out, err := networks.Parse(data, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n%+v\n%+v", in, out)
	}
	// Encode refuses what Parse would refuse.
	bad := example()
	bad.ClosurePeriod = 1500 * time.Millisecond
	if _, err := networks.Encode([]networks.Network{bad}); !errors.Is(err, networks.ErrBadNetwork) {
		t.Fatalf("Encode of a fractional closure period: %v", err)
	}
	if _, err := networks.Encode([]networks.Network{example(), example()}); !errors.Is(err, networks.ErrBadNetwork) {
		t.Fatalf("Encode of a name twice: %v", err)
	}
	odd := example()
	odd.MinWinProb = 1<<55 + 1<<2 // w+1 needs 54 bits: no float64 probability reads back as it
	if _, err := networks.Encode([]networks.Network{odd}); !errors.Is(err, networks.ErrBadNetwork) {
		t.Fatalf("Encode of an inexact minimum: %v", err)
	}
}

// TestShipped: the built-in file parses and holds local, on the dev chain's id.
func TestShipped(t *testing.T) {
	s := networks.Shipped()
	if len(s) == 0 || s[0].Name != "local" || s[0].ChainID != 1337 || s[0].MinWinProb != tickets.MaxWinProb || s[0].ClosurePeriod != time.Minute {
		t.Fatalf("shipped %+v", s)
	}
}

func writeFile(t *testing.T, nets ...networks.Network) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "networks.json")
	data, err := networks.Encode(nets)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLookup: the shipped networks without a file; the operator's on top of them, replacing a
// shipped one of the same name; an unknown name lists every known one and where it comes from;
// a broken or missing file is an error even for a shipped name.
func TestLookup(t *testing.T) {
	n, err := networks.Lookup("local", "")
	if err != nil || n.ChainID != 1337 {
		t.Fatalf("Lookup(local): %+v %v", n, err)
	}
	_, err = networks.Lookup("testnet", "")
	if !errors.Is(err, networks.ErrUnknownNetwork) || !strings.Contains(err.Error(), "local (built in)") || !strings.Contains(err.Error(), "relayd deploy") {
		t.Fatalf("Lookup(testnet) without a file: %v", err)
	}

	ownLocal := networks.Shipped()[0]
	ownLocal.Provider, ownLocal.ClosurePeriod = "http://10.0.0.1:8545", 2*time.Minute
	path := writeFile(t, example(), ownLocal)
	if n, err := networks.Lookup("testnet", path); err != nil || !reflect.DeepEqual(n, example()) {
		t.Fatalf("Lookup(testnet): %+v %v", n, err)
	}
	if n, err := networks.Lookup("local", path); err != nil || n.ClosurePeriod != 2*time.Minute {
		t.Fatalf("Lookup(local) with the operator's own local: %+v %v", n, err)
	}
	_, err = networks.Lookup("mainnet", path)
	if !errors.Is(err, networks.ErrUnknownNetwork) || !strings.Contains(err.Error(), `"mainnet"`) ||
		!strings.Contains(err.Error(), "testnet (in "+path+")") || !strings.Contains(err.Error(), "local (in "+path+")") ||
		strings.Contains(err.Error(), "built in") {
		t.Fatalf("Lookup(mainnet): %v", err)
	}

	broken := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(broken, []byte(file(`, "closurePeriod2": "1s"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	var fe *networks.FieldError
	if _, err := networks.Lookup("local", broken); !errors.As(err, &fe) || fe.Field != "closurePeriod2" || fe.File != broken {
		t.Fatalf("Lookup with a broken file: %v", err)
	}
	if _, err := networks.Lookup("local", filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lookup with a missing file: %v", err)
	}
}

// TestAppend: Append creates the file, adds to it keeping what it held and its mode, refuses
// a name it holds and an invalid network, and leaves no temporary file behind.
func TestAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "networks.json")
	a := example()
	if err := networks.Append(path, a); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v %v", st, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	b := example()
	b.Name, b.ChainID, b.Peers = "second", 1, nil
	if err := networks.Append(path, b); err != nil {
		t.Fatal(err)
	}
	got, err := networks.Load(path)
	if err != nil || !reflect.DeepEqual(got, []networks.Network{a, b}) {
		t.Fatalf("after two appends: %+v %v", got, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v after append, want the file's 0600 kept", st.Mode())
	}
	if err := networks.Append(path, a); !errors.Is(err, networks.ErrExists) {
		t.Fatalf("append of a name the file holds: %v", err)
	}
	bad := example()
	bad.Name = "third"
	bad.Token = common.Address{}
	if err := networks.Append(path, bad); !errors.Is(err, networks.ErrBadNetwork) {
		t.Fatalf("append of an invalid network: %v", err)
	}
	if got, _ := networks.Load(path); len(got) != 2 {
		t.Fatalf("refused appends changed the file: %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the file", len(entries))
	}
}
