package ws

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/origin"
)

// TestAdminRefusesOtherSites: with authentication off, a page on another site cannot drive the
// admin server: not by a cross-origin WebSocket, and not through DNS rebinding, where the page's
// own name resolves to the node (Host and Origin are the attacker's, which a same-origin check
// alone passes). The console page is not served under a foreign name either. A page of an
// allowed origin, and the node's own page, connect.
func TestAdminRefusesOtherSites(t *testing.T) {
	p, err := origin.New(origin.Config{Origins: []string{"http://app.example"}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Config{DisableAuth: true, Origins: p})
	port := strings.TrimPrefix(h.srv.URL, "http://127.0.0.1")
	wsURL := "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/"

	dial := func(host, originHeader string) (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		hdr := http.Header{}
		if originHeader != "" {
			hdr.Set("Origin", originHeader)
		}
		opts := &websocket.DialOptions{HTTPHeader: hdr}
		if host != "" {
			opts.HTTPHeader.Set("Host", host)
			opts.HTTPClient = &http.Client{Transport: hostTransport{host}}
		}
		return websocket.Dial(ctx, wsURL, opts)
	}
	refused := func(name string, resp *http.Response, err error, code string) {
		t.Helper()
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %v %v, want a 403 JSON refusal", name, resp, err)
		}
		var e struct{ Status, Error string }
		if json.NewDecoder(resp.Body).Decode(&e) != nil || e.Status != code {
			t.Fatalf("%s: body %+v, want %s", name, e, code)
		}
	}
	_, resp, err := dial("", "http://attacker.example")
	refused("cross-origin", resp, err, "FORBIDDEN_ORIGIN")
	_, resp, err = dial("attacker.example"+port, "http://attacker.example"+port)
	refused("DNS rebinding", resp, err, "INVALID_HOST")

	req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/", nil)
	req.Host = "attacker.example" + port
	page, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusForbidden {
		t.Fatalf("console page under a foreign name: %d", page.StatusCode)
	}

	for _, o := range []string{"", h.srv.URL, "http://app.example"} {
		c, _, err := dial("", o)
		if err != nil {
			t.Fatalf("Origin %q: %v", o, err)
		}
		if f := read(t, c); f.Type == TypeAuthFailed {
			t.Fatalf("Origin %q: %+v", o, f)
		}
		c.CloseNow()
	}
}

// hostTransport sends requests with its Host header (a browser after DNS rebinding).
type hostTransport struct{ host string }

func (h hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	return http.DefaultTransport.RoundTrip(r)
}
