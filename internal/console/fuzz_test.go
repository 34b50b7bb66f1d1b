package console

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/relayd/relayd/internal/ws"
)

// FuzzFormatFrame feeds arbitrary WebSocket frame bytes to what relayctl does with them:
// decode as readFrame does, then Format for the terminal. Nothing panics; every rendered
// rune is printable (no control sequence, no line break, no bidirectional override can
// reach the terminal from a frame), the rendering is valid UTF-8, and a message's printable
// text is shown as it came.
func FuzzFormatFrame(f *testing.F) {
	for _, fr := range []ws.Frame{
		{Type: ws.TypeMessage, Msg: "hello", TS: "2026-01-02T03:04:05.006Z"},
		{Type: ws.TypeLog, Msg: "#### NODE RECEIVED MESSAGE [x] ####", TS: "2026-01-02T03:04:05.006Z"},
		{Type: ws.TypeMessage, Msg: evil, TS: "2026-01-02T03:04:05.006Z"},
		{Type: ws.TypeAuthFailed, Msg: "bad token", TS: evil},
		{Type: "other", Msg: "ünïcödé \u202e", TS: "yesterday"},
	} {
		b, err := json.Marshal(fr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"message","msg":"\u001b[2J\u009b\r\n","ts":"\u0007"}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr ws.Frame
		if err := json.Unmarshal(b, &fr); err != nil {
			return // readFrame ends the connection with "bad frame from node"
		}
		got := Format(fr)
		if !utf8.ValidString(got) {
			t.Fatalf("Format(%+v) = %q: not UTF-8", fr, got)
		}
		if i := strings.IndexFunc(got, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }); i >= 0 {
			t.Fatalf("Format(%+v) = %q: unprintable rune at %d", fr, got, i)
		}
		if fr.Type == ws.TypeMessage && ws.Escape(fr.Msg) == fr.Msg && !strings.HasSuffix(got, " [message] "+fr.Msg) {
			t.Fatalf("Format(%+v) = %q: printable message altered", fr, got)
		}
		esc := fr
		esc.Msg = ws.Escape(fr.Msg)
		if Format(esc) != got {
			t.Fatalf("escaping is not idempotent for %q", fr.Msg)
		}
	})
}
