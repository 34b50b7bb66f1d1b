package console

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/ws"
)

const (
	alicePeer = "16Uiu2HAmAlice1111111111111111111111111111111111111"
	bobPeer   = "16Uiu2HAmBob22222222222222222222222222222222222222"
	carolPeer = "16Uiu2HAkCarol333333333333333333333333333333333333"
)

func testSession() *session {
	s := &session{}
	s.setNames(parseHelp([]string{"Available commands:", "  alias [<peerId> <name>]  List aliases.", "  balance   Show.",
		"  close <peer> [incoming]  Close.", "  ping <peer>  Ping.", "  peers  List.", "  send <peer> <message>  Send.", "  settings  Show."}))
	s.setAliases([]string{"me -> " + carolPeer, "alice -> " + alicePeer, "a b -> x"})
	s.setPeers([]string{"network peers status: 2 nodes in total", "- id: " + alicePeer + ", quality: 1.00", "- id: " + bobPeer + ", quality: 0.20"})
	s.setSettings([]string{"includeRecipient  false  Prepends.", "strategy          passive  Set."})
	return s
}

func TestCompletion(t *testing.T) {
	s := testSession()
	s.peersAt = timeFarFuture // no refresh from the test
	peers := []string{"alice", "me", alicePeer, bobPeer, carolPeer}
	for _, tt := range []struct {
		line string
		want []string // completed words
	}{
		{"", []string{"alias ", "balance ", "close ", "ping ", "peers ", "send ", "settings ", "exit "}},
		{"pe", []string{"peers "}},
		{"p", []string{"ping ", "peers "}},
		{"xyz", nil},
		{"ping ", suffixed(peers, " ")},
		{"ping al", []string{"alice "}},
		{"ping 16Uiu2HAmB", []string{bobPeer + " "}},
		{"ping alice ", nil}, // one peer only
		{"send ", peers},
		{"send al", []string{"alice"}},
		{"send alice,16Uiu2HAmB", []string{bobPeer}},
		{"send ,m", []string{"me"}},
		{"send alice hello al", nil}, // the message is not completed
		{"send -", []string{"--reliable ", "--replies "}},
		{"send --rel", []string{"--reliable "}},
		{"send --replies ", nil}, // its number
		{"send --replies 2 ", peers},
		{"send --replies 2 --reliable al", []string{"alice"}},
		{"send --replies=2 ,m", []string{"me"}},
		{"send --reliable alice hi al", nil},
		{"alias 16Uiu2HAmA", []string{alicePeer + " "}},
		{"alias al", nil}, // alias takes a PeerId
		{"close alice in", []string{"incoming"}},
		{"settings s", []string{"strategy "}},
		{"balance x", nil},
		{"session ", []string{"open ", "close ", "list "}},
		{"session o", []string{"open "}},
		{"session open al", []string{"alice "}},
		{"session open alice ", []string{"tcp ", "udp "}},
		{"session open alice u", []string{"udp "}},
		{"session open alice tcp ex", nil}, // the target
		{"session close 5e", nil},
	} {
		got, n := s.Do([]rune(tt.line), len([]rune(tt.line)))
		word := tt.line[strings.LastIndexAny(tt.line, " ,")+1:]
		if n != len([]rune(word)) && len(got) > 0 {
			t.Errorf("%q: length %d, want %d", tt.line, n, len(word))
		}
		var words []string
		for _, g := range got {
			words = append(words, word+string(g))
		}
		slices.Sort(words)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(words, want) {
			t.Errorf("%q: completes to %q, want %q", tt.line, words, want)
		}
	}
}

func suffixed(words []string, suffix string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w + suffix
	}
	return out
}

// TestSessionPrintsEachCommandOnce: the operator's command is not echoed
// (it is on the screen), its output is printed once, relayctl's own
// commands print nothing, and the node's frames are printed as they come.
func TestSessionPrintsEachCommandOnce(t *testing.T) {
	var out strings.Builder
	s := &session{out: &out}
	var got []string
	s.pending = []*pending{{hidden: true, done: func(l []string) { got = l }}, {}}
	for _, f := range []ws.Frame{
		{Type: ws.TypeLog, Msg: "replayed", TS: "x", Replay: true},
		{Type: ws.TypeLog, Msg: "admin > alias", Reply: ws.ReplyEcho},
		{Type: ws.TypeLog, Msg: "me -> x", Reply: ws.ReplyOutput},
		{Type: ws.TypeLog, Msg: "live", TS: "y"},
		{Type: ws.TypeLog, Msg: "a -> y", Reply: ws.ReplyEnd},
		{Type: ws.TypeLog, Msg: "admin > balance", Reply: ws.ReplyEcho},
		{Type: ws.TypeLog, Msg: "RELAY Balance: 1\x1b", Reply: ws.ReplyEnd},
		{Type: ws.TypeLog, Msg: "unasked", Reply: ws.ReplyEnd},
	} {
		s.handle(f)
	}
	if want := "x replayed\ny live\nRELAY Balance: 1\\x1b\nunasked\n"; out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
	if !slices.Equal(got, []string{"me -> x", "a -> y"}) {
		t.Fatalf("hidden reply %q", got)
	}
	if len(s.pending) != 0 {
		t.Fatalf("%d commands still pending", len(s.pending))
	}
}

var timeFarFuture = time.Now().Add(24 * time.Hour)

// FuzzCompletion: whatever the node's replies and the line being edited,
// completion neither panics nor offers text that does not extend the word.
func FuzzCompletion(f *testing.F) {
	f.Add("me -> 16Uiu2HAm", "- id: 16Uiu2HAm, quality: 1.00", "send al,16Ui", 12)
	f.Add("a -> b", "- id: ", "ping ", 5)
	f.Add("", "", "日本 語", 2)
	f.Fuzz(func(t *testing.T, alias, peer, line string, pos int) {
		s := &session{peersAt: timeFarFuture}
		s.setNames(parseHelp([]string{"h", "  " + line}))
		s.setAliases([]string{alias})
		s.setPeers([]string{peer})
		s.setSettings([]string{alias, peer})
		r := []rune(line)
		if pos < 0 || pos > len(r) {
			return
		}
		got, n := s.Do(r, pos)
		if n < 0 || n > pos {
			t.Fatalf("length %d beyond the cursor %d", n, pos)
		}
		if len(got) > 0 && n > 0 {
			word := string(r[pos-n : pos])
			if strings.ContainsAny(word, " \t") {
				t.Fatalf("completed word %q spans a space", word)
			}
		}
	})
}
