package api

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Chain is what the account and channel operations need from the node's
// settlement layer. Its methods return *Error for failures a client caused
// or can act on; anything else is answered 500.
type Chain interface {
	// Balances returns the node account's native and token balances (wei).
	Balances(ctx context.Context) (native, token *big.Int, err error)
	// TokenSymbol is the network token's symbol (the withdraw currency).
	TokenSymbol() string
	// Withdraw sends amount of NATIVE or the token to recipient.
	Withdraw(ctx context.Context, native bool, amount *big.Int, recipient common.Address) (txHash string, err error)
	// Channels lists the node's channels.
	Channels(includingClosed bool) (incoming, outgoing []Channel)
	// Channel returns one channel; an *Error with CodeChannelNotFound when
	// there is none.
	Channel(id peer.ID, outgoing bool) (Channel, error)
	// OpenChannel funds a channel to the peer and waits until it is open.
	OpenChannel(ctx context.Context, id peer.ID, amount *big.Int) (channelID, txHash string, err error)
	// CloseChannel runs the next step of closing: initiate, or finalize
	// once the closure period has passed. txHash is empty when nothing was
	// sent; statusBefore is the channel's status before the call.
	CloseChannel(ctx context.Context, id peer.ID, outgoing bool) (txHash, statusBefore string, err error)
}

