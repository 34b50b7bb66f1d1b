package settings

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/strategy"
	"github.com/relayd/relayd/internal/tickets"
	"github.com/relayd/relayd/internal/token"
)

// memStore is a Store in memory; fail makes PutSettings fail.
type memStore struct {
	m    map[string][]byte
	fail error
}

func (s *memStore) Settings() (map[string][]byte, error) { return maps.Clone(s.m), nil }
func (s *memStore) PutSettings(v map[string][]byte) error {
	if s.fail != nil {
		return s.fail
	}
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	maps.Copy(s.m, v)
	return nil
}

func open(t *testing.T, st *memStore, cfg Config) *Settings {
	t.Helper()
	cfg.Store = st
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDefaultsAndJSON(t *testing.T) {
	s := open(t, &memStore{}, Config{})
	got := s.Get().JSON()
	want := map[string]any{"strategy": "passive", "includeRecipient": false, "maxChannels": strategy.DefaultMaxChannels,
		"channelFunding": "100000000000000000000", "autoRedeem": true, "autoFund": true, "autoRedeemCount": 100,
		"autoRedeemMaxGasShare": 0.05, "autoRedeemValue": "1000000000000000000", "mixDelayMean": "100ms",
		"winProb": "min", "relayers": 3, "coverRate": 1.0, "sendRate": 10.0, "maxMessageBytes": 65536, "exitAllow": []string{},
		"alertNativeBalance": "10000000000000000", "alertChannelBalance": "1000000000000000000", "alertIndexerLag": 20, "alertHoldSeconds": 60,
		"socks5Listen": "", "socks5Exit": ""}
	if len(got) != len(want) {
		t.Fatalf("%d settings, want %d: %v", len(got), len(want), got)
	}
	if list, ok := got["exitAllow"].([]string); !ok || list == nil || len(list) != 0 {
		t.Errorf("exitAllow = %#v, want an empty list", got["exitAllow"])
	}
	delete(want, "exitAllow")
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
}

// TestRefusedValues: every bad value of either form is refused with ErrInvalid naming the
// setting, and the values and the store stay as they were.
func TestRefusedValues(t *testing.T) {
	st := &memStore{}
	s := open(t, st, Config{MinWinProb: func() uint64 { w, _ := tickets.ParseWinProb("0.01"); return w }})
	before := s.Get()
	bad := map[string][]string{
		"strategy":              {`"PASSIVE "`, `"Passive"`, `" passive"`, `null`, `1`, `"aggressive"`},
		"includeRecipient":      {`"true"`, `1`, `null`},
		"maxChannels":           {`0`, `101`, `2.5`, `"5"`, `null`},
		"channelFunding":        {`"0"`, `"-1"`, `"1e18"`, `10`, `null`, `"0x10"`, `" 1"`},
		"autoRedeemCount":       {`-1`, `1000001`, `null`},
		"autoRedeemMaxGasShare": {`null`, `-0.1`, `2`, `"0x1p-1"`, `"1e-2"`, `"NaN"`, `" 0.1"`, `true`},
		"autoRedeemValue":       {`null`, `"0"`},
		"mixDelayMean":          {`"11s"`, `"-1ms"`, `"fast"`, `100`, `null`, `" 10ms"`},
		"winProb":               {`"0"`, `"1.5"`, `0.1`, `"often"`, `"0x1p-1"`, `null`, `"0.001"`, `" min"`, `".5"`, `"0."`},
		"relayers":              {`1`, `4`, `"3"`, `null`},
		"coverRate":             {`-1`, `101`, `"0x10"`, `null`, `"1e1"`, `".5"`, `"5."`},
		"exitAllow":             {`null`, `"*:443"`, `[1]`, `{}`, `["example.org"]`, `["*:443", ""]`, `[" *:443"]`, `[null]`, `["10.0.0.1/8"]`},
		"socks5Listen": {`null`, `1080`, `"0.0.0.0:1080"`, `"192.0.2.1:1080"`, `"example.org:1080"`, `"127.0.0.1"`, `"127.0.0.1:65536"`,
			`"127.0.0.1:+1"`, `"[fe80::1%eth0]:1080"`, `"localhost:x"`},
		"socks5Exit": {`null`, `1`, `"bob smith"`, `"` + strings.Repeat("a", 101) + `"`},
	}
	for name, values := range bad {
		for _, raw := range values {
			_, err := s.Update(map[string]json.RawMessage{name: json.RawMessage(raw)})
			var se *Error
			if !errors.Is(err, ErrInvalid) || !errors.As(err, &se) || se.Name != name {
				t.Errorf("%s = %s: %v, want ErrInvalid naming the setting", name, raw, err)
			}
		}
	}
	if s.Get() != before || len(st.m) != 0 {
		t.Fatalf("refused updates changed something: %+v, store %v", s.Get(), st.m)
	}
	// The text form refuses the same.
	for name, text := range map[string]string{"strategy": "PASSIVE", "coverRate": "0x1p-1", "maxChannels": "+5",
		"channelFunding": "0", "winProb": "0.001", "relayers": "4", "includeRecipient": "yes", "mixDelayMean": "1h",
		"exitAllow": "*:443,,10.0.0.0/8"} {
		if _, err := s.UpdateText(name, text); !errors.Is(err, ErrInvalid) {
			t.Errorf("text %s = %q: %v, want ErrInvalid", name, text, err)
		}
	}
	if _, err := s.Update(map[string]json.RawMessage{"nope": json.RawMessage(`1`)}); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown name: %v", err)
	}
}

