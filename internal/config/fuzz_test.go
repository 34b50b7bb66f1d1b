package config

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// flagNames lists the flags Parse defines, read from its usage text.
func flagNames(tb testing.TB) []string {
	tb.Helper()
	var usage bytes.Buffer
	if _, err := Parse([]string{"-h"}, env(nil), &usage); !errors.Is(err, ErrHelp) {
		tb.Fatalf("Parse -h: %v", err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s+-(\w+)`).FindAllStringSubmatch(usage.String(), -1) {
		if m[1] != versionFlag { // a question, not a setting: no environment variable
			names = append(names, m[1])
		}
	}
	if len(names) < 10 {
		tb.Fatalf("only %d flags in the usage text", len(names))
	}
	return names
}

// FuzzParse feeds arbitrary command lines and environments to Parse and Validate: they never
// panic, Validate's errors are *FieldError, the identity defaults into the data directory
// unless given, and a flag given in the environment means exactly what it means on the
// command line.
func FuzzParse(f *testing.F) {
	names := flagNames(f)
	f.Add("--apiToken\x00S3cret!token\x00--apiPort\x004001", "RELAYD_PASSWORD=pw\x00RELAYD_DATA=/tmp/d", uint8(0), "x")
	f.Add("--peers\x00/ip4/127.0.0.1/tcp/1/p2p/a, /ip4/127.0.0.1/tcp/2/p2p/b", "", uint8(3), "0")
	f.Add("-disableApiAuthentication\x00-apiHost=0.0.0.0", "RELAYD_INIT=true", uint8(1), "true")
	f.Add("--mixDelayMax=-1s\x00extra", "RELAYD_HEARTBEAT_INTERVAL=1h", uint8(7), "1m")
	f.Add("-h", "RELAYD_API_PORT=abc", uint8(200), "65536")
	f.Fuzz(func(t *testing.T, args, environ string, flagIdx uint8, value string) {
		m := map[string]string{}
		for _, kv := range strings.Split(environ, "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				m[k] = v
			}
		}
		var argv []string
		if args != "" {
			argv = strings.Split(args, "\x00")
		}
		c, err := Parse(argv, env(m), io.Discard)
		if err == nil {
			if !c.identitySetByUser && c.Identity != filepath.Join(c.Data, "identity.json") {
				t.Fatalf("identity %q not under data %q", c.Identity, c.Data)
			}
			var fe *FieldError
			if err := c.Validate(); err != nil && !errors.As(err, &fe) {
				t.Fatalf("Validate: %v is not a *FieldError", err)
			}
		}

		// The same flag and value from the command line and from the environment.
		if value == "" {
			return // an empty variable counts as unset
		}
		name := names[int(flagIdx)%len(names)]
		cf, errF := Parse([]string{"-" + name + "=" + value}, env(nil), io.Discard)
		ce, errE := Parse(nil, env(map[string]string{EnvName(name): value}), io.Discard)
		if (errF == nil) != (errE == nil) {
			t.Fatalf("-%s=%q: flag error %v, environment error %v", name, value, errF, errE)
		}
		if errF == nil && !reflect.DeepEqual(cf, ce) {
			t.Fatalf("-%s=%q: flag gives %+v, environment %+v", name, value, cf, ce)
		}
	})
}

// FuzzConfigFile feeds arbitrary TOML and YAML files to Load: it never panics, every error is
// a *FileError, and a file it accepts without secrets loads to the same configuration as the
// effective configuration it prints.
func FuzzConfigFile(f *testing.F) {
	f.Add([]byte(tomlConfig), false)
	f.Add([]byte(yamlConfig), true)
	f.Add([]byte("apiPort = \"3001\"\n[api]\nx = 1\n"), false)
	f.Add([]byte("peers: [1, 2]\nheartbeatInterval: 10\n"), true)
	f.Add([]byte("apiPort = 1\napiPort = 2\n"), false)
	f.Add([]byte("- a\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, isYAML bool) {
		name := "c.toml"
		if isYAML {
			name = "c.yaml"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Load([]string{"--config", path}, env(nil), io.Discard)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line of a *FileError", err)
			}
			return
		}
		if l.Config.APIToken != "" || l.Config.Password != "" || l.Config.Provider != "" {
			return // redacted in the output
		}
		var out bytes.Buffer
		if err := l.WriteEffective(&out); err != nil {
			t.Fatal(err)
		}
		again := filepath.Join(t.TempDir(), "again.toml")
		if err := os.WriteFile(again, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		l2, err := Load([]string{"--config", again}, env(nil), io.Discard)
		if err != nil {
			t.Fatalf("the effective configuration does not load: %v\n%s", err, out.String())
		}
		want := l.Config
		want.identitySetByUser = true
		if !reflect.DeepEqual(l2.Config, want) {
			t.Fatalf("round trip:\n%+v\nwant\n%+v\n%s", l2.Config, want, out.String())
		}
	})
}
