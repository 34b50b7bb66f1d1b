package socks5

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/wait"
)

// curlPath is the real curl, or the test is skipped.
func curlPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not found")
	}
	return p
}

// curl runs curl through the server with remote DNS (--socks5-hostname), no configuration file
// and no proxy variables, and returns its exit code and stderr.
func curl(t *testing.T, s *Server, args ...string) (int, string) {
	t.Helper()
	args = append([]string{"-q", "--silent", "--show-error", "--max-time", "30",
		"--socks5-hostname", s.Addr().String()}, args...)
	cmd := exec.CommandContext(t.Context(), curlPath(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		return ee.ExitCode(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// TestCurlFetch fetches a 1 MiB body with curl through the server, by a name that does not
// resolve (.invalid): it arrives byte for byte, and the dialer was asked for the name.
func TestCurlFetch(t *testing.T) {
	curlPath(t)
	body := make([]byte, 1<<20)
	_, _ = rand.NewChaCha8([32]byte{'s', 'o', 'c', 'k', 's'}).Read(body)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != net.JoinHostPort("relayd-socks5.invalid", port(t, r.Host)) {
			http.Error(w, "wrong host "+r.Host, http.StatusBadRequest)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(backend.Close)
	d := direct(backend.Listener.Addr().String())
	s := start(t, Config{Dialer: d})

	u, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	target := net.JoinHostPort("relayd-socks5.invalid", u.Port())
	out := filepath.Join(t.TempDir(), "body")
	if code, stderr := curl(t, s, "--fail", "-o", out, "http://"+target+"/blob"); code != 0 {
		t.Fatalf("curl exited %d: %s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(body) || sha256.Sum256(got) != sha256.Sum256(body) {
		t.Fatalf("fetched %d bytes, sha256 %x; want %d, %x", len(got), sha256.Sum256(got), len(body), sha256.Sum256(body))
	}
	if asked := d.Asked(); !slices.Equal(asked, []string{"tcp " + target}) {
		t.Fatalf("dialer asked for %q, want [%q]", asked, "tcp "+target)
	}
	// The counts are added when a connection's directions end, after curl has closed it.
	wait.For(t, func() bool { return s.Stats().Active == 0 }, 10*time.Second, "the connection ends")
	if st := s.Stats(); st.Connected != 1 || st.BytesDown < uint64(len(body)) || st.BytesUp == 0 {
		t.Errorf("stats %+v", st)
	}
}

// port is the port of a host:port, failing the test if there is none.
func port(t *testing.T, hostport string) string {
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Error(err)
	}
	return p
}

// TestCurlNotAllowed checks that curl reports the exit's refusal as a SOCKS5 failure (exit
// code 97, CURLE_PROXY, naming the reply), and that the reply was 0x02.
func TestCurlNotAllowed(t *testing.T) {
	curlPath(t)
	d := failing(fmt.Errorf("exit policy: %w", ErrNotAllowed))
	s := start(t, Config{Dialer: d})
	code, stderr := curl(t, s, "http://blocked.invalid:8080/")
	if code != 97 {
		t.Fatalf("curl exited %d, want 97 (proxy handshake error): %s", code, stderr)
	}
	t.Logf("curl: %s", strings.TrimSpace(stderr))
	if !strings.Contains(stderr, "not allowed by ruleset") && !strings.Contains(stderr, "(2)") {
		t.Errorf("curl's error does not name reply 2: %s", stderr)
	}
	if asked := d.Asked(); !slices.Equal(asked, []string{"tcp blocked.invalid:8080"}) {
		t.Errorf("dialer asked for %q", asked)
	}
	// The same request by hand: the reply byte itself.
	if got := request(t, dialServer(t, s), 0x01, domain("blocked.invalid", 8080)); got != 0x02 {
		t.Errorf("reply %#02x, want 0x02", got)
	}
}
