package config

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseLogFormat(t *testing.T) {
	c, err := Parse(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.LogFormat != LogText {
		t.Fatalf("default log format %q, want text", c.LogFormat)
	}
	c, err = Parse([]string{"--logFormat", "json"}, env(nil), io.Discard)
	if err != nil || c.LogFormat != LogJSON {
		t.Fatalf("--logFormat json: %q, %v", c.LogFormat, err)
	}
	c, err = Parse(nil, env(map[string]string{"RELAYD_LOG_FORMAT": "json"}), io.Discard)
	if err != nil || c.LogFormat != LogJSON {
		t.Fatalf("RELAYD_LOG_FORMAT=json: %q, %v", c.LogFormat, err)
	}
	for format, ok := range map[string]bool{"text": true, "json": true, "": true, "JSON": false, "logfmt": false} {
		err := Config{LogFormat: format}.validateOperator()
		var fe *FieldError
		if ok != (err == nil) || (!ok && (!errors.As(err, &fe) || fe.Flag != "logFormat")) {
			t.Errorf("log format %q: %v", format, err)
		}
	}
}

func writePasswordFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadPasswordFile(t *testing.T) {
	const secret = "c0rrect horse "
	tests := []struct {
		name     string
		content  string
		mode     os.FileMode
		password string // --password given as well
		want     string // "" = an error naming --passwordFile
	}{
		{"one line", secret + "\n", 0o600, "", secret},
		{"crlf", secret + "\r\n", 0o400, "", secret},
		{"no newline", secret, 0o640, "", secret},
		{"only the last newline goes", secret + "\n\n", 0o600, "", secret + "\n"},
		{"world-readable", secret + "\n", 0o644, "", ""},
		{"world-writable", secret + "\n", 0o602, "", ""},
		{"empty", "\n", 0o600, "", ""},
		{"too big", strings.Repeat("x", maxPasswordFile+1), 0o600, "", ""},
		{"with --password", secret, 0o600, "other", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{PasswordFile: writePasswordFile(t, tt.content, tt.mode), Password: tt.password}
			err := c.LoadPasswordFile()
			if tt.want != "" {
				if err != nil || c.Password != tt.want {
					t.Fatalf("password %q, err %v; want %q", c.Password, err, tt.want)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Flag != "passwordFile" {
				t.Fatalf("err %v, want a --passwordFile error", err)
			}
			if c.Password != tt.password {
				t.Fatalf("a refused file changed the password to %q", c.Password)
			}
			if strings.Contains(err.Error(), strings.TrimSpace(secret)) {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		c := Config{PasswordFile: filepath.Join(t.TempDir(), "nope")}
		var fe *FieldError
		if err := c.LoadPasswordFile(); !errors.As(err, &fe) || fe.Flag != "passwordFile" {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		c := Config{PasswordFile: t.TempDir()}
		if err := c.LoadPasswordFile(); err == nil {
			t.Fatal("a directory was accepted")
		}
	})
	t.Run("none", func(t *testing.T) {
		c := Config{Password: "p"}
		if err := c.LoadPasswordFile(); err != nil || c.Password != "p" {
			t.Fatalf("without --passwordFile: %q %v", c.Password, err)
		}
	})
	t.Run("from the environment", func(t *testing.T) {
		p := writePasswordFile(t, secret+"\n", 0o600)
		c, err := Parse(nil, env(map[string]string{"RELAYD_PASSWORD_FILE": p}), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.LoadPasswordFile(); err != nil || c.Password != secret {
			t.Fatalf("RELAYD_PASSWORD_FILE: %q %v", c.Password, err)
		}
	})
}
