package admin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/layers"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/token"
	"github.com/relayd/relayd/internal/ws"
)

// NativeCurrency is the withdraw currency of the chain's own coin, as the REST API names it.
const NativeCurrency = "NATIVE"

// chainCommands are the commands of payments and channels.
func (c *console) chainCommands() []Command {
	return []Command{
		{Name: "balance", Usage: "balance", Help: "Show the node's token and native balances.", Run: c.balance},
		{Name: "channels", Usage: "channels", Help: "List open channels and their balances.", Run: c.channels},
		{Name: "open", Usage: "open <peer> <amount>", Help: "Open a channel to a peer, funded with whole tokens (e.g. 0.5).", Run: c.open},
		{Name: "close", Usage: "close <peer> [incoming]", Help: "Close the outgoing (or incoming) channel with a peer; run again after the closure period to finalize.", Run: c.close},
		{Name: "withdraw", Usage: "withdraw <amount> <currency> <0x address>", Help: "Send whole tokens or NATIVE coin to an address.", Run: c.withdraw},
		{Name: "tickets", Usage: "tickets", Help: "Show ticket statistics.", Run: c.tickets},
		{Name: "redeemTickets", Usage: "redeemTickets", Help: "Redeem every acknowledged ticket on chain.", Run: c.redeem},
	}
}

// account is the chain address of the peer an operator named.
func (c *console) account(name string) (common.Address, error) {
	id, err := c.resolve(name)
	if err != nil {
		return common.Address{}, err
	}
	return c.cfg.Peers.AddressOf(id)
}

// tokens renders an amount in the smallest unit as whole tokens with the symbol.
func (c *console) tokens(units fmt.Stringer) string {
	a, err := token.ParseUnits(units.String())
	if err != nil {
		return units.String() + " units"
	}
	return a.String() + " " + c.cfg.Chain.TokenSymbol()
}

func (c *console) balance(ctx context.Context, _ string) ([]string, error) {
	if c.cfg.Chain == nil {
		return nil, errNoChain
	}
	native, tokens, err := c.cfg.Chain.Balances(ctx)
	if err != nil {
		return nil, err
	}
	sym := c.cfg.Chain.TokenSymbol()
	return []string{
		fmt.Sprintf("%-16s%s %s", sym+" Balance:", token.Of(tokens), sym),
		fmt.Sprintf("%-16s%s %s", "ETH Balance:", token.Of(native), NativeCurrency),
	}, nil
}

// channels is `channels`: the outgoing channels, then the incoming ones, each as the original's
// block of lines. A list that is empty says so in its own place ("No outgoing channels.", "No
// incoming channels."), so that no line reads as if the channels just listed did not exist; with
// both empty one line says so.
func (c *console) channels(context.Context, string) ([]string, error) {
	if c.cfg.Chain == nil {
		return nil, errNoChain
	}
	in, out := c.cfg.Chain.ListChannels(false)
	if len(in) == 0 && len(out) == 0 {
		return []string{"No open channels."}, nil
	}
	var lines []string
	block := func(ch channels.Channel, kind, party string, other common.Address) {
		status := ch.Status.String()
		if ch.Status == channels.PendingToClose {
			status += " (can be finalized from " + ch.ClosureTime.UTC().Format(ws.TimeFormat) + ")"
		}
		lines = append(lines,
			fmt.Sprintf("%-24s0x%x", kind+" Channel:", ch.ID[:]),
			fmt.Sprintf("%-24s%s", party+":", c.cfg.Peers.Name(other)),
			fmt.Sprintf("%-24s%s", "Status:", status),
			fmt.Sprintf("%-24s%s", "Balance:", c.tokens(ch.Balance)))
	}
	if len(out) == 0 {
		lines = append(lines, "No outgoing channels.")
	}
	for _, ch := range out {
		block(ch, "Outgoing", "To", ch.Destination)
	}
	if len(in) == 0 {
		lines = append(lines, "No incoming channels.")
	}
	for _, ch := range in {
		block(ch, "Incoming", "From", ch.Source)
	}
	return lines, nil
}

