package node

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/relay"
	"github.com/relayd/relayd/internal/tickets"
)

// TestMixingAndCoverSettings: mixDelayMean and coverRate start from their flags, show in GET
// /settings, change over REST and the admin command, and a changed mean reaches the relay at
// once; values out of range or that the flags' cap cannot hold are refused and change nothing;
// the stored values win over the flags at the next start.
func TestMixingAndCoverSettings(t *testing.T) {
	cfg := testConfig(t)
	cfg.MixDelayMin, cfg.MixDelayMean, cfg.MixDelayMax, cfg.CoverRate = time.Millisecond, 20*time.Millisecond, 0, 0.5
	n, stop := runNode(t, cfg)
	if got, want := n.relay.Mixing(), (relay.Mixing{Min: time.Millisecond, Mean: 20 * time.Millisecond, Max: 201 * time.Millisecond}); got != want {
		t.Fatalf("relay mixing at start %+v, want %+v", got, want)
	}
	net := &testNet{t: t}
	var got map[string]any
	net.mustCall(n, http.MethodGet, "/settings", "", http.StatusOK, &got)
	if got["mixDelayMean"] != "20ms" || got["coverRate"] != 0.5 {
		t.Fatalf("GET /settings: %v", got)
	}

	net.mustCall(n, http.MethodPut, "/settings", `{"mixDelayMean":"50ms","coverRate":"2.5"}`, http.StatusOK, &got)
	if got["mixDelayMean"] != "50ms" || got["coverRate"] != 2.5 {
		t.Fatalf("PUT /settings answered %v", got)
	}
	if got, want := n.relay.Mixing(), (relay.Mixing{Min: time.Millisecond, Mean: 50 * time.Millisecond, Max: 501 * time.Millisecond}); got != want {
		t.Fatalf("relay mixing after PUT %+v, want %+v", got, want)
	}
	net.mustCall(n, http.MethodPut, "/settings/coverRate", `{"settingValue":4}`, http.StatusNoContent, nil)
	net.mustCall(n, http.MethodPut, "/settings/mixDelayMean", `{"settingValue":"0s"}`, http.StatusNoContent, nil)
	if got, want := n.relay.Mixing(), (relay.Mixing{Min: time.Millisecond, Max: time.Millisecond}); got != want {
		t.Fatalf("relay mixing with mean 0 %+v, want %+v", got, want)
	}
	net.mustCall(n, http.MethodPut, "/settings/mixDelayMean", `{"settingValue":"30ms"}`, http.StatusNoContent, nil)

	var e struct{ Status, Error string }
	for _, body := range []string{
		`{"mixDelayMean":"-1ms"}`, `{"mixDelayMean":"11s"}`, `{"mixDelayMean":"soon"}`, `{"mixDelayMean":20}`,
		`{"coverRate":-1}`, `{"coverRate":101}`, `{"coverRate":"fast"}`, `{"coverRate":true}`,
		`{"coverRate":1,"mixDelayMean":"-1s"}`, // all or none: coverRate stays
	} {
		if st := net.call(n, http.MethodPut, "/settings", body, &e); st != http.StatusBadRequest || e.Status != "INVALID_SETTING_VALUE" {
			t.Errorf("PUT /settings %s: %d %s, want 400 INVALID_SETTING_VALUE", body, st, e.Status)
		}
	}
	if s := n.settings.Get(); s.MixDelayMean != 30*time.Millisecond || s.CoverRate != 4 {
		t.Fatalf("a refused PUT changed the settings: %+v", s)
	}
	if m := n.relay.Mixing(); m.Mean != 30*time.Millisecond {
		t.Fatalf("a refused PUT changed the relay's mixing: %+v", m)
	}

	a := dialAdmin(t, n)
	first := func(string) bool { return true }
	for _, c := range []struct{ line, want string }{ // in order: the first reads the value before the second sets it
		{"settings mixDelayMean", "30ms"},
		{"settings mixDelayMean 40ms", `You have set your "mixDelayMean" settings to "40ms".`},
		{"settings coverRate 1.5", `You have set your "coverRate" settings to "1.5".`},
		{"settings mixDelayMean 1 hour", "settings takes a name and a value"},
		{"settings mixDelayMean 1h", "mixDelayMean must be a duration such as 20ms from 0 to 10s"},
		{"settings coverRate 200", "coverRate must be a number of packets per second from 0 to 100"},
	} {
		if out := a.run(c.line, first); !strings.Contains(out[0], c.want) {
			t.Errorf("%s: %q, want %q", c.line, out[0], c.want)
		}
	}
	if m := n.relay.Mixing(); m.Mean != 40*time.Millisecond {
		t.Fatalf("the admin command did not change the relay's mixing: %+v", m)
	}
	stop()

	cfg.MixDelayMean, cfg.CoverRate = 5*time.Millisecond, 0 // flags of the first start only
	n2 := startNode(t, cfg)
	if s := n2.settings.Get(); s.MixDelayMean != 40*time.Millisecond || s.CoverRate != 1.5 {
		t.Fatalf("settings after the restart: %+v", s)
	}
	if m := n2.relay.Mixing(); m.Mean != 40*time.Millisecond || m.Max != 401*time.Millisecond {
		t.Fatalf("relay mixing after the restart: %+v", m)
	}
}

