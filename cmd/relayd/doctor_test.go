package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorExitCodes: a usage error exits 2 before any check; a failed check exits 1 with its
// line and fix on stdout; a provider URL's path never shows.
func TestDoctorExitCodes(t *testing.T) {
	env := func(string) string { return "" }
	var out, errOut bytes.Buffer
	if code := doctorMain([]string{"--apiPort", "x"}, env, &out, &errOut); code != exitUsage || out.Len() != 0 {
		t.Fatalf("bad flag: exit %d, stdout %q", code, out.String())
	}
	dir := t.TempDir()
	args := []string{"--data", filepath.Join(dir, "data"), "--password", "pw", "--apiToken", "Some-token-123", "--apiPort", "0",
		"--adminPort", "0", "--host", "127.0.0.1:0", "--provider", "http://127.0.0.1:1/secret-key-path"}
	out.Reset()
	errOut.Reset()
	code := doctorMain(args, env, &out, &errOut)
	if code != exitFailure || !strings.Contains(out.String(), "fail  keystore") || !strings.Contains(out.String(), "fix: pass --init") {
		t.Fatalf("missing keystore: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if strings.Contains(out.String()+errOut.String(), "secret-key-path") {
		t.Fatalf("the provider's path shows:\n%s%s", out.String(), errOut.String())
	}
}
