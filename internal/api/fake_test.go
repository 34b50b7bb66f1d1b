package api

import (
	"context"
	"io"
	"math/big"
	"net/http"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/identity"
)

// The fakeNode also plays the node's messenger, chain and tickets, with
// scripted answers a test can replace. Its chain account holds 1 native
// coin and 0.5 tokens; openChannels holds its outgoing channels: true
// while Open, false once their closure was initiated (PendingToClose, with
// a closure period that never ends).

func (f *fakeNode) config(disableAuth bool) Config {
	return Config{Token: testToken, DisableAuth: disableAuth, Node: f, Messenger: f, Chain: f, Tickets: f, Graph: f, Metrics: fakeMetrics, Streams: newTestStreams()}
}

// fakeMetrics answers GET /node/metrics as promhttp does.
var fakeMetrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, "# HELP relayd_messages_sent_total Messages sent.\n# TYPE relayd_messages_sent_total counter\nrelayd_messages_sent_total 3\n")
})

var (
	fakeNative = big.NewInt(1e18) // the account's native balance
	fakeToken  = big.NewInt(5e17) // the account's token balance
)

func fakeHash(b byte) string { return "0x" + strings.Repeat(common.Bytes2Hex([]byte{b}), 32) }

func (f *fakeNode) Info(context.Context) (Info, error) {
	return Info{Network: "test", ListeningAddresses: []string{"/ip4/127.0.0.1/tcp/9091"}, AnnouncedAddresses: []string{},
		ChainID: 1337, ChannelsContract: "0x0000000000000000000000000000000000000001",
		TokenContract: "0x0000000000000000000000000000000000000002", TokenSymbol: "RELAY", ClosurePeriod: 60,
		IndexedBlock: 42, ChannelsIndexed: 2, PeersAnnounced: 3}, nil
}

// SendMessage refuses a text over 500 bytes like the node, then answers
// with f.send, else with an ack challenge.
func (f *fakeNode) SendMessage(ctx context.Context, to peer.ID, text string) (string, error) {
	if len(text) > 500 {
		return "", &Error{http.StatusBadRequest, CodeMessageTooLarge, "message is longer than 500 bytes"}
	}
	if f.send != nil {
		return f.send(ctx, to, text)
	}
	return "0x02" + common.Bytes2Hex(make([]byte, 32)), nil
}

func (f *fakeNode) Balances(context.Context) (*big.Int, *big.Int, error) {
	return new(big.Int).Set(fakeNative), new(big.Int).Set(fakeToken), nil
}
func (f *fakeNode) TokenSymbol() string { return "RELAY" }

func (f *fakeNode) Withdraw(_ context.Context, native bool, amount *big.Int, to common.Address) (string, error) {
	have := fakeToken
	if native {
		have = fakeNative
	}
	if amount.Cmp(have) > 0 {
		return "", &Error{http.StatusUnprocessableEntity, CodeNotEnoughBalance, "amount " + amount.String() + " is more than the balance " + have.String()}
	}
	f.withdrawn = append(f.withdrawn, amount.String())
	return fakeHash(0xaa), nil
}

// outgoing is the fake's outgoing channel to id, if it has one.
func (f *fakeNode) outgoing(id peer.ID) (Channel, bool) {
	open, ok := f.openChannels[id]
	if !ok {
		return Channel{}, false
	}
	ch := Channel{Type: "outgoing", ChannelID: fakeHash(0x0c), PeerID: id.String(), Status: "Open", Balance: "100"}
	if !open {
		ch.Status, ch.ClosureTime = "PendingToClose", "2026-11-22T10:05:00.000Z"
	}
	return ch, true
}