// TestExitAllow: the exitAllow rules as JSON (an array) and as text (comma-separated, none),
// kept in their canonical form, stored and read back; a bad rule is named by its position and the
// parser's reason, never echoed.
func TestExitAllow(t *testing.T) {
	st := &memStore{}
	s := open(t, st, Config{})
	d, _ := Lookup("exitAllow")
	if d.Default() != "none" || d.Flag != "exitAllow" {
		t.Fatalf("default %q, flag %q", d.Default(), d.Flag)
	}
	if rules, err := s.Get().ExitRules(); err != nil || len(rules) != 0 {
		t.Fatalf("default rules %v, %v", rules, err)
	}
	next, err := s.Update(map[string]json.RawMessage{"exitAllow": json.RawMessage(`["*.Example.org:443", "10.0.0.0/8:*", "[2001:DB8::/32]:443"]`)})
	if err != nil {
		t.Fatal(err)
	}
	const canonical = "*.example.org:443,10.0.0.0/8,[2001:db8::/32]:443"
	if next.ExitAllow != canonical || d.Text(next) != canonical || string(st.m["exitAllow"]) != `["*.example.org:443","10.0.0.0/8","[2001:db8::/32]:443"]` {
		t.Fatalf("kept %q, stored %s", next.ExitAllow, st.m["exitAllow"])
	}
	rules, err := next.ExitRules()
	if err != nil || len(rules) != 3 || rules[1].String() != "10.0.0.0/8" {
		t.Fatalf("rules %v, %v", rules, err)
	}
	if again := open(t, st, Config{}); again.Get().ExitAllow != canonical {
		t.Fatalf("opened again: %q", again.Get().ExitAllow)
	}
	if next, err = s.UpdateText("exitAllow", "*:80, example.org:8000-8100"); err != nil || next.ExitAllow != "*:80,example.org:8000-8100" {
		t.Fatalf("text: %q, %v", next.ExitAllow, err)
	}
	if next, err = s.UpdateText("exitAllow", "none"); err != nil || next.ExitAllow != "" || d.Text(next) != "none" || string(st.m["exitAllow"]) != `[]` {
		t.Fatalf("none: %q, %v, stored %s", next.ExitAllow, err, st.m["exitAllow"])
	}
	_, err = s.Update(map[string]json.RawMessage{"exitAllow": json.RawMessage(`["*:443", "secret.example.org"]`)})
	if err == nil || err.Error() != "exitAllow rule 2 has no port: write host:port, host:8000-8100 or host:* (a port is optional only after an address or range)" {
		t.Fatalf("a bad rule: %v", err)
	}
}