// TestMixDelayMeanMustFitTheCap: with an explicit --mixDelayMax, a mean above what it caps is
// refused (INVALID_SETTING_VALUE) and changes nothing.
func TestMixDelayMeanMustFitTheCap(t *testing.T) {
	cfg := testConfig(t)
	cfg.MixDelayMean, cfg.MixDelayMax = 0, 100*time.Millisecond // uniform 0-100 ms
	n := startNode(t, cfg)
	if got, want := n.relay.Mixing(), (relay.Mixing{Max: 100 * time.Millisecond}); got != want {
		t.Fatalf("relay mixing %+v, want %+v", got, want)
	}
	net := &testNet{t: t}
	var e struct{ Status, Error string }
	if st := net.call(n, http.MethodPut, "/settings/mixDelayMean", `{"settingValue":"200ms"}`, &e); st != http.StatusBadRequest ||
		e.Status != "INVALID_SETTING_VALUE" || !strings.Contains(e.Error, "--mixDelayMax") {
		t.Fatalf("a mean above the cap: %d %s %q", st, e.Status, e.Error)
	}
	if got := n.relay.Mixing(); got.Mean != 0 || n.settings.Get().MixDelayMean != 0 {
		t.Fatalf("a refused mean changed the mixing: %+v", got)
	}
	net.mustCall(n, http.MethodPut, "/settings/mixDelayMean", `{"settingValue":"10ms"}`, http.StatusNoContent, nil)
	if got, want := n.relay.Mixing(), (relay.Mixing{Mean: 10 * time.Millisecond, Max: 100 * time.Millisecond}); got != want {
		t.Fatalf("relay mixing %+v, want %+v", got, want)
	}
}

// TestTicketSettings: winProb ("min" or a probability) and autoRedeemMaxGasShare show in GET
// /settings, change over REST, reach the ticket path at once, refuse what they cannot take and
// survive a restart.
func TestTicketSettings(t *testing.T) {
	cfg := testConfig(t)
	n, stop := runNode(t, cfg)
	net := &testNet{t: t}
	var got map[string]any
	net.mustCall(n, http.MethodGet, "/settings", "", http.StatusOK, &got)
	if got["winProb"] != "min" || got["autoRedeemMaxGasShare"] != 0.05 {
		t.Fatalf("defaults: %v", got)
	}
	net.mustCall(n, http.MethodPut, "/settings", `{"winProb":"0.05","autoRedeemMaxGasShare":0.2}`, http.StatusOK, &got)
	w, _ := tickets.ParseWinProb("0.05")
	if got["winProb"] != "0.05" || n.settings.WinProb() != w || n.settings.Get().RedeemPolicy().MaxGasShare != 0.2 {
		t.Fatalf("after PUT: %v, ticket path %d", got, n.settings.WinProb())
	}
	var e struct{ Status string }
	for _, body := range []string{`{"winProb":"0"}`, `{"winProb":"1.5"}`, `{"winProb":0.1}`, `{"winProb":"often"}`,
		`{"autoRedeemMaxGasShare":-0.1}`, `{"autoRedeemMaxGasShare":2}`} {
		if st := net.call(n, http.MethodPut, "/settings", body, &e); st != http.StatusBadRequest || e.Status != "INVALID_SETTING_VALUE" {
			t.Errorf("PUT /settings %s: %d %s, want 400 INVALID_SETTING_VALUE", body, st, e.Status)
		}
	}
	if n.settings.WinProb() != w {
		t.Fatal("a refused PUT changed the ticket path's win probability")
	}
	stop()
	n2 := startNode(t, cfg)
	if n2.settings.WinProb() != w || n2.settings.Get().AutoRedeemMaxGasShare != 0.2 {
		t.Fatalf("after a restart: win prob %d, %+v", n2.settings.WinProb(), n2.settings.Get())
	}
	net.mustCall(n2, http.MethodPut, "/settings/winProb", `{"settingValue":"min"}`, http.StatusNoContent, nil)
	if n2.settings.WinProb() != 0 {
		t.Fatal(`"min" did not return to following the network minimum`)
	}
}
