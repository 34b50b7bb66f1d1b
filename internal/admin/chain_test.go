package admin

import (
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/channels"
)

// fakeChain lists the channels it holds; the other operations are not called.
type fakeChain struct {
	Chain
	in, out []channels.Channel
}

func (f fakeChain) ListChannels(bool) (in, out []channels.Channel) { return f.in, f.out }
func (fakeChain) TokenSymbol() string                              { return "RELAY" }

// namePeers names every account by its address.
type namePeers struct{ Peers }

func (namePeers) Name(a common.Address) string { return a.Hex() }

// TestChannelsEmptyLines: a list that is empty says so in its own place, and a list with
// channels is never followed by a line saying there are none.
func TestChannelsEmptyLines(t *testing.T) {
	self, other := common.Address{1}, common.Address{2}
	outgoing := channels.Channel{ID: channels.IDOf(self, other), Source: self, Destination: other,
		Balance: big.NewInt(2e18), Status: channels.Open}
	incoming := channels.Channel{ID: channels.IDOf(other, self), Source: other, Destination: self,
		Balance: big.NewInt(5e17), Status: channels.Open}
	block := func(kind, party string, ch channels.Channel, who common.Address, balance string) []string {
		return []string{
			kind + " Channel:       0x" + common.Bytes2Hex(ch.ID[:]),
			party + ":" + strings.Repeat(" ", 23-len(party)) + who.Hex(),
			"Status:                 Open",
			"Balance:                " + balance + " RELAY",
		}
	}
	out := block("Outgoing", "To", outgoing, other, "2")
	in := block("Incoming", "From", incoming, other, "0.5")
	tests := []struct {
		name    string
		in, out []channels.Channel
		want    []string
	}{
		{"none", nil, nil, []string{"No open channels."}},
		{"outgoing only", nil, []channels.Channel{outgoing}, append(slices.Clone(out), "No incoming channels.")},
		{"incoming only", []channels.Channel{incoming}, nil, append([]string{"No outgoing channels."}, in...)},
		{"both", []channels.Channel{incoming}, []channels.Channel{outgoing}, append(slices.Clone(out), in...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &console{cfg: Config{Chain: fakeChain{in: tt.in, out: tt.out}, Peers: namePeers{}}}
			got, err := c.channels(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("channels:\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
