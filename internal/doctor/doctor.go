// Package doctor checks, before a node starts, what its start needs from the machine and the
// chain: the keystore decrypts, the data directory and its store are usable, the ports are free,
// the announced addresses are well formed, the provider answers and serves the network's chain
// with its contracts, and the node's account holds native coin for gas and tokens for channels.
// Each check is one line: pass or fail, and for a failure what to do about it. It changes nothing
// (no file, no transaction). Of relayd's packages it imports internal/config, internal/identity,
// internal/store, internal/chain, internal/networks and internal/token.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ethereum/go-ethereum/common"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"

	"github.com/relayd/relayd/internal/chain"
	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/store"
	"github.com/relayd/relayd/internal/token"
)

// ErrFailed means at least one check failed.
var ErrFailed = errors.New("doctor: a check failed")

// GasReserve is how many transactions' worth of gas (at 200,000 gas each, the current gas price)
// the node's account should hold: opening, funding and closing channels and redeeming tickets.
const GasReserve = 20

// gasPerTransaction is what one of the node's transactions costs at most, about.
const gasPerTransaction = 200_000

// localNetwork is the network of `relayd cluster`, whose nodes announce loopback and private
// addresses.
const localNetwork = "local"

// Status is a check's outcome.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip" // it could not run because an earlier check failed, or does not apply
)

// Result is one check's line.
type Result struct {
	Name   string
	Status Status
	Detail string // what was found
	Fix    string // for a failure: what to do
}

// Run runs every check for cfg (validated already) and writes one line per check to w. It
// returns the results and ErrFailed when one failed.
func Run(ctx context.Context, cfg config.Config, w io.Writer) ([]Result, error) {
	d := &doctor{cfg: cfg}
	d.keystore()
	d.dataDir()
	d.ports()
	d.announce()
	d.chain(ctx)
	failed := false
	for _, r := range d.results {
		line := fmt.Sprintf("%-4s  %-10s %s", r.Status, r.Name, r.Detail)
		if r.Status == Fail && r.Fix != "" {
			line += "\n      fix: " + r.Fix
		}
		fmt.Fprintln(w, inert(line))
		failed = failed || r.Status == Fail
	}
	if failed {
		return d.results, ErrFailed
	}
	return d.results, nil
}

type doctor struct {
	cfg     config.Config
	id      *identity.Identity
	results []Result
}

func (d *doctor) add(name string, s Status, detail, fix string) {
	d.results = append(d.results, Result{Name: name, Status: s, Detail: detail, Fix: fix})
}

func (d *doctor) keystore() {
	id, err := identity.Load(d.cfg.Identity, d.cfg.Password)
	switch {
	case errors.Is(err, identity.ErrNotFound) || errors.Is(err, os.ErrNotExist):
		if d.cfg.Init {
			d.add("keystore", Pass, fmt.Sprintf("%s does not exist yet: --init creates it at the start", d.cfg.Identity), "")
			return
		}
		d.add("keystore", Fail, fmt.Sprintf("%s does not exist", d.cfg.Identity), "pass --init to create a new identity, or --identity to name the keystore")
	case errors.Is(err, identity.ErrWrongPassword):
		d.add("keystore", Fail, fmt.Sprintf("the password does not decrypt %s", d.cfg.Identity), "give the keystore's password (--passwordFile or RELAYD_PASSWORD)")
	case err != nil:
		d.add("keystore", Fail, fmt.Sprintf("%s: %v", d.cfg.Identity, err), "point --identity at a relayd keystore")
	default:
		d.id = id
		d.add("keystore", Pass, fmt.Sprintf("%s decrypts: PeerId %s, address %s", d.cfg.Identity, id.PeerID(), id.Address().Hex()), "")
	}
}

