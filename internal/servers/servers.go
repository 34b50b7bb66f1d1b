// Package servers owns the life of a node's HTTP servers: it binds their listeners, serves them
// until their context ends, shuts them down gracefully within a deadline, and closes the
// listeners of a node that failed to start. What each server serves is the caller's. It imports
// no relayd package.
package servers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"golang.org/x/sync/errgroup"
)

// ErrListen means a listener could not be bound (the address is taken, or not this host's).
var ErrListen = errors.New("cannot listen")

// Kind is how a server ends.
type Kind int

const (
	// Graceful servers finish their requests at shutdown, until its deadline.
	Graceful Kind = iota
	// Hijacking servers hand connections over (WebSockets), which a shutdown cannot end: their
	// requests' contexts derive from Serve's context and end with it.
	Hijacking
	// Closing servers close at once at shutdown (a running profile would hold one up).
	Closing
)

// Set is a node's servers by name, in the order their listeners were bound. The zero value is
// empty and ready. It is not safe for concurrent use before Serve.
type Set struct {
	list []*server
}

type server struct {
	name string
	ln   net.Listener
	srv  *http.Server
	kind Kind
}

// Listen binds name's TCP listener on addr (host:port; port 0 picks one). Its error reads
// "cannot listen on host:port: bind: <why>", without net's "listen tcp host:port" before it.
func (s *Set) Listen(name, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var se interface{ Unwrap() error }
		if errors.As(err, &se) {
			err = se.Unwrap()
		}
		return nil, fmt.Errorf("%w on %s: %w", ErrListen, addr, err)
	}
	s.list = append(s.list, &server{name: name, ln: ln})
	return ln, nil
}

// Handle sets what name's listener serves; wrap, when not nil, wraps the listener first.
func (s *Set) Handle(name string, srv *http.Server, kind Kind, wrap func(net.Listener) net.Listener) {
	if sv := s.find(name); sv != nil {
		sv.srv, sv.kind = srv, kind
		if wrap != nil {
			sv.ln = wrap(sv.ln)
		}
	}
}

// Addr is name's bound address, nil when it has none.
func (s *Set) Addr(name string) net.Addr {
	if sv := s.find(name); sv != nil {
		return sv.ln.Addr()
	}
	return nil
}

func (s *Set) find(name string) *server {
	for _, sv := range s.list {
		if sv.name == name {
			return sv
		}
	}
	return nil
}

// Serve runs every server that has a handler in g; a server that fails ends g with
// "<name> server: <err>".
func (s *Set) Serve(ctx context.Context, g *errgroup.Group) {
	for _, sv := range s.list {
		if sv.srv == nil {
			continue
		}
		if sv.kind == Hijacking {
			sv.srv.BaseContext = func(net.Listener) context.Context { return ctx }
		}
		g.Go(func() error {
			if err := sv.srv.Serve(sv.ln); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("%s server: %w", sv.name, err)
			}
			return nil
		})
	}
}

// Shutdown stops the servers: graceful ones finish their requests until ctx ends, then the
// connections still open (a client that never sent a request, a request that will not finish)
// are closed, which is what a shutdown must do anyway; the others close at once.
func (s *Set) Shutdown(ctx context.Context, log *slog.Logger) {
	for _, sv := range s.list {
		switch {
		case sv.srv == nil:
		case sv.kind == Closing:
			sv.srv.Close()
		default:
			if err := sv.srv.Shutdown(ctx); err != nil {
				log.Warn("closing connections that outlived the shutdown timeout", "server", sv.name, "err", err)
				sv.srv.Close()
			}
		}
	}
}

// Close closes the listeners (a node that failed to start, or after Shutdown).
func (s *Set) Close() {
	for _, sv := range s.list {
		sv.ln.Close()
	}
}
