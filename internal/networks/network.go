package networks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/relayd/relayd/internal/tickets"
)

// FormatVersion is the version of the networks file format this package reads and writes.
const FormatVersion = 1

// Limits of a networks file.
const (
	// MaxFileSize bounds a networks file; a bigger one is refused (the wrong path).
	MaxFileSize = 1 << 20
	// MaxNameLength bounds a network's name, which is part of every protocol ID.
	MaxNameLength = 64
	// MaxDescriptionLength bounds a network's description.
	MaxDescriptionLength = 200
	// MaxClosurePeriod bounds a network's closure period: a channel's funds stay locked that
	// long after its closure starts.
	MaxClosurePeriod = 365 * 24 * time.Hour
	// MaxPeers bounds the bootstrap peers of one network.
	MaxPeers = 64
)

// Network is one relay network: a chain, the contracts on it and what a node needs to join it.
// Validate says which fields are required.
type Network struct {
	// Name names the network (--network); lowercase letters, digits, '.', '_' and '-',
	// starting with a letter or digit, at most MaxNameLength. Required.
	Name string
	// Description is a line for people; optional.
	Description string
	// ChainID is the chain's EIP-155 id. Required, not 0.
	ChainID uint64
	// Provider is a hint of a JSON-RPC endpoint serving the chain (http(s) or ws(s)); optional.
	// A node uses the provider its operator configures; the hint is for people and for the
	// local network, whose chain is on a known port.
	Provider string
	// Token is the ERC-20 the channels are funded in. Required, not zero.
	Token common.Address
	// Channels is the RelayChannels contract. Required, not zero, not Token.
	Channels common.Address
	// StartBlock is the first block an indexer needs: the channels contract's creation block
	// or an earlier one. Required (0 is allowed).
	StartBlock uint64
	// MinWinProb is the channels contract's minimum win probability, as a ticket's 56-bit
	// WinProb field (tickets.MaxWinProb: every ticket wins). Written as a probability ("0.01").
	// Required.
	MinWinProb uint64
	// ClosurePeriod is the channels contract's closure period: positive whole seconds, at most
	// MaxClosurePeriod. Required.
	ClosurePeriod time.Duration
	// Peers are bootstrap peers' multiaddrs, each ending in /p2p/<peerId>; optional (nodes
	// find each other through their announcements on chain).
	Peers []string
	// PrivateAddresses says the network's nodes may announce and dial private-range addresses
	// (a LAN or a dev network on one host); false on a public network.
	PrivateAddresses bool
	// Topology is the network's layered topology (issue 30); nil: free routes, today's default.
	Topology *Topology
}

// networkJSON is Network in a networks file. Required numbers are pointers, so that a missing
// field is told from a zero.
type networkJSON struct {
	Name             string        `json:"name"`
	Description      string        `json:"description,omitempty"`
	ChainID          *uint64       `json:"chainId"`
	Provider         string        `json:"provider,omitempty"`
	Token            string        `json:"token"`
	Channels         string        `json:"channels"`
	StartBlock       *uint64       `json:"startBlock"`
	MinWinProb       string        `json:"minWinProb"`
	ClosurePeriod    string        `json:"closurePeriod"`
	Peers            []string      `json:"peers,omitempty"`
	PrivateAddresses bool          `json:"privateAddresses,omitempty"`
	Topology         *topologyJSON `json:"topology,omitempty"`
}

// fileJSON is a networks file.
type fileJSON struct {
	Version  *int          `json:"version"`
	Networks []networkJSON `json:"networks"`
}

