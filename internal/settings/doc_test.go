package settings_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/settings"
)

// TestDocUpToDate is the drift check of docs/SETTINGS.md: the committed file is what
// settings.Markdown writes from the definitions.
func TestDocUpToDate(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("..", "..", settings.DocPath))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, settings.Markdown()) {
		t.Fatalf("%s is out of date with internal/settings: run `go generate ./internal/settings` (or `make generate`) and commit it", settings.DocPath)
	}
}

// TestDocStatesEveryDefault: the generated table has a row per setting with its default, so the
// document cannot leave one out or show another default.
func TestDocStatesEveryDefault(t *testing.T) {
	doc := string(settings.Markdown())
	for _, d := range settings.Defs() {
		row := "| `" + d.Name + "` | " + d.Default() + " | "
		if !strings.Contains(doc, "\n"+row) {
			t.Errorf("no row %q", row)
		}
	}
}

// TestFlags: the flags the definitions name are relayd's flags, default to the settings'
// defaults and set the setting they name.
func TestFlags(t *testing.T) {
	c, err := config.Parse(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := c.InitialSettings(); err != nil || v != settings.Defaults() {
		t.Fatalf("the flags' defaults give %+v, %v; want the settings' defaults %+v", v, err, settings.Defaults())
	}
	// A value other than the default for every setting a flag sets.
	other := map[string]string{"strategy": "promiscuous", "maxChannels": "3", "channelFunding": "2.5",
		"mixDelayMean": "50ms", "coverRate": "2", "relayers": "2", "sendRate": "5", "autoRedeem": "false", "autoFund": "false",
		"exitAllow": "*.example.org:443,10.0.0.0/8", "socks5Listen": "127.0.0.1:1080", "socks5Exit": "bob"}
	var flagged []string
	for _, d := range settings.Defs() {
		if d.Flag == "" {
			continue
		}
		flagged = append(flagged, d.Name)
		text, ok := other[d.Name]
		if !ok {
			t.Errorf("%s: the test has no value for --%s", d.Name, d.Flag)
			continue
		}
		c, err := config.Parse([]string{"--" + d.Flag + "=" + text}, func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Errorf("--%s %s: %v", d.Flag, text, err)
			continue
		}
		got, err := c.InitialSettings()
		if err != nil {
			t.Errorf("--%s %s: %v", d.Flag, text, err)
			continue
		}
		want, err := settings.SetText(settings.Defaults(), d.Name, text)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || d.Text(got) == d.Default() {
			t.Errorf("--%s %s gives %s = %q, want %q", d.Flag, text, d.Name, d.Text(got), d.Text(want))
		}
	}
	if len(flagged) != len(other) {
		t.Errorf("settings with a flag: %v; the test expects %d", flagged, len(other))
	}
}

// TestReadmeFlagDefaults: the README's table of flags gives each flag that sets a setting the
// setting's default.
func TestReadmeFlagDefaults(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // flag → its default cell
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) >= 3 && strings.HasPrefix(cells[0], "| `--") && strings.HasSuffix(cells[0], "`") {
			rows[strings.TrimSuffix(strings.TrimPrefix(cells[0], "| `--"), "`")] = cells[1]
		}
	}
	for _, d := range settings.Defs() {
		if d.Flag == "" {
			continue
		}
		want := strings.TrimSuffix(strings.TrimSuffix(d.Default(), " tokens"), " token") // a flag's amounts are tokens
		got, ok := rows[d.Flag]
		if !ok {
			t.Errorf("README.md has no row for --%s", d.Flag)
		} else if got != want {
			t.Errorf("README.md gives --%s the default %q; the %s setting's default is %q", d.Flag, got, d.Name, want)
		}
	}
}
