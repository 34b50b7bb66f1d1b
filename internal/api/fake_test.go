package api

import (
	"context"
	"math/big"
	"net/http"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
)

// The fakeNode also plays the node's messenger, chain and tickets, with
// scripted answers a test can replace.

func (f *fakeNode) config(disableAuth bool) Config {
	return Config{Token: testToken, DisableAuth: disableAuth, Node: f, Messenger: f, Chain: f, Tickets: f}
}

func (f *fakeNode) Info(context.Context) (Info, error) {
	return Info{Network: "test", ListeningAddresses: []string{"/ip4/127.0.0.1/tcp/9091"}, AnnouncedAddresses: []string{},
		ChainID: 1337, ChannelsContract: "0x0000000000000000000000000000000000000001",
		TokenContract: "0x0000000000000000000000000000000000000002", TokenSymbol: "RELAY", ClosurePeriod: 60}, nil
}

func (f *fakeNode) SendMessage(ctx context.Context, to peer.ID, text string) (string, error) {
	if f.send != nil {
		return f.send(ctx, to, text)
	}
	return "0x02" + common.Bytes2Hex(make([]byte, 32)), nil
}

func (f *fakeNode) Balances(context.Context) (*big.Int, *big.Int, error) {
	return big.NewInt(1e18), big.NewInt(5e17), nil
}
func (f *fakeNode) TokenSymbol() string { return "RELAY" }

func (f *fakeNode) Withdraw(_ context.Context, native bool, amount *big.Int, to common.Address) (string, error) {
	if amount.Cmp(big.NewInt(1e18)) > 0 {
		return "", &Error{http.StatusUnprocessableEntity, CodeNotEnoughBalance, "amount is more than the balance"}
	}
	f.withdrawn = append(f.withdrawn, amount.String())
	return "0x" + common.Bytes2Hex(make([]byte, 32)), nil
}

func (f *fakeNode) Channels(includingClosed bool) ([]Channel, []Channel) {
	in := []Channel{{Type: "incoming", ChannelID: "0x" + common.Bytes2Hex(make([]byte, 32)), PeerID: f.PeerID().String(), Status: "Open", Balance: "100"}}
	if includingClosed {
		in = append(in, Channel{Type: "incoming", ChannelID: "0x" + common.Bytes2Hex(make([]byte, 32)), PeerID: f.PeerID().String(), Status: "Closed", Balance: "0"})
	}
	return in, nil
}

func (f *fakeNode) Channel(id peer.ID, outgoing bool) (Channel, error) {
	if outgoing {
		return Channel{}, &Error{http.StatusNotFound, CodeChannelNotFound, "no channel with " + id.String()}
	}
	return Channel{Type: "incoming", ChannelID: "0x" + common.Bytes2Hex(make([]byte, 32)), PeerID: id.String(), Status: "Open", Balance: "100"}, nil
}

func (f *fakeNode) OpenChannel(_ context.Context, id peer.ID, amount *big.Int) (string, string, error) {
	if f.openChannels[id] {
		return "", "", &Error{http.StatusConflict, CodeChannelOpen, "already open"}
	}
	f.openChannels[id] = true
	return "0x" + common.Bytes2Hex(make([]byte, 32)), "0x" + common.Bytes2Hex(make([]byte, 32)), nil
}

func (f *fakeNode) CloseChannel(_ context.Context, id peer.ID, outgoing bool) (string, string, error) {
	if !f.openChannels[id] {
		return "", "", &Error{http.StatusNotFound, CodeChannelNotFound, "no channel with " + id.String()}
	}
	delete(f.openChannels, id)
	return "0x" + common.Bytes2Hex(make([]byte, 32)), "Open", nil
}

func (f *fakeNode) Tickets(from *peer.ID) ([]Ticket, error) {
	if from != nil && *from != f.PeerID() {
		return nil, nil
	}
	return f.tickets, nil
}

func (f *fakeNode) TicketStatistics() (TicketStatistics, error) {
	return TicketStatistics{Unredeemed: uint64(len(f.tickets)), UnredeemedValue: "0", RedeemedValue: "0", RejectedValue: "0"}, nil
}

func (f *fakeNode) RedeemTickets(ctx context.Context, from *peer.ID) error {
	f.tickets = nil
	return nil
}
