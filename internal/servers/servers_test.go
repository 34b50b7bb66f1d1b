package servers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

func TestListenTakenAddress(t *testing.T) {
	var s Set
	defer s.Close()
	ln, err := s.Listen("api", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Listen("admin", ln.Addr().String())
	if !errors.Is(err, ErrListen) || !strings.Contains(err.Error(), "cannot listen on "+ln.Addr().String()+": ") ||
		strings.Contains(err.Error(), "listen tcp") {
		t.Fatalf("second listener on %s: %v, want ErrListen naming the address once", ln.Addr(), err)
	}
	if s.Addr("admin") != nil || s.Addr("api").String() != ln.Addr().String() {
		t.Fatalf("Addr: api %v admin %v", s.Addr("api"), s.Addr("admin"))
	}
}

// TestServeAndShutdown: graceful servers finish a request under way, hijacking ones end their
// requests with Serve's context, closing ones close at once; listeners close after.
func TestServeAndShutdown(t *testing.T) {
	var s Set
	started, release := make(chan struct{}), make(chan struct{})
	hijackDone := make(chan error, 1)
	for _, name := range []string{"api", "admin", "profile"} {
		if _, err := s.Listen(name, "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	s.Handle("api", &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "finished")
	})}, Graceful, nil)
	s.Handle("admin", &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		hijackDone <- r.Context().Err()
	})}, Hijacking, nil)
	s.Handle("profile", &http.Server{Handler: http.NotFoundHandler()}, Closing, nil)
	ctx, cancel := context.WithCancel(context.Background())
	g, gctx := errgroup.WithContext(ctx)
	s.Serve(gctx, g)

	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + s.Addr("api").String() + "/")
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	go http.Get("http://" + s.Addr("admin").String() + "/")
	<-started
	cancel()
	select {
	case err := <-hijackDone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the hijacking server's request ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the hijacking server's request did not end with Serve's context")
	}
	done := make(chan struct{})
	go func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		s.Shutdown(sctx, slog.New(slog.DiscardHandler))
		close(done)
	}()
	close(release)
	if body := <-got; body != "finished" {
		t.Fatalf("the request under way got %q, want it finished", body)
	}
	<-done
	if err := g.Wait(); err != nil {
		t.Fatalf("Serve's group: %v", err)
	}
	s.Close()
	if c, err := net.Dial("tcp", s.Addr("profile").String()); err == nil {
		c.Close()
		t.Fatal("the profile listener still accepts after Close")
	}
}