// TestAllOrNone: one bad value refuses the whole update; a failing store changes nothing.
func TestAllOrNone(t *testing.T) {
	st := &memStore{}
	s := open(t, st, Config{})
	if _, err := s.Update(map[string]json.RawMessage{"coverRate": json.RawMessage(`5`), "relayers": json.RawMessage(`9`)}); err == nil {
		t.Fatal("a bad value passed")
	}
	if s.Get().CoverRate != 1 || len(st.m) != 0 {
		t.Fatal("half of a refused update was kept")
	}
	st.fail = errors.New("disk full")
	if _, err := s.Update(map[string]json.RawMessage{"coverRate": json.RawMessage(`5`)}); err == nil || s.Get().CoverRate != 1 {
		t.Fatalf("a store failure: %v, coverRate %v", err, s.Get().CoverRate)
	}
}

// TestStoredWinsAndSubscribers: a change is stored, wins over Initial when opened again, and
// reaches watchers (synchronously) and subscribers (a kick).
func TestStoredWinsAndSubscribers(t *testing.T) {
	st := &memStore{}
	initial := Defaults()
	initial.CoverRate, initial.Relayers = 3, 2
	s := open(t, st, Config{Initial: &initial})
	kick := s.Subscribe()
	var watched Values
	s.Watch(func(v Values) { watched = v })
	next, err := s.Update(map[string]json.RawMessage{"coverRate": json.RawMessage(`"0.5"`), "channelFunding": json.RawMessage(`"2500000000000000000"`),
		"winProb": json.RawMessage(`"0.05"`), "mixDelayMean": json.RawMessage(`"30ms"`)})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tickets.ParseWinProb("0.05")
	if next.CoverRate != 0.5 || next.ChannelFunding != token.Units(2_500_000_000_000_000_000) || s.WinProb() != w ||
		next.MixDelayMean != 30*time.Millisecond || watched != next {
		t.Fatalf("after the update: %+v, watched %+v", next, watched)
	}
	select {
	case <-kick:
	default:
		t.Fatal("no kick")
	}
	if _, err := s.UpdateText("channelFunding", "0.5"); err != nil {
		t.Fatal(err)
	}
	again := open(t, st, Config{Initial: &initial})
	if v := again.Get(); v.CoverRate != 0.5 || v.Relayers != 2 || v.ChannelFunding != token.Units(500_000_000_000_000_000) || again.WinProb() != w {
		t.Fatalf("opened again: %+v", v)
	}
	d, _ := Lookup("channelFunding")
	if d.Text(again.Get()) != "0.5 tokens" || d.Default() != "100 tokens" {
		t.Fatalf("text %q, default %q", d.Text(again.Get()), d.Default())
	}
}

// TestCheck: Check refuses a change and a stored value that do not fit.
func TestCheck(t *testing.T) {
	st := &memStore{}
	fits := func(v Values) error {
		if v.MixDelayMean > 150*time.Millisecond {
			return errors.New("does not fit --mixDelayMax 500ms")
		}
		return nil
	}
	s := open(t, st, Config{Check: fits})
	if _, err := s.UpdateText("mixDelayMean", "160ms"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "mixDelayMax") {
		t.Fatalf("a mean that does not fit: %v", err)
	}
	st.m = map[string][]byte{"mixDelayMean": []byte(`"160ms"`)}
	if _, err := Open(Config{Store: st, Check: fits}); err == nil {
		t.Fatal("a stored mean that does not fit opened")
	}
	st.m = map[string][]byte{"coverRate": []byte(`"x"`)}
	if _, err := Open(Config{Store: st}); err == nil || !strings.Contains(err.Error(), "coverRate") {
		t.Fatalf("a stored value that does not parse: %v", err)
	}
}