// Error is a failure the node reports to a client with a status and code.
type Error struct {
	Status int
	Code   string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Channel is one payment channel as the API shows it.
type Channel struct {
	Type      string `json:"type"` // "incoming" or "outgoing"
	ChannelID string `json:"channelId"`
	PeerID    string `json:"peerId"`
	Status    string `json:"status"` // Open, PendingToClose or Closed
	Balance   string `json:"balance"`
	// ClosureTime is when a PendingToClose channel can be finalized (ISO 8601 UTC).
	ClosureTime string `json:"closureTime,omitempty"`
}

// Channels is the answer of GET /channels.
type Channels struct {
	Incoming []Channel `json:"incoming"`
	Outgoing []Channel `json:"outgoing"`
}

// Balances is the answer of GET /account/balances: the node account's
// balances in wei, native currency and the network token.
type Balances struct {
	Native string `json:"native"`
	Relay  string `json:"relay"`
}

// WithdrawRequest is the body of POST /account/withdraw.
type WithdrawRequest struct {
	Amount    string `json:"amount"`
	Currency  string `json:"currency"`
	Recipient string `json:"recipient"`
}

// Receipt is the answer of a write operation: the transaction hash.
type Receipt struct {
	Receipt string `json:"receipt"`
}

// OpenChannelRequest is the body of POST /channels.
type OpenChannelRequest struct {
	PeerID string `json:"peerId"`
	Amount string `json:"amount"`
}

// OpenChannelResponse is the answer of POST /channels.
type OpenChannelResponse struct {
	ChannelID string `json:"channelId"`
	Receipt   string `json:"receipt"`
}

// CloseChannelRequest is the body of the seed's DELETE /channels.
type CloseChannelRequest struct {
	PeerID    string `json:"peerId"`
	Direction string `json:"direction"`
}

// CloseChannelResponse is the answer of a close: the transaction (absent
// when nothing had to be sent) and the channel's status before the call.
type CloseChannelResponse struct {
	Receipt       string `json:"receipt,omitempty"`
	ChannelStatus string `json:"channelStatus"`
}

// Info is the answer of GET /node/info. The chain fields are zero on a
// node without a chain.
type Info struct {
	Network            string   `json:"network"`
	ListeningAddresses []string `json:"listeningAddresses"`
	AnnouncedAddresses []string `json:"announcedAddresses"`
	ChainID            uint64   `json:"chainId"`
	ChannelsContract   string   `json:"channelsContract"`
	TokenContract      string   `json:"tokenContract"`
	TokenSymbol        string   `json:"tokenSymbol"`
	ClosurePeriod      uint64   `json:"closurePeriod"` // seconds
	IndexedBlock       uint64   `json:"indexedBlock"`  // next block the indexer reads
	ChannelsIndexed    int      `json:"channelsIndexed"`
	PeersAnnounced     int      `json:"peersAnnounced"`

	// The original interface's fields, which the API derives from those
	// above and from the peers (the node leaves them zero).

	// Environment is the original's environment id: relayd's network,
	// which names its protocols as the environment did.
	Environment      string   `json:"environment"`
	AnnouncedAddress []string `json:"announcedAddress"`
	ListeningAddress []string `json:"listeningAddress"`
	RelayToken       string   `json:"relayToken"`    // TokenContract
	RelayChannels    string   `json:"relayChannels"` // ChannelsContract
	// ChannelClosurePeriod is ClosurePeriod in minutes, rounded up.
	ChannelClosurePeriod uint64 `json:"channelClosurePeriod"`
	// ConnectivityStatus is Red (no connected peer), Orange (connected
	// peers, none with quality above 0.5), Yellow (one above 0.5) or
	// Green (two or more).
	ConnectivityStatus string `json:"connectivityStatus"`
	// IsEligible is always true: relayd has no network registry.
	IsEligible bool `json:"isEligible"`
}

// connectivity rates the node's view of the network from its peers.
func connectivity(peers []PeerInfo) string {
	connected, good := 0, 0
	for _, p := range peers {
		if !p.Connected {
			continue
		}
		connected++
		if p.Quality > 0.5 {
			good++
		}
	}
	switch {
	case connected == 0:
		return "Red"
	case good == 0:
		return "Orange"
	case good == 1:
		return "Yellow"
	}
	return "Green"
}

// NativeCurrency is the withdraw currency of the chain's own coin.
const NativeCurrency = "NATIVE"

var errNoChain = &Error{http.StatusServiceUnavailable, CodeUnknownFailure,
	"this node runs without a chain: start it with --provider and --channelsContract"}

// chain returns the settlement layer or answers 503 when there is none.
func (s *Server) chain(w http.ResponseWriter) (Chain, bool) {
	if s.cfg.Chain == nil {
		s.fail(w, "chain", errNoChain)
		return nil, false
	}
	return s.cfg.Chain, true
}

// fail answers err: an *Error with its status and code, a sentinel of
// errorTable with its row, anything else 500.
func (s *Server) fail(w http.ResponseWriter, op string, err error) {
	var ae *Error
	if errors.As(err, &ae) {
		writeError(w, ae.Status, ae.Code, ae.Msg)
		return
	}
	if status, code, msg, ok := lookup(err, op); ok {
		writeError(w, status, code, msg)
		return
	}
	s.internalError(w, op, err)
}

// ParseAddress reads a chain address: 0x and 40 hexadecimal digits (the 0x
// may be left out), all in lower case, all in upper case, or in mixed case
// with a valid EIP-55 checksum. A mixed-case address whose checksum is
// wrong is refused with ErrAddressChecksum: it was most likely mistyped,
// and money sent to it is lost.
func ParseAddress(s string) (common.Address, error) {
	if !common.IsHexAddress(s) {
		return common.Address{}, ErrInvalidAddress
	}
	digits := s[len(s)-2*common.AddressLength:]
	if digits != strings.ToLower(digits) && digits != strings.ToUpper(digits) {
		ma, err := common.NewMixedcaseAddressFromString("0x" + digits)
		if err != nil || !ma.ValidChecksum() {
			return common.Address{}, ErrAddressChecksum
		}
	}
	return common.HexToAddress(s), nil
}

// ParseAmount reads a positive decimal integer amount in wei that fits a uint256 (every
// amount the contracts take).
func ParseAmount(v string) (*big.Int, bool) {
	if v == "" || len(v) > 78 || strings.TrimLeft(v, "0123456789") != "" {
		return nil, false
	}
	a, ok := new(big.Int).SetString(v, 10)
	return a, ok && a.Sign() > 0 && a.BitLen() <= 256
}

// amountParam parses a client's amount, answering 400 INVALID_AMOUNT when it
// is not a positive decimal integer.
func amountParam(w http.ResponseWriter, v string) (*big.Int, bool) {
	a, ok := ParseAmount(v)
	if !ok {
		writeError(w, http.StatusBadRequest, CodeInvalidAmount, "amount must be a positive whole number of the smallest unit, as a decimal string")
	}
	return a, ok
}

func (s *Server) getBalances(w http.ResponseWriter, r *http.Request) {
	c, ok := s.chain(w)
	if !ok {
		return
	}
	native, token, err := c.Balances(r.Context())
	if err != nil {
		s.fail(w, "read balances", err)
		return
	}
	writeJSON(w, http.StatusOK, Balances{Native: native.String(), Relay: token.String()})
}

func (s *Server) postWithdraw(w http.ResponseWriter, r *http.Request) {
	var req WithdrawRequest
	if !decodeBody(w, r, &req) {
		return
	}
	c, ok := s.chain(w)
	if !ok {
		return
	}
	amount, ok := amountParam(w, req.Amount)
	if !ok {
		return
	}
	native := strings.EqualFold(req.Currency, NativeCurrency)
	if !native && !strings.EqualFold(req.Currency, c.TokenSymbol()) {
		writeError(w, http.StatusBadRequest, CodeInvalidCurrency, "currency must be "+NativeCurrency+" or "+c.TokenSymbol())
		return
	}
	recipient, err := ParseAddress(req.Recipient)
	if err != nil {
		msg := "recipient " + quote(req.Recipient) + " is not a valid chain address (0x and 40 hexadecimal digits)"
		if errors.Is(err, ErrAddressChecksum) {
			msg = "recipient " + quote(req.Recipient) + " has a wrong EIP-55 checksum (mixed case): check the address"
		}
		writeError(w, http.StatusBadRequest, CodeInvalidAddress, msg)
		return
	}
	tx, err := c.Withdraw(r.Context(), native, amount, recipient)
	if err != nil {
		s.fail(w, "withdraw", err)
		return
	}
	writeJSON(w, http.StatusOK, Receipt{Receipt: tx})
}

func (s *Server) getChannels(w http.ResponseWriter, r *http.Request) {
	c, ok := s.chain(w)
	if !ok {
		return
	}
	values := r.URL.Query()["includingClosed"]
	if len(values) > 1 {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "includingClosed must be given at most once")
		return
	}
	closed := r.URL.Query().Get("includingClosed")
	if closed != "" && closed != "true" && closed != "false" {
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "includingClosed must be true or false")
		return
	}
	in, out := c.Channels(closed == "true")
	if in == nil {
		in = []Channel{}
	}
	if out == nil {
		out = []Channel{}
	}
	writeJSON(w, http.StatusOK, Channels{Incoming: in, Outgoing: out})
}

