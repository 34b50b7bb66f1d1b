// Package strategy decides, from what a node sees, which payment channels it opens and closes on
// its own: the channel strategies of the original node (passive, promiscuous). Decide is pure: it
// reads a State and returns Actions, and the node carries them out on chain. It does no I/O and
// imports no relayd package: only the standard library and go-ethereum's common (addresses).
//
// The promiscuous policy, every tick:
//   - close each open outgoing channel whose peer has stayed unreachable (heartbeat quality below
//     CloseQuality, which takes several failed heartbeats in a row) or which is depleted (balance
//     below DepletedBelow: it can no longer pay a message's first ticket);
//   - then open channels of ChannelFunding to peers with quality at least OpenQuality that the node
//     has no channel to, until it has MaxChannels open outgoing channels, at most MaxOpensPerTick
//     at a time, and never more than its token balance pays for. Peers are picked at random,
//     weighted by 1/(1+incoming)² where incoming counts the open channels other nodes have to the
//     peer: a node nobody pays yet is the likeliest pick, so that every node becomes reachable as
//     a relayer and a recipient, instead of the first nodes announced collecting every channel
//     (what happened to the original node's promiscuous strategy in sparse networks).
//
// It also finalizes the closure of its outgoing channels once their closure period is over, so
// that their balance returns. Passive opens and closes nothing.
//
// Top-ups (Policy.TopUp, under either strategy): an open outgoing channel to a reachable peer whose
// available balance (in face amount: lottery tickets draw faces) fell below half of ChannelFunding is funded back up to ChannelFunding from the node's
// token balance, before any channel is opened, so that a node that spends through its channels
// all the time (the constant-rate stream) keeps paying while auto-redeem brings back what it earns
// relaying (docs/TRAFFIC.md, "Price"). A depleted channel that is topped up is not closed.
//
// In a layered network (issue 30, State.Layers, LayerPeers) the promiscuous policy opens channels
// only to the node's peers in this epoch's layers: the first layer's, and for a relayer of layer
// k the next layer's too, all of them at once; it closes the channels to peers that left the
// layers at a new epoch (after the grace Layered.Keep gives) and tops none of them up. Under the
// passive policy a node outside the layers opens nothing, as in free routes, but a relayer drawn
// into a layer opens its layer channels (LayerDuty): the draw gave it a seat on every path of the
// epoch, which it can fill only with them. A passive relayer closes nothing.
package strategy

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// Name is a strategy's name as settings and the API spell it.
type Name string

// The strategies.
const (
	Passive     Name = "passive"
	Promiscuous Name = "promiscuous"
)

// ErrUnknown means a strategy name that is not one of the strategies.
var ErrUnknown = errors.New("unknown strategy")

// Parse reads a strategy name (case-insensitive).
func Parse(s string) (Name, error) {
	switch n := Name(strings.ToLower(strings.TrimSpace(s))); n {
	case Passive, Promiscuous:
		return n, nil
	}
	return "", fmt.Errorf("%w %q (passive or promiscuous)", ErrUnknown, s)
}

// Defaults of Policy.
const (
	DefaultMaxChannels     = 8
	DefaultOpenQuality     = 0.5
	DefaultCloseQuality    = 0.1
	DefaultMaxOpensPerTick = 2
)

// Policy is a strategy and its parameters.
type Policy struct {
	Strategy Name
	// MaxChannels is how many open outgoing channels the strategy keeps (DefaultMaxChannels).
	MaxChannels int
	// ChannelFunding is what each channel it opens is funded with (smallest unit); required for
	// Promiscuous.
	ChannelFunding *big.Int
	// DepletedBelow: an open outgoing channel with a balance below it is closed (nil: zero).
	DepletedBelow *big.Int
	// OpenQuality is the least heartbeat quality of a peer a channel is opened to.
	OpenQuality float64
	// CloseQuality: a channel to a peer whose quality fell below it is closed.
	CloseQuality float64
	// MaxOpensPerTick bounds the channels one Decide opens.
	MaxOpensPerTick int
	// TopUp funds an open outgoing channel back up to ChannelFunding once its balance fell below
	// half of it (under Passive too).
	TopUp bool
}

