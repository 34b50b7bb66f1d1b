package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/atomicfile"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/store"
)

const backupUsage = `usage: relayd backup --out FILE [--api URL] [--token TOKEN | RELAYD_API_TOKEN]
       relayd backup --out FILE --data DIR

Writes a consistent copy of a node's store to FILE (docs/STORE.md). A running node holds its
store locked, so the copy comes from its REST API (GET /api/v2/node/backup, with the API token);
with --data it is read from a stopped node's data directory instead. The copy is written to a
temporary file beside FILE, synced, checked (bbolt's page check and the format version), and
only then renamed to FILE: FILE is either the previous file or the whole new copy. Restore it
with the node stopped: copy it to <data>/relayd.db and start the node. The copy holds the
node's tickets and messages: keep it as private as the data directory.

Exits 0 when FILE holds the copy, 1 when it could not be made, 2 on a usage error.

`

// runBackup is `relayd backup`; args exclude the subcommand name.
func runBackup(args []string, stdout, stderr io.Writer) int {
	return backup(context.Background(), args, os.Getenv, stdout, stderr)
}

// backup is runBackup with the environment given.
func backup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("relayd backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "the file to write the copy to (required); it is replaced only by a whole, checked copy")
	url := fs.String("api", "", "the running node's REST server (default: http://RELAYD_API_HOST:RELAYD_API_PORT, 127.0.0.1:3001 when unset)")
	token := fs.String("token", "", "the node's API token (default: RELAYD_API_TOKEN; the environment keeps it out of the process list)")
	data := fs.String("data", "", "copy the store of a stopped node from this data directory instead of asking a running one")
	timeout := fs.Duration("timeout", 30*time.Minute, "how long the copy may take")
	fs.Usage = func() {
		fmt.Fprint(stderr, backupUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "relayd backup: %s\n", msg)
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument " + fs.Arg(0))
	case *out == "":
		return usage("--out is required")
	case *data != "" && (*url != "" || *token != ""):
		return usage("--data copies a stopped node's store; it takes neither --api nor --token")
	}
	if *token == "" {
		*token = getenv("RELAYD_API_TOKEN")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	fetch := func(w io.Writer) (int64, error) { return store.BackupDir(*data, w) }
	if *data == "" {
		base := *url
		if base == "" {
			base = apiURL(getenv)
		}
		fetch = func(w io.Writer) (int64, error) { return fetchBackup(ctx, strings.TrimSuffix(base, "/"), *token, w) }
	}
	n, version, err := writeAtomically(*out, fetch)
	if err != nil {
		fmt.Fprintf(stderr, "relayd backup: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "wrote %s: %d bytes, store format version %d\n", *out, n, version)
	return exitOK
}

// fetchBackup copies the store of the node at base (GET /node/backup) to w and checks that the
// whole copy came (the answer's Content-Length).
func fetchBackup(ctx context.Context, base, token string, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+api.Prefix+"/node/backup", nil)
	if err != nil {
		return 0, fmt.Errorf("--api: %w", err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("ask the node: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e api.ErrorBody
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return 0, fmt.Errorf("the node answered %s: %s", resp.Status, e.Error)
		}
		return 0, fmt.Errorf("the node answered %s", resp.Status)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("read the copy: %w", err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, fmt.Errorf("the copy came cut short: %d of %d bytes", n, resp.ContentLength)
	}
	return n, nil
}

// writeAtomically writes what fetch writes to a temporary file beside path, syncs it, checks
// it is a whole store of a known format, renames it to path and syncs the directory: path
// holds either what it held before or the whole copy. It returns the copy's size and format
// version.
func writeAtomically(path string, fetch func(io.Writer) (int64, error)) (n int64, version uint32, err error) {
	err = atomicfile.Write(path, func(w io.Writer) (err error) {
		n, err = fetch(w)
		return err
	}, atomicfile.Options{Check: func(tmp string) (err error) {
		version, err = store.CheckFile(tmp)
		if err != nil {
			return fmt.Errorf("the copy is not a store this relayd can open: %w", err)
		}
		return nil
	}})
	return n, version, err
}
