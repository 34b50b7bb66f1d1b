package vrf

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
)

// The Solidity verifier, contracts/RelayVRF.sol, is tested through the test-only
// contracts/RelayVRFHarness.sol, whose ABI and bytecode testdata/harness.json holds together
// with the Keccak-256 of both sources. Regenerate it (needs node and `npm ci` in contracts/)
// after changing either source:
//
//	go test ./internal/vrf -run TestHarnessArtefact -update-harness
//
// which runs testdata/compile-harness.sh (contracts/compile.js's pinned solc and settings, on a
// copy of compile.js listing the two files) and rewrites harness.json. TestHarnessArtefact fails
// when a source no longer matches the hash recorded, so the bytecode cannot drift from it.
var updateHarness = flag.Bool("update-harness", false, "recompile the harness and rewrite testdata/harness.json")

const harnessPath = "testdata/harness.json"

// harnessSources are the files compiled into the harness, relative to the module root.
var harnessSources = []string{"contracts/RelayVRF.sol", "contracts/RelayVRFHarness.sol"}

type harnessFile struct {
	Comment string            `json:"comment"`
	Solc    string            `json:"solc"`
	Sources map[string]string `json:"sources"` // path → keccak256 of the file, hex
	ABI     json.RawMessage   `json:"abi"`
	Bin     string            `json:"bin"`
}

func sourceHashes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range harnessSources {
		b, err := os.ReadFile(filepath.Join("..", "..", s))
		if err != nil {
			t.Fatal(err)
		}
		out[s] = hex.EncodeToString(crypto.Keccak256(b))
	}
	return out
}

func TestHarnessArtefact(t *testing.T) {
	if *updateHarness {
		regenerateHarness(t)
	}
	h := readHarness(t)
	for path, want := range sourceHashes(t) {
		if h.Sources[path] != want {
			t.Errorf("%s changed since %s was generated; run go test ./internal/vrf -run TestHarnessArtefact -update-harness", path, harnessPath)
		}
	}
}

