package node

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/ws"
)

// chainCommands are the admin commands of payments, channels and messages.
func (n *Node) chainCommands() []ws.Command {
	return []ws.Command{
		{Name: "send", Usage: "send [,]<peer>|<r1>,<r2>,<peer> <message>",
			Help: "Send a message: over a path the node picks, 0-hop with a leading comma, or over the relayers named.", Run: n.cmdSend},
		{Name: "balance", Usage: "balance", Help: "Show the node's token and native balances.", Run: n.cmdBalance},
		{Name: "channels", Usage: "channels", Help: "List open channels and their balances.", Run: n.cmdChannels},
		{Name: "open", Usage: "open <peer> <amount>", Help: "Open a channel to a peer, funded with whole tokens (e.g. 0.5).", Run: n.cmdOpen},
		{Name: "close", Usage: "close <peer> [incoming]", Help: "Close the outgoing (or incoming) channel with a peer; run again after the closure period to finalize.", Run: n.cmdClose},
		{Name: "withdraw", Usage: "withdraw <amount> <currency> <0x address>", Help: "Send whole tokens or NATIVE coin to an address.", Run: n.cmdWithdraw},
		{Name: "tickets", Usage: "tickets", Help: "Show ticket statistics.", Run: n.cmdTickets},
		{Name: "redeemTickets", Usage: "redeemTickets", Help: "Redeem every acknowledged ticket on chain.", Run: n.cmdRedeem},
		{Name: "info", Usage: "info", Help: "Show the node's network, chain and contracts.", Run: n.cmdInfo},
	}
}

var errNoChainCmd = errors.New("this node runs without a chain (--provider and --channelsContract)")

// describe renders an API error for the operator.
func describe(err error) error {
	var ae *api.Error
	if errors.As(err, &ae) {
		return errors.New(ae.Msg)
	}
	return err
}

func (n *Node) cmdSend(ctx context.Context, args string) ([]string, error) {
	a, ok := parseSend(args)
	if !ok {
		return nil, &ws.UsageError{Reason: "send needs a peer (or a path) and a message"}
	}
	hops := make([]peer.ID, len(a.Path))
	for i, p := range a.Path {
		id, err := n.resolvePeer(p)
		if err != nil {
			return nil, err
		}
		hops[i] = id
	}
	if err := checkOwnHops(n.id.PeerID(), hops); err != nil {
		return nil, err
	}
	if n.settings.get().IncludeRecipient {
		// The original node's convention: the recipient learns who wrote (the sender says so; nothing proves it).
		a.Text = n.id.PeerID().String() + ":" + a.Text
	}
	var ack string
	var err error
	relayers := len(hops) - 1
	switch {
	case a.Auto:
		ack, relayers, err = n.msg.sendAuto(ctx, hops[0], a.Text)
	default:
		ack, err = n.msg.send(ctx, hops, a.Text)
	}
	if err != nil {
		return nil, describe(err)
	}
	return []string{fmt.Sprintf("Message sent to %s over %d relayers (ack challenge %s)", hops[len(hops)-1], relayers, ack)}, nil
}

func (n *Node) cmdBalance(ctx context.Context, _ string) ([]string, error) {
	if n.chain == nil {
		return nil, errNoChainCmd
	}
	native, token, err := chainAPI{n.chain}.Balances(ctx)
	if err != nil {
		return nil, describe(err)
	}
	sym := n.chain.client.TokenSymbol()
	return []string{
		fmt.Sprintf("%-16s%s %s", sym+" Balance:", formatTokens(token), sym),
		fmt.Sprintf("%-16s%s %s", "ETH Balance:", formatTokens(native), api.NativeCurrency),
	}, nil
}