func (s *Server) postChannel(w http.ResponseWriter, r *http.Request) {
	var req OpenChannelRequest
	if !decodeBody(w, r, &req) {
		return
	}
	c, ok := s.chain(w)
	if !ok {
		return
	}
	id, ok := s.peerParam(w, req.PeerID)
	if !ok {
		return
	}
	amount, ok := amountParam(w, req.Amount)
	if !ok {
		return
	}
	chID, tx, err := c.OpenChannel(r.Context(), id, amount)
	if err != nil {
		s.fail(w, "open channel", err)
		return
	}
	writeJSON(w, http.StatusCreated, OpenChannelResponse{ChannelID: chID, Receipt: tx})
}

// direction parses "incoming"/"outgoing".
func direction(w http.ResponseWriter, v string) (outgoing, ok bool) {
	switch v {
	case "outgoing":
		return true, true
	case "incoming":
		return false, true
	}
	writeError(w, http.StatusBadRequest, CodeInvalidInput, `direction must be "incoming" or "outgoing"`)
	return false, false
}

func (s *Server) getChannel(w http.ResponseWriter, r *http.Request) {
	c, ok := s.chain(w)
	if !ok {
		return
	}
	id, ok := s.peerParam(w, r.PathValue("peerId"))
	if !ok {
		return
	}
	outgoing, ok := direction(w, r.PathValue("direction"))
	if !ok {
		return
	}
	ch, err := c.Channel(id, outgoing)
	if err != nil {
		s.fail(w, "get channel", err)
		return
	}
	writeJSON(w, http.StatusOK, ch)
}

func (s *Server) deleteChannel(w http.ResponseWriter, r *http.Request) {
	s.closeChannel(w, r, r.PathValue("peerId"), r.PathValue("direction"))
}

// deleteChannelSeed is the seed's DELETE /channels: the channel is named by
// the JSON body {peerId, direction}.
func (s *Server) deleteChannelSeed(w http.ResponseWriter, r *http.Request) {
	var req CloseChannelRequest
	if !decodeBody(w, r, &req) {
		return
	}
	s.closeChannel(w, r, req.PeerID, req.Direction)
}

func (s *Server) closeChannel(w http.ResponseWriter, r *http.Request, peerID, dir string) {
	c, ok := s.chain(w)
	if !ok {
		return
	}
	id, ok := s.peerParam(w, peerID)
	if !ok {
		return
	}
	outgoing, ok := direction(w, dir)
	if !ok {
		return
	}
	tx, before, err := c.CloseChannel(r.Context(), id, outgoing)
	if err != nil {
		s.fail(w, "close channel", err)
		return
	}
	writeJSON(w, http.StatusOK, CloseChannelResponse{Receipt: tx, ChannelStatus: before})
}

func (s *Server) getInfo(w http.ResponseWriter, r *http.Request) {
	info, err := s.cfg.Node.Info(r.Context())
	if err != nil {
		s.fail(w, "node info", err)
		return
	}
	info.Environment = info.Network
	info.AnnouncedAddress = append([]string{}, info.AnnouncedAddresses...)
	info.ListeningAddress = append([]string{}, info.ListeningAddresses...)
	info.RelayToken, info.RelayChannels = info.TokenContract, info.ChannelsContract
	info.ChannelClosurePeriod = (info.ClosurePeriod + 59) / 60
	info.ConnectivityStatus = connectivity(s.cfg.Node.Peers())
	info.IsEligible = true
	writeJSON(w, http.StatusOK, info)
}