func (c *console) open(ctx context.Context, args string) ([]string, error) {
	f := strings.Fields(args)
	if len(f) != 2 {
		return nil, usage("open needs a peer and an amount")
	}
	if c.cfg.Chain == nil {
		return nil, errNoChain
	}
	other, err := c.account(f[0])
	if err != nil {
		return nil, err
	}
	amount, err := token.ParsePositive(f[1])
	if err != nil {
		return nil, usage("%s", err.Error())
	}
	chID, tx, err := c.cfg.Chain.OpenChannel(ctx, other, amount.Big())
	if err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("Successfully opened channel 0x%x to %s with %s %s (tx %s)", chID[:], c.cfg.Peers.Name(other), amount, c.cfg.Chain.TokenSymbol(), tx.Hex())}, nil
}

func (c *console) close(ctx context.Context, args string) ([]string, error) {
	f := strings.Fields(args)
	if len(f) < 1 || len(f) > 2 || (len(f) == 2 && f[1] != "incoming" && f[1] != "outgoing") {
		return nil, usage("close needs a peer, optionally followed by incoming")
	}
	if c.cfg.Chain == nil {
		return nil, errNoChain
	}
	other, err := c.account(f[0])
	if err != nil {
		return nil, err
	}
	outgoing := len(f) == 1 || f[1] == "outgoing"
	tx, before, err := c.cfg.Chain.CloseChannel(ctx, other, outgoing)
	if errors.Is(err, ledger.ErrChannelNotFound) {
		return nil, fmt.Errorf("%w: no channel with %s", err, c.cfg.Peers.Name(other))
	}
	if err != nil {
		return nil, err
	}
	name := c.cfg.Peers.Name(other)
	switch {
	case tx == (common.Hash{}) && before == channels.PendingToClose:
		return []string{"Closing channel, closure window still active. Run close again once the closure period has passed."}, nil
	case tx == (common.Hash{}):
		return []string{"Channel is already " + before.String() + "."}, nil
	case before == channels.Open && outgoing:
		minutes := int64(math.Ceil(c.closurePeriodMinutes()))
		return []string{fmt.Sprintf("Initiated channel closure, the channel must remain open for at least %s. "+
			"Please send the close command again once the cool-off has passed. Receipt: %s. (channel to %s)", plural(minutes, "minute"), tx.Hex(), name)}, nil
	}
	return []string{fmt.Sprintf("Closing channel. Receipt: %s. (channel with %s closed)", tx.Hex(), name)}, nil
}

// closurePeriodMinutes is the contract's closure period in minutes (0 without the chain's info).
func (c *console) closurePeriodMinutes() float64 {
	if c.cfg.ChainInfo == nil {
		return 0
	}
	return c.cfg.ChainInfo.ClosurePeriod().Minutes()
}

// plural writes n and its unit, with an s unless n is 1.
func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

func (c *console) withdraw(ctx context.Context, args string) ([]string, error) {
	f := strings.Fields(args)
	if len(f) != 3 {
		return nil, usage("withdraw needs an amount, a currency and an address")
	}
	amount, err := token.ParsePositive(f[0])
	if err != nil {
		return nil, usage("%s", err.Error())
	}
	to, err := parseAddress(f[2])
	if err != nil {
		return nil, err
	}
	if c.cfg.Chain == nil {
		return nil, errNoChain
	}
	sym := c.cfg.Chain.TokenSymbol()
	native := strings.EqualFold(f[1], NativeCurrency)
	if !native && !strings.EqualFold(f[1], sym) {
		return nil, usage("currency must be %s or %s", NativeCurrency, sym)
	}
	tx, err := c.cfg.Chain.Withdraw(ctx, native, amount.Big(), to)
	if err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("Withdrawing %s %s to %s, receipt %s.", amount, strings.ToUpper(f[1]), to.Hex(), tx.Hex())}, nil
}

// parseAddress reads a chain address as the REST API does: 0x and 40 hexadecimal digits, in one
// case or with a valid EIP-55 checksum (money sent to a mistyped address is lost).
func parseAddress(s string) (common.Address, error) {
	if !common.IsHexAddress(s) || !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
		return common.Address{}, usage("%q is not a 0x address", s)
	}
	digits := s[2:]
	if digits != strings.ToLower(digits) && digits != strings.ToUpper(digits) {
		ma, err := common.NewMixedcaseAddressFromString(s)
		if err != nil || !ma.ValidChecksum() {
			return common.Address{}, usage("%q has a wrong EIP-55 checksum (mixed case): check the address", s)
		}
	}
	return common.HexToAddress(s), nil
}