func (n *Node) cmdChannels(_ context.Context, _ string) ([]string, error) {
	if n.chain == nil {
		return nil, errNoChainCmd
	}
	in, out := chainAPI{n.chain}.Channels(false)
	sym := n.chain.client.TokenSymbol()
	var lines []string
	block := func(c api.Channel, kind, party string) {
		bal, _ := new(big.Int).SetString(c.Balance, 10)
		status := c.Status
		if c.ClosureTime != "" {
			status += " (can be finalized from " + c.ClosureTime + ")"
		}
		lines = append(lines,
			fmt.Sprintf("%-24s%s", kind+" Channel:", c.ChannelID),
			fmt.Sprintf("%-24s%s", party+":", c.PeerID),
			fmt.Sprintf("%-24s%s", "Status:", status),
			fmt.Sprintf("%-24s%s %s", "Balance:", formatTokens(bal), sym))
	}
	for _, c := range out {
		block(c, "Outgoing", "To")
	}
	if len(out) == 0 {
		lines = append(lines, "No open channels from node.")
	}
	for _, c := range in {
		block(c, "Incoming", "From")
	}
	if len(in) == 0 {
		lines = append(lines, "No open channels to node.")
	}
	return lines, nil
}

func (n *Node) cmdOpen(ctx context.Context, args string) ([]string, error) {
	f := strings.Fields(args)
	if len(f) != 2 {
		return nil, &ws.UsageError{Reason: "open needs a peer and an amount"}
	}
	if n.chain == nil {
		return nil, errNoChainCmd
	}
	id, err := n.resolvePeer(f[0])
	if err != nil {
		return nil, err
	}
	amount, err := parseTokens(f[1])
	if err != nil {
		return nil, &ws.UsageError{Reason: err.Error()}
	}
	chID, tx, err := chainAPI{n.chain}.OpenChannel(ctx, id, amount)
	if err != nil {
		return nil, describe(err)
	}
	return []string{fmt.Sprintf("Successfully opened channel %s to %s with %s %s (tx %s)", chID, id, f[1], n.chain.client.TokenSymbol(), tx)}, nil
}

func (n *Node) cmdClose(ctx context.Context, args string) ([]string, error) {
	f := strings.Fields(args)
	if len(f) < 1 || len(f) > 2 || (len(f) == 2 && f[1] != "incoming" && f[1] != "outgoing") {
		return nil, &ws.UsageError{Reason: "close needs a peer, optionally followed by incoming"}
	}
	if n.chain == nil {
		return nil, errNoChainCmd
	}
	id, err := n.resolvePeer(f[0])
	if err != nil {
		return nil, err
	}
	outgoing := len(f) == 1 || f[1] == "outgoing"
	tx, before, err := chainAPI{n.chain}.CloseChannel(ctx, id, outgoing)
	if err != nil {
		return nil, describe(err)
	}
	switch {
	case tx == "" && before == "PendingToClose":
		return []string{"Closing channel, closure window still active. Run close again once the closure period has passed."}, nil
	case tx == "":
		return []string{"Channel is already " + before + "."}, nil
	case before == "Open" && outgoing:
		minutes := int64(math.Ceil(n.chain.client.ClosurePeriod().Minutes()))
		return []string{fmt.Sprintf("Initiated channel closure, the channel must remain open for at least %d minutes. "+
			"Please send the close command again once the cool-off has passed. Receipt: %s. (channel to %s)", minutes, tx, id)}, nil
	}
	return []string{fmt.Sprintf("Closing channel. Receipt: %s. (channel with %s closed)", tx, id)}, nil
}

