package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestDecodeJSONTrailingData: only JSON whitespace may follow the object;
// a stray closing brace or bracket is trailing data too (Decoder.More does
// not see it).
func TestDecodeJSONTrailingData(t *testing.T) {
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"object", `{"peerId":"x"}`, true},
		{"trailing whitespace", "{\"peerId\":\"x\"} \t\r\n", true},
		{"leading whitespace", " \n{\"peerId\":\"x\"}", true},
		{"stray brace", `{"peerId":"x"}}`, false},
		{"stray bracket", `{"peerId":"x"}]`, false},
		{"second object", `{"peerId":"x"} {}`, false},
		{"text", `{"peerId":"x"}x`, false},
		{"comma", `{"peerId":"x"},`, false},
		{"no-break space", "{\"peerId\":\"x\"}\u00a0", false},
		{"only a no-break space", "\u00a0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v PingRequest
			err := decodeJSON(strings.NewReader(tt.body), &v)
			if tt.ok && err != nil {
				t.Fatalf("refused %q: %v", tt.body, err)
			}
			if !tt.ok && err == nil {
				t.Fatalf("accepted %q", tt.body)
			}
		})
	}
}

// TestBodyMustBeUTF8: a body with bytes that are not UTF-8, or with a lone UTF-16 surrogate
// escape, is refused (encoding/json would read either as U+FFFD, and the node would sign or
// send text the client did not send); a surrogate pair and a literal U+FFFD are text like any.
// The signature of a refused body is never made; an accepted one is over the exact text.
func TestBodyMustBeUTF8(t *testing.T) {
	srv, n := newTestServer(t, false)
	auth := http.Header{"X-Auth-Token": {testToken}}
	for _, body := range []string{
		"{\"message\":\"caf\xe9\"}",        // Latin-1
		"{\"message\":\"\xff\"}",           // never UTF-8
		"{\"message\":\"\xed\xa0\x80\"}",   // an encoded surrogate
		`{"message":"a\ud800b"}`,           // a lone high surrogate
		`{"message":"a\udc00b"}`,           // a lone low surrogate
		`{"message":"\ud83d"}`,             // a high surrogate at the end
		`{"message":"\ud83d\u0041"}`,       // high, then not a low one
		`{"message":"x","other":"\ud800"}`, // anywhere in the body
	} {
		resp, got := send(t, http.MethodPost, srv.URL+Prefix+"/messages/sign", auth, body)
		var e ErrorBody
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(got, &e) != nil || e.Status != CodeInvalidInput {
			t.Errorf("body %q: %d %s", body, resp.StatusCode, got)
		}
	}
	for body, text := range map[string]string{
		`{"message":"a\ud83d\ude00b"}`: "a\U0001F600b",
		`{"message":"\\ud800"}`:        `\ud800`, // an escaped backslash: the text is six characters
		"{\"message\":\"\uFFFD\"}":     "\uFFFD",
		`{"message":"\ufffd"}`:         "\uFFFD",
	} {
		resp, got := send(t, http.MethodPost, srv.URL+Prefix+"/messages/sign", auth, body)
		var s SignResponse
		if resp.StatusCode != http.StatusOK || json.Unmarshal(got, &s) != nil {
			t.Fatalf("body %q: %d %s", body, resp.StatusCode, got)
		}
		want, err := n.Identity.SignMessage(text)
		if err != nil || s.Signature != want {
			t.Errorf("body %q: signature over other text than %q", body, text)
		}
	}
}