// Channels: one open incoming channel (from the node's own PeerId, as a
// stand-in) and one from a peer that never announced itself, named by its
// address; closed, one more; and the outgoing channels.
func (f *fakeNode) Channels(includingClosed bool) ([]Channel, []Channel) {
	in := []Channel{
		{Type: "incoming", ChannelID: fakeHash(0x01), PeerID: f.PeerID().String(), Status: "Open", Balance: "100"},
		{Type: "incoming", ChannelID: fakeHash(0x02), PeerID: "0x035C68d5251AfF759Ea945A05783F2290EA0Accf", Status: "Open", Balance: "0"},
	}
	if includingClosed {
		in = append(in, Channel{Type: "incoming", ChannelID: fakeHash(0x03), PeerID: f.PeerID().String(), Status: "Closed", Balance: "0"})
	}
	var out []Channel
	for id := range f.openChannels {
		ch, _ := f.outgoing(id)
		out = append(out, ch)
	}
	return in, out
}

// Channel: every peer but the node itself has an open incoming channel;
// outgoing ones are those in openChannels.
func (f *fakeNode) Channel(id peer.ID, outgoing bool) (Channel, error) {
	if id == f.PeerID() {
		return Channel{}, &Error{http.StatusBadRequest, CodeInvalidPeerID, "a channel needs another peer, not this node"}
	}
	if outgoing {
		if ch, ok := f.outgoing(id); ok {
			return ch, nil
		}
		return Channel{}, &Error{http.StatusNotFound, CodeChannelNotFound, "no channel with " + id.String()}
	}
	return Channel{Type: "incoming", ChannelID: fakeHash(0x01), PeerID: id.String(), Status: "Open", Balance: "100"}, nil
}

func (f *fakeNode) OpenChannel(_ context.Context, id peer.ID, amount *big.Int) (string, string, error) {
	if id == f.PeerID() {
		return "", "", &Error{http.StatusBadRequest, CodeInvalidPeerID, "a channel needs another peer, not this node"}
	}
	if ch, ok := f.outgoing(id); ok {
		return "", "", &Error{http.StatusConflict, CodeChannelOpen, "a channel to " + id.String() + " is already " + ch.Status}
	}
	if amount.Cmp(fakeToken) > 0 {
		return "", "", &Error{http.StatusUnprocessableEntity, CodeNotEnoughBalance, "amount " + amount.String() + " is more than the token balance " + fakeToken.String()}
	}
	f.openChannels[id] = true
	return fakeHash(0x0c), fakeHash(0xbb), nil
}

// CloseChannel closes an incoming channel at once; an outgoing one goes
// from Open to PendingToClose, and stays there.
func (f *fakeNode) CloseChannel(ctx context.Context, id peer.ID, outgoing bool) (string, string, error) {
	ch, err := f.Channel(id, outgoing)
	switch {
	case err != nil:
		return "", "", err
	case !outgoing:
		return fakeHash(0xcc), ch.Status, nil
	case ch.Status == "PendingToClose": // the closure period is not over
		return "", ch.Status, nil
	}
	f.openChannels[id] = false
	return fakeHash(0xcc), ch.Status, nil
}

// Tickets are f.tickets, those of one peer selected by counterparty.
func (f *fakeNode) Tickets(from *peer.ID) ([]Ticket, error) {
	var out []Ticket
	for _, t := range f.tickets {
		if from == nil || t.Counterparty == from.String() {
			out = append(out, t)
		}
	}
	return out, nil
}

func (f *fakeNode) TicketStatistics() (TicketStatistics, error) {
	return TicketStatistics{Pending: 1, Unredeemed: uint64(len(f.tickets)), UnredeemedValue: "0", Redeemed: 2, RedeemedValue: "20000000000000000",
		WinningTickets: 2, WinningValue: "20000000000000000", LosingTickets: 2, LosingValue: "20000000000000000", WinProportion: 0.5, RejectedValue: "0"}, nil
}

func (f *fakeNode) RedeemTickets(ctx context.Context, from *peer.ID) error {
	kept := f.tickets[:0]
	for _, t := range f.tickets {
		if from != nil && t.Counterparty != from.String() {
			kept = append(kept, t)
		}
	}
	f.tickets = kept
	return nil
}

