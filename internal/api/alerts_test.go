package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/alerts"
	"github.com/relayd/relayd/internal/health"
	"github.com/relayd/relayd/internal/settings"
)

// fakeAlerts raises one warning and one critical alert.
type fakeAlerts struct{}

func (fakeAlerts) Alerts() []alerts.Alert {
	since := time.Date(2026, 11, 27, 10, 2, 15, 0, time.UTC)
	return []alerts.Alert{
		{ID: alerts.ProviderDown, Severity: alerts.Critical, Since: since, Detail: "the chain provider does not answer (chain calls fail)"},
		{ID: alerts.ChannelDepleted, Severity: alerts.Warning, Since: since, Detail: "1 open outgoing channels can pay less than 1 tokens (alertChannelBalance)",
			Subjects: []string{"0xa7a4ce2a84126fB62F67c2B731ab88bdA20eEF11"}},
	}
}

// noAlerts raises nothing.
type noAlerts struct{}

func (noAlerts) Alerts() []alerts.Alert { return nil }

// TestAlertsShape: GET /node/alerts answers the raised alerts in order, every field present;
// none is an empty list, not null.
func TestAlertsShape(t *testing.T) {
	srv, _ := newTestServer(t, false)
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/alerts", auth)
	var got AlertsView
	if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || len(got.Alerts) != 2 {
		t.Fatalf("%d %s", status, body)
	}
	a := got.Alerts[0]
	if a.ID != "providerDown" || a.Severity != "critical" || a.Since != "2026-11-27T10:02:15.000Z" || a.Subjects == nil {
		t.Fatalf("%s", body)
	}
	if b := got.Alerts[1]; b.ID != "channelDepleted" || len(b.Subjects) != 1 {
		t.Fatalf("%s", body)
	}
	cfg := newFakeNode(t).config(false)
	cfg.Alerts = noAlerts{}
	srv = serveConfig(t, cfg)
	if status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/alerts", auth); status != http.StatusOK || body != "{\"alerts\":[]}\n" {
		t.Fatalf("no alerts: %d %q", status, body)
	}
}

// TestReadyzWithCriticalAlert: /readyz answers 503 naming "alerts" while a critical alert holds
// (the chain provider down), and 200 before it is raised and once it cleared.
func TestReadyzWithCriticalAlert(t *testing.T) {
	var down atomic.Bool
	vals := settings.Defaults()
	vals.AlertHoldSeconds = 0
	a, err := alerts.New(alerts.Config{Settings: func() settings.Values { return vals }, Sources: alerts.Sources{
		Head: func(context.Context) (uint64, error) {
			if down.Load() {
				return 0, errors.New("connection refused")
			}
			return 1, nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := newFakeNode(t).config(false)
	cfg.Health = []health.Checker{health.Static{{Name: "chain", Ready: true}}, a}
	srv := serveConfig(t, cfg)
	ready := func() (int, Readiness) {
		status, _, body := do(t, http.MethodGet, srv.URL+ReadyPath, nil)
		var got Readiness
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("%d %s", status, body)
		}
		return status, got
	}
	a.Evaluate(t.Context())
	if status, got := ready(); status != http.StatusOK || len(got.Checks) != 2 || got.Checks[1].Name != "alerts" {
		t.Fatalf("before: %d %+v", status, got)
	}
	down.Store(true)
	a.Evaluate(t.Context())
	if status, got := ready(); status != http.StatusServiceUnavailable || len(got.NotReady) != 1 || got.NotReady[0] != "alerts" {
		t.Fatalf("with the provider down: %d %+v", status, got)
	}
	down.Store(false)
	a.Evaluate(t.Context())
	if status, got := ready(); status != http.StatusOK {
		t.Fatalf("after it cleared: %d %+v", status, got)
	}
}
