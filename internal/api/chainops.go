package api

import (
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/token"
)

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
	// Inbox says the node runs its courier: it keeps an inbox (GET /messages) and sends long,
	// reliable and answerable messages; without it those operations answer 503.
	Inbox bool `json:"inbox"`
	// Sessions says the node runs its session gateway (/sessions); without it those operations
	// answer 503.
	Sessions bool `json:"sessions"`
	// Topology is the network's layered topology and the node's place in it; nil (absent) on free
	// routes.
	Topology *TopologyInfo `json:"topology,omitempty"`

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

// fail answers err: an *Error with its status and code, a sentinel of errorTable with its row,
// anything else 500 (logged).
func (s *Server) fail(w http.ResponseWriter, op string, err error) {
	status, code, msg := s.classify(err, op)
	if status == http.StatusInternalServerError {
		s.log.Error("operation failed", "op", op, "err", err)
	}
	writeError(w, status, code, msg)
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

// amountParam parses a client's amount, answering 400 INVALID_AMOUNT when it
// is not a positive decimal integer.
func amountParam(w http.ResponseWriter, v string) (*big.Int, bool) {
	a, err := token.ParseUnits(v)
	if err != nil || a.IsZero() {
		writeError(w, http.StatusBadRequest, CodeInvalidAmount, "amount must be a positive whole number of the smallest unit, as a decimal string")
		return nil, false
	}
	return a.Big(), true
}

func (s *Server) getBalances(w http.ResponseWriter, r *http.Request) {
	c, ok := s.chain(w)
	if !ok {
		return
	}
	native, tokenBalance, err := c.Balances(r.Context())
	if err != nil {
		s.fail(w, "read balances", err)
		return
	}
	writeJSON(w, http.StatusOK, Balances{Native: native.String(), Relay: tokenBalance.String()})
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
	writeJSON(w, http.StatusOK, Receipt{Receipt: tx.Hex()})
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
	in, out := c.ListChannels(closed == "true")
	writeJSON(w, http.StatusOK, Channels{Incoming: s.channelViews(in), Outgoing: s.channelViews(out)})
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
	_, other, ok := s.peerAccount(w, req.PeerID)
	if !ok {
		return
	}
	amount, ok := amountParam(w, req.Amount)
	if !ok {
		return
	}
	chID, tx, err := c.OpenChannel(r.Context(), other, amount)
	if err != nil {
		s.fail(w, "open channel", err)
		return
	}
	writeJSON(w, http.StatusCreated, OpenChannelResponse{ChannelID: hexBytes(chID[:]), Receipt: tx.Hex()})
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
	id, other, ok := s.peerAccount(w, r.PathValue("peerId"))
	if !ok {
		return
	}
	outgoing, ok := direction(w, r.PathValue("direction"))
	if !ok {
		return
	}
	ch, err := c.Channel(other, outgoing)
	if err != nil {
		s.fail(w, "get channel", noChannel(err, id))
		return
	}
	writeJSON(w, http.StatusOK, s.channelView(ch))
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
	id, other, ok := s.peerAccount(w, peerID)
	if !ok {
		return
	}
	outgoing, ok := direction(w, dir)
	if !ok {
		return
	}
	tx, before, err := c.CloseChannel(r.Context(), other, outgoing)
	if err != nil {
		s.fail(w, "close channel", noChannel(err, id))
		return
	}
	resp := CloseChannelResponse{ChannelStatus: before.String()}
	if tx != (common.Hash{}) {
		resp.Receipt = tx.Hex()
	}
	writeJSON(w, http.StatusOK, resp)
}

// noChannel names the peer in a ledger.ErrChannelNotFound.
func noChannel(err error, id peer.ID) error {
	if errors.Is(err, ledger.ErrChannelNotFound) {
		return fmt.Errorf("%w: no channel with %s", err, id)
	}
	return err
}

// peerAccount parses a client's PeerId and returns it with its chain address, answering 400
// INVALID_PEERID when it is not a secp256k1 PeerId.
func (s *Server) peerAccount(w http.ResponseWriter, v string) (peer.ID, common.Address, bool) {
	id, ok := s.peerParam(w, v)
	if !ok {
		return "", common.Address{}, false
	}
	addr, err := s.cfg.Peers.AddressOf(id)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidPeerID, "peerId "+quote(v)+" is not a valid secp256k1 PeerId")
		return "", common.Address{}, false
	}
	return id, addr, true
}

