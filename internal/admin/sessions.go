package admin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strings"
	"time"

	"github.com/relayd/relayd/internal/gateway"
	"github.com/relayd/relayd/internal/ws"
)

var errNoSessions = errors.New("this node opens no sessions (it runs without its session gateway)")

// sessionOpenTimeout bounds `session open`.
const sessionOpenTimeout = 30 * time.Second

// servicePrefix marks a session's target that is a service the destination offers by name.
const servicePrefix = "service:"

// sessionUsage is the form of `session open`.
const sessionUsage = "session open <peer> <tcp|udp> <host:port|service:<name>> [<listen host:port>]"

// sessionCommands are the commands of the sessions this node opens towards exits.
func (c *console) sessionCommands() []Command {
	return []Command{
		{Name: "sessions", Usage: "sessions", Help: "List the open sessions: where each listens, where it goes, its connections, " +
			"bytes and rates (over the last 10 s) out and in.", Run: c.sessions},
		{Name: "session", Usage: "session open|close|list …", Help: "Open a session, " + sessionUsage +
			" (a free loopback port by default): every connection to its address goes through the network to the peer, " +
			"which connects it to the target or its service; close one, session close <id>; session list is sessions.", Run: c.session},
	}
}

func (c *console) session(ctx context.Context, args string) ([]string, error) {
	sub, rest := cutWord(args)
	rest = strings.TrimSpace(rest)
	switch sub {
	case "open":
		return c.sessionOpen(ctx, rest)
	case "close":
		return c.sessionClose(rest)
	case "list", "ls":
		if rest != "" {
			return nil, usage("session list takes no arguments")
		}
		return c.sessions(ctx, "")
	case "":
		return nil, usage("session needs open, close or list")
	}
	return nil, usage("%q is not open, close or list", sub)
}

// sessionArgs reads the arguments of `session open` but the peer, which it returns as given.
func sessionArgs(args string) (string, gateway.Open, error) {
	f := strings.Fields(args)
	if len(f) < 3 || len(f) > 4 {
		return "", gateway.Open{}, usage("%s", sessionUsage)
	}
	o := gateway.Open{Protocol: gateway.Protocol(strings.ToLower(f[1]))}
	if o.Protocol != gateway.TCP && o.Protocol != gateway.UDP {
		return "", gateway.Open{}, usage("%q is neither tcp nor udp", f[1])
	}
	if name, ok := strings.CutPrefix(f[2], servicePrefix); ok {
		if name == "" {
			return "", gateway.Open{}, usage("service: needs the service's name")
		}
		o.Service = name
	} else {
		if _, _, err := net.SplitHostPort(f[2]); err != nil {
			return "", gateway.Open{}, usage("%q is neither host:port nor service:<name>", f[2])
		}
		o.Target = f[2]
	}
	if len(f) == 4 {
		if _, _, err := net.SplitHostPort(f[3]); err != nil {
			return "", gateway.Open{}, usage("%q is not a host:port to listen on", f[3])
		}
		o.Listen = f[3]
	}
	return f[0], o, nil
}

func (c *console) sessionOpen(ctx context.Context, args string) ([]string, error) {
	name, o, err := sessionArgs(args)
	if err != nil {
		return nil, err
	}
	if c.cfg.Sessions == nil {
		return nil, errNoSessions
	}
	if o.Destination, err = c.resolve(name); err != nil {
		return nil, err
	}
	if o.Destination == c.cfg.Self.PeerID() {
		return nil, usage("the destination is this node; a session goes to another node")
	}
	ctx, cancel := withTimeout(ctx, sessionOpenTimeout)
	defer cancel()
	s, err := c.cfg.Sessions.Open(ctx, o)
	if err != nil {
		return nil, sessionFailure(err)
	}
	return []string{fmt.Sprintf("Session %s open: %s on %s to %s for %s. Connect to %[3]s; session close %[1]s ends it.",
		s.ID, s.Protocol, s.Listen, s.Destination, sessionWhat(s))}, nil
}

func (c *console) sessionClose(args string) ([]string, error) {
	if args == "" || strings.ContainsAny(args, " \t") {
		return nil, usage("session close needs one session id (sessions lists them)")
	}
	if c.cfg.Sessions == nil {
		return nil, errNoSessions
	}
	if err := c.cfg.Sessions.Close(strings.ToLower(args)); err != nil {
		if errors.Is(err, gateway.ErrUnknownSession) {
			return nil, fmt.Errorf("no open session %s", args)
		}
		return nil, sessionFailure(err)
	}
	return []string{"Session " + strings.ToLower(args) + " closed."}, nil
}

func (c *console) sessions(_ context.Context, args string) ([]string, error) {
	if args != "" {
		return nil, usage("sessions takes no arguments")
	}
	if c.cfg.Sessions == nil {
		return nil, errNoSessions
	}
	list := c.cfg.Sessions.List()
	if len(list) == 0 {
		return []string{"No open sessions."}, nil
	}
	out := []string{fmt.Sprintf("%d open sessions:", len(list))}
	if len(list) == 1 {
		out[0] = "1 open session:"
	}
	for _, s := range list {
		out = append(out, sessionLine(s))
	}
	return out, nil
}

// sessionLine is one open session: its id, protocol, where it listens and goes, its
// connections, what went out and came in (rate and total) and its retransmissions.
func sessionLine(s gateway.Info) string {
	return fmt.Sprintf("%s %s %s -> %s %s: %d active, %d in all; out %s (%s), in %s (%s); %d retransmits; opened %s",
		s.ID, s.Protocol, s.Listen, s.Destination, sessionWhat(s), s.Active, s.Total,
		byteRate(s.RateOut), byteCount(float64(s.BytesOut)), byteRate(s.RateIn), byteCount(float64(s.BytesIn)),
		s.Retransmits, s.Opened.UTC().Format(ws.TimeFormat))
}

// sessionWhat is a session's target, or its service as service:<name>.
func sessionWhat(s gateway.Info) string {
	if s.Service != "" {
		return servicePrefix + s.Service
	}
	return s.Target
}

// sessionFailure says why the gateway refused: its sentence with what it adds (the address,
// the listener's error); this node as the destination is a usage error.
func sessionFailure(err error) error {
	if errors.Is(err, gateway.ErrSelf) {
		return usage("the destination is this node; a session goes to another node")
	}
	return err
}

// byteCount is a number of bytes in SI units: 512 B, 5.1 kB, 1.0 MB.
func byteCount(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		v = 0
	}
	const units = "kMGTPE"
	if v < 1000 {
		return fmt.Sprintf("%.0f B", v)
	}
	i := -1
	for v >= 999.95 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, units[i])
}

// byteRate is a rate in bytes per second in SI units: 120 B/s, 98.3 kB/s.
func byteRate(v float64) string { return byteCount(v) + "/s" }
