package socks5

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// fakeConn is a connection that reads its input and then EOF, and discards what is written.
type fakeConn struct{ in *bytes.Reader }

func (c fakeConn) Read(p []byte) (int, error)       { return c.in.Read(p) }
func (c fakeConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c fakeConn) Close() error                     { return nil }
func (c fakeConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1080} }
func (c fakeConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000} }
func (c fakeConn) SetDeadline(time.Time) error      { return nil }
func (c fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (c fakeConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzServeConn feeds a client's bytes, whatever they are, through the handshake, the request
// and (when it is a CONNECT) the carrying: nothing may panic or hang, and only a CONNECT with
// a host and a port reaches the dialer.
func FuzzServeConn(f *testing.F) {
	greet := []byte{0x05, 0x01, 0x00}
	req := func(cmd byte, addr []byte) []byte {
		return append(append(append([]byte{}, greet...), 0x05, cmd, 0x00), addr...)
	}
	f.Add(req(0x01, domain("relayd-socks5.invalid", 443)))
	f.Add(append(req(0x01, domain("relayd-socks5.invalid", 80)), "GET / HTTP/1.0\r\n\r\n"...))
	f.Add(req(0x01, ipAddr(net.ParseIP("192.0.2.1"), 22)))
	f.Add(req(0x01, ipAddr(net.ParseIP("2001:db8::1"), 443)))
	f.Add(req(0x02, ipAddr(net.IPv4zero, 0)))
	f.Add(req(0x03, ipAddr(net.IPv4zero, 0)))
	f.Add(req(0x01, domain("", 0)))
	f.Add([]byte{0x05, 0x00})
	f.Add([]byte{0x05, 0x01, 0x02})
	f.Add([]byte{0x04, 0x01, 0x00, 0x50, 127, 0, 0, 1, 0x00})
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		dialed := 0
		d := &recorder{dial: func(context.Context, string, string) (net.Conn, error) {
			dialed++
			return fakeConn{in: bytes.NewReader([]byte("HTTP/1.0 200 OK\r\n\r\n"))}, nil
		}}
		s, err := New(Config{Dialer: d})
		if err != nil {
			t.Fatal(err)
		}
		s.serveConn(t.Context(), fakeConn{in: bytes.NewReader(in)})
		st := s.Stats()
		if uint64(dialed) != st.Connected || st.Connected > 1 {
			t.Fatalf("dialed %d times, %d connected", dialed, st.Connected)
		}
		for _, a := range d.Asked() {
			network, hostport, _ := strings.Cut(a, " ")
			host, port, err := net.SplitHostPort(hostport)
			if network != "tcp" || err != nil || host == "" || port == "0" {
				t.Fatalf("dialer asked for %q", a)
			}
		}
	})
}