// WithDefaults fills the zero fields of p with the defaults.
func (p Policy) WithDefaults() Policy {
	if p.Strategy == "" {
		p.Strategy = Passive
	}
	if p.MaxChannels == 0 {
		p.MaxChannels = DefaultMaxChannels
	}
	if p.OpenQuality == 0 {
		p.OpenQuality = DefaultOpenQuality
	}
	if p.CloseQuality == 0 {
		p.CloseQuality = DefaultCloseQuality
	}
	if p.MaxOpensPerTick == 0 {
		p.MaxOpensPerTick = DefaultMaxOpensPerTick
	}
	return p
}

// Peer is a node the strategy may open a channel to.
type Peer struct {
	Address common.Address
	// Quality is its heartbeat quality in [0, 1].
	Quality float64
	// Incoming counts the open channels other nodes have to it.
	Incoming int
}

// Channel is one of the node's outgoing channels that is open (or opening).
type Channel struct {
	Peer common.Address
	// Balance is the largest expected value a ticket on it can still carry: below DepletedBelow it
	// is depleted.
	Balance *big.Int
	// Available is what it can still pay in face amount: its balance less what the tickets signed
	// on it and not redeemed are expected to draw; top-ups bring it back to ChannelFunding. nil:
	// Balance (every ticket wins).
	Available *big.Int
}

// State is what the node sees at a tick.
type State struct {
	// Balance is the node's token balance, what new channels are funded from.
	Balance *big.Int
	// Peers are the announced nodes other than this one.
	Peers []Peer
	// Open are the node's open outgoing channels.
	Open []Channel
	// Busy are peers the node must not open a channel to now: a channel pending to close, an
	// opening or closing still in flight.
	Busy []common.Address
	// Finalizable are peers of outgoing channels pending to close whose closure period has
	// passed: closing them again finalizes the closure and returns their balance.
	Finalizable []common.Address
	// Layers, in a layered network, is the node's place in this epoch's layers: channels go to
	// its Peers only. Nil: free routes, channels to any peer.
	Layers *Layered
}

// Kind says what an Action does.
type Kind int

// Action kinds.
const (
	Open Kind = iota + 1
	Close
	TopUp
)

