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
	"time"
)

// writeConfig writes a config file named name (its extension picks the format) with mode 0600.
func writeConfig(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, args []string, environ map[string]string) *Loaded {
	t.Helper()
	l, err := Load(args, env(environ), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const tomlConfig = `# a node's file
apiToken = "from-file-token"
apiPort = 4001
adminPort = 4000
data = "/srv/relayd"
testUseWeakCrypto = true
heartbeatInterval = "3s"
coverRate = 2.5
sendRate = 4
peers = ["/ip4/192.0.2.1/tcp/1/p2p/a", "/ip4/192.0.2.2/tcp/2/p2p/b"]
exitAllow = "*:443, 10.0.0.0/8"
`

const yamlConfig = `# the same in YAML
apiToken: from-file-token
apiPort: 4001
adminPort: 4000
data: /srv/relayd
testUseWeakCrypto: true
heartbeatInterval: 3s
coverRate: 2.5
sendRate: 4
peers:
  - /ip4/192.0.2.1/tcp/1/p2p/a
  - /ip4/192.0.2.2/tcp/2/p2p/b
exitAllow: "*:443, 10.0.0.0/8"
`

// TestLoadFile: a TOML and a YAML file set every kind of key (string, integer, boolean,
// duration, rate, list as a list or as one comma-separated string) to the same configuration,
// and each key's source is the file and its line.
func TestLoadFile(t *testing.T) {
	for name, content := range map[string]string{"relayd.toml": tomlConfig, "relayd.yaml": yamlConfig, "relayd.yml": yamlConfig} {
		t.Run(name, func(t *testing.T) {
			path := writeConfig(t, name, content)
			l := load(t, []string{"--config", path}, nil)
			c := l.Config
			if c.APIToken != "from-file-token" || c.APIPort != 4001 || c.AdminPort != 4000 || c.Data != "/srv/relayd" || !c.WeakCrypto ||
				c.HeartbeatInterval != 3*time.Second || c.CoverRate != 2.5 || c.SendRate != 4 {
				t.Fatalf("config from %s: %+v", name, c)
			}
			if !reflect.DeepEqual(c.Peers, []string{"/ip4/192.0.2.1/tcp/1/p2p/a", "/ip4/192.0.2.2/tcp/2/p2p/b"}) ||
				!reflect.DeepEqual(c.ExitAllow, []string{"*:443", "10.0.0.0/8"}) {
				t.Fatalf("lists from %s: peers %q exitAllow %q", name, c.Peers, c.ExitAllow)
			}
			if c.Identity != filepath.Join("/srv/relayd", "identity.json") {
				t.Fatalf("identity %q does not follow the file's data directory", c.Identity)
			}
			if got, want := l.Source("apiPort"), (Source{Kind: FromFile, Name: path, Line: 3}); got != want {
				t.Fatalf("apiPort source %+v, want %+v", got, want)
			}
			if got := l.Source("apiHost"); got != (Source{}) {
				t.Fatalf("apiHost source %+v, want the default", got)
			}
			if l.File != path || l.FileSource.Kind != FromFlag {
				t.Fatalf("file %q from %v", l.File, l.FileSource)
			}
		})
	}
}

// TestLoadFileValues: values whose form a file may vary: a token amount as a number or a
// string, a chain address in YAML without quotes, durations of 0.
func TestLoadFileValues(t *testing.T) {
	const addr = "0x059c779Fd53Eb799aF70Bb720960F6787eB4548D"
	for content, want := range map[string]Config{
		"channelFunding = 250\n":           {ChannelFunding: "250"},
		"channelFunding = 2.5\n":           {ChannelFunding: "2.5"},
		"channelFunding = \"0.125\"\n":     {ChannelFunding: "0.125"},
		"mixDelayMin = 0\n":                {MixDelayMin: 0},
		"mixDelayMin = \"20ms\"\n":         {MixDelayMin: 20 * time.Millisecond},
		"channelsContract: " + addr + "\n": {ChannelsContract: addr},
		"channelFunding: 7\nsendRate: 0\n": {ChannelFunding: "7", SendRate: 0},
	} {
		name := "c.toml"
		if strings.Contains(content, ": ") {
			name = "c.yaml"
		}
		l := load(t, []string{"--config", writeConfig(t, name, content)}, nil)
		c := l.Config
		if (want.ChannelFunding != "" && c.ChannelFunding != want.ChannelFunding) || c.MixDelayMin != want.MixDelayMin ||
			(want.ChannelsContract != "" && c.ChannelsContract != want.ChannelsContract) ||
			(strings.Contains(content, "sendRate") && c.SendRate != 0) {
			t.Errorf("%q: funding %q min %v contract %q send %v", content, c.ChannelFunding, c.MixDelayMin, c.ChannelsContract, c.SendRate)
		}
	}
	path := writeConfig(t, "c.toml", "channelFunding = true\n")
	if _, err := Load([]string{"--config", path}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "line 1: channelFunding: want an amount of tokens") {
		t.Fatalf("a boolean amount: %v", err)
	}
}

// TestPrecedence: one test per rule of flag > env > file > default, each checking the value and
// the source.
func TestPrecedence(t *testing.T) {
	path := writeConfig(t, "relayd.toml", "apiPort = 4001\nlogLevel = \"debug\"\npeers = [\"/ip4/192.0.2.9/tcp/9/p2p/f\"]\n")
	tests := []struct {
		name    string
		args    []string
		environ map[string]string
		port    int
		source  SourceKind
	}{
		{"default without anything", nil, nil, 3001, FromDefault},
		{"file over default", []string{"--config", path}, nil, 4001, FromFile},
		{"env over file", []string{"--config", path}, map[string]string{"RELAYD_API_PORT": "5001"}, 5001, FromEnv},
		{"flag over env and file", []string{"--config", path, "--apiPort", "6001"}, map[string]string{"RELAYD_API_PORT": "5001"}, 6001, FromFlag},
		{"flag over file", []string{"--config", path, "--apiPort=6001"}, nil, 6001, FromFlag},
		{"flag over env", []string{"--apiPort", "6001"}, map[string]string{"RELAYD_API_PORT": "5001"}, 6001, FromFlag},
		{"env over default", nil, map[string]string{"RELAYD_API_PORT": "5001"}, 5001, FromEnv},
		{"empty env is unset", []string{"--config", path}, map[string]string{"RELAYD_API_PORT": ""}, 4001, FromFile},
		{"RELAYD_CONFIG names the file", nil, map[string]string{"RELAYD_CONFIG": path}, 4001, FromFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := load(t, tt.args, tt.environ)
			if l.Config.APIPort != tt.port || l.Source("apiPort").Kind != tt.source {
				t.Fatalf("apiPort %d from %v, want %d from kind %d", l.Config.APIPort, l.Source("apiPort"), tt.port, tt.source)
			}
		})
	}
	// A list given by a flag replaces the file's list; it is not appended to.
	l := load(t, []string{"--config", path, "--peers", "/ip4/192.0.2.1/tcp/1/p2p/a"}, map[string]string{"RELAYD_LOG_LEVEL": "warn"})
	if !reflect.DeepEqual(l.Config.Peers, []string{"/ip4/192.0.2.1/tcp/1/p2p/a"}) || l.Config.LogLevel != "warn" {
		t.Fatalf("peers %q logLevel %q", l.Config.Peers, l.Config.LogLevel)
	}
	// --config wins over RELAYD_CONFIG.
	other := writeConfig(t, "other.yaml", "apiPort: 7001\n")
	l = load(t, []string{"--config", other}, map[string]string{"RELAYD_CONFIG": path})
	if l.Config.APIPort != 7001 || l.File != other || l.FileSource.Kind != FromFlag {
		t.Fatalf("--config over RELAYD_CONFIG: port %d file %q", l.Config.APIPort, l.File)
	}
	// --config "" reads no file, whatever RELAYD_CONFIG says.
	l = load(t, []string{"--config", ""}, map[string]string{"RELAYD_CONFIG": path})
	if l.Config.APIPort != 3001 || l.File != "" {
		t.Fatalf("--config \"\": port %d file %q", l.Config.APIPort, l.File)
	}
	l = load(t, nil, map[string]string{"RELAYD_CONFIG": other})
	if l.FileSource != (Source{Kind: FromEnv, Name: "RELAYD_CONFIG"}) {
		t.Fatalf("file source %+v", l.FileSource)
	}
}

// TestLoadFileErrors: whatever is wrong with a config file is one error line naming the file,
// the line and the key, and never shows a secret's value.
func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                string // the error's text after "config file <path>"
	}{
		{"unknown key", "c.toml", "apiPort = 1\napiport = 2\n", `, line 2: apiport: unknown key (the keys are the flag names of relayd -h; did you mean apiPort?)`},
		{"environment-styled key", "c.yaml", "RELAYD_API_TOKEN: x\n", `, line 1: RELAYD_API_TOKEN: unknown key (the keys are the flag names of relayd -h; did you mean apiToken?)`},
		{"unknown key no match", "c.yaml", "apiPort: 1\n\nfrobnicate: true\n", `, line 3: frobnicate: unknown key (the keys are the flag names of relayd -h)`},
		{"string for an integer", "c.toml", "apiPort = \"3001\"\n", `, line 1: apiPort: want an integer, got a string`},
		{"integer for a string", "c.toml", "apiToken = 12345678\n", `, line 1: apiToken: want a string (in quotes), got an integer`},
		{"string for a boolean", "c.yaml", "init: \"yes\"\n", `, line 1: init: want true or false, got a string`},
		{"number for a duration", "c.toml", "\nheartbeatInterval = 10\n", `, line 2: heartbeatInterval: want a duration in quotes such as "10s" or "250ms", got an integer`},
		{"bad duration", "c.toml", "heartbeatInterval = \"10 parsecs\"\n", `, line 1: heartbeatInterval: invalid value "10 parsecs": want a duration such as 10s or 250ms`},
		{"fraction for an integer", "c.yaml", "apiPort: 3001.5\n", `, line 1: apiPort: want an integer, got a number with a fraction`},
		{"string for a rate", "c.toml", "coverRate = \"fast\"\n", `, line 1: coverRate: want a number, got a string`},
		{"number in a list", "c.yaml", "peers: [\"/ip4/192.0.2.1/tcp/1/p2p/a\", 7]\n", `, line 1: peers: want a list of strings, got an integer in the list`},
		{"no value", "c.yaml", "apiHost:\n", `, line 1: apiHost: want a string (in quotes), got no value`},
		{"table", "c.toml", "[api]\nport = 1\n", `, line 1: api: unknown key (the keys are the flag names of relayd -h)`},
		{"table of a flag's name", "c.yaml", "network:\n  name: x\n", `, line 1: network: is a table: the file is flat, one line per flag name`},
		{"config in the file", "c.toml", "config = \"other.toml\"\n", `, line 1: config: a config file cannot name another one`},
		{"version in the file", "c.toml", "version = true\n", `, line 1: version: is a command-line flag only`},
		{"toml syntax", "c.toml", "apiPort = 1\napiHost = \n", `, line 2: `},
		{"toml duplicate key", "c.toml", "apiPort = 1\napiPort = 2\n", `, line 2: `},
		{"yaml syntax", "c.yaml", "apiPort: 1\n  apiHost: x\n", `, line 2: `},
		{"yaml list", "c.yaml", "- apiPort\n", `, line 1: `},
		{"json", "c.json", "{}", `: must be TOML (a name ending in .toml) or YAML (.yaml, .yml)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.file, tt.content)
			_, err := Load([]string{"--config", path}, env(nil), io.Discard)
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, ErrFile) {
				t.Fatalf("err %v, want a *FileError", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "config file "+path+tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q, want one line starting %q", msg, "config file "+path+tt.want)
			}
			if strings.Contains(msg, "12345678") {
				t.Fatalf("error shows the token: %q", msg)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope.toml")
		_, err := Load(nil, env(map[string]string{"RELAYD_CONFIG": path}), io.Discard)
		if want := "config file " + path + ": cannot be read: no such file or directory"; err == nil || err.Error() != want {
			t.Fatalf("err %v, want %q", err, want)
		}
	})
	t.Run("directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d.toml")
		os.Mkdir(dir, 0o700)
		if _, err := Load([]string{"--config", dir}, env(nil), io.Discard); !errors.Is(err, ErrFile) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("too big", func(t *testing.T) {
		path := writeConfig(t, "big.toml", "# "+strings.Repeat("x", maxConfigFile)+"\n")
		if _, err := Load([]string{"--config", path}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Fatalf("err %v", err)
		}
	})
}

// TestLoadFileSecretsMode: a file that holds the API token or the password must not be
// readable by other users; one without secrets may be.
func TestLoadFileSecretsMode(t *testing.T) {
	for content, refused := range map[string]bool{
		"apiToken = \"S3cret!token\"\n": true,
		"password: hunter2hunter2\n":    true,
		"apiPort = 4001\n":              false,
	} {
		name := "c.toml"
		if strings.Contains(content, ":") {
			name = "c.yaml"
		}
		path := writeConfig(t, name, content)
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load([]string{"--config", path}, env(nil), io.Discard)
		if refused != (err != nil) {
			t.Fatalf("%q in a 0644 file: %v", content, err)
		}
		if refused && (!strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "S3cret")) {
			t.Fatalf("error %q", err)
		}
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		if _, err := Load([]string{"--config", path}, env(nil), io.Discard); err != nil {
			t.Fatalf("%q in a 0640 file: %v", content, err)
		}
	}
}

func TestLoadEnvErrors(t *testing.T) {
	for name, want := range map[string]string{
		"RELAYD_API_PORT":           `RELAYD_API_PORT: invalid value "x": want an integer`,
		"RELAYD_INIT":               `RELAYD_INIT: invalid value "x": want true or false`,
		"RELAYD_MIX_DELAY_MIN":      `RELAYD_MIX_DELAY_MIN: invalid value "x": want a duration such as 10s or 250ms`,
		"RELAYD_SEND_RATE":          `RELAYD_SEND_RATE: invalid value "x": must be a number of packets per second`,
		"RELAYD_HEARTBEAT_INTERVAL": `RELAYD_HEARTBEAT_INTERVAL: invalid value "x": want a duration such as 10s or 250ms`,
	} {
		if _, err := Load(nil, env(map[string]string{name: "x"}), io.Discard); err == nil || err.Error() != want {
			t.Errorf("%s=x: %v, want %q", name, err, want)
		}
	}
	// Variables that are no flag's are not read: RELAYD_VERSION does not print the version.
	if _, err := Load(nil, env(map[string]string{"RELAYD_VERSION": "true", "RELAYD_FROBNICATE": "1"}), io.Discard); err != nil {
		t.Fatalf("unknown variables: %v", err)
	}
}

func TestLoadVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"--apiPort", "1", "--version"}} {
		if _, err := Load(args, env(nil), io.Discard); !errors.Is(err, ErrVersion) {
			t.Errorf("%q: %v, want ErrVersion", args, err)
		}
	}
}

// TestEffective: every flag is a key of the effective configuration with its value and
// source; secrets are redacted; and the output is a config file that loads to the same
// configuration.
func TestEffective(t *testing.T) {
	path := writeConfig(t, "relayd.toml", "apiPort = 4001\npeers = [\"/ip4/192.0.2.1/tcp/1/p2p/a\"]\nprovider = \"https://user:pw@rpc.example.org/v3/SECRETKEY123?key=QUERYSECRET\"\n")
	l := load(t, []string{"--config", path, "--apiToken", "S3cret!token", "--coverRate", "2.5"},
		map[string]string{"RELAYD_PASSWORD": "hunter2hunter2", "RELAYD_MIX_DELAY_MAX": "2s"})
	var out bytes.Buffer
	if err := l.WriteEffective(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, secret := range []string{"S3cret", "hunter2", "SECRETKEY123", "QUERYSECRET", "user:pw", "v3"} {
		if strings.Contains(text, secret) {
			t.Fatalf("effective configuration shows %q:\n%s", secret, text)
		}
	}
	for _, want := range []string{
		`apiToken = "[redacted]"`, "# flag\n",
		`password = "[redacted]"`, "# env RELAYD_PASSWORD\n",
		`provider = "https://rpc.example.org/[redacted]"`, "# file " + path + ":3\n",
		"apiPort = 4001", "# file " + path + ":1\n",
		`peers = ["/ip4/192.0.2.1/tcp/1/p2p/a"]`,
		`mixDelayMax = "2s"`, "coverRate = 2.5", `apiHost = "127.0.0.1"`, "# default\n",
		`identity = "` + filepath.Join("relayd-data", "identity.json") + `"`,
		"# config file: " + path + " (flag)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("effective configuration lacks %q:\n%s", want, text)
		}
	}
	var keys []string
	for _, m := range regexp.MustCompile(`(?m)^(\w+) = `).FindAllStringSubmatch(text, -1) {
		keys = append(keys, m[1])
	}
	if names := flagNames(t); len(keys) != len(names)-1 { // all but --config
		t.Fatalf("%d keys for %d flags: %q", len(keys), len(names), keys)
	}

	// Without secrets, the output loads back to the same configuration.
	l = load(t, []string{"--config", path, "--coverRate", "2.5", "--exitAllow", "*:443", "--network", "tab\there \"quoted\""},
		map[string]string{"RELAYD_PROVIDER": "", "RELAYD_MIX_DELAY_MAX": "2s"})
	l.Config.Provider = ""
	out.Reset()
	if err := l.WriteEffective(&out); err != nil {
		t.Fatal(err)
	}
	again := load(t, []string{"--config", writeConfig(t, "again.toml", out.String())}, nil)
	want := l.Config
	want.identitySetByUser = true // the output names the identity
	if !reflect.DeepEqual(again.Config, want) {
		t.Fatalf("round trip:\n%+v\nwant\n%+v\nfile:\n%s", again.Config, want, out.String())
	}
}

func TestRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                  "",
		"http://127.0.0.1:8545":             "http://127.0.0.1:8545",
		"https://rpc.example.org/":          "https://rpc.example.org",
		"https://mainnet.infura.io/v3/KEY":  "https://mainnet.infura.io/[redacted]",
		"wss://rpc.example.org/?apikey=KEY": "wss://rpc.example.org/[redacted]",
		"https://user:KEY@rpc.example.org":  "https://rpc.example.org/[redacted]",
		"https://rpc.example.org#KEY":       "https://rpc.example.org/[redacted]",
		"rpc.example.org/KEY":               "[redacted]",
		"https://rpc.example.org/%zzKEY":    "[redacted]",
		"mailto:KEY@example.org":            "[redacted]",
	} {
		if got := RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestAnnotate: a validation error about a key set by the environment or the file says so.
func TestAnnotate(t *testing.T) {
	path := writeConfig(t, "relayd.toml", "\napiPort = 70000\n")
	l := load(t, []string{"--config", path}, map[string]string{"RELAYD_LOG_LEVEL": "loud"})
	err := l.Annotate(&FieldError{"apiPort", "must be between 0 and 65535"})
	if want := "--apiPort must be between 0 and 65535 (set by file " + path + ":2)"; err.Error() != want {
		t.Fatalf("%q, want %q", err, want)
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatal("the annotated error is no longer a *FieldError")
	}
	if err := l.Annotate(&FieldError{"logLevel", "x"}); err.Error() != "--logLevel x (set by env RELAYD_LOG_LEVEL)" {
		t.Fatalf("%q", err)
	}
	if err := l.Annotate(&FieldError{"apiHost", "x"}); err.Error() != "--apiHost x" {
		t.Fatalf("%q", err)
	}
	other := errors.New("other")
	if l.Annotate(other) != other {
		t.Fatal("Annotate changed another error")
	}
}

// TestReadmeFlagTable: README.md's table of flags has a row for every flag.
func TestReadmeFlagTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(readme), "\n") {
		first, _, ok := strings.Cut(line, " | ")
		if !ok || !strings.HasPrefix(first, "| `--") {
			continue
		}
		for _, m := range regexp.MustCompile("`--(\\w+)`").FindAllStringSubmatch(first, -1) {
			rows[m[1]] = true
		}
	}
	for _, name := range flagNames(t) {
		if !rows[name] {
			t.Errorf("README.md has no row for --%s", name)
		}
	}
}
