package contracts_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedUpToDate regenerates combined.json and bindings.go from contracts/*.sol into a
// temporary directory with scripts/gen-contracts.sh and fails unless they equal the committed
// files byte for byte. It needs node and an installed contracts/node_modules (npm ci); without
// them it skips, except under CI=true, where it fails.
func TestGeneratedUpToDate(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	unavailable := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI=true requires the drift check: run `npm ci` in contracts/ first", why)
		}
		t.Skipf("%s: skipping the contract drift check (run `npm ci` in contracts/ to enable it)", why)
	}
	if _, err := exec.LookPath("node"); err != nil {
		unavailable("node is not on PATH")
	}
	for _, dep := range []string{"solc", "@openzeppelin/contracts"} {
		if _, err := os.Stat(filepath.Join(root, "contracts", "node_modules", dep, "package.json")); err != nil {
			unavailable("contracts/node_modules/" + dep + " is not installed")
		}
	}

	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join(root, "scripts", "gen-contracts.sh"), out)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "SKIP_NPM_CI=1")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen-contracts.sh: %v\n%s", err, output)
	}
	for _, name := range []string{"combined.json", "bindings.go"} {
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date with contracts/*.sol: run scripts/gen-contracts.sh and commit the result", name)
		}
	}
}

// TestCompilerPinned checks that the committed artefacts come from the solc pinned in
// contracts/package.json.
func TestCompilerPinned(t *testing.T) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "contracts", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	var combined struct {
		Version string `json:"version"`
	}
	raw, err = os.ReadFile("combined.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &combined); err != nil {
		t.Fatal(err)
	}
	pin := pkg.Dependencies["solc"]
	if pin == "" || strings.ContainsAny(pin, "^~<>*x ") {
		t.Fatalf("solc is not pinned to an exact version in contracts/package.json: %q", pin)
	}
	if !strings.HasPrefix(combined.Version, pin+"+") {
		t.Fatalf("combined.json was built by solc %s, package.json pins %s", combined.Version, pin)
	}
	if oz := pkg.Dependencies["@openzeppelin/contracts"]; oz == "" || strings.ContainsAny(oz, "^~<>*x ") {
		t.Fatalf("@openzeppelin/contracts is not pinned exactly: %q", oz)
	}
}