// channelViews are channels as the API shows them (never nil).
func (s *Server) channelViews(list []channels.Channel) []Channel {
	out := make([]Channel, 0, len(list))
	for _, c := range list {
		out = append(out, s.channelView(c))
	}
	return out
}

// channelView is a channel of this node as the API shows it, its other end named by PeerId.
func (s *Server) channelView(ch channels.Channel) Channel {
	typ, other := "outgoing", ch.Destination
	if ch.Destination == s.cfg.Self.Address() {
		typ, other = "incoming", ch.Source
	}
	v := Channel{Type: typ, ChannelID: hexBytes(ch.ID[:]), PeerID: s.cfg.Peers.Name(other),
		Status: ch.Status.String(), Balance: ch.Balance.String()}
	if ch.Status == channels.PendingToClose {
		v.ClosureTime = ch.ClosureTime.UTC().Format(TimeFormat)
	}
	return v
}

func (s *Server) getInfo(w http.ResponseWriter, r *http.Request) {
	info := Info{Network: s.cfg.Network, ListeningAddresses: []string{}, AnnouncedAddresses: []string{}, Inbox: s.cfg.Mail != nil,
		Sessions: s.cfg.Sessions != nil}
	for _, m := range s.cfg.Transport.Addrs() {
		info.ListeningAddresses = append(info.ListeningAddresses, m.String())
	}
	if c := s.cfg.ChainInfo; c != nil {
		info.ChainID = c.ChainID()
		info.ChannelsContract = c.ChannelsAddress().Hex()
		info.TokenContract = c.TokenAddress().Hex()
		info.TokenSymbol = c.TokenSymbol()
		info.ClosurePeriod = uint64(c.ClosurePeriod().Seconds())
	}
	if s.cfg.Indexer != nil {
		info.IndexedBlock = s.cfg.Indexer.Next()
	}
	if s.cfg.Graph != nil {
		snap := s.cfg.Graph.Snapshot()
		info.ChannelsIndexed = len(snap.Channels())
		info.PeersAnnounced = len(snap.Peers())
		if ann, ok := snap.Announced(s.cfg.Self.Address()); ok {
			info.AnnouncedAddresses = append(info.AnnouncedAddresses, ann.Multiaddrs...)
		}
	}
	info.Topology = topologyInfo(s.cfg.Layers)
	info.Environment = info.Network
	info.AnnouncedAddress = append([]string{}, info.AnnouncedAddresses...)
	info.ListeningAddress = append([]string{}, info.ListeningAddresses...)
	info.RelayToken, info.RelayChannels = info.TokenContract, info.ChannelsContract
	info.ChannelClosurePeriod = (info.ClosurePeriod + 59) / 60
	info.ConnectivityStatus = connectivity(s.peers())
	info.IsEligible = true
	writeJSON(w, http.StatusOK, info)
}

// TopologyInfo is Info's topology: the network's layers and the node's place in them.
type TopologyInfo struct {
	Layers         int     `json:"layers"`
	Width          int     `json:"width"`
	EpochBlocks    uint64  `json:"epochBlocks"`
	Epoch          *uint64 `json:"epoch"`          // nil until the first draw
	NextEpochBlock *uint64 `json:"nextEpochBlock"` // nil until the first draw
	Relayers       int     `json:"relayers"`
	Layer          *int    `json:"layer"` // 1 the first; nil: the node relays in no layer
	Grace          bool    `json:"grace"`
}

// topologyInfo describes l's status, nil on free routes (no l, or l says so).
func topologyInfo(l Layers) *TopologyInfo {
	if l == nil {
		return nil
	}
	st, ok := l.Status()
	if !ok {
		return nil
	}
	t := &TopologyInfo{Layers: st.Layers, Width: st.Width, EpochBlocks: st.EpochBlocks, Relayers: st.Relayers, Grace: st.Grace}
	if st.Drawn {
		t.Epoch, t.NextEpochBlock = &st.Epoch, &st.NextEpochBlock
	}
	if st.Layer > 0 {
		t.Layer = &st.Layer
	}
	return t
}
