// Package profile serves Go's runtime profiles (net/http/pprof) for --profileAddress: go tool
// pprof http://<profileAddress>/debug/pprof/profile. It imports no other relayd package.
package profile

import (
	"net/http"
	"net/http/pprof"
)

// Handler serves /debug/pprof/ and its profiles, without a token: bind it to loopback only.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
