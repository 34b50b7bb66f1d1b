package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Listener wraps the REST server's listener so that the answers net/http
// writes by itself, before any handler can run, carry the JSON error
// envelope like every other failure: 431 for request headers over the
// server's MaxHeaderBytes (1 MiB by default), 400 for a malformed request,
// 501 for an unknown transfer encoding. net/http writes each of them as one
// plain-text write of a fixed form on the connection, which the connection
// recognises and replaces; it passes everything else through.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &envelopeConn{Conn: c}, nil
}

// envelopeConn is a connection of the REST server.
type envelopeConn struct{ net.Conn }

// cannedHeaders follow the status line of the answers net/http writes by
// itself (errorHeaders in net/http's server.go); a response net/http
// builds for a handler always has other headers (Date, Content-Length).
const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *envelopeConn) Write(p []byte) (int, error) {
	status, text, ok := parseCanned(p)
	if !ok {
		return c.Conn.Write(p)
	}
	msg := "malformed request"
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		msg = "request headers are too large (at most 1 MiB in all)"
	case text != "":
		msg += ": " + text
	}
	body, _ := json.Marshal(ErrorBody{Status: CodeInvalidInput, Error: msg})
	body = append(body, '\n')
	resp := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
	if _, err := io.WriteString(c.Conn, resp); err != nil {
		return 0, err
	}
	return len(p), nil
}

// parseCanned recognises an answer net/http wrote by itself:
// "HTTP/1.1 <status> <text>" cannedHeaders "<status> <text>".
func parseCanned(p []byte) (status int, text string, ok bool) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(p, []byte(proto)) {
		return 0, "", false
	}
	end := bytes.Index(p, []byte(cannedHeaders))
	if end < 0 || bytes.IndexByte(p[:end], '\n') >= 0 || end < len(proto)+4 {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(p[len(proto) : len(proto)+3]))
	if err != nil || status < 400 || status > 599 {
		return 0, "", false
	}
	text = string(p[end+len(cannedHeaders):])
	text = strings.TrimPrefix(text, strconv.Itoa(status)+" ")
	text = strings.TrimPrefix(text, http.StatusText(status))
	return status, strings.TrimPrefix(text, ": "), true
}

// CloseWrite lets net/http half-close the connection after a refused
// request, so that the client reads the answer before the connection
// closes.
func (c *envelopeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the connection's own ReadFrom (sendfile for static files).
func (c *envelopeConn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(c.Conn, r) }