// TestPolicies: the strategy's depleted threshold follows the relayers setting (a channel that
// cannot pay a message's first ticket over those relayers, with the largest padding).
func TestPolicies(t *testing.T) {
	v := Defaults()
	for _, relayers := range []int{2, 3} {
		v.Relayers = relayers
		want := tickets.PaddedAmount(relayers, tickets.PadMax)
		if got := v.Policy().DepletedBelow; got.Cmp(want.ToBig()) != 0 {
			t.Errorf("relayers %d: depleted below %s, want %s", relayers, got, want.Dec())
		}
	}
	if p := v.RedeemPolicy(); p.Count != 100 || p.Value.Cmp(token.One.Big()) != 0 || p.MaxGasShare != 0.05 {
		t.Errorf("redeem policy %+v", p)
	}
}

// FuzzUpdate: any JSON value for any setting either is refused and changes nothing, or is
// accepted and reads back as the JSON it stored, which is accepted again to the same values.
func FuzzUpdate(f *testing.F) {
	for _, n := range Names() {
		f.Add(n, `"1"`)
		f.Add(n, `1`)
		f.Add(n, `null`)
	}
	f.Add("exitAllow", `["*.Example.org:443", "10.0.0.0/8:*", "[::1]:80-80"]`)
	f.Add("exitAllow", `[]`)
	f.Fuzz(func(t *testing.T, name, raw string) {
		st := &memStore{}
		s, _ := Open(Config{Store: st})
		before := s.Get()
		next, err := s.Update(map[string]json.RawMessage{name: json.RawMessage(raw)})
		if err != nil {
			if s.Get() != before || len(st.m) != 0 {
				t.Fatalf("refused %s=%s changed something", name, raw)
			}
			return
		}
		again, err := Open(Config{Store: st})
		if err != nil || again.Get() != next {
			t.Fatalf("%s=%s stored as %s reads back as %+v, %v; want %+v", name, raw, st.m[name], again.Get(), err, next)
		}
	})
}

// TestSOCKS5Settings: socks5Listen takes a loopback host:port (IPv4, IPv6 in brackets,
// localhost) and "" for off, shown as none on the console; socks5Exit a peer's name; both are
// told to the watchers at once.
func TestSOCKS5Settings(t *testing.T) {
	s := open(t, &memStore{}, Config{})
	var seen Values
	s.Watch(func(v Values) { seen = v })
	for _, listen := range []string{"127.0.0.1:1080", "[::1]:1080", "localhost:0", "LOCALHOST:9050", "127.0.0.2:1", ""} {
		raw, _ := json.Marshal(listen)
		v, err := s.Update(map[string]json.RawMessage{"socks5Listen": raw, "socks5Exit": json.RawMessage(`"bob"`)})
		if err != nil || v.SOCKS5Listen != listen || v.SOCKS5Exit != "bob" || seen != v {
			t.Fatalf("socks5Listen %q: %+v, %v (watchers saw %+v)", listen, v, err, seen)
		}
	}
	d, _ := Lookup("socks5Listen")
	if d.Text(s.Get()) != "none" || d.Flag != "socks5Listen" {
		t.Fatalf("off shows as %q, flag %q", d.Text(s.Get()), d.Flag)
	}
	if v, err := s.UpdateText("socks5Listen", "127.0.0.1:1080"); err != nil || v.SOCKS5Listen != "127.0.0.1:1080" {
		t.Fatalf("text: %+v, %v", v, err)
	}
	if v, err := s.UpdateText("socks5Exit", "none"); err != nil || v.SOCKS5Exit != "" {
		t.Fatalf("text none: %+v, %v", v, err)
	}
}
