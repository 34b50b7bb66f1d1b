package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/relayd/relayd/internal/settings"
)

// TestSettingsDefaults: GET /settings shows every setting of the settings package, each at its
// default on a fresh node.
func TestSettingsDefaults(t *testing.T) {
	srv, _ := newTestServer(t, false)
	status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/settings", auth)
	var got map[string]any
	if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil {
		t.Fatalf("%d %s", status, body)
	}
	want := map[string]any{"strategy": "passive", "includeRecipient": false, "maxChannels": 8.0,
		"channelFunding": "100000000000000000000", "autoRedeem": true, "autoFund": true, "autoRedeemCount": 100.0,
		"autoRedeemMaxGasShare": 0.05, "autoRedeemValue": "1000000000000000000", "mixDelayMean": "100ms",
		"winProb": "min", "relayers": 3.0, "coverRate": 1.0, "sendRate": 10.0, "maxMessageBytes": 65536.0,
		"alertNativeBalance": "10000000000000000", "alertChannelBalance": "1000000000000000000", "alertIndexerLag": 20.0, "alertHoldSeconds": 60.0,
		"socks5Listen": "", "socks5Exit": ""}
	if len(got) != len(want)+1 || len(got) != len(settings.Names()) {
		t.Fatalf("%d settings, want %d: %s", len(got), len(want)+1, body)
	}
	if list, ok := got["exitAllow"].([]any); !ok || len(list) != 0 {
		t.Errorf("exitAllow = %#v, want []", got["exitAllow"])
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
}

// TestSettingsUpdate: PUT /settings changes the settings it names, all or none, and answers all
// of them; PUT /settings/{setting} changes one. The settings package reads the values strictly
// and says why it refuses one, naming the setting and its rule, never echoing the value.
func TestSettingsUpdate(t *testing.T) {
	srv, n := newTestServer(t, false)
	status, _, body := doBody(t, http.MethodPut, srv.URL+Prefix+"/settings", auth, `{"strategy":"promiscuous","maxChannels":3,"winProb":"0.5","autoRedeemMaxGasShare":"0.1"}`)
	var got map[string]any
	if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || len(got) != len(settings.Names()) ||
		got["strategy"] != "promiscuous" || got["maxChannels"] != 3.0 || got["winProb"] != "0.5" || got["autoRedeemMaxGasShare"] != 0.1 || got["relayers"] != 3.0 {
		t.Fatalf("PUT /settings: %d %s", status, body)
	}
	if status, _, body := doBody(t, http.MethodPut, srv.URL+Prefix+"/settings/mixDelayMean", auth, `{"settingValue":"20ms"}`); status != http.StatusNoContent || body != "" {
		t.Fatalf("PUT /settings/mixDelayMean: %d %s", status, body)
	}
	if v := n.settings.Get(); v.MixDelayMean.String() != "20ms" || v.MaxChannels != 3 {
		t.Fatalf("settings %+v", v)
	}
	stored, _ := n.settingsStore.Settings()
	if string(stored["mixDelayMean"]) != `"20ms"` || string(stored["strategy"]) != `"promiscuous"` {
		t.Fatalf("stored %q", stored)
	}

	// Each refusal is the settings package's own error for the same change, whole (msg is set
	// where the document's validator refuses first).
	for _, tc := range []struct {
		name, path, body string
		code, msg        string
	}{
		{"unknown", "/settings", `{"colour":"blue"}`, CodeInvalidSetting, ""},
		{"unknown with a good one", "/settings", `{"maxChannels":5,"colour":"blue"}`, CodeInvalidSetting, ""},
		{"bad one with a good one", "/settings", `{"maxChannels":5,"winProb":"often"}`, CodeInvalidSettingValue, ""},
		{"one, unknown", "/settings/colour", `{"settingValue":"blue"}`, CodeInvalidSetting, ""},
		// The document refuses null for settingValue and for the settings it lists; the settings
		// package refuses it for the others.
		{"one, null", "/settings/maxChannels", `{"settingValue":null}`, CodeInvalidSettingValue, `field "settingValue" must be a valid value, not null`},
		{"null", "/settings", `{"winProb":null}`, CodeInvalidSettingValue, `winProb must be "min" or a probability in (0, 1] such as "0.01"`},
		{"null share", "/settings", `{"autoRedeemMaxGasShare":null}`, CodeInvalidSettingValue, "autoRedeemMaxGasShare must be a number from 0 to 1, such as 0.05"},
		{"one, fraction", "/settings/maxChannels", `{"settingValue":2.5}`, CodeInvalidSettingValue, ""},
		{"one, number as text", "/settings/maxChannels", `{"settingValue":"5"}`, CodeInvalidSettingValue, ""},
		{"one, out of range", "/settings/relayers", `{"settingValue":4}`, CodeInvalidSettingValue, ""},
		{"one, hexadecimal", "/settings/coverRate", `{"settingValue":"0x10"}`, CodeInvalidSettingValue, ""},
		{"one, spaces", "/settings/mixDelayMean", `{"settingValue":" 10ms"}`, CodeInvalidSettingValue, ""},
		{"one, strategy case", "/settings/strategy", `{"settingValue":"Passive"}`, CodeInvalidSettingValue, ""},
		{"one, zero amount", "/settings/channelFunding", `{"settingValue":"0"}`, CodeInvalidSettingValue, ""},
		{"one, share as hexadecimal", "/settings/autoRedeemMaxGasShare", `{"settingValue":"0x1p-1"}`, CodeInvalidSettingValue, ""},
		{"exit rule without a port", "/settings", `{"exitAllow":["*:443","blue.example.org"]}`, CodeInvalidSettingValue, ""},
		{"one, exit rule with host bits", "/settings/exitAllow", `{"settingValue":["10.0.0.1/8"]}`, CodeInvalidSettingValue, ""},
		{"one, exit rules not a list", "/settings/exitAllow", `{"settingValue":"*:443"}`, CodeInvalidSettingValue, ""},
		{"exit rules not a list", "/settings", `{"exitAllow":"*:443"}`, CodeInvalidSettingValue, `field "exitAllow" must be an array, not a JSON string`},
		{"exit rule not a string", "/settings", `{"exitAllow":[1]}`, CodeInvalidSettingValue, `field "exitAllow.0" must be a string, not a JSON number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.msg
			if want == "" {
				want = settingsRefusal(t, tc.path, tc.body).Error()
			}
			status, _, body := doBody(t, http.MethodPut, srv.URL+Prefix+tc.path, auth, tc.body)
			var e ErrorBody
			if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || e.Status != tc.code || e.Error != want {
				t.Fatalf("got %d %s, want 400 %s %q", status, body, tc.code, want)
			}
			if strings.Contains(e.Error, "blue") || strings.Contains(e.Error, "often") || strings.Contains(e.Error, "0x10") {
				t.Fatalf("the message echoes the value: %s", body)
			}
		})
	}
	// Nothing refused changed anything.
	if v := n.settings.Get(); v.MaxChannels != 3 || v.MixDelayMean.String() != "20ms" || v.CoverRate != 1 {
		t.Fatalf("refused updates changed the settings: %+v", v)
	}
}

// settingsRefusal is the error fresh settings give for the change a PUT to path with body asks.
func settingsRefusal(t *testing.T, path, body string) error {
	t.Helper()
	s, err := settings.Open(settings.Config{Store: &memSettings{}})
	if err != nil {
		t.Fatal(err)
	}
	var change map[string]json.RawMessage
	if name, ok := strings.CutPrefix(path, "/settings/"); ok {
		var one SettingValue
		if err := json.Unmarshal([]byte(body), &one); err != nil {
			t.Fatal(err)
		}
		change = map[string]json.RawMessage{name: one.SettingValue}
	} else if err := json.Unmarshal([]byte(body), &change); err != nil {
		t.Fatal(err)
	}
	_, err = s.Update(change)
	if !errors.Is(err, settings.ErrUnknown) && !errors.Is(err, settings.ErrInvalid) {
		t.Fatalf("settings.Update(%s) = %v, want a refusal", change, err)
	}
	return err
}