func (c *console) tickets(context.Context, string) ([]string, error) {
	if c.cfg.Tickets == nil || c.cfg.Chain == nil {
		return nil, errNoChain
	}
	st, err := c.cfg.Tickets.Statistics()
	if err != nil {
		return nil, err
	}
	return []string{
		"Tickets:",
		fmt.Sprintf("- Pending:          %d (awaiting the next hop's acknowledgement)", st.Pending),
		fmt.Sprintf("- Unredeemed:       %d", st.Unredeemed),
		fmt.Sprintf("- Unredeemed Value: %s", c.tokens(&st.UnredeemedValue)),
		fmt.Sprintf("- Redeemed:         %d", st.Redeemed),
		fmt.Sprintf("- Redeemed Value:   %s", c.tokens(&st.RedeemedValue)),
		fmt.Sprintf("- Losing Tickets:   %d", st.LosingTickets),
		fmt.Sprintf("- Win Proportion:   %.0f%%", st.WinProportion*100),
		fmt.Sprintf("- Neglected:        %d", st.Neglected),
		fmt.Sprintf("- Rejected:         %d", st.Rejected),
		fmt.Sprintf("- Rejected Value:   %s", c.tokens(&st.RejectedValue)),
	}, nil
}

func (c *console) redeem(ctx context.Context, _ string) ([]string, error) {
	if c.cfg.Tickets == nil || c.cfg.Chain == nil {
		return nil, errNoChain
	}
	rep, err := c.cfg.Tickets.RedeemTickets(ctx, nil, "requested")
	var re *ledger.RedeemError
	if errors.As(err, &re) {
		return nil, fmt.Errorf("redeemed %d of %d tickets (%s); %d remain: %w", re.Report.Redeemed, re.Total(),
			c.tokens(&re.Report.Value), re.Remaining, re.Err)
	}
	if err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("Redeemed all tickets. Run 'tickets' for details (%d tickets worth %s).",
		rep.Redeemed, c.tokens(&rep.Value))}, nil
}

// info describes the node, its network and its chain.
func (c *console) info(context.Context, string) ([]string, error) {
	var listening, announced []string
	for _, m := range c.cfg.Transport.Addrs() {
		listening = append(listening, m.String())
	}
	if c.cfg.Graph != nil {
		if a, ok := c.cfg.Graph.Snapshot().Announced(c.cfg.Self.Address()); ok {
			announced = a.Multiaddrs
		}
	}
	ann := strings.Join(announced, ",")
	if ann == "" {
		ann = "(not announced)"
	}
	out := []string{
		"Announcing to other nodes as: " + ann,
		"Listening on: " + strings.Join(listening, ","),
		"Running on: " + c.cfg.Network,
	}
	ci := c.cfg.ChainInfo
	if ci == nil || c.cfg.Graph == nil || c.cfg.Indexer == nil {
		return append(out, "Chain: none (--provider not set)", "Topology: "+topologyLine(c.cfg.Layers)), nil
	}
	period := uint64(ci.ClosurePeriod().Seconds())
	snap := c.cfg.Graph.Snapshot()
	return append(out,
		fmt.Sprintf("RELAY Token: %s (%s)", ci.TokenAddress().Hex(), ci.TokenSymbol()),
		"RELAY Channels: "+ci.ChannelsAddress().Hex(),
		fmt.Sprintf("Channel closure period: %s (%d s)", plural(int64((period+59)/60), "minute"), period),
		fmt.Sprintf("Chain id: %d", ci.ChainID()),
		fmt.Sprintf("Indexed: %d channels, %d announced peers, next block %d", len(snap.Channels()), len(snap.Peers()), c.cfg.Indexer.Next()),
		"Topology: "+topologyLine(c.cfg.Layers),
	), nil
}

// topologyLine describes the network's topology and the node's place in it.
func topologyLine(l Layers) string {
	var st layers.Status
	ok := false
	if l != nil {
		st, ok = l.Status()
	}
	if !ok {
		return "free routes"
	}
	shape := fmt.Sprintf("%d layers of up to %d relayers, epochs of %s", st.Layers, st.Width, plural(int64(st.EpochBlocks), "block"))
	if !st.Drawn {
		return shape + "; not drawn yet (no path until then)"
	}
	place := "this node relays in none"
	if st.Layer > 0 {
		place = fmt.Sprintf("this node relays in layer %d", st.Layer)
	}
	grace := ""
	if st.Grace {
		grace = ", the previous epoch's channels kept for a grace"
	}
	return fmt.Sprintf("%s; epoch %d (%d relayers drawn, next draw at block %d): %s%s", shape, st.Epoch, st.Relayers, st.NextEpochBlock, place, grace)
}
