package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
	// exit SOCKS5Exit names at the time.
	SOCKS5Listen string
	SOCKS5Exit   func() (peer.ID, error)
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
	// SOCKS is nil without SOCKS5Listen; it is bound by NewStack.
	SOCKS  *socks5.Server
	policy *exit.Policy
	log    *slog.Logger
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
	s := &Stack{policy: cfg.Policy, log: cfg.Logger}
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
	if cfg.SOCKS5Listen != "" {
		if s.SOCKS, err = socks5.New(socks5.Config{Dialer: SOCKSDialer{Dial: s.Dial, Exit: cfg.SOCKS5Exit},
			ListenAddr: cfg.SOCKS5Listen, Logger: cfg.Logger.With("component", "socks5")}); err != nil {
			return nil, err
		}
		if err := s.SOCKS.Listen(context.Background()); err != nil {
			return nil, err
		}
	}
	return s, nil
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
	if s.SOCKS != nil {
		g.Go(func() error {
			if err := s.SOCKS.Run(gctx); err != nil && gctx.Err() == nil {
				return fmt.Errorf("socks5: %w", err)
			}
			return nil
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		s.Entry.Shutdown()
		s.Carrier.Close()
		return nil
	})
	return g.Wait()
}

// Close releases the SOCKS5 entry's port of a stack that did not run.
func (s *Stack) Close() {
	if s.SOCKS != nil {
		_ = s.SOCKS.Close()
	}
}
