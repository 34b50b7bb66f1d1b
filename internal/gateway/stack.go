package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"

	"github.com/libp2p/go-libp2p/core/peer"
	"golang.org/x/sync/errgroup"

	"github.com/relayd/relayd/internal/carrier"
	"github.com/relayd/relayd/internal/exit"
	"github.com/relayd/relayd/internal/session"
	"github.com/relayd/relayd/internal/socks5"
)

// StackConfig configures a node's sessions (NewStack). Network, Self and Policy are required.
type StackConfig struct {
	// Network carries the frames (the router).
	Network carrier.Network
	Self    peer.ID
	// Policy is the exit's: what the node connects to for the sessions that reach it.
	Policy *exit.Policy
	// SOCKS5Listen, when not empty, is where the SOCKS5 entry listens; its CONNECTs go to the
	// exit SOCKS5Exit names at the time. SetSOCKS5 changes both while the stack runs.
	SOCKS5Listen string
	SOCKS5Exit   func() (peer.ID, error)
	// SOCKS5Known holds the targets the SOCKS5 entry reached lately through each exit, whose
	// CONNECTs it answers before the exit does, sending the client's first bytes with the SYN
	// (SOCKSDialer.Known); nil: NewKnownTargets(DefaultKnownTargets, DefaultKnownFor, nil).
	// NewKnownTargets(0, …) makes every CONNECT wait for the exit.
	SOCKS5Known *KnownTargets
	// Session tunes the mux and its sessions (timeouts, Linger, limits); the zero value takes
	// session's defaults. Its AcceptLink is the carrier's whatever it says. Tests shorten it.
	Session session.Config
	// Reason names why the network failed a send, for the carrier's counters (carrier.Config.Reason:
	// "balance" for a channel that ran dry, …); nil takes the carrier's default.
	Reason func(error) string
	Logger *slog.Logger
}

// Stack is a node's sessions: the carrier over the router, the mux, the operator's sessions
// (Entry), the exit and the SOCKS5 entry.
type Stack struct {
	Carrier *carrier.Carrier
	Mux     *session.Mux
	Entry   *Entry
	// SOCKS is the SOCKS5 entry NewStack bound, nil without SOCKS5Listen. SetSOCKS5 replaces
	// it: SOCKSAddr says where the entry listens now.
	SOCKS  *socks5.Server
	policy *exit.Policy
	log    *slog.Logger

	socksMu sync.Mutex
	// socks is the SOCKS5 entry now (nil: none) on socksListen; socksExit names its exit.
	socks       *socks5.Server
	socksListen string
	socksExit   func() (peer.ID, error)
	socksKnown  *KnownTargets
	// runCtx is Run's context while it runs (nil before): a SOCKS5 entry set then runs in it,
	// in socksRuns.
	runCtx    context.Context
	socksRuns sync.WaitGroup
}

