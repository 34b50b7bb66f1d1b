package node

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProviderSecretsStayOutOfStartupErrors: a node whose provider URL carries an API key (path,
// query, user info) and cannot be reached fails to start with an error naming --provider and
// the provider's scheme and host, and neither that error nor the log holds the key.
func TestProviderSecretsStayOutOfStartupErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := testConfig(t)
	cfg.Provider = "http://user:hunter2@" + addr + "/v3/SECRETKEY?apikey=SECRET2"
	cfg.ChannelsContract = "0x059c779Fd53Eb799aF70Bb720960F6787eB4548D"
	cfg.LogLevel = "debug"
	logPath := filepath.Join(t.TempDir(), "log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	n, err := New(cfg, logFile, Options{})
	if err == nil {
		n.close()
		t.Fatal("a node started with an unreachable provider")
	}
	var se *StartupError
	if !errors.As(err, &se) || se.Flag != "provider" || !strings.Contains(err.Error(), "http://"+addr) {
		t.Fatalf("start-up error %q, want one naming --provider and http://%s", err, addr)
	}
	logged, err2 := os.ReadFile(logPath)
	if err2 != nil {
		t.Fatal(err2)
	}
	for _, secret := range []string{"SECRETKEY", "SECRET2", "hunter2"} {
		if strings.Contains(err.Error(), secret) || strings.Contains(string(logged), secret) {
			t.Fatalf("the provider's secret %q leaked: error %q, log %q", secret, err, logged)
		}
	}
}