// Parse decodes and validates a networks file's bytes; file names it in errors (it may be "").
// Every error is a *FieldError (ErrBadNetwork) naming the entry and field: unknown fields are
// refused (a misspelt field would otherwise be silently missing), names must be unique.
func Parse(data []byte, file string) ([]Network, error) {
	fail := func(network, field, format string, a ...any) error {
		return &FieldError{File: file, Network: network, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if len(data) > MaxFileSize {
		return nil, fail("", "", "larger than %d bytes", MaxFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f fileJSON
	if err := dec.Decode(&f); err != nil {
		return nil, jsonError(err, file)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fail("", "", "holds more than one JSON value")
	}
	switch {
	case f.Version == nil:
		return nil, fail("", "version", "missing (this relayd reads version %d)", FormatVersion)
	case *f.Version != FormatVersion:
		return nil, fail("", "version", "is %d; this relayd reads version %d", *f.Version, FormatVersion)
	case f.Networks == nil:
		return nil, fail("", "networks", "missing (an empty file has \"networks\": [])")
	}
	out := make([]Network, 0, len(f.Networks))
	seen := make(map[string]bool, len(f.Networks))
	for i, nj := range f.Networks {
		n, err := nj.network()
		if err != nil {
			err.File = file
			if err.Network == "" {
				err.Network = fmt.Sprintf("#%d", i+1)
			}
			return nil, err
		}
		if seen[n.Name] {
			return nil, fail(n.Name, "name", "defined twice in the file")
		}
		seen[n.Name] = true
		out = append(out, n)
	}
	return out, nil
}

// jsonError turns a decoding error into a *FieldError, naming the field when the decoder says
// which one it was.
func jsonError(err error, file string) *FieldError {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:]
		}
		return &FieldError{File: file, Field: field, Msg: fmt.Sprintf("is a JSON %s, want a %s", typeErr.Value, jsonKind(typeErr.Type.Kind().String()))}
	case errors.As(err, &syntaxErr):
		return &FieldError{File: file, Msg: fmt.Sprintf("not valid JSON at byte %d: %v", syntaxErr.Offset, err)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &FieldError{File: file, Field: field, Msg: "is not a field of the format (docs/NETWORKS.md lists them)"}
	case errors.Is(err, io.EOF):
		return &FieldError{File: file, Msg: "empty; want a JSON object with \"version\" and \"networks\""}
	}
	return &FieldError{File: file, Msg: fmt.Sprintf("not valid JSON: %v", err)}
}

func jsonKind(k string) string {
	switch k {
	case "uint64", "int":
		return "whole number"
	case "slice":
		return "list"
	case "ptr":
		return "number"
	}
	return k
}

// network validates nj and converts it; the error's File is left to the caller.
func (nj networkJSON) network() (Network, *FieldError) {
	name := nj.Name
	if validName(name) != "" {
		name = ""
	}
	fail := func(field, format string, a ...any) (Network, *FieldError) {
		return Network{}, &FieldError{Network: name, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if msg := validName(nj.Name); msg != "" {
		return fail("name", "%s", msg)
	}
	n := Network{Name: nj.Name, Description: nj.Description, Provider: nj.Provider, PrivateAddresses: nj.PrivateAddresses}
	if len(nj.Peers) > 0 {
		n.Peers = nj.Peers
	}
	if nj.ChainID == nil {
		return fail("chainId", "missing: the chain's EIP-155 id")
	}
	n.ChainID = *nj.ChainID
	var err error
	if n.Token, err = parseAddress(nj.Token); err != nil {
		return fail("token", "%v", err)
	}
	if n.Channels, err = parseAddress(nj.Channels); err != nil {
		return fail("channels", "%v", err)
	}
	if nj.StartBlock == nil {
		return fail("startBlock", "missing: the block the channels contract was created in (or an earlier one)")
	}
	n.StartBlock = *nj.StartBlock
	if nj.MinWinProb == "" {
		return fail("minWinProb", "missing: the channels contract's minimum win probability, e.g. \"1\" or \"0.01\"")
	}
	if n.MinWinProb, err = tickets.ParseWinProb(nj.MinWinProb); err != nil {
		return fail("minWinProb", "%q is not a probability in (0, 1] written as a decimal, e.g. \"0.01\"", nj.MinWinProb)
	}
	if nj.ClosurePeriod == "" {
		return fail("closurePeriod", "missing: the channels contract's closure period, e.g. \"1h\"")
	}
	if n.ClosurePeriod, err = time.ParseDuration(nj.ClosurePeriod); err != nil {
		return fail("closurePeriod", "%q is not a duration such as \"60s\" or \"1h\"", nj.ClosurePeriod)
	}
	var field, msg string
	if n.Topology, field, msg = nj.Topology.topology(); field != "" {
		return fail(field, "%s", msg)
	}
	if ferr := n.validate(); ferr != nil {
		return Network{}, ferr
	}
	return n, nil
}

// Validate checks every field of n: the rules are those of the fields' docs. Its error is a
// *FieldError (ErrBadNetwork).
func (n Network) Validate() error {
	if err := n.validate(); err != nil {
		return err
	}
	return nil
}

func (n Network) validate() *FieldError {
	name := n.Name
	fail := func(field, format string, a ...any) *FieldError {
		return &FieldError{Network: name, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if msg := validName(n.Name); msg != "" {
		name = ""
		return fail("name", "%s", msg)
	}
	if msg := validDescription(n.Description); msg != "" {
		return fail("description", "%s", msg)
	}
	if n.ChainID == 0 {
		return fail("chainId", "must not be 0")
	}
	if n.Provider != "" {
		if u, err := url.Parse(n.Provider); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") {
			return fail("provider", "must be an http(s) or ws(s) URL of a JSON-RPC endpoint")
		} else if u.User != nil {
			return fail("provider", "must not hold user info (credentials): a networks file is meant to be shared")
		}
	}
	switch {
	case n.Token == (common.Address{}):
		return fail("token", "must not be the zero address")
	case n.Channels == (common.Address{}):
		return fail("channels", "must not be the zero address")
	case n.Channels == n.Token:
		return fail("channels", "is the token's address; it must be the RelayChannels contract's")
	case n.MinWinProb > tickets.MaxWinProb:
		return fail("minWinProb", "does not fit in 56 bits")
	case n.ClosurePeriod <= 0 || n.ClosurePeriod%time.Second != 0:
		return fail("closurePeriod", "must be a positive whole number of seconds, not %s", n.ClosurePeriod)
	case n.ClosurePeriod > MaxClosurePeriod:
		return fail("closurePeriod", "must be at most %s, not %s", MaxClosurePeriod, n.ClosurePeriod)
	case len(n.Peers) > MaxPeers:
		return fail("peers", "holds %d addresses, at most %d are allowed", len(n.Peers), MaxPeers)
	}
	if field, msg := n.Topology.validate(); field != "" {
		return fail(field, "%s", msg)
	}
	for _, p := range n.Peers {
		if len(p) > 1024 {
			return fail("peers", "an address is longer than 1024 bytes")
		}
		addr, err := ma.NewMultiaddr(p)
		if err != nil {
			return fail("peers", "%q is not a multiaddr (%v)", p, err)
		}
		if _, err := peer.AddrInfoFromP2pAddr(addr); err != nil {
			return fail("peers", "%q must end in /p2p/<peerId> (%v)", p, err)
		}
	}
	return nil
}

// validName returns what is wrong with a network name, or "".
func validName(s string) string {
	switch {
	case s == "":
		return "missing: the network's name"
	case len(s) > MaxNameLength:
		return fmt.Sprintf("longer than %d characters", MaxNameLength)
	case !isLowerAlnum(s[0]):
		return fmt.Sprintf("%q must start with a lowercase letter or a digit", s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' && c != '_' && c != '.' {
			return fmt.Sprintf("%q may hold only lowercase letters, digits, '.', '_' and '-'", s)
		}
	}
	return ""
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func validDescription(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	if utf8.RuneCountInString(s) > MaxDescriptionLength {
		return fmt.Sprintf("longer than %d characters", MaxDescriptionLength)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "holds a control character"
		}
	}
	return ""
}

// parseAddress parses a 0x address. A mixed-case one must carry a valid EIP-55 checksum, which
// catches a mistyped character.
func parseAddress(s string) (common.Address, error) {
	if s == "" {
		return common.Address{}, errors.New("missing: a 0x address")
	}
	if !common.IsHexAddress(s) || !strings.HasPrefix(s, "0x") {
		return common.Address{}, fmt.Errorf("%q is not a 0x address of 40 hex digits", s)
	}
	a := common.HexToAddress(s)
	hex := s[2:]
	if hex != strings.ToLower(hex) && hex != strings.ToUpper(hex) && a.Hex() != s {
		return common.Address{}, fmt.Errorf("%q has a wrong EIP-55 checksum (mistyped? the checksummed form of these digits is %s)", s, a.Hex())
	}
	return a, nil
}

// Encode renders networks as a networks file (version FormatVersion, indented, addresses in
// their EIP-55 form, the win probability with tickets.FormatWinProb). Each network must pass
// Validate and names must be unique; Parse reads the result back as networks.
func Encode(networks []Network) ([]byte, error) {
	f := struct {
		Version  int           `json:"version"`
		Networks []networkJSON `json:"networks"`
	}{Version: FormatVersion, Networks: make([]networkJSON, 0, len(networks))}
	seen := make(map[string]bool, len(networks))
	for _, n := range networks {
		if err := n.validate(); err != nil {
			return nil, err
		}
		if seen[n.Name] {
			return nil, &FieldError{Network: n.Name, Field: "name", Msg: "defined twice"}
		}
		prob := tickets.FormatWinProb(n.MinWinProb)
		if back, err := tickets.ParseWinProb(prob); err != nil || back != n.MinWinProb {
			return nil, &FieldError{Network: n.Name, Field: "minWinProb", Msg: fmt.Sprintf("%#x has no exact decimal form (a probability's float64 has 53 bits)", n.MinWinProb)}
		}
		seen[n.Name] = true
		chainID, start := n.ChainID, n.StartBlock
		f.Networks = append(f.Networks, networkJSON{
			Name: n.Name, Description: n.Description, ChainID: &chainID, Provider: n.Provider,
			Token: n.Token.Hex(), Channels: n.Channels.Hex(), StartBlock: &start,
			MinWinProb: prob, ClosurePeriod: formatPeriod(n.ClosurePeriod),
			Peers: n.Peers, PrivateAddresses: n.PrivateAddresses, Topology: n.Topology.json(),
		})
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode networks: %w", err)
	}
	return append(b, '\n'), nil
}

// formatPeriod writes a whole number of seconds in the largest unit that divides it: "1h",
// "90m", "45s" (time.Duration's String would write "1h0m0s").
func formatPeriod(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