// NewStack builds the sessions of a node and binds the SOCKS5 entry's port; Close releases it
// when the stack is not run.
func NewStack(cfg StackConfig) (*Stack, error) {
	if cfg.Policy == nil {
		return nil, errors.New("gateway: StackConfig needs Policy")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Stack{policy: cfg.Policy, log: cfg.Logger, socksKnown: cfg.SOCKS5Known}
	if s.socksKnown == nil {
		s.socksKnown = NewKnownTargets(DefaultKnownTargets, DefaultKnownFor, nil)
	}
	var err error
	if s.Carrier, err = carrier.New(carrier.Config{Network: cfg.Network, Reason: cfg.Reason, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	scfg := cfg.Session
	scfg.AcceptLink = s.Carrier.AcceptLink
	if s.Mux, err = session.NewMux(scfg); err != nil {
		return nil, err
	}
	s.Carrier.Attach(s.Mux)
	if s.Entry, err = NewEntry(EntryConfig{Self: cfg.Self, Dial: s.Dial, Link: s.Carrier.Link, Logger: cfg.Logger}); err != nil {
		return nil, err
	}
	if err := s.SetSOCKS5(cfg.SOCKS5Listen, cfg.SOCKS5Exit); err != nil {
		return nil, err
	}
	s.SOCKS = s.socks
	return s, nil
}

// ErrNoSOCKSExit is a SOCKS5 CONNECT while no exit is set (SetSOCKS5 with a nil exit).
var ErrNoSOCKSExit = errors.New("gateway: no SOCKS5 exit is set")

// SetSOCKS5 makes the SOCKS5 entry listen on listen (empty: none) and send its CONNECTs to the
// exit exit names at the time (the socks5Listen and socksExit settings). A new address binds a
// new listener before the old one closes (or after, when the new one needs its port); the old
// entry's connections go on until they end (socks5.Server.Drain). An address that cannot be
// bound is an error, and the entry stays where it was. Safe for concurrent use, before and
// while the stack runs.
func (s *Stack) SetSOCKS5(listen string, exit func() (peer.ID, error)) error {
	s.socksMu.Lock()
	defer s.socksMu.Unlock()
	s.socksExit = exit // the dialer reads it at every CONNECT
	if listen == s.socksListen {
		return nil
	}
	old := s.socks
	var next *socks5.Server
	if listen != "" {
		var err error
		if next, err = s.bindSOCKS(listen); err != nil && old != nil {
			// The new address may be the old one's port under another name: free it and try
			// again, and go back to the old address if that fails too.
			old.Drain()
			old = nil
			if next, err = s.bindSOCKS(listen); err != nil {
				s.socks = nil
				if back, berr := s.bindSOCKS(s.socksListen); berr == nil {
					s.socks = back
					s.runSOCKS(back)
				} else {
					s.socksListen = ""
				}
				return err
			}
		} else if err != nil {
			return err
		}
	}
	if old != nil {
		old.Drain()
	}
	s.socks, s.socksListen = next, listen
	if next != nil {
		s.runSOCKS(next)
		s.log.Info("socks5 entry set", "listen", next.Addr().String())
	} else {
		s.log.Info("socks5 entry off")
	}
	return nil
}

// ExitNamed is the SOCKS5 exit (StackConfig.SOCKS5Exit, SetSOCKS5) that name names, resolved
// by resolve at each CONNECT (an alias may change); nil for no name (the socks5Exit setting's
// none).
func ExitNamed(resolve func(name string) (peer.ID, error), name string) func() (peer.ID, error) {
	if name == "" {
		return nil
	}
	return func() (peer.ID, error) { return resolve(name) }
}

// SOCKSAddr is where the SOCKS5 entry listens now, nil when there is none.
func (s *Stack) SOCKSAddr() net.Addr {
	s.socksMu.Lock()
	defer s.socksMu.Unlock()
	if s.socks == nil {
		return nil
	}
	return s.socks.Addr()
}

// bindSOCKS makes a SOCKS5 entry on listen and binds it. s.socksMu is held.
func (s *Stack) bindSOCKS(listen string) (*socks5.Server, error) {
	srv, err := socks5.New(socks5.Config{Dialer: SOCKSDialer{Dial: s.Dial, Exit: s.socksExitNow, Known: s.socksKnown},
		ListenAddr: listen, Logger: s.log.With("component", "socks5")})
	if err != nil {
		return nil, err
	}
	if err := srv.Listen(context.Background()); err != nil {
		return nil, err
	}
	return srv, nil
}

// runSOCKS runs srv in Run's context, if the stack runs (Run starts the one set before).
// s.socksMu is held.
func (s *Stack) runSOCKS(srv *socks5.Server) {
	if s.runCtx == nil {
		return
	}
	ctx := s.runCtx
	s.socksRuns.Go(func() {
		if err := srv.Run(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("socks5 entry stopped", "err", err)
		}
	})
}

// socksExitNow is the exit the SOCKS5 entry's CONNECTs go to now.
func (s *Stack) socksExitNow() (peer.ID, error) {
	s.socksMu.Lock()
	exit := s.socksExit
	s.socksMu.Unlock()
	if exit == nil {
		return "", ErrNoSOCKSExit
	}
	return exit()
}

// Dial opens a session to the exit to.
func (s *Stack) Dial(ctx context.Context, to peer.ID, mode session.Mode, request []byte) (*session.Conn, error) {
	return s.Carrier.Dial(ctx, s.Mux, to, mode, request)
}

// Receive takes a text of the session family that arrived (reply: on a reply block).
func (s *Stack) Receive(text []byte, reply bool) {
	err := s.Carrier.Receive(text, reply)
	if err != nil && !errors.Is(err, session.ErrUnknownSession) && !errors.Is(err, session.ErrClosed) {
		s.log.Debug("session frame dropped", "err", err)
	}
}

// Run runs the sessions until ctx ends, then closes them all.
func (s *Stack) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.Mux.Run(gctx) })
	g.Go(func() error { return ServeExit(gctx, ExitConfig{Mux: s.Mux, Policy: s.policy, Logger: s.log}) })
	s.socksMu.Lock()
	s.runCtx = gctx
	if s.socks != nil {
		s.runSOCKS(s.socks)
	}
	s.socksMu.Unlock()
	g.Go(func() error {
		<-gctx.Done()
		s.Entry.Shutdown()
		s.Carrier.Close()
		return nil
	})
	err := g.Wait()
	s.socksRuns.Wait() // the entries' Runs end with gctx
	return err
}

// Close releases the SOCKS5 entry's port of a stack that did not run.
func (s *Stack) Close() {
	s.socksMu.Lock()
	defer s.socksMu.Unlock()
	if s.socks != nil {
		_ = s.socks.Close()
	}
}
