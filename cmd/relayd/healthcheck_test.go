package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/health"
)

func TestHealthcheck(t *testing.T) {
	ready := api.Readiness{Ready: true, NotReady: []string{}, Checks: []health.Check{{Name: "chain", Ready: true}}}
	unready := api.Readiness{NotReady: []string{"indexer"}, Checks: []health.Check{
		{Name: "chain", Ready: true}, {Name: "indexer", Detail: "412 blocks behind"}}}
	tests := []struct {
		name     string
		args     []string
		status   int
		body     any
		want     int
		wantOut  string
		wantPath string
	}{
		{"ready", nil, http.StatusOK, ready, exitOK, "ready", api.ReadyPath},
		{"not ready", nil, http.StatusServiceUnavailable, unready, exitFailure, "not ready: indexer (412 blocks behind)", api.ReadyPath},
		{"200 that says not ready", nil, http.StatusOK, unready, exitFailure, "not ready: indexer", api.ReadyPath},
		{"not a report", nil, http.StatusOK, "<html>", exitFailure, "not a readiness report", api.ReadyPath},
		{"live", []string{"--live"}, http.StatusOK, map[string]string{"status": "ok"}, exitOK, "live", api.HealthPath},
		{"live fails", []string{"--live"}, http.StatusInternalServerError, nil, exitFailure, "unhealthy", api.HealthPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var path string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				path = r.URL.Path
				w.WriteHeader(tt.status)
				if s, ok := tt.body.(string); ok {
					w.Write([]byte(s))
				} else if tt.body != nil {
					json.NewEncoder(w).Encode(tt.body)
				}
			}))
			defer srv.Close()
			var stdout, stderr bytes.Buffer
			args := append([]string{"--url", srv.URL + "/"}, tt.args...)
			got := healthcheck(t.Context(), args, noEnv, &stdout, &stderr)
			if got != tt.want || !strings.Contains(stdout.String(), tt.wantOut) {
				t.Errorf("exit %d, stdout %q; want %d and %q (stderr %q)", got, stdout.String(), tt.want, tt.wantOut, stderr.String())
			}
			if path != tt.wantPath {
				t.Errorf("asked %q, want %q", path, tt.wantPath)
			}
		})
	}
}

func TestHealthcheckNoNode(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	env := func(k string) string {
		if k == "RELAYD_API_PORT" {
			return itoa(port)
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	if got := healthcheck(t.Context(), nil, env, &stdout, &stderr); got != exitFailure || !strings.Contains(stdout.String(), "unhealthy") {
		t.Errorf("exit %d, stdout %q; want 1 and unhealthy", got, stdout.String())
	}
}

func TestHealthcheckUsage(t *testing.T) {
	for _, args := range [][]string{{"--frobnicate"}, {"extra"}, {"--url", "://bad"}} {
		var stdout, stderr bytes.Buffer
		if got := healthcheck(t.Context(), args, noEnv, &stdout, &stderr); got != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", args, got, exitUsage, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if got := healthcheck(t.Context(), []string{"-h"}, noEnv, &stdout, &stderr); got != exitOK || !strings.Contains(stderr.String(), "usage: relayd healthcheck") {
		t.Errorf("-h: exit %d, stderr %q", got, stderr.String())
	}
}

func TestHealthcheckAPIURL(t *testing.T) {
	tests := []struct{ host, port, want string }{
		{"", "", "http://127.0.0.1:3001"},
		{"0.0.0.0", "4001", "http://127.0.0.1:4001"},
		{"::", "", "http://127.0.0.1:3001"},
		{"10.77.0.2", "", "http://10.77.0.2:3001"},
		{"::1", "3001", "http://[::1]:3001"},
		{"[::1]", "3001", "http://[::1]:3001"},
	}
	for _, tt := range tests {
		env := map[string]string{"RELAYD_API_HOST": tt.host, "RELAYD_API_PORT": tt.port}
		if got := apiURL(func(k string) string { return env[k] }); got != tt.want {
			t.Errorf("host %q port %q: %s, want %s", tt.host, tt.port, got, tt.want)
		}
	}
}

func noEnv(string) string { return "" }
