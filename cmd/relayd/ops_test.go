package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHelpListsSubcommands: relayd -h (and relayd help) show the node's flags and then every
// subcommand, and exit 0.
func TestHelpListsSubcommands(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}} {
		out, err := relayd(t, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("relayd %v: %v\n%s", args, err, out)
		}
		for _, want := range []string{"-passwordFile", "-logFormat", "  cluster ", "  devchain ", "  version "} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("relayd %v does not list %q:\n%s", args, want, out)
			}
		}
	}
	out, err := relayd(t, "frobnicate").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown subcommand "frobnicate"`) {
		t.Fatalf("unknown subcommand: %v %s", err, out)
	}
}

func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := versionMain(nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !regexp.MustCompile(`^relayd \S+ \(revision \S+, go\S+\)\n$`).MatchString(stdout.String()) {
		t.Fatalf("version output %q", stdout.String())
	}
	out, err := relayd(t, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "relayd ") {
		t.Fatalf("relayd version: %v %q", err, out)
	}
	if code := versionMain([]string{"extra"}, &stdout, &stderr); code != 2 {
		t.Fatalf("relayd version extra: exit %d", code)
	}
}

// TestPasswordFile: a node takes its keystore password from --passwordFile (the keystore it
// creates opens with that password), and refuses a file other users can read, naming the flag.
func TestPasswordFile(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	base := []string{"--identity", filepath.Join(dir, "node.id"), "--data", filepath.Join(dir, "data"),
		"--testUseWeakCrypto", "--adminPort", "0", "--init", "--apiToken", "S3cret!token",
		"--apiPort", itoa(busy.Addr().(*net.TCPAddr).Port)}
	// --init creates the keystore with the file's password; the busy port then stops the node.
	checkOneLineError(t, relayd(t, append(base, "--passwordFile", pw)...), "--apiPort")
	checkOneLineError(t, relayd(t, append(base, "--password", "file-secret\n")...), "--password")
	checkOneLineError(t, relayd(t, append(base, "--password", "file-secret")...), "--apiPort")
	// A file with another password: the error names the file's flag.
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("not-it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	checkOneLineError(t, relayd(t, append(base, "--passwordFile", other)...), "--passwordFile: does not decrypt")

	if err := os.Chmod(pw, 0o644); err != nil {
		t.Fatal(err)
	}
	checkOneLineError(t, relayd(t, append(base, "--passwordFile", pw)...), "--passwordFile")
	cmd := relayd(t, base...)
	cmd.Env = append(cmd.Env, "RELAYD_PASSWORD_FILE="+pw)
	checkOneLineError(t, cmd, "--passwordFile")
	if err := os.Chmod(pw, 0o600); err != nil {
		t.Fatal(err)
	}
	checkOneLineError(t, relayd(t, append(base, "--passwordFile", pw, "--password", "x")...), "--passwordFile")
}
