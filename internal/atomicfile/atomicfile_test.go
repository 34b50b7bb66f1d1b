package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteBytes(path, []byte("one"), Options{Mode: 0o640}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("read %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", st.Mode().Perm())
	}
	// A failing fill, and a failing check, leave the old file and no temporary file.
	boom := errors.New("boom")
	if err := Write(path, func(w io.Writer) error { _, _ = w.Write([]byte("tw")); return boom }, Options{}); !errors.Is(err, boom) {
		t.Fatalf("fill error: %v", err)
	}
	if err := WriteBytes(path, []byte("two"), Options{Check: func(string) error { return boom }}); !errors.Is(err, ErrCheck) || !errors.Is(err, boom) {
		t.Fatalf("check error: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("after failed writes %q, want the old file", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d files in the directory, want 1 (temporary files left)", len(entries))
	}
	// The check sees the whole new content.
	var seen string
	if err := WriteBytes(path, []byte("three"), Options{Check: func(tmp string) error {
		b, err := os.ReadFile(tmp)
		seen = string(b)
		return err
	}}); err != nil || seen != "three" {
		t.Fatalf("check saw %q: %v", seen, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "three" {
		t.Fatalf("read %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 by default", st.Mode().Perm())
	}
}