func (d *doctor) dataDir() {
	st, err := os.Stat(d.cfg.Data)
	switch {
	case errors.Is(err, os.ErrNotExist) && d.cfg.Init:
		d.add("data", Pass, fmt.Sprintf("%s does not exist yet: --init creates it", d.cfg.Data), "")
		return
	case errors.Is(err, os.ErrNotExist):
		d.add("data", Fail, fmt.Sprintf("%s does not exist", d.cfg.Data), "pass --init to create it, or --data to name the data directory")
		return
	case err != nil:
		d.add("data", Fail, err.Error(), "check the data directory's permissions")
		return
	case !st.IsDir():
		d.add("data", Fail, fmt.Sprintf("%s is not a directory", d.cfg.Data), "point --data at a directory")
		return
	}
	probe, err := os.CreateTemp(d.cfg.Data, ".doctor-*")
	if err != nil {
		d.add("data", Fail, fmt.Sprintf("%s is not writable: %v", d.cfg.Data, err), "give the node's user write access to the data directory")
		return
	}
	probe.Close()
	os.Remove(probe.Name())
	path := filepath.Join(d.cfg.Data, store.FileName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		d.add("data", Pass, fmt.Sprintf("%s is writable; the store will be created", d.cfg.Data), "")
		return
	}
	v, err := store.CheckFile(path)
	switch {
	case errors.Is(err, store.ErrLocked):
		d.add("data", Fail, fmt.Sprintf("%s is held by a running node", path), "stop the node that runs on this data directory (or check another one with --data)")
	case errors.Is(err, store.ErrFutureFormat):
		d.add("data", Fail, err.Error(), "run the relayd version that wrote this store, or a later one")
	case err != nil:
		d.add("data", Fail, err.Error(), "restore the store from a backup (docs/STORE.md)")
	case v < store.FormatVersion:
		d.add("data", Pass, fmt.Sprintf("%s: store format %d, migrated to %d at the start", path, v, store.FormatVersion), "")
	default:
		d.add("data", Pass, fmt.Sprintf("%s: store format %d", path, v), "")
	}
}

func (d *doctor) ports() {
	c := d.cfg
	check := func(name, flag, network, addr string) {
		var err error
		if network == "udp" {
			var pc net.PacketConn
			if pc, err = net.ListenPacket("udp", addr); err == nil {
				pc.Close()
			}
		} else {
			var ln net.Listener
			if ln, err = net.Listen("tcp", addr); err == nil {
				ln.Close()
			}
		}
		if err != nil {
			d.add(name, Fail, fmt.Sprintf("%s %s is taken or not this host's: %v", network, addr, unwrapOp(err)), "stop what listens there, or change "+flag)
			return
		}
		d.add(name, Pass, fmt.Sprintf("%s %s is free", network, addr), "")
	}
	check("api", "--apiHost/--apiPort", "tcp", net.JoinHostPort(c.APIHost, strconv.Itoa(c.APIPort)))
	check("admin", "--adminHost/--adminPort", "tcp", net.JoinHostPort(c.AdminHost, strconv.Itoa(c.AdminPort)))
	if _, port, err := net.SplitHostPort(c.Host); err == nil && port != "0" {
		check("p2p", "--host", "tcp", c.Host)
		check("p2p", "--host", "udp", c.Host) // QUIC
	}
	if c.ProfileAddress != "" {
		check("profile", "--profileAddress", "tcp", c.ProfileAddress)
	}
}

// unwrapOp drops net's "listen tcp addr:" before the reason.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

func (d *doctor) announce() {
	if len(d.cfg.Announce) == 0 {
		d.add("announce", Pass, "none given: the node announces the reachable addresses it listens on", "")
		return
	}
	for _, s := range d.cfg.Announce {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			d.add("announce", Fail, fmt.Sprintf("%q is not a multiaddr: %v", s, err), "write it as /ip4/203.0.113.7/tcp/9091 or /dns4/host.example/tcp/9091")
			continue
		}
		if ip, err := manet.ToIP(a); err == nil && d.cfg.Network != localNetwork &&
			(ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsPrivate() || ip.IsUnspecified()) {
			d.add("announce", Fail, fmt.Sprintf("%s is not reachable from other hosts", s), "announce the node's public address (or its DNS name)")
			continue
		}
		d.add("announce", Pass, s, "")
	}
}