func (k Kind) String() string {
	switch k {
	case Open:
		return "open"
	case Close:
		return "close"
	case TopUp:
		return "top up"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Action is one channel to open (funded with Amount), top up (by Amount) or close.
type Action struct {
	Kind   Kind
	Peer   common.Address
	Amount *big.Int // Open and TopUp only
	// Reason says why, for the log.
	Reason string
}

// Decide returns what p does in st: closes first, then top-ups, then opens; r picks among the
// eligible peers. Under Passive it returns the top-ups only, except a relayer's layer channels
// (LayerDuty). With st.Layers it opens channels only to the layers' peers (a relayer to every one
// of them), closes those to peers that left the layers (not under Passive) and tops up no channel
// to them.
func Decide(p Policy, st State, r *rand.Rand) []Action {
	p = p.WithDefaults()
	if p.ChannelFunding == nil || p.ChannelFunding.Sign() <= 0 {
		return nil
	}
	var inLayers, keep map[common.Address]bool
	if l := st.Layers; l != nil && !l.Pending {
		inLayers, keep = set(l.Peers), set(l.Keep)
		if inLayers == nil {
			inLayers = map[common.Address]bool{} // no peer this epoch
		}
		if l.Relayer {
			p.MaxChannels = max(len(l.Peers), 1)
			p.MaxOpensPerTick = p.MaxChannels
		}
	}
	quality := make(map[common.Address]float64, len(st.Peers))
	for _, pe := range st.Peers {
		quality[pe.Address] = pe.Quality
	}
	left := new(big.Int)
	if st.Balance != nil {
		left.Set(st.Balance)
	}
	busy := map[common.Address]bool{}
	for _, a := range st.Busy {
		busy[a] = true
	}
	for _, c := range st.Open {
		if inLayers != nil && !inLayers[c.Peer] {
			busy[c.Peer] = true // left the layers: no top-up
		}
	}
	ups := topUps(p, st, quality, busy, left)
	duty := LayerDuty(p, st.Layers)
	if (p.Strategy != Promiscuous && !duty) || (st.Layers != nil && st.Layers.Pending) {
		return ups
	}
	topped := map[common.Address]bool{}
	for _, a := range ups {
		topped[a.Peer] = true
	}
	var out []Action
	for _, a := range st.Finalizable {
		busy[a] = true
		if !duty {
			out = append(out, Action{Kind: Close, Peer: a, Reason: "closure period over"})
		}
	}
	kept := 0
	for _, c := range st.Open {
		busy[c.Peer] = true
		q, known := quality[c.Peer]
		switch {
		case duty: // a passive relayer closes nothing: it counts its channels into its layers
			if inLayers[c.Peer] {
				kept++
			}
		case inLayers != nil && !inLayers[c.Peer] && !keep[c.Peer]:
			out = append(out, Action{Kind: Close, Peer: c.Peer, Reason: "left the layers"})
		case inLayers != nil && !inLayers[c.Peer]:
			// the previous epoch's peer, kept for a grace; not counted
		case topped[c.Peer]:
			kept++
		case c.Balance == nil || c.Balance.Sign() == 0 || (p.DepletedBelow != nil && c.Balance.Cmp(p.DepletedBelow) < 0):
			out = append(out, Action{Kind: Close, Peer: c.Peer, Reason: "depleted"})
		case !known || q < p.CloseQuality:
			out = append(out, Action{Kind: Close, Peer: c.Peer, Reason: fmt.Sprintf("unreachable (quality %.2f)", q)})
		default:
			kept++
		}
	}
	out = append(out, ups...)
	var candidates []Peer
	for _, pe := range st.Peers {
		if !busy[pe.Address] && pe.Quality >= p.OpenQuality && (inLayers == nil || inLayers[pe.Address]) {
			candidates = append(candidates, pe)
		}
	}
	// A stable order before drawing, so that r alone decides.
	slices.SortFunc(candidates, func(a, b Peer) int { return a.Address.Cmp(b.Address) })
	for opens := 0; len(candidates) > 0 && opens < p.MaxOpensPerTick && kept < p.MaxChannels && left.Cmp(p.ChannelFunding) >= 0; opens++ {
		i := draw(candidates, r)
		pe := candidates[i]
		candidates = slices.Delete(candidates, i, i+1)
		out = append(out, Action{Kind: Open, Peer: pe.Address, Amount: new(big.Int).Set(p.ChannelFunding),
			Reason: fmt.Sprintf("quality %.2f, %d incoming channels", pe.Quality, pe.Incoming)})
		left.Sub(left, p.ChannelFunding)
		kept++
	}
	return out
}

// topUps returns the top-ups of p in st, paid from left (which it lowers): every open channel to a
// reachable peer that is not busy, whose balance is below half of ChannelFunding, in the order of
// st.Open, while left pays for bringing it back to ChannelFunding.
func topUps(p Policy, st State, quality map[common.Address]float64, busy map[common.Address]bool, left *big.Int) []Action {
	if !p.TopUp {
		return nil
	}
	half := new(big.Int).Rsh(p.ChannelFunding, 1)
	var out []Action
	for _, c := range st.Open {
		balance := c.Available
		if balance == nil {
			balance = c.Balance
		}
		if balance == nil {
			balance = new(big.Int)
		}
		if q, known := quality[c.Peer]; !known || q < p.CloseQuality || busy[c.Peer] || balance.Cmp(half) >= 0 {
			continue
		}
		amount := new(big.Int).Sub(p.ChannelFunding, balance)
		if left.Cmp(amount) < 0 {
			continue
		}
		left.Sub(left, amount)
		out = append(out, Action{Kind: TopUp, Peer: c.Peer, Amount: amount, Reason: "below half of channelFunding"})
	}
	return out
}

// draw picks the index of a peer at random, weighted by 1/(1+incoming)².
func draw(ps []Peer, r *rand.Rand) int {
	weight := func(p Peer) float64 { d := float64(1 + max(p.Incoming, 0)); return 1 / (d * d) }
	total := 0.0
	for _, p := range ps {
		total += weight(p)
	}
	x := r.Float64() * total
	for i, p := range ps {
		if x -= weight(p); x < 0 {
			return i
		}
	}
	return len(ps) - 1
}

// LayerDuty reports whether a node under p in a layered network must open channels though its
// policy is Passive: it is a relayer of this epoch's layers (l.Relayer), whose seat on the
// epoch's paths is empty without its channels into the next layer, so senders' paths avoid it
// and the layers are narrower than the network drew them.
func LayerDuty(p Policy, l *Layered) bool {
	return p.WithDefaults().Strategy == Passive && l != nil && !l.Pending && l.Relayer
}
