// Package testnet gives tests the network peers they need beside the code under test: a TCP
// echo server on the loopback interface. It imports only the standard library; only tests
// import it.
package testnet

import (
	"io"
	"net"
	"testing"
)

// EchoTCP listens on 127.0.0.1 and sends back what each connection sends, until the test ends;
// it returns the address it listens on.
func EchoTCP(t testing.TB) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr)
}
