package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/router"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/ws"
)

// nodeCommands are the commands that need no chain.
func (c *console) nodeCommands() []Command {
	return []Command{
		{Name: "address", Usage: "address [relay|native]", Help: "Show this node's PeerId (relay address) and chain address.", Run: c.address},
		{Name: "addresses", Usage: "addresses <peer>", Help: "Show the multiaddresses a peer announced on chain and those it was seen at.", Run: c.addresses},
		{Name: "version", Usage: "version", Help: "Show the node's version.",
			Run: func(context.Context, string) ([]string, error) { return []string{c.cfg.Version}, nil }},
		{Name: "peers", Usage: "peers", Help: "List known peers with heartbeat quality.", Run: c.peers},
		{Name: "ping", Usage: "ping <peer>", Help: "Measure the round trip to a peer (PeerId or alias).", Run: c.ping},
		{Name: "alias", Usage: "alias [<peerId> <name>]", Help: "List aliases, or name a peer.", Run: c.alias},
		{Name: "quit", Usage: "quit", Help: "Stop the node (as a signal would).", Run: c.quit, After: c.cfg.Quit},
		{Name: "settings", Usage: "settings [<name> [<value>]]",
			Help: "Show the node's settings, one of them, or set one (" + strings.Join(settings.Names(), ", ") + ").", Run: c.settings},
		{Name: "sign", Usage: "sign <message>", Help: "Sign a message with this node's key (as POST /api/v2/messages/sign).",
			Run: c.sign, RawArgs: true},
		{Name: "send", Usage: "send [--replies <n>] [--reliable] [,]<peer>|<r1>,<r2>,<peer> <message>",
			Help: "Send a message: over a path the node picks, 0-hop with a leading comma, or over the relayers named. " +
				"Over a path the node picks, a message longer than one packet (500 bytes), --reliable or --replies <n> (up to 16 reply blocks " +
				"for anonymous answers) goes through the courier: acknowledged, sent again until delivered (status <id>).", Run: c.send},
		{Name: "info", Usage: "info", Help: "Show the node's network, chain and contracts.", Run: c.info},
	}
}

func (c *console) address(_ context.Context, args string) ([]string, error) {
	relay := "RELAY Address:  " + c.cfg.Self.PeerID().String() + " (PeerId)"
	native := "ETH Address:    " + c.cfg.Self.Address().Hex() + " (native address)"
	switch strings.ToLower(args) {
	case "":
		return []string{relay, native}, nil
	case "relay", "hopr":
		return []string{relay}, nil
	case "native", "eth":
		return []string{native}, nil
	}
	return nil, usage("%q is neither relay nor native", args)
}

// onePeer resolves the one peer a command's arguments name.
func (c *console) onePeer(cmd, args string) (peer.ID, error) {
	if args == "" || strings.ContainsAny(args, " \t") {
		return "", usage("%s needs exactly one peer", cmd)
	}
	return c.resolve(args)
}

// resolve turns an operator's peer argument into a PeerId: "me", a PeerId or an alias.
func (c *console) resolve(name string) (peer.ID, error) {
	id, err := c.cfg.Peers.Resolve(name)
	if errors.Is(err, peers.ErrUnknownName) {
		return "", fmt.Errorf("%q is neither an alias nor a valid PeerId", name)
	}
	return id, err
}

func (c *console) addresses(_ context.Context, args string) ([]string, error) {
	id, err := c.onePeer("addresses", args)
	if err != nil {
		return nil, err
	}
	var announced, observed []string
	if c.cfg.Discovery != nil {
		announced, observed = c.cfg.Discovery.PeerAddresses(id)
	}
	out := []string{"Announced addresses for " + args + ":"}
	for _, a := range announced {
		out = append(out, "- "+a)
	}
	out = append(out, "Observed addresses for "+args+":")
	for _, a := range observed {
		out = append(out, "- "+a)
	}
	return out, nil
}

func (c *console) peers(context.Context, string) ([]string, error) {
	list := c.cfg.Transport.Peers()
	good, poor := 0, 0
	for _, p := range list {
		switch {
		case fmt.Sprintf("%.2f", p.Quality) == "1.00":
			good++
		case p.Quality < 0.5:
			poor++
		}
	}
	out := []string{fmt.Sprintf("network peers status: %d nodes in total, %d nodes with quality 1.0, %d nodes with quality below 0.5",
		len(list), good, poor)}
	for _, p := range list {
		seen := "never"
		if !p.LastSeen.IsZero() {
			seen = p.LastSeen.UTC().Format(ws.TimeFormat)
		}
		state := "disconnected"
		if p.Connected {
			state = "connected"
		}
		out = append(out, fmt.Sprintf("- id: %s, quality: %.2f, %s, last seen: %s", p.ID, p.Quality, state, seen))
	}
	if c.cfg.Graph != nil {
		announced := c.cfg.Graph.Snapshot().Peers()
		out = append(out, fmt.Sprintf("%d peers have announced themselves on chain:", len(announced)))
		for _, a := range announced {
			out = append(out, strings.Join(a.Multiaddrs, ","))
		}
	}
	return out, nil
}

