package api

import (
	"net/http"

	"github.com/relayd/relayd/internal/alerts"
)

// errNoAlerts answers the alerts of a node that evaluates none.
var errNoAlerts = &Error{http.StatusServiceUnavailable, CodeUnknownFailure, "this node evaluates no alerts"}

// AlertsView is the answer of GET /node/alerts: the raised alerts, critical first.
type AlertsView struct {
	Alerts []AlertView `json:"alerts"`
}

// AlertView is one raised alert (alerts.Alert).
type AlertView struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	// Since is when its condition began to hold (TimeFormat).
	Since    string   `json:"since"`
	Detail   string   `json:"detail"`
	Subjects []string `json:"subjects"`
}

func (s *Server) getAlerts(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Alerts == nil {
		s.fail(w, "read alerts", errNoAlerts)
		return
	}
	out := AlertsView{Alerts: []AlertView{}}
	for _, a := range s.cfg.Alerts.Alerts() {
		out.Alerts = append(out.Alerts, alertView(a))
	}
	writeJSON(w, http.StatusOK, out)
}

func alertView(a alerts.Alert) AlertView {
	return AlertView{ID: string(a.ID), Severity: string(a.Severity), Since: a.Since.UTC().Format(TimeFormat), Detail: a.Detail,
		Subjects: append([]string{}, a.Subjects...)}
}
