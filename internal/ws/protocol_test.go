package ws

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawConn is a WebSocket client written by hand, to send what a well-behaved library would not.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func rawDial(t *testing.T, baseURL, path string) *rawConn {
	t.Helper()
	addr := strings.TrimPrefix(baseURL, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	return &rawConn{t: t, c: c, br: br}
}

// send writes one frame; a client must mask its frames, masked false breaks that rule.
func (r *rawConn) send(fin bool, opcode byte, payload string, masked bool) {
	r.t.Helper()
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	f := []byte{b0}
	if len(payload) > 125 {
		r.t.Fatal("short payloads only")
	}
	if !masked {
		f = append(append(f, byte(len(payload))), payload...)
	} else {
		key := []byte{0x37, 0xfa, 0x21, 0x3d}
		f = append(append(f, 0x80|byte(len(payload))), key...)
		for i := range len(payload) {
			f = append(f, payload[i]^key[i%4])
		}
	}
	if _, err := r.c.Write(f); err != nil {
		r.t.Fatal(err)
	}
}

// next reads one frame from the server: its opcode and payload.
func (r *rawConn) next() (byte, []byte) {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var h [2]byte
	if _, err := io.ReadFull(r.br, h[:]); err != nil {
		r.t.Fatalf("read: %v", err)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var e [2]byte
		io.ReadFull(r.br, e[:])
		n = uint64(binary.BigEndian.Uint16(e[:]))
	case 127:
		var e [8]byte
		io.ReadFull(r.br, e[:])
		n = binary.BigEndian.Uint64(e[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r.br, p); err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return h[0] & 0x0f, p
}

// closeCode reads frames until the close frame and returns its status code.
func (r *rawConn) closeCode() int {
	r.t.Helper()
	for range 1000 {
		op, p := r.next()
		if op == 8 {
			if len(p) < 2 {
				return 1005
			}
			return int(binary.BigEndian.Uint16(p))
		}
	}
	r.t.Fatal("no close frame")
	return 0
}

// reply reads frames until the end of a command's reply and returns its lines.
func (r *rawConn) reply() []string {
	r.t.Helper()
	var lines []string
	for range 1000 {
		op, p := r.next()
		if op != 1 {
			continue
		}
		var f Frame
		if err := json.Unmarshal(p, &f); err != nil {
			r.t.Fatal(err)
		}
		if f.Reply != "" {
			lines = append(lines, f.Msg)
		}
		if f.Reply == ReplyEnd {
			return lines
		}
	}
	r.t.Fatal("no end of reply")
	return nil
}

// TestFragmentedCommand: a command line sent in fragments (with a ping between them, which a
// client may interleave) is one command, answered as a whole.
func TestFragmentedCommand(t *testing.T) {
	h := newHarness(t, Config{})
	r := rawDial(t, h.srv.URL, "/?apiToken="+testToken)
	r.send(false, 1, "ec", true)
	r.send(false, 0, "ho frag", true)
	r.send(true, 9, "ping", true)
	r.send(true, 0, "mented", true)
	lines := r.reply()
	if len(lines) != 2 || lines[0] != "admin > echo fragmented" || lines[1] != "fragmented" {
		t.Fatalf("reply %q", lines)
	}
}

// TestUnmaskedFrameIsAProtocolError: a client frame without a mask breaks RFC 6455 (§5.1);
// the admin server and both REST streams close with 1002, not 1001 (going away).
func TestUnmaskedFrameIsAProtocolError(t *testing.T) {
	h := newHarness(t, Config{})
	r := rawDial(t, h.srv.URL, "/?apiToken="+testToken)
	r.send(true, 1, "help", false)
	if code := r.closeCode(); code != 1002 {
		t.Fatalf("admin server closed with %d, want 1002", code)
	}
	a := newAppHarness(t, nil)
	for _, path := range []string{"/messages", "/admin"} {
		r := rawDial(t, a.srv.URL, path)
		r.send(true, 1, "hello", false)
		if code := r.closeCode(); code != 1002 {
			t.Fatalf("%s closed with %d, want 1002", path, code)
		}
	}
}