func (c *console) quit(_ context.Context, args string) ([]string, error) {
	if args != "" {
		return nil, usage("quit takes no arguments")
	}
	if c.cfg.Quit == nil {
		return nil, errors.New("the node is not running")
	}
	return []string{"Stopping the node."}, nil
}

func (c *console) ping(ctx context.Context, args string) ([]string, error) {
	id, err := c.onePeer("ping", args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := withTimeout(ctx, pingTimeout)
	defer cancel()
	rtt, err := c.cfg.Transport.Ping(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ping %s: %w", id, err)
	}
	ms := float64(rtt.Microseconds()) / 1000
	return []string{fmt.Sprintf("Pong received in: %d ms (%.2f ms, from %s)", rtt.Round(time.Millisecond).Milliseconds(), ms, id)}, nil
}

func (c *console) alias(_ context.Context, args string) ([]string, error) {
	if args == "" {
		list, err := c.cfg.Peers.Aliases()
		if err != nil {
			return nil, err
		}
		out := []string{"me -> " + c.cfg.Self.PeerID().String()}
		for _, a := range list {
			out = append(out, a.Name+" -> "+a.Peer.String())
		}
		return out, nil
	}
	fields := strings.Fields(args)
	if len(fields) != 2 {
		return nil, usage("alias needs a PeerId and a name")
	}
	id, err := identity.ParsePeerID(fields[0])
	if err != nil {
		return nil, usage("%q is not a valid PeerId", fields[0])
	}
	if err := c.cfg.Peers.SetAlias(fields[1], id); err != nil {
		if errors.Is(err, peers.ErrInvalidAlias) {
			return nil, usage("%s", strings.TrimPrefix(err.Error(), peers.ErrInvalidAlias.Error()+": "))
		}
		return nil, err
	}
	return []string{fmt.Sprintf("Set alias '%s' to '%s'.", fields[1], id)}, nil
}

func (c *console) settings(_ context.Context, args string) ([]string, error) {
	fields := strings.Fields(args)
	cur := c.cfg.Settings.Get()
	defs := settings.Defs()
	nameWidth, valueWidth := 0, 0
	for _, d := range defs {
		nameWidth, valueWidth = max(nameWidth, len(d.Name)), max(valueWidth, len(d.Text(cur)))
	}
	line := func(d settings.Def, v settings.Values) string {
		return fmt.Sprintf("%-*s  %-*s  %s", nameWidth, d.Name, valueWidth, d.Text(v), d.Doc)
	}
	switch len(fields) {
	case 0:
		out := make([]string, 0, len(defs))
		for _, d := range defs {
			out = append(out, line(d, cur))
		}
		return out, nil
	case 1, 2:
	default:
		return nil, usage("settings takes a name and a value")
	}
	d, ok := settings.Lookup(fields[0])
	if !ok {
		return nil, usage("Setting %q does not exist (%s)", fields[0], strings.Join(settings.Names(), ", "))
	}
	if len(fields) == 1 {
		return []string{line(d, cur)}, nil
	}
	next, err := c.cfg.Settings.UpdateText(d.Name, fields[1])
	if errors.Is(err, settings.ErrInvalid) {
		return nil, usage("%s", err.Error())
	}
	if err != nil {
		return nil, err
	}
	if d.Name == "strategy" {
		return []string{"Strategy is now " + d.Text(next)}, nil
	}
	return []string{fmt.Sprintf("You have set your %q settings to %q.", d.Name, d.Text(next))}, nil
}

// sign is `sign <message>`: "Signed message: 0x…", as the original printed it. It signs the text
// exactly as typed after "sign " (trailing spaces included), as POST /messages/sign signs the
// bytes it receives.
func (c *console) sign(_ context.Context, args string) ([]string, error) {
	if strings.TrimSpace(args) == "" {
		return nil, usage("sign needs a message")
	}
	sig, err := c.cfg.Self.SignMessage(args)
	if err != nil {
		return nil, err
	}
	return []string{"Signed message: " + sig}, nil
}

// sendArgs is a parsed `send` command.
type sendArgs struct {
	// Path names the relayers then the recipient when the operator gave them ("r1,r2,peer");
	// Direct is a 0-hop message (",peer"); with neither, the node picks the relayers for
	// Path[0], the recipient.
	Path   []string
	Direct bool
	Auto   bool
	Text   string
	// Replies (--replies <n>) and Reliable (--reliable) ask for the courier.
	Replies  int
	Reliable bool
}

// parseSend reads the arguments of `send`: options first (--replies <n> or --replies=<n>,
// --reliable), then "<peer> <text>" (automatic path), ",<peer> <text>" (0-hop) or
// "<r1>,<r2>,<peer> <text>" (explicit path). The text keeps its inner spacing. The options need
// the automatic path. Its errors are usage errors.
func parseSend(args string) (sendArgs, error) {
	var out sendArgs
	for {
		args = strings.TrimLeftFunc(args, unicode.IsSpace)
		tok, rest := cutWord(args)
		if !strings.HasPrefix(tok, "--") {
			break
		}
		name, value, hasValue := strings.Cut(tok[2:], "=")
		switch name {
		case "reliable":
			if hasValue {
				return sendArgs{}, usage("--reliable takes no value")
			}
			out.Reliable = true
		case "replies":
			if !hasValue {
				value, rest = cutWord(strings.TrimLeftFunc(rest, unicode.IsSpace))
			}
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 || n > courier.MaxReplies {
				return sendArgs{}, usage("--replies takes a whole number from 0 to %d", courier.MaxReplies)
			}
			out.Replies = n
		default:
			return sendArgs{}, usage("unknown option %q (the options are --replies <n> and --reliable)", tok)
		}
		args = rest
	}
	target, text := cutWord(args)
	text = strings.TrimLeftFunc(text, unicode.IsSpace)
	if target == "" || text == "" {
		return sendArgs{}, usage("send needs a peer (or a path) and a message")
	}
	out.Text = text
	if rest, ok := strings.CutPrefix(target, ","); ok {
		if rest == "" || strings.Contains(rest, ",") {
			return sendArgs{}, usage("send needs a peer (or a path) and a message")
		}
		out.Direct, out.Path = true, []string{rest}
	} else {
		out.Path = strings.Split(target, ",")
		for _, p := range out.Path {
			if p == "" {
				return sendArgs{}, usage("send needs a peer (or a path) and a message")
			}
		}
		out.Auto = len(out.Path) == 1
	}
	if (out.Replies > 0 || out.Reliable) && !out.Auto {
		return sendArgs{}, usage("--replies and --reliable need a path the node picks (send <peer> <message>)")
	}
	return out, nil
}

// cutWord splits s at its first space: the word before it and the rest from it on.
func cutWord(s string) (word, rest string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

func (c *console) send(ctx context.Context, args string) ([]string, error) {
	a, err := parseSend(args)
	if err != nil {
		return nil, err
	}
	asked := a.Replies > 0 || a.Reliable
	if asked && c.cfg.Mail == nil {
		return nil, errNoMail
	}
	hops := make([]peer.ID, len(a.Path))
	for i, p := range a.Path {
		id, err := c.resolve(p)
		if err != nil {
			return nil, err
		}
		hops[i] = id
	}
	if c.cfg.Settings.Get().IncludeRecipient {
		// The original node's convention: the recipient learns who wrote (the sender says so;
		// nothing proves it).
		a.Text = c.cfg.Self.PeerID().String() + ":" + a.Text
	}
	if c.cfg.Mail != nil && a.Auto && (asked || len(a.Text) > packet.MaxMessageSize) {
		return c.sendMail(hops[0], a)
	}
	var sent router.Sent
	if a.Auto {
		sent, err = c.cfg.Messenger.Send(ctx, hops[0], a.Text)
	} else {
		sent, err = c.cfg.Messenger.SendPath(ctx, hops, a.Text)
	}
	if err != nil {
		return nil, sendFailure(err)
	}
	return []string{fmt.Sprintf("Message sent to %s over %d relayers (ack challenge 0x%x)", hops[len(hops)-1], sent.Relayers, sent.Ack[:])}, nil
}

// sendFailure says why a message was not sent: the router's sentence, without the cause it
// wraps; a path through this node is a usage error.
func sendFailure(err error) error {
	if errors.Is(err, router.ErrSelf) {
		return usage("%s", strings.TrimPrefix(err.Error(), router.ErrSelf.Error()+": "))
	}
	for _, s := range []error{router.ErrNoChain, router.ErrNoPath, router.ErrNotEnoughBalance, router.ErrMessageTooLarge,
		router.ErrBadRoute, router.ErrUnreachable, router.ErrBusy} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}
