package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

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

// ticketView is an acknowledged ticket as the API shows it.
func (s *Server) ticketView(a ledger.AckedTicket) Ticket {
	tk := a.Ticket
	epoch := strconv.FormatUint(uint64(tk.Epoch), 10)
	return Ticket{
		ChannelID:    hexBytes(tk.ChannelID[:]),
		Counterparty: s.cfg.Peers.Name(a.Source),
		Amount:       tk.Amount.Dec(),
		Index:        strconv.FormatUint(tk.Index, 10),
		ChannelEpoch: epoch,
		Epoch:        epoch,
		WinProb:      tickets.FormatWinProb(tk.WinProb),
		Challenge:    hexBytes(tk.Challenge[:]),
		Signature:    hexBytes(tk.Signature[:]),
	}
}

// listTickets answers with the unredeemed tickets (from one channel's source when from is set),
// the first ?limit= of them when given, and their number in X-Total-Count.
func (s *Server) listTickets(w http.ResponseWriter, r *http.Request, from *common.Address, notFound bool) {
	limit := -1
	switch n, given, ok := queryNumber(w, r, "limit", 1, math.MaxInt64, "limit must be a whole number of at least 1"); {
	case !ok:
		return
	case given:
		limit = int(n)
	}
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
	w.Header().Set("X-Total-Count", strconv.Itoa(len(list)))
	if limit >= 0 && limit < len(list) {
		list = list[:limit]
	}
	out := make([]Ticket, 0, len(list))
	for _, a := range list {
		out = append(out, s.ticketView(a))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getTickets(w http.ResponseWriter, r *http.Request) { s.listTickets(w, r, nil, false) }

func (s *Server) getChannelTickets(w http.ResponseWriter, r *http.Request) {
	_, from, ok := s.peerAccount(w, r.PathValue("peerId"))
	if !ok {
		return
	}
	s.listTickets(w, r, &from, true)
}

func (s *Server) getTicketStatistics(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tickets(w)
	if !ok {
		return
	}
	st, err := t.Statistics()
	if err != nil {
		s.fail(w, "ticket statistics", err)
		return
	}
	writeJSON(w, http.StatusOK, TicketStatistics{
		Pending: st.Pending, Unredeemed: st.Unredeemed, UnredeemedValue: st.UnredeemedValue.Dec(),
		Redeemed: st.Redeemed, RedeemedValue: st.RedeemedValue.Dec(),
		WinningTickets: st.Winning, WinningValue: st.WinningValue.Dec(),
		LosingTickets: st.LosingTickets, LosingValue: st.LosingValue.Dec(),
		WinProportion: st.WinProportion, Neglected: st.Neglected, Rejected: st.Rejected, RejectedValue: st.RejectedValue.Dec(),
	})
}

func (s *Server) redeem(w http.ResponseWriter, r *http.Request, from *common.Address) {
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
	_, err := t.RedeemTickets(r.Context(), from, "requested")
	var re *ledger.RedeemError
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &re):
		s.redeemFailed(w, re)
	default:
		s.fail(w, "redeem tickets", err)
	}
}

// redeemFailed answers a redemption that stopped part way: how many tickets it redeemed, how many
// remain unredeemed, and why, with the status and code of the cause. Transactions may have been
// mined before the failure, so it never says that nothing was sent.
func (s *Server) redeemFailed(w http.ResponseWriter, re *ledger.RedeemError) {
	status, code, msg := s.classify(re.Err, "redeem tickets")
	if status == http.StatusInternalServerError { // the node's own fault
		s.log.Error("operation failed", "op", "redeem tickets", "err", re)
	}
	unpaid := ""
	if n := re.Report.Losing + re.Report.Neglected; n > 0 {
		unpaid = fmt.Sprintf(", %d settled unpaid (losing or void)", n)
	}
	symbol := ""
	if s.cfg.Chain != nil {
		symbol = " " + s.cfg.Chain.TokenSymbol()
	}
	msg = fmt.Sprintf("redeemed %d of %d tickets (%s%s)%s; %d remain: %s", re.Report.Redeemed, re.Total(),
		token.FromUint256(&re.Report.Value), symbol, unpaid, re.Remaining, strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; "))
	writeJSON(w, status, redeemFailure{Status: code, Error: msg, Redeemed: re.Report.Redeemed, Remaining: re.Remaining})
}

func (s *Server) postRedeem(w http.ResponseWriter, r *http.Request) { s.redeem(w, r, nil) }

func (s *Server) postChannelRedeem(w http.ResponseWriter, r *http.Request) {
	_, from, ok := s.peerAccount(w, r.PathValue("peerId"))
	if !ok {
		return
	}
	s.redeem(w, r, &from)
}

// queryNumber reads the query parameter name as a whole number from lo to hi, and whether it was
// given. It answers 400 INVALID_INPUT when the parameter is given more than once ("<name> must be
// given at most once") or is not such a number (invalid).
func queryNumber(w http.ResponseWriter, r *http.Request, name string, lo, hi int64, invalid string) (v int64, given, ok bool) {
	switch values := r.URL.Query()[name]; {
	case len(values) > 1:
		writeError(w, http.StatusBadRequest, CodeInvalidInput, name+" must be given at most once")
		return 0, false, false
	case len(values) == 1:
		n, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil || n < lo || n > hi {
			writeError(w, http.StatusBadRequest, CodeInvalidInput, invalid)
			return 0, false, false
		}
		return n, true, true
	}
	return 0, false, true
}
