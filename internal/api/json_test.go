package api

import (
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
