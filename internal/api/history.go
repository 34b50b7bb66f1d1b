package api

import (
	"math"
	"net/http"

	"github.com/relayd/relayd/internal/history"
)

// errNoHistory answers the history of a node that keeps none.
var errNoHistory = &Error{http.StatusServiceUnavailable, CodeUnknownFailure, "this node keeps no history"}

// HistoryView is the answer of GET /node/history: one resolution's points, oldest first, as
// columns (every list is as long as Times). A null is a point without that value (a source the
// node has not, such as balances without a chain, or a read that failed).
type HistoryView struct {
	Resolution  string `json:"resolution"`
	StepSeconds int64  `json:"stepSeconds"`
	SpanSeconds int64  `json:"spanSeconds"`
	// Times are the points' starts (TimeFormat); Samples how many samples each point holds.
	Times   []string `json:"times"`
	Samples []int    `json:"samples"`
	// Series are the node-wide series by name (history.Series).
	Series map[string][]*float64 `json:"series"`
	// Peers are the peers with the most traffic over the window (at most history.MaxPeers);
	// Other sums every other peer.
	Peers []HistoryPeer `json:"peers"`
	Other HistoryPeer   `json:"other"`
}

// HistoryPeer is one peer's series in a HistoryView; PeerID is empty for Other.
type HistoryPeer struct {
	PeerID   string     `json:"peerId,omitempty"`
	BytesIn  []*float64 `json:"bytesIn"`
	BytesOut []*float64 `json:"bytesOut"`
	Quality  []*float64 `json:"quality"`
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) {
	if s.cfg.History == nil {
		s.fail(w, "read history", errNoHistory)
		return
	}
	res := history.Hour
	switch values := r.URL.Query()["resolution"]; len(values) {
	case 0:
	case 1:
		res = history.Resolution(values[0])
	default:
		writeError(w, http.StatusBadRequest, CodeInvalidInput, "resolution must be given at most once")
		return
	}
	v, err := s.cfg.History.View(res)
	if err != nil {
		s.fail(w, "read history", err)
		return
	}
	writeJSON(w, http.StatusOK, historyView(v))
}

// historyView is v as JSON.
func historyView(v history.View) HistoryView {
	out := HistoryView{Resolution: string(v.Resolution), StepSeconds: int64(v.Step.Seconds()), SpanSeconds: int64(v.Span.Seconds()),
		Times: make([]string, len(v.Times)), Samples: append([]int{}, v.Samples...), Series: map[string][]*float64{},
		Peers: make([]HistoryPeer, len(v.Peers)), Other: historyPeer(v.Other)}
	for i, t := range v.Times {
		out.Times[i] = t.UTC().Format(TimeFormat)
	}
	for _, s := range history.AllSeries() {
		out.Series[s.String()] = nullable(v.Series[s], len(v.Times))
	}
	for i, p := range v.Peers {
		out.Peers[i] = historyPeer(p)
		out.Peers[i].PeerID = p.ID.String()
	}
	return out
}

func historyPeer(p history.PeerSeries) HistoryPeer {
	n := len(p.In)
	return HistoryPeer{BytesIn: nullable(p.In, n), BytesOut: nullable(p.Out, n), Quality: nullable(p.Quality, n)}
}

// nullable is vs with NaN (and the infinities, which JSON cannot hold) as null, n long.
func nullable(vs []float64, n int) []*float64 {
	out := make([]*float64, n)
	for i := range out {
		if i < len(vs) && !math.IsNaN(vs[i]) && !math.IsInf(vs[i], 0) {
			out[i] = &vs[i]
		}
	}
	return out
}
