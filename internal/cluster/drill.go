package cluster

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// The chain outage drill (Config.ChainDrill): the nodes reach the dev chain through a gate on
// ChainPort that SIGUSR1 shuts (every connection through it is cut and new ones are refused,
// as when a provider goes down) and SIGUSR2 opens again on the same port. An operator
// rehearses the providerDown alert with it; the browser tests use it (docs/COCKPIT.md).

// gate forwards TCP connections from its address to the dev chain's while it is open.
type gate struct {
	addr   string // host:port the nodes dial
	target string // the dev chain's host:port

	mu    sync.Mutex
	ln    net.Listener // nil while shut
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func newGate(addr, target string) (*gate, error) {
	g := &gate{addr: addr, target: target, conns: make(map[net.Conn]struct{})}
	if err := g.open(); err != nil {
		return nil, err
	}
	return g, nil
}

// open listens again on the gate's address; it does nothing while open.
func (g *gate) open() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		return fmt.Errorf("chain gate on %s: %w", g.addr, err)
	}
	g.ln = ln
	g.wg.Add(1)
	go g.accept(ln)
	return nil
}

// shut stops listening and cuts every forwarded connection; it does nothing while shut.
func (g *gate) shut() {
	g.mu.Lock()
	ln := g.ln
	g.ln = nil
	conns := g.conns
	g.conns = make(map[net.Conn]struct{})
	g.mu.Unlock()
	if ln == nil {
		return
	}
	ln.Close()
	for c := range conns {
		c.Close()
	}
	g.wg.Wait()
}

func (g *gate) accept(ln net.Listener) {
	defer g.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // shut
		}
		up, err := net.Dial("tcp", g.target)
		if err != nil {
			c.Close()
			continue
		}
		if !g.track(ln, c, up) {
			return
		}
		g.wg.Add(2)
		go g.pipe(c, up)
		go g.pipe(up, c)
	}
}

// track records a forwarded pair, or closes it when the gate was shut meanwhile.
func (g *gate) track(ln net.Listener, c, up net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != ln {
		c.Close()
		up.Close()
		return false
	}
	g.conns[c], g.conns[up] = struct{}{}, struct{}{}
	return true
}

// pipe copies one direction; when it ends both sides are closed and forgotten.
func (g *gate) pipe(dst, src net.Conn) {
	defer g.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	g.mu.Lock()
	delete(g.conns, dst)
	delete(g.conns, src)
	g.mu.Unlock()
}

// drill shuts the gate on SIGUSR1 and opens it on SIGUSR2 until done is closed. The signals
// are caught from its return on (their default action would end the process); the returned
// channel is closed once it stopped catching them.
func (c *cluster) drill(done <-chan struct{}) <-chan struct{} {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer signal.Stop(sig)
		for {
			select {
			case <-done:
				return
			case s := <-sig:
				c.drillSignal(s)
			}
		}
	}()
	return stopped
}

func (c *cluster) drillSignal(s os.Signal) {
	if s == syscall.SIGUSR1 {
		c.gate.shut()
		c.progress("chain drill: the dev chain no longer answers its nodes (SIGUSR2 brings it back)")
		return
	}
	if err := c.gate.open(); err != nil {
		c.progress("chain drill: %v", err)
		return
	}
	c.progress("chain drill: the dev chain answers its nodes again")
}
