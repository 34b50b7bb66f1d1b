package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/wait"
)

// The packaging of docs/PACKAGING.md: the systemd unit and its environment file, the compose
// example and the container image that scripts/build-image.sh writes.
const (
	unitFile    = "../packaging/systemd/relayd.service"
	envFile     = "../packaging/systemd/relayd.env"
	composeFile = "../packaging/compose.yaml"
	// imageTarball is where scripts/build-image.sh writes the image by default; RELAYD_IMAGE
	// names another.
	imageTarball = "../bin/relayd-image.tar"
)

// TestSystemdUnit checks the unit's sandboxing and stop timeout, that every flag its ExecStart
// passes and every RELAYD_* variable of its environment file and of the compose example is one
// that `relayd -h` lists, and, where systemd-analyze is installed, that systemd accepts the
// unit and rates its exposure low.
func TestSystemdUnit(t *testing.T) {
	unit := parseUnit(t, unitFile)
	svc := unit["Service"]
	for _, want := range []struct{ key, value string }{
		{"ProtectSystem", "strict"},
		{"ProtectHome", "yes"},
		{"PrivateTmp", "yes"},
		{"NoNewPrivileges", "yes"},
		{"CapabilityBoundingSet", ""},
		{"StateDirectory", "relayd"},
		{"Restart", "on-failure"},
		{"RestartPreventExitStatus", "2"}, // a usage error: restarting does not fix it
		{"LoadCredential", "password:/etc/relayd/password"},
		{"EnvironmentFile", "/etc/relayd/relayd.env"},
	} {
		if got, ok := svc.last(want.key); !ok || got != want.value {
			t.Errorf("[Service] %s=%q (set: %v), want %q", want.key, got, ok, want.value)
		}
	}
	if u, _ := svc.last("User"); svc.get("DynamicUser") != "yes" && (u == "" || u == "root") {
		t.Errorf("the unit runs as root: give DynamicUser=yes or a User of its own")
	}
	families := strings.Fields(svc.get("RestrictAddressFamilies"))
	for _, f := range families {
		if !slices.Contains([]string{"AF_INET", "AF_INET6", "AF_NETLINK", "AF_UNIX"}, f) {
			t.Errorf("RestrictAddressFamilies allows %s", f)
		}
	}
	if !slices.Contains(families, "AF_INET") || !slices.Contains(families, "AF_INET6") {
		t.Errorf("RestrictAddressFamilies=%v: the node needs AF_INET and AF_INET6", families)
	}

	bin := buildRelayd(t, t.TempDir(), nil)
	flags, help := relaydFlags(t, bin)

	// ExecStart: the binary, then flags relayd knows; its data in the StateDirectory.
	execStart := strings.Fields(svc.get("ExecStart"))
	if len(execStart) == 0 || execStart[0] != "/usr/local/bin/relayd" {
		t.Fatalf("ExecStart=%v, want /usr/local/bin/relayd …", execStart)
	}
	for _, a := range execStart[1:] {
		if strings.HasPrefix(a, "-") {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !flags[name] {
				t.Errorf("ExecStart passes %s, which relayd -h does not list", a)
			}
		}
	}
	if i := slices.Index(execStart, "--data"); i < 0 || i+1 >= len(execStart) || execStart[i+1] != "%S/relayd" {
		t.Errorf("ExecStart=%v: want --data %%S/relayd (the StateDirectory)", execStart)
	}

	// The stop timeout covers a graceful shutdown at --shutdownTimeout's default.
	m := regexp.MustCompile(`(?m)^\s+-shutdownTimeout duration\n.*\(default (\S+)\)`).FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("relayd -h shows no default of -shutdownTimeout:\n%s", help)
	}
	shutdown, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	stop, err := time.ParseDuration(svc.get("TimeoutStopSec"))
	if err != nil {
		t.Fatalf("TimeoutStopSec=%q: %v", svc.get("TimeoutStopSec"), err)
	}
	if stop < 2*shutdown {
		t.Errorf("TimeoutStopSec=%v leaves a graceful shutdown (--shutdownTimeout %v for the servers alone) too little", stop, shutdown)
	}

	// Every variable the environment file and the compose example set is a flag's.
	for name, vars := range map[string][]string{envFile: envFileVars(t, envFile), composeFile: composeVars(t, composeFile)} {
		if len(vars) == 0 {
			t.Errorf("%s sets no RELAYD_* variable", name)
		}
		for _, v := range vars {
			if !envOfFlag(flags)[v] {
				t.Errorf("%s sets %s, which is no flag's variable (relayd -h)", name, v)
			}
		}
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit is not verified by systemd")
		return
	}
	// verify checks that ExecStart's binary exists: point it at the one just built.
	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "relayd.service")
	if err := os.WriteFile(tmp, bytes.ReplaceAll(b, []byte("/usr/local/bin/relayd"), []byte(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	// verify exits 0 on unknown keys and bad values, which it only prints: any output fails.
	out, err := runCmd(t, analyze, "verify", "--man=no", tmp)
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The exposure level (0 best, 10 worst) of `systemd-analyze security`, at most 2.0.
	if out, err := runCmd(t, analyze, "security", "--offline=true", "--threshold=20", tmp); err != nil {
		t.Errorf("systemd-analyze security: exposure above 2.0 (%v):\n%s", err, out)
	} else if m := regexp.MustCompile(`Overall exposure level for \S+: (\S+)`).FindSubmatch(out); m != nil {
		t.Logf("systemd-analyze security: overall exposure %s", m[1])
	}
}

// imageConfig is the part of an image's config file the test reads (Docker's format, which
// carries the health check).
type imageConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		Entrypoint   []string
		Cmd          []string
		User         string
		Env          []string
		ExposedPorts map[string]struct{}
		Volumes      map[string]struct{}
		Healthcheck  *struct {
			Test        []string
			Interval    time.Duration
			Timeout     time.Duration
			StartPeriod time.Duration
			Retries     int
		}
		StopSignal string
	} `json:"config"`
	RootFS struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// TestImage opens the image scripts/build-image.sh wrote (RELAYD_IMAGE, or bin/relayd-image.tar;
// skipped when there is none) and checks what docs/PACKAGING.md promises: the entrypoint, a
// non-root user that /etc/passwd names, the p2p (TCP and QUIC), API and admin ports, the /data volume it owns,
// the environment, the health check, CA certificates, and a static linux relayd that prints its
// version and usage, serves a node from the image's environment, answers its own health check
// and stops within the systemd unit's stop timeout.
func TestImage(t *testing.T) {
	tarball := os.Getenv("RELAYD_IMAGE")
	if tarball == "" {
		tarball = imageTarball
	}
	if _, err := os.Stat(tarball); err != nil {
		t.Skipf("no image at %s (scripts/build-image.sh builds it): %v", tarball, err)
	}
	cfg, files := readImage(t, tarball)

	if cfg.OS != "linux" {
		t.Errorf("os %q, want linux", cfg.OS)
	}
	c := cfg.Config
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/relayd"}) || len(c.Cmd) != 0 {
		t.Errorf("entrypoint %q, cmd %q; want [/usr/local/bin/relayd] and none", c.Entrypoint, c.Cmd)
	}
	uid, gid, ok := strings.Cut(c.User, ":")
	if !ok || uid == "0" || uid == "" || uid == "root" || gid == "0" {
		t.Errorf("user %q, want a non-root uid:gid", c.User)
	}
	if u := passwdUser(t, files["etc/passwd"], uid); u == "" {
		t.Errorf("/etc/passwd has no user %s", uid)
	}
	wantPorts := map[string]struct{}{"9091/tcp": {}, "9091/udp": {}, "3001/tcp": {}, "3000/tcp": {}}
	if fmt.Sprint(c.ExposedPorts) != fmt.Sprint(wantPorts) {
		t.Errorf("exposed ports %v, want %v", c.ExposedPorts, wantPorts)
	}
	if _, ok := c.Volumes["/data"]; !ok || len(c.Volumes) != 1 {
		t.Errorf("volumes %v, want /data alone", c.Volumes)
	}
	env := map[string]string{}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["RELAYD_DATA"] != "/data" || env["RELAYD_HOST"] != "0.0.0.0:9091" {
		t.Errorf("env %q: want RELAYD_DATA=/data and RELAYD_HOST=0.0.0.0:9091", c.Env)
	}
	if _, set := env["RELAYD_API_HOST"]; set {
		t.Errorf("env %q sets RELAYD_API_HOST: the API stays on loopback unless the operator says", c.Env)
	}
	if h := c.Healthcheck; h == nil || !slices.Equal(h.Test, []string{"CMD", "/usr/local/bin/relayd", "healthcheck"}) ||
		h.Interval <= 0 || h.Timeout <= 0 || h.Retries <= 0 {
		t.Errorf("health check %+v, want CMD /usr/local/bin/relayd healthcheck with an interval, timeout and retries", h)
	}
	if c.StopSignal != "SIGTERM" {
		t.Errorf("stop signal %q, want SIGTERM", c.StopSignal)
	}

	data := files["data"]
	if data == nil || data.hdr.Typeflag != tar.TypeDir || strconv.Itoa(data.hdr.Uid) != uid || data.hdr.Mode&0o077 != 0 {
		t.Errorf("/data: %+v, want a directory of uid %s that others cannot read", data, uid)
	}
	if tmp := files["tmp"]; tmp == nil || tmp.hdr.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp: %+v, want mode 1777", tmp)
	}
	certs := files["etc/ssl/certs/ca-certificates.crt"]
	if certs == nil || !x509.NewCertPool().AppendCertsFromPEM(certs.body) {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt holds no CA certificate")
	}

	bin := files["usr/local/bin/relayd"]
	if bin == nil || bin.hdr.Mode&0o111 == 0 {
		t.Fatalf("no executable /usr/local/bin/relayd in the image")
	}
	f, err := elf.NewFile(bytes.NewReader(bin.body))
	if err != nil {
		t.Fatalf("/usr/local/bin/relayd: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("/usr/local/bin/relayd is dynamically linked (%v): the image has no libc", p.Type)
		}
	}
	bi, err := buildinfo.Read(bytes.NewReader(bin.body))
	if err != nil {
		t.Fatalf("/usr/local/bin/relayd: %v", err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if bi.Path != "github.com/relayd/relayd/cmd/relayd" || settings["GOOS"] != "linux" || settings["CGO_ENABLED"] != "0" ||
		settings["GOARCH"] != cfg.Architecture {
		t.Errorf("/usr/local/bin/relayd is %s built with %v; want github.com/relayd/relayd/cmd/relayd, linux/%s, CGO_ENABLED=0",
			bi.Path, settings, cfg.Architecture)
	}
	if cfg.Architecture != runtime.GOARCH {
		t.Skipf("the image is for %s: this %s machine does not run its binary", cfg.Architecture, runtime.GOARCH)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "relayd")
	if err := os.WriteFile(path, bin.body, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runCmd(t, path, "version"); err != nil || !strings.HasPrefix(string(out), "relayd ") {
		t.Errorf("relayd version: %v\n%s", err, out)
	}
	flags, _ := relaydFlags(t, path)
	for k := range env {
		if strings.HasPrefix(k, "RELAYD_") && !envOfFlag(flags)[k] {
			t.Errorf("the image sets %s, which is no flag's variable (relayd -h)", k)
		}
	}
	if out, err := runCmd(t, path, "healthcheck", "-h"); err != nil || !strings.Contains(string(out), "usage: relayd healthcheck") {
		t.Fatalf("relayd healthcheck -h (the image's health check): %v\n%s", err, out)
	}

	// Run the node as the container would: the image's environment, its data in a fresh /data,
	// the API on loopback; the health check fails until it serves, then passes.
	ports := freePorts(t, 2)
	nodeEnv := []string{
		"RELAYD_DATA=" + filepath.Join(dir, "data"),
		"RELAYD_HOST=127.0.0.1:" + strconv.Itoa(ports[0]), // the image's 0.0.0.0:9091, on a port of the test's own
		"RELAYD_API_PORT=" + strconv.Itoa(ports[1]),
		"RELAYD_ADMIN_PORT=0",
		"RELAYD_API_TOKEN=image-test-token",
		"RELAYD_PASSWORD=image-test-password",
		"RELAYD_TEST_USE_WEAK_CRYPTO=true",
		"RELAYD_INIT=true",
		"RELAYD_SEND_RATE=0",
		"RELAYD_COVER_RATE=0",
	}
	check := func() (string, error) {
		cmd := exec.CommandContext(t.Context(), path, "healthcheck")
		cmd.Env = nodeEnv
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := check(); err == nil {
		t.Fatalf("relayd healthcheck passed before the node started: %s", out)
	}
	var log bytes.Buffer
	node := exec.Command(path)
	node.Env = nodeEnv
	node.Stdout, node.Stderr = &log, &log
	node.SysProcAttr = sysProcAttr()
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- node.Wait() }()
	t.Cleanup(func() { node.Process.Kill() })
	var last string
	if !wait.Until(func() bool {
		out, err := check()
		last = out
		return err == nil
	}, 60*time.Second) {
		t.Fatalf("relayd healthcheck never passed; last: %s\nnode log:\n%s", last, log.String())
	}
	if !strings.Contains(last, "ready") {
		t.Errorf("relayd healthcheck passed saying %q", last)
	}

	// SIGTERM stops it, within the systemd unit's TimeoutStopSec.
	stop, err := time.ParseDuration(parseUnit(t, unitFile)["Service"].get("TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	node.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("relayd exited with %v after SIGTERM\n%s", err, log.String())
		}
		t.Logf("relayd stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	case <-time.After(stop):
		t.Errorf("relayd did not stop within TimeoutStopSec (%v) of SIGTERM\n%s", stop, log.String())
	}
}

// tarFile is one file of an image's file system.
type tarFile struct {
	hdr  *tar.Header
	body []byte
}

// readImage reads a `docker save` tarball of one image: its config and its layers' files
// applied in order (whiteouts are not expected in this image and fail the test).
func readImage(t *testing.T, tarball string) (imageConfig, map[string]*tarFile) {
	t.Helper()
	outer := readTar(t, tarball, mustOpen(t, tarball))
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(outer["manifest.json"].body, &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("%s: manifest.json: %v (%d images)", tarball, err, len(manifest))
	}
	m := manifest[0]
	t.Logf("%s: %v, %d layers", tarball, m.RepoTags, len(m.Layers))
	var cfg imageConfig
	if f := outer[m.Config]; f == nil {
		t.Fatalf("%s: no config %s", tarball, m.Config)
	} else if err := json.Unmarshal(f.body, &cfg); err != nil {
		t.Fatalf("%s: config: %v", tarball, err)
	}
	if len(cfg.RootFS.DiffIDs) != len(m.Layers) {
		t.Fatalf("%s: %d layers, %d diff IDs", tarball, len(m.Layers), len(cfg.RootFS.DiffIDs))
	}
	files := map[string]*tarFile{}
	for _, l := range m.Layers {
		f := outer[l]
		if f == nil {
			t.Fatalf("%s: no layer %s", tarball, l)
		}
		var r io.Reader = bytes.NewReader(f.body)
		if bytes.HasPrefix(f.body, []byte{0x1f, 0x8b}) {
			zr, err := gzip.NewReader(r)
			if err != nil {
				t.Fatalf("%s: layer %s: %v", tarball, l, err)
			}
			r = zr
		}
		for name, f := range readTar(t, tarball+":"+l, r) {
			if strings.HasPrefix(path.Base(name), ".wh.") {
				t.Fatalf("%s: layer %s has a whiteout %s", tarball, l, name)
			}
			files[name] = f
		}
	}
	return cfg, files
}

// readTar reads every entry of a tar stream, by clean relative name.
func readTar(t *testing.T, what string, r io.Reader) map[string]*tarFile {
	t.Helper()
	out := map[string]*tarFile{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", what, h.Name, err)
		}
		out[strings.TrimPrefix(path.Clean("/"+h.Name), "/")] = &tarFile{hdr: h, body: body}
	}
}

func mustOpen(t *testing.T, name string) io.Reader {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return bufio.NewReader(f)
}

// passwdUser is the name /etc/passwd gives uid, "" when none.
func passwdUser(t *testing.T, passwd *tarFile, uid string) string {
	t.Helper()
	if passwd == nil {
		t.Fatal("the image has no /etc/passwd")
	}
	for _, line := range strings.Split(string(passwd.body), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 3 && f[2] == uid {
			return f[0]
		}
	}
	return ""
}

// unitSection holds a unit section's assignments in order; a key may repeat.
type unitSection map[string][]string

// get is the key's assignments joined by spaces (how list settings such as
// RestrictAddressFamilies add up).
func (s unitSection) get(key string) string { return strings.Join(s[key], " ") }

// last is the key's last assignment.
func (s unitSection) last(key string) (string, bool) {
	v := s[key]
	if len(v) == 0 {
		return "", false
	}
	return v[len(v)-1], true
}

// parseUnit reads a systemd unit file's sections (comments and blank lines skipped; no line
// continuations, which the unit does not use).
func parseUnit(t *testing.T, name string) map[string]unitSection {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]unitSection{}
	var sec unitSection
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasSuffix(line, "\\"):
			t.Fatalf("%s:%d: a line continuation", name, i+1)
		case line[0] == '[' && line[len(line)-1] == ']':
			sec = unitSection{}
			out[line[1:len(line)-1]] = sec
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || sec == nil {
				t.Fatalf("%s:%d: %q is no assignment in a section", name, i+1, line)
			}
			sec[strings.TrimSpace(k)] = append(sec[strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	if out["Service"] == nil {
		t.Fatalf("%s has no [Service] section", name)
	}
	return out
}

// envFileVars are the variables an environment file sets.
func envFileVars(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var vars []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, _, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is no assignment", name, line)
		}
		vars = append(vars, k)
	}
	return vars
}

// composeService is the part of packaging/compose.yaml's relayd service the tests read.
type composeService struct {
	Image           string            `yaml:"image"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	Environment     map[string]string `yaml:"environment"`
	Secrets         []string          `yaml:"secrets"`
	Volumes         []string          `yaml:"volumes"`
	Ports           []string          `yaml:"ports"`
	Healthcheck     struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// readCompose reads the relayd service of a compose file.
func readCompose(t *testing.T, name string) composeService {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
		Secrets  map[string]any            `yaml:"secrets"`
		Volumes  map[string]any            `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	svc, ok := f.Services["relayd"]
	if !ok {
		t.Fatalf("%s has no relayd service", name)
	}
	for _, s := range svc.Secrets {
		if _, ok := f.Secrets[s]; !ok {
			t.Errorf("%s: the service uses secret %s, which the file does not define", name, s)
		}
	}
	return svc
}

// composeVars are the variables the compose file's relayd service sets.
func composeVars(t *testing.T, name string) []string {
	t.Helper()
	var vars []string
	for k := range readCompose(t, name).Environment {
		vars = append(vars, k)
	}
	return vars
}

// TestCompose checks packaging/compose.yaml against the image and the systemd unit: the data
// volume, the health check, a password from a secret file, the API published on the host's
// loopback only, and the unit's stop timeout.
func TestCompose(t *testing.T) {
	svc := readCompose(t, composeFile)
	if !slices.ContainsFunc(svc.Volumes, func(v string) bool { return strings.HasSuffix(v, ":/data") }) {
		t.Errorf("volumes %v: none mounted on /data", svc.Volumes)
	}
	if !slices.Equal(svc.Healthcheck.Test, []string{"CMD", "/usr/local/bin/relayd", "healthcheck"}) {
		t.Errorf("health check %q, want the image's: CMD /usr/local/bin/relayd healthcheck", svc.Healthcheck.Test)
	}
	if pw := svc.Environment["RELAYD_PASSWORD_FILE"]; !strings.HasPrefix(pw, "/run/secrets/") || svc.Environment["RELAYD_PASSWORD"] != "" {
		t.Errorf("the password comes from %q: want a file under /run/secrets and no RELAYD_PASSWORD", pw)
	}
	if tok := svc.Environment["RELAYD_API_TOKEN"]; !strings.HasPrefix(tok, "${RELAYD_API_TOKEN:?") {
		t.Errorf("RELAYD_API_TOKEN is %q: want the operator's, required (${RELAYD_API_TOKEN:?…})", tok)
	}
	for _, want := range []string{"9091:9091/tcp", "9091:9091/udp", "127.0.0.1:3001:3001/tcp", "127.0.0.1:3000:3000/tcp"} {
		if !slices.Contains(svc.Ports, want) {
			t.Errorf("ports %v: want %s", svc.Ports, want)
		}
	}
	for _, p := range svc.Ports {
		addr, _, _ := strings.Cut(p, "/")
		parts := strings.Split(addr, ":") // [host:]hostPort:containerPort
		if c := parts[len(parts)-1]; (c == "3001" || c == "3000") && (len(parts) != 3 || parts[0] != "127.0.0.1") {
			t.Errorf("port %s publishes the API or admin server beyond the host's loopback", p)
		}
	}
	grace, err := time.ParseDuration(svc.StopGracePeriod)
	if err != nil {
		t.Fatalf("stop_grace_period %q: %v", svc.StopGracePeriod, err)
	}
	stop, err := time.ParseDuration(parseUnit(t, unitFile)["Service"].get("TimeoutStopSec"))
	if err != nil {
		t.Fatal(err)
	}
	if grace < stop {
		t.Errorf("stop_grace_period %v is shorter than the unit's TimeoutStopSec %v", grace, stop)
	}
}

// relaydFlags are the flags `relayd -h` lists (without their dashes), and the usage text.
func relaydFlags(t *testing.T, bin string) (map[string]bool, string) {
	t.Helper()
	out, err := runCmd(t, bin, "-h")
	if err != nil {
		t.Fatalf("relayd -h: %v\n%s", err, out)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -(\w+)`).FindAllSubmatch(out, -1) {
		flags[string(m[1])] = true
	}
	if len(flags) < 20 || !flags["apiToken"] {
		t.Fatalf("relayd -h lists %d flags:\n%s", len(flags), out)
	}
	return flags, string(out)
}

// envOfFlag is the set of RELAYD_* variables of flags.
func envOfFlag(flags map[string]bool) map[string]bool {
	out := map[string]bool{}
	for f := range flags {
		out[config.EnvName(f)] = true
	}
	return out
}

// buildRelayd builds cmd/relayd into dir with the extra environment given.
func buildRelayd(t *testing.T, dir string, env []string) string {
	t.Helper()
	bin := filepath.Join(dir, "relayd")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/relayd/relayd/cmd/relayd")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build relayd: %v\n%s", err, out)
	}
	return bin
}

// runCmd runs a command to its end with an empty environment and returns its combined output.
func runCmd(t *testing.T, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	return cmd.CombinedOutput()
}