// fakeTicket is a ticket from the peer id, with well-formed fields.
func fakeTicket(id peer.ID, index int) Ticket {
	return Ticket{ChannelID: fakeHash(0x01), Counterparty: id.String(), Amount: "10000000000000000", Index: big.NewInt(int64(index)).String(),
		ChannelEpoch: "1", WinProb: "1", Challenge: "0x" + strings.Repeat("ab", 20), Signature: "0x" + strings.Repeat("cd", 64) + "1b"}
}

// fakeWallet is the chain address of a node that never announced itself.
const fakeWallet = "0x035C68d5251AfF759Ea945A05783F2290EA0Accf"

// Graph: the node itself, each peer it knows (f.peers) and a wallet that
// never announced itself; a channel from the node to the first peer, one
// between the first two peers (not the node's own) and a closing one from
// the wallet to the node.
func (f *fakeNode) Graph() Graph {
	self := f.PeerID().String()
	g := Graph{Nodes: []GraphNode{{PeerID: self, Address: f.Address().Hex(), Self: true, Announced: true}}}
	for _, p := range f.peers {
		id, err := peer.Decode(p.PeerID)
		if err != nil {
			continue
		}
		addr, err := identity.AddressOf(id)
		if err != nil {
			continue
		}
		g.Nodes = append(g.Nodes, GraphNode{PeerID: p.PeerID, Address: addr.Hex(), Announced: true, Connected: p.Connected})
	}
	g.Nodes = append(g.Nodes, GraphNode{PeerID: fakeWallet, Address: fakeWallet})
	if len(f.peers) >= 2 {
		g.Channels = append(g.Channels,
			GraphChannel{ChannelID: fakeHash(0x21), Source: self, Destination: f.peers[0].PeerID, Balance: "100", Status: "Open"},
			GraphChannel{ChannelID: fakeHash(0x22), Source: f.peers[0].PeerID, Destination: f.peers[1].PeerID, Balance: "2500000000000000000", Status: "Open"})
	}
	g.Channels = append(g.Channels, GraphChannel{ChannelID: fakeHash(0x23), Source: fakeWallet, Destination: self, Balance: "0", Status: "PendingToClose"})
	return g
}

// faultyNode is the fakeNode whose every chain-side call (messenger, chain,
// tickets and Info) fails with err.
type faultyNode struct {
	*fakeNode
	err error
}

func (n faultyNode) config() Config {
	return Config{Token: testToken, Node: n, Messenger: n, Chain: n, Tickets: n, Graph: n, Metrics: fakeMetrics, Streams: newTestStreams()}
}

func (n faultyNode) Info(context.Context) (Info, error) { return Info{}, n.err }
func (n faultyNode) SendMessage(context.Context, peer.ID, string) (string, error) {
	return "", n.err
}
func (n faultyNode) Balances(context.Context) (*big.Int, *big.Int, error) { return nil, nil, n.err }
func (n faultyNode) Withdraw(context.Context, bool, *big.Int, common.Address) (string, error) {
	return "", n.err
}
func (n faultyNode) Channel(peer.ID, bool) (Channel, error) { return Channel{}, n.err }
func (n faultyNode) OpenChannel(context.Context, peer.ID, *big.Int) (string, string, error) {
	return "", "", n.err
}
func (n faultyNode) CloseChannel(context.Context, peer.ID, bool) (string, string, error) {
	return "", "", n.err
}
func (n faultyNode) Tickets(*peer.ID) ([]Ticket, error)            { return nil, n.err }
func (n faultyNode) TicketStatistics() (TicketStatistics, error)   { return TicketStatistics{}, n.err }
func (n faultyNode) RedeemTickets(context.Context, *peer.ID) error { return n.err }

// noChainConfig serves f as a node started without a chain: no chain, no
// tickets, no messenger and no metrics; Info has no chain fields.
func noChainConfig(f *fakeNode) Config {
	return Config{Token: testToken, Node: noChainNode{f}}
}

type noChainNode struct{ *fakeNode }

func (n noChainNode) Info(context.Context) (Info, error) {
	return Info{Network: "test", ListeningAddresses: []string{"/ip4/127.0.0.1/tcp/9091"}, AnnouncedAddresses: []string{}}, nil
}