func (n *Node) cmdWithdraw(ctx context.Context, args string) ([]string, error) {
	f := strings.Fields(args)
	if len(f) != 3 {
		return nil, &ws.UsageError{Reason: "withdraw needs an amount, a currency and an address"}
	}
	amount, err := parseTokens(f[0])
	if err != nil {
		return nil, &ws.UsageError{Reason: err.Error()}
	}
	to, err := api.ParseAddress(f[2])
	switch {
	case errors.Is(err, api.ErrAddressChecksum):
		return nil, &ws.UsageError{Reason: fmt.Sprintf("%q has a wrong EIP-55 checksum (mixed case): check the address", f[2])}
	case err != nil:
		return nil, &ws.UsageError{Reason: fmt.Sprintf("%q is not a 0x address", f[2])}
	}
	if n.chain == nil {
		return nil, errNoChainCmd
	}
	native := strings.EqualFold(f[1], api.NativeCurrency)
	if !native && !strings.EqualFold(f[1], n.chain.client.TokenSymbol()) {
		return nil, &ws.UsageError{Reason: "currency must be " + api.NativeCurrency + " or " + n.chain.client.TokenSymbol()}
	}
	tx, err := chainAPI{n.chain}.Withdraw(ctx, native, amount, to)
	if err != nil {
		return nil, describe(err)
	}
	return []string{fmt.Sprintf("Withdrawing %s %s to %s, receipt %s.", f[0], strings.ToUpper(f[1]), to.Hex(), tx)}, nil
}

func (n *Node) cmdTickets(context.Context, string) ([]string, error) {
	if n.chain == nil {
		return nil, errNoChainCmd
	}
	st, err := ticketsAPI{n.msg}.TicketStatistics()
	if err != nil {
		return nil, err
	}
	sym := n.chain.client.TokenSymbol()
	tok := func(v string) string { b, _ := new(big.Int).SetString(v, 10); return formatTokens(b) + " " + sym }
	return []string{
		"Tickets:",
		fmt.Sprintf("- Pending:          %d (awaiting the next hop's acknowledgement)", st.Pending),
		fmt.Sprintf("- Unredeemed:       %d", st.Unredeemed),
		fmt.Sprintf("- Unredeemed Value: %s", tok(st.UnredeemedValue)),
		fmt.Sprintf("- Redeemed:         %d", st.Redeemed),
		fmt.Sprintf("- Redeemed Value:   %s", tok(st.RedeemedValue)),
		fmt.Sprintf("- Losing Tickets:   %d", st.LosingTickets),
		fmt.Sprintf("- Win Proportion:   %.0f%%", st.WinProportion*100),
		fmt.Sprintf("- Neglected:        %d", st.Neglected),
		fmt.Sprintf("- Rejected:         %d", st.Rejected),
		fmt.Sprintf("- Rejected Value:   %s", tok(st.RejectedValue)),
	}, nil
}

func (n *Node) cmdRedeem(ctx context.Context, _ string) ([]string, error) {
	if n.chain == nil {
		return nil, errNoChainCmd
	}
	rep, err := ticketsAPI{n.msg}.redeem(ctx, nil)
	if err != nil {
		return nil, describe(err)
	}
	return []string{fmt.Sprintf("Redeemed all tickets. Run 'tickets' for details (%d tickets worth %s %s).",
		rep.Redeemed, formatTokens(rep.Value.ToBig()), n.chain.client.TokenSymbol())}, nil
}

func (n *Node) cmdInfo(ctx context.Context, _ string) ([]string, error) {
	info, err := apiNode{n}.Info(ctx)
	if err != nil {
		return nil, err
	}
	announced := strings.Join(info.AnnouncedAddresses, ",")
	if announced == "" {
		announced = "(not announced)"
	}
	out := []string{
		"Announcing to other nodes as: " + announced,
		"Listening on: " + strings.Join(info.ListeningAddresses, ","),
		"Running on: " + info.Network,
	}
	if n.chain == nil {
		return append(out, "Chain: none (--provider not set)"), nil
	}
	return append(out,
		fmt.Sprintf("RELAY Token: %s (%s)", info.TokenContract, info.TokenSymbol),
		"RELAY Channels: "+info.ChannelsContract,
		fmt.Sprintf("Channel closure period: %d minutes (%d s)", (info.ClosurePeriod+59)/60, info.ClosurePeriod),
		fmt.Sprintf("Chain id: %d", info.ChainID),
		fmt.Sprintf("Indexed: %d channels, %d announced peers, next block %d", info.ChannelsIndexed, info.PeersAnnounced, info.IndexedBlock),
	), nil
}