func regenerateHarness(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("sh", "testdata/compile-harness.sh", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compile-harness.sh: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "combined.json"))
	if err != nil {
		t.Fatal(err)
	}
	var combined struct {
		Contracts map[string]struct {
			ABI json.RawMessage `json:"abi"`
			Bin string          `json:"bin"`
		} `json:"contracts"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &combined); err != nil {
		t.Fatal(err)
	}
	c, ok := combined.Contracts["contracts/RelayVRFHarness.sol:RelayVRFHarness"]
	if !ok {
		t.Fatal("no RelayVRFHarness in the compiler's output")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, c.ABI); err != nil {
		t.Fatal(err)
	}
	h := harnessFile{
		Comment: "Test-only: contracts/RelayVRFHarness.sol compiled by internal/vrf/testdata/compile-harness.sh " +
			"(contracts/compile.js's solc and settings). Regenerate: go test ./internal/vrf -run TestHarnessArtefact -update-harness",
		Solc: combined.Version, Sources: sourceHashes(t), ABI: compact.Bytes(), Bin: c.Bin,
	}
	enc, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(harnessPath, append(enc, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readHarness(t *testing.T) harnessFile {
	t.Helper()
	raw, err := os.ReadFile(harnessPath)
	if err != nil {
		t.Fatal(err)
	}
	var h harnessFile
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// osakaRules switches off the simulated backend's forks after Osaka (its default includes draft
// forks), so gas figures are today's mainnet rules; as internal/chain/contracts' tests do.
func osakaRules(_ *node.Config, ec *ethconfig.Config) {
	cfg := *ec.Genesis.Config
	cfg.AmsterdamTime, cfg.BogotaTime = nil, nil
	ec.Genesis.Config = &cfg
}

// harness is RelayVRFHarness deployed on a simulated chain.
type harness struct {
	t      *testing.T
	sim    *simulated.Backend
	abi    abi.ABI
	addr   common.Address
	client simulated.Client
}

func newHarness(t *testing.T, options ...func(*node.Config, *ethconfig.Config)) *harness {
	t.Helper()
	h := readHarness(t)
	parsed, err := abi.JSON(bytes.NewReader(h.ABI))
	if err != nil {
		t.Fatal(err)
	}
	key := testKey(t, "deployer")
	from := crypto.PubkeyToAddress(key.PublicKey)
	sim := simulated.NewBackend(types.GenesisAlloc{from: {Balance: new(big.Int).Lsh(big.NewInt(1), 100)}}, options...)
	t.Cleanup(func() { _ = sim.Close() })
	opts := bind.NewKeyedTransactor(key, big.NewInt(1337))
	opts.Context = t.Context()
	addr, tx, err := bind.DeployContract(opts, common.FromHex(h.Bin), sim.Client(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sim.Commit()
	if r, err := sim.Client().TransactionReceipt(t.Context(), tx.Hash()); err != nil || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("deploy harness: %v", err)
	}
	return &harness{t: t, sim: sim, abi: parsed, addr: addr, client: sim.Client()}
}

// callData is the harness method's selector followed by pkX, pkY, alpha and the proof's words:
// the proof's encoding is its ABI encoding (TestProofABILayout).
func (h *harness) callData(method string, pk Point, alpha []byte, p Proof) []byte {
	h.t.Helper()
	if len(alpha) != 32 {
		h.t.Fatalf("the contract takes 32-byte inputs, not %d", len(alpha))
	}
	b, _ := p.MarshalBinary()
	data := append([]byte(nil), h.abi.Methods[method].ID...)
	data = append(data, pk.X[:]...)
	data = append(data, pk.Y[:]...)
	data = append(data, alpha...)
	return append(data, b...)
}

func (h *harness) call(data []byte) []byte {
	h.t.Helper()
	out, err := h.client.CallContract(h.t.Context(), ethereum.CallMsg{To: &h.addr, Data: data, Gas: 10_000_000}, nil)
	if err != nil {
		h.t.Fatalf("call: %v", err)
	}
	return out
}

// verify runs RelayVRF.verify on the chain.
func (h *harness) verify(pk Point, alpha []byte, p Proof) (bool, [32]byte) {
	h.t.Helper()
	res, err := h.abi.Unpack("verify", h.call(h.callData("verify", pk, alpha, p)))
	if err != nil {
		h.t.Fatal(err)
	}
	return res[0].(bool), res[1].([32]byte)
}

// verifyGas runs RelayVRF.verify on the chain and returns the gas the library call used.
func (h *harness) verifyGas(pk Point, alpha []byte, p Proof) (bool, uint64) {
	h.t.Helper()
	res, err := h.abi.Unpack("verifyGas", h.call(h.callData("verifyGas", pk, alpha, p)))
	if err != nil {
		h.t.Fatal(err)
	}
	return res[0].(bool), res[2].(*big.Int).Uint64()
}

// TestProofABILayout: go-ethereum's ABI encoder lays the Proof struct out as MarshalBinary does.
func TestProofABILayout(t *testing.T) {
	h := readHarness(t)
	parsed, err := abi.JSON(bytes.NewReader(h.ABI))
	if err != nil {
		t.Fatal(err)
	}
	sk := testKey(t, "abi")
	alpha := crypto.Keccak256([]byte("abi"))
	p := mustProve(t, sk, alpha)
	w := func(b [32]byte) *big.Int { return new(big.Int).SetBytes(b[:]) }
	type proofTuple struct {
		GammaX, GammaY, C, S, SHX, SHY, CGammaX, CGammaY, ZInv *big.Int
	}
	pk := pubPoint(sk)
	packed, err := parsed.Pack("verify", w(pk.X), w(pk.Y), [32]byte(alpha), proofTuple{
		w(p.Gamma.X), w(p.Gamma.Y), w(p.C), w(p.S), w(p.SH.X), w(p.SH.Y), w(p.CGamma.X), w(p.CGamma.Y), w(p.ZInv),
	})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := p.MarshalBinary()
	if len(packed) != 4+3*32+ProofLen || !bytes.Equal(packed[4+3*32:], enc) {
		t.Fatalf("ABI encoding of the proof differs from MarshalBinary:\n%x\n%x", packed[4+3*32:], enc)
	}
}

// TestContractMatchesGo: the Solidity verifier accepts exactly what Verify accepts, with the
// same output, and recomputes the same H, over random keys and inputs, every tampering, and the
// known-answer vectors.
func TestContractMatchesGo(t *testing.T) {
	h := newHarness(t, osakaRules)
	for i := range 40 {
		sk := testKey(t, fmt.Sprint("contract ", i))
		alpha := crypto.Keccak256([]byte(fmt.Sprint("ticket ", i)))
		p := mustProve(t, sk, alpha)
		ok, beta := h.verify(pubPoint(sk), alpha, p)
		if !ok || beta != p.Output() {
			t.Fatalf("key %d: contract verify = %v, %x; want true, %x", i, ok, beta, p.Output())
		}
		res, err := h.abi.Unpack("hashToCurve", h.call(h.packH2C(pubPoint(sk), alpha)))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := HashToCurve(&sk.PublicKey, alpha)
		if res[0].(*big.Int).Cmp(word(&want.X)) != 0 || res[1].(*big.Int).Cmp(word(&want.Y)) != 0 {
			t.Fatalf("key %d: contract H = (%x, %x), want %x", i, res[0], res[1], want)
		}
	}

	sk, other := testKey(t, "contract tamper"), testKey(t, "contract tamper other")
	alpha := crypto.Keccak256([]byte("contract tamper"))
	valid := mustProve(t, sk, alpha)
	for _, c := range tampers(t, sk, other, alpha) {
		t.Run(c.name, func(t *testing.T) {
			p, pk, a := valid, pubPoint(sk), append([]byte(nil), alpha...)
			c.change(&p, &pk, &a)
			if ok, beta := h.verify(pk, a, p); ok || beta != ([32]byte{}) {
				t.Fatalf("contract accepted (output %x); Go says %v", beta, verify(pk, a, &p))
			}
		})
	}

	vf := readVectors(t)
	for _, v := range vf.Valid {
		if len(v.Alpha) != 64 {
			continue // the contract takes 32-byte inputs
		}
		sk, err := crypto.HexToECDSA(v.Key)
		if err != nil {
			t.Fatal(err)
		}
		ok, beta := h.verify(pubPoint(sk), unhex(t, v.Alpha), decodeProof(t, v.Proof))
		if !ok || hex.EncodeToString(beta[:]) != v.Beta {
			t.Fatalf("vector %q: contract verify = %v, %x", v.Name, ok, beta)
		}
	}
	for _, v := range vf.Invalid {
		if ok, _ := h.verify(vectorKey(t, v.PkX, v.PkY), unhex(t, v.Alpha), decodeProof(t, v.Proof)); ok {
			t.Fatalf("invalid vector %q: contract accepted", v.Name)
		}
	}
}

func (h *harness) packH2C(pk Point, alpha []byte) []byte {
	h.t.Helper()
	data, err := h.abi.Pack("hashToCurve", word(&pk.X), word(&pk.Y), [32]byte(alpha))
	if err != nil {
		h.t.Fatal(err)
	}
	return data
}

// verifyGasCeiling is about 25 % above the measured mean under Osaka rules, so that a much
// more expensive change is noticed.
const verifyGasCeiling = 26_000

// TestVerifyGas measures RelayVRF.verify under Osaka rules and the dev chain's default rules:
// the gas of the library call alone (its proof in memory), by hash-to-curve counter, and the
// mean over 64 tickets (the counter is 0 for half the inputs, 1 for a quarter, …):
//
//	go test -run TestVerifyGas -v ./internal/vrf
func TestVerifyGas(t *testing.T) {
	rules := []struct {
		name    string
		options []func(*node.Config, *ethconfig.Config)
	}{{"Osaka", []func(*node.Config, *ethconfig.Config){osakaRules}}, {"dev-chain default", nil}}
	var b strings.Builder
	b.WriteString("\n| rules | counter 0 | counter 1 | counter 2 | mean of 64 | eth_estimateGas of a verify call, mean |\n|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rules {
		h := newHarness(t, r.options...)
		byCounter := map[int]uint64{}
		var sum, sumTx uint64
		const tickets = 64
		for i := range tickets {
			sk := testKey(t, fmt.Sprint("gas ", i%8))
			alpha := crypto.Keccak256([]byte(fmt.Sprint("gas ticket ", i)))
			p := mustProve(t, sk, alpha)
			ok, gas := h.verifyGas(pubPoint(sk), alpha, p)
			if !ok {
				t.Fatalf("ticket %d did not verify", i)
			}
			_, ctr := refHashToCurve(pubPoint(sk), alpha)
			if _, seen := byCounter[ctr]; !seen {
				byCounter[ctr] = gas
			}
			sum += gas
			est, err := h.client.EstimateGas(t.Context(), ethereum.CallMsg{To: &h.addr, Data: h.callData("verify", pubPoint(sk), alpha, p)})
			if err != nil {
				t.Fatal(err)
			}
			sumTx += est
		}
		mean := sum / tickets
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", r.name, byCounter[0], byCounter[1], byCounter[2], mean, sumTx/tickets)
		if r.name == "Osaka" && mean > verifyGasCeiling {
			t.Errorf("verify used %d gas on average under Osaka rules, ceiling %d", mean, verifyGasCeiling)
		}
	}
	t.Log(b.String())
}

// TestSolidityConstants: the constants of contracts/RelayVRF.sol are the Go package's: p, n,
// (p+1)/4 and the domain separation tags as left-aligned words.
func TestSolidityConstants(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "contracts", "RelayVRF.sol"))
	if err != nil {
		t.Fatal(err)
	}
	word := func(s string) string {
		var w [32]byte
		copy(w[:], s)
		return hex.EncodeToString(w[:])
	}
	want := map[string]string{
		"P":             hexWord(fieldP),
		"N":             hexWord(groupN),
		"SQRT_EXP":      hexWord(new(big.Int).Rsh(new(big.Int).Add(fieldP, big.NewInt(1)), 2)),
		"DST_H2C":       word(dstHashToCurve),
		"DST_CHALLENGE": word(dstChallenge),
		"DST_OUTPUT":    word(dstOutput),
	}
	for name, w := range want {
		re := regexp.MustCompile(`internal constant ` + name + ` = 0x([0-9A-Fa-f]{64});`)
		m := re.FindSubmatch(src)
		if m == nil {
			t.Errorf("RelayVRF.sol: no 64-digit constant %s", name)
			continue
		}
		if got := strings.ToLower(string(m[1])); got != w {
			t.Errorf("RelayVRF.sol: %s = 0x%s, want 0x%s", name, got, w)
		}
	}
}
