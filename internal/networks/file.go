package networks

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/relayd/relayd/internal/atomicfile"
)

// shippedJSON is the networks file built into the binary.
//
//go:embed shipped.json
var shippedJSON []byte

// Shipped returns the networks built into relayd. Today that is `local`: the dev chain that
// `relayd cluster` and `relayd devchain` start with their defaults. Its addresses are
// deterministic: the published dev deployer (devchain.DevKeyHex) creates the token with its
// first transaction and the channels contract with its second on a fresh chain, so they are the
// same on every run. A dev chain started with another closure period or minimum win probability
// is not `local`: Verify refuses it.
func Shipped() []Network {
	n, err := Parse(shippedJSON, "(built in)")
	if err != nil {
		panic(fmt.Sprintf("networks: the shipped networks file is broken: %v", err)) // a test parses it
	}
	return n
}

// Load reads and validates the networks file at path (Parse). A missing file is an error
// matching fs.ErrNotExist.
func Load(path string) ([]Network, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("networks file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("networks file %s: %w", path, err)
	}
	return Parse(data, path)
}

// Lookup returns the network called name: from operatorFile when it defines it (an operator's
// entry replaces a shipped one of the same name), else from the shipped networks. operatorFile
// may be "" (shipped networks only); when given it must exist and be valid, even if name is a
// shipped network: a broken file is reported, not skipped. An unknown name fails with
// ErrUnknownNetwork and lists the known names and where each comes from; a malformed file with
// a *FieldError naming the file, entry and field.
func Lookup(name, operatorFile string) (Network, error) {
	var own []Network
	if operatorFile != "" {
		var err error
		if own, err = Load(operatorFile); err != nil {
			return Network{}, err
		}
	}
	for _, n := range own {
		if n.Name == name {
			return n, nil
		}
	}
	shipped := Shipped()
	for _, n := range shipped {
		if n.Name == name {
			return n, nil
		}
	}
	var known []string
	for _, n := range shipped {
		if !slices.ContainsFunc(own, func(o Network) bool { return o.Name == n.Name }) {
			known = append(known, n.Name+" (built in)")
		}
	}
	for _, n := range own {
		known = append(known, n.Name+" (in "+operatorFile+")")
	}
	msg := fmt.Sprintf("%q; known networks: %s", name, strings.Join(known, ", "))
	if operatorFile == "" {
		msg += "; an operator's own networks come from a networks file (relayd deploy writes one)"
	}
	return Network{}, fmt.Errorf("%w %s", ErrUnknownNetwork, msg)
}

// Append adds n to the networks file at path, creating the file (and only the file) when it
// does not exist, and fails with ErrExists when the file already defines n's name. The file is
// replaced atomically (a temporary file in the same directory, synced, renamed), keeping the
// mode of the old file (0644 for a new one: a networks file holds no secret).
func Append(path string, n Network) error {
	if err := n.Validate(); err != nil {
		return err
	}
	existing, err := Load(path)
	mode := os.FileMode(0o644)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		existing = nil
	case err != nil:
		return err
	default:
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	}
	if slices.ContainsFunc(existing, func(o Network) bool { return o.Name == n.Name }) {
		return fmt.Errorf("networks file %s: %w: %q (choose another --name, or remove the entry first)", path, ErrExists, n.Name)
	}
	data, err := Encode(append(existing, n))
	if err != nil {
		return err
	}
	return writeAtomic(path, data, mode)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := atomicfile.WriteBytes(path, data, atomicfile.Options{Mode: mode}); err != nil {
		return fmt.Errorf("write networks file: %w", err)
	}
	return nil
}
