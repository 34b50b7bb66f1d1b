package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Tickets is what the ticket operations need from the node.
type Tickets interface {
	// Tickets lists the acknowledged, unredeemed tickets of the incoming
	// channels, all of them or those from one peer.
	Tickets(from *peer.ID) ([]Ticket, error)
	// TicketStatistics counts tickets by state.
	TicketStatistics() (TicketStatistics, error)
	// RedeemTickets redeems the tickets on chain, all of them or those from
	// one peer; it returns once every redemption is mined. A failure after
	// the redemption began is a *RedeemError, so the client learns what was
	// redeemed before it.
	RedeemTickets(ctx context.Context, from *peer.ID) error
}

// RedeemError is a redemption that stopped part way, e.g. when the chain
// provider failed after some redemptions were mined. Cause is the failure
// as for any operation (its Msg already says how many tickets were
// redeemed and how many remain); Redeemed and Remaining count tickets.
type RedeemError struct {
	Cause     Error
	Redeemed  int
	Remaining int
}

func (e *RedeemError) Error() string { return e.Cause.Msg }

// Unwrap returns the cause, so a RedeemError is answered like it where the
// counts are not rendered.
func (e *RedeemError) Unwrap() error { return &e.Cause }

// redeemFailure is the error envelope of a redemption that stopped part
// way, with the counts.
type redeemFailure struct {
	Status    string `json:"status"`
	Error     string `json:"error"`
	Redeemed  int    `json:"redeemed"`
	Remaining int    `json:"remaining"`
}

// Ticket is one acknowledged ticket as the API shows it.
type Ticket struct {
	ChannelID    string `json:"channelId"`
	Counterparty string `json:"counterparty"` // PeerId (or chain address) of the channel's source
	Amount       string `json:"amount"`
	Index        string `json:"index"`
	ChannelEpoch string `json:"channelEpoch"`
	// Epoch is the original interface's ticket epoch. relayd has one
	// epoch per channel opening, so it repeats ChannelEpoch (the API sets
	// it when the node leaves it empty).
	Epoch     string `json:"epoch"`
	WinProb   string `json:"winProb"` // the probability, e.g. "0.01" (tickets.FormatWinProb)
	Challenge string `json:"challenge"`
	Signature string `json:"signature"`
}

// TicketStatistics is the answer of GET /tickets/statistics; values are wei
// strings.
type TicketStatistics struct {
	Pending         uint64  `json:"pending"`
	Unredeemed      uint64  `json:"unredeemed"`
	UnredeemedValue string  `json:"unredeemedValue"`
	Redeemed        uint64  `json:"redeemed"`
	RedeemedValue   string  `json:"redeemedValue"`
	WinningTickets  uint64  `json:"winningTickets"`
	WinningValue    string  `json:"winningValue"`
	LosingTickets   uint64  `json:"losingTickets"`
	LosingValue     string  `json:"losingValue"`
	WinProportion   float64 `json:"winProportion"`
	Neglected       uint64  `json:"neglected"`
	Rejected        uint64  `json:"rejected"`
	RejectedValue   string  `json:"rejectedValue"`
}

// tickets returns the ticket side or answers 503 on a node without chain.
func (s *Server) tickets(w http.ResponseWriter) (Tickets, bool) {
	if s.cfg.Tickets == nil {
		s.fail(w, "tickets", errNoChain)
		return nil, false
	}
	return s.cfg.Tickets, true
}

func (s *Server) listTickets(w http.ResponseWriter, from *peer.ID, notFound bool) {
	t, ok := s.tickets(w)
	if !ok {
		return
	}
	list, err := t.Tickets(from)
	if err != nil {
		s.fail(w, "list tickets", err)
		return
	}
	if len(list) == 0 && notFound {
		writeError(w, http.StatusNotFound, CodeTicketsNotFound, "no unredeemed tickets in this channel")
		return
	}
	if list == nil {
		list = []Ticket{}
	}
	for i := range list {
		if list[i].Epoch == "" {
			list[i].Epoch = list[i].ChannelEpoch
		}
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getTickets(w http.ResponseWriter, r *http.Request) { s.listTickets(w, nil, false) }

func (s *Server) getChannelTickets(w http.ResponseWriter, r *http.Request) {
	id, ok := s.peerParam(w, r.PathValue("peerId"))
	if !ok {
		return
	}
	s.listTickets(w, &id, true)
}

func (s *Server) getTicketStatistics(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tickets(w)
	if !ok {
		return
	}
	st, err := t.TicketStatistics()
	if err != nil {
		s.fail(w, "ticket statistics", err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) redeem(w http.ResponseWriter, r *http.Request, from *peer.ID) {
	t, ok := s.tickets(w)
	if !ok {
		return
	}
	if from != nil {
		list, err := t.Tickets(from)
		if err != nil {
			s.fail(w, "redeem tickets", err)
			return
		}
		if len(list) == 0 {
			writeError(w, http.StatusNotFound, CodeTicketsNotFound, "no unredeemed tickets in this channel")
			return
		}
	}
	if err := t.RedeemTickets(r.Context(), from); err != nil {
		var re *RedeemError
		if !errors.As(err, &re) {
			s.fail(w, "redeem tickets", err)
			return
		}
		if re.Cause.Status == http.StatusInternalServerError { // the node's own fault
			s.log.Error("operation failed", "op", "redeem tickets", "err", err)
		}
		writeJSON(w, re.Cause.Status, redeemFailure{Status: re.Cause.Code, Error: re.Cause.Msg, Redeemed: re.Redeemed, Remaining: re.Remaining})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) postRedeem(w http.ResponseWriter, r *http.Request) { s.redeem(w, r, nil) }

func (s *Server) postChannelRedeem(w http.ResponseWriter, r *http.Request) {
	id, ok := s.peerParam(w, r.PathValue("peerId"))
	if !ok {
		return
	}
	s.redeem(w, r, &id)
}
