// Package testnet gives tests the network peers they need beside the code under test: TCP
// servers on the loopback interface. It imports only the standard library; only tests import it.
package testnet

import (
	"io"
	"net"
	"sync"
	"testing"
)

// ServeTCP listens on 127.0.0.1 and serves each connection with handle (closing it after),
// until stop or the end of the test; stop closes the listener and the connections still open
// and waits for the handlers, and nothing listens on the address after it. It returns the
// address it listens on.
func ServeTCP(t testing.TB, handle func(net.Conn)) (addr *net.TCPAddr, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		once  sync.Once
		mu    sync.Mutex
		open  = map[net.Conn]bool{}
		ended bool
	)
	stop = func() {
		once.Do(func() {
			_ = ln.Close()
			mu.Lock()
			ended = true
			for c := range open {
				_ = c.Close()
			}
			mu.Unlock()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if ended {
				mu.Unlock()
				_ = c.Close()
				return
			}
			open[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer func() { mu.Lock(); delete(open, c); mu.Unlock(); _ = c.Close() }()
				handle(c)
			})
		}
	})
	return ln.Addr().(*net.TCPAddr), stop
}

// EchoTCP is a ServeTCP that sends back what each connection sends, until the test ends.
func EchoTCP(t testing.TB) *net.TCPAddr {
	t.Helper()
	addr, _ := ServeTCP(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
	return addr
}