func (d *doctor) chain(ctx context.Context) {
	c := d.cfg
	if c.Provider == "" {
		d.add("provider", Skip, "no --provider: the node runs without a chain (no channels, no paid messages)", "")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rpc, err := chain.DialRPC(ctx, c.Provider)
	var id *big.Int
	if err == nil {
		if id, err = rpc.ChainID(ctx); err != nil {
			rpc.Close()
		}
	}
	if err != nil {
		d.add("provider", Fail, err.Error(), "check --provider (its URL, the network between here and it, an API key in its path)")
		return
	}
	defer rpc.Close()
	d.add("provider", Pass, fmt.Sprintf("%s answers: chain id %s", rpc.Display(), id), "")

	nw, err := networks.Join(ctx, networks.JoinConfig{Provider: c.Provider, Name: c.Network, File: c.NetworksFile, Channels: c.ChannelsContract})
	if err != nil {
		d.add("network", Fail, err.Error(), "name the network the provider serves (--network, --networksFile), or the provider that serves it")
		return
	}
	params, err := chain.ReadChannels(ctx, rpc, nw.Channels)
	if err != nil {
		d.add("contracts", Fail, err.Error(), "give the address of the RelayChannels contract on this chain (--channelsContract, or the network's entry)")
		return
	}
	d.add("contracts", Pass, fmt.Sprintf("network %s: channels %s, token %s", c.Network, nw.Channels.Hex(), params.Token.Hex()), "")
	if d.id == nil {
		d.add("balance", Skip, "the keystore did not open: the node's account is not known", "")
		return
	}
	d.balances(ctx, rpc, params.Token)
}

func (d *doctor) balances(ctx context.Context, rpc *chain.RPC, tokenAddr common.Address) {
	addr := d.id.Address()
	native, err := rpc.BalanceAt(ctx, addr, nil)
	if err != nil {
		d.add("gas", Fail, err.Error(), "check --provider")
		return
	}
	price, err := rpc.SuggestGasPrice(ctx)
	if err != nil {
		d.add("gas", Fail, err.Error(), "check --provider")
		return
	}
	need := new(big.Int).Mul(price, big.NewInt(GasReserve*gasPerTransaction))
	if native.Cmp(need) < 0 {
		d.add("gas", Fail, fmt.Sprintf("%s holds %s wei of native coin; %d transactions at the gas price now need %s", addr.Hex(), native, GasReserve, need),
			fmt.Sprintf("send native coin to %s", addr.Hex()))
	} else {
		d.add("gas", Pass, fmt.Sprintf("%s holds %s wei of native coin (%d transactions need %s)", addr.Hex(), native, GasReserve, need), "")
	}
	bal, err := chain.ReadTokenBalance(ctx, rpc, tokenAddr, addr)
	if err != nil {
		d.add("tokens", Fail, err.Error(), "check --provider")
		return
	}
	held := token.Of(bal)
	funding, err := token.ParsePositive(d.cfg.ChannelFunding)
	switch {
	case err != nil:
		d.add("tokens", Pass, fmt.Sprintf("%s holds %s tokens", addr.Hex(), held), "")
	case held.Cmp(funding) < 0:
		d.add("tokens", Fail, fmt.Sprintf("%s holds %s tokens, less than one channel's funding (%s)", addr.Hex(), held, funding),
			fmt.Sprintf("send tokens (%s) to %s", tokenAddr.Hex(), addr.Hex()))
	default:
		d.add("tokens", Pass, fmt.Sprintf("%s holds %s tokens (a channel's funding: %s)", addr.Hex(), held, funding), "")
	}
}

// inert replaces the control characters of a line (errors may quote what a provider answered)
// with '?', keeping the line breaks doctor puts between a check and its fix.
func inert(s string) string {
	return strings.Map(func(r rune) rune {
		if r != '\n' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
			return '?'
		}
		return r
	}, s)
}
