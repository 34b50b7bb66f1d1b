//go:build ignore

// Gendoc writes docs/SETTINGS.md from the settings' definitions (settings.Markdown). Run it with
// `go generate ./internal/settings` (or `make generate`); the package's TestDocUpToDate fails when
// the committed file differs from what it writes.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/relayd/relayd/internal/settings"
)

func main() {
	out := flag.String("o", filepath.Join("..", "..", settings.DocPath), "file to write (go generate runs in internal/settings)")
	flag.Parse()
	if err := os.WriteFile(*out, settings.Markdown(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}
