package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// unknownKeys is a ping body with n unknown fields besides peerId.
func unknownKeys(n int) string {
	var b strings.Builder
	b.WriteString(`{"peerId":"16Uiu2HAmTwTme7UgiAXsBLz92Dx9EwiKyARKSysBAft79L5DqnRz"`)
	for i := range n {
		fmt.Fprintf(&b, `,"k%d":1`, i)
	}
	b.WriteString("}")
	return b.String()
}

// checkBody runs the validator over a POST /node/ping with body.
func checkBody(v *validator, body string) (bool, *httptest.ResponseRecorder) {
	r := httptest.NewRequest(http.MethodPost, Prefix+"/node/ping", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	return v.check(w, r), w
}

// TestUnknownFieldsLinear: the validator's work grows linearly with the
// number of unknown fields (it was quadratic: each field's error listed
// every field again, ~10 s of CPU for 6,000 keys). Counted in
// allocations, not time: four times the fields may cost at most about
// four times the allocations (quadratic work gives sixteen).
func TestUnknownFieldsLinear(t *testing.T) {
	v, err := newValidator(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	allocs := func(n int) float64 {
		body := unknownKeys(n)
		if ok, w := checkBody(v, body); ok || w.Code != http.StatusBadRequest {
			t.Fatalf("%d unknown fields: accepted (%d)", n, w.Code)
		}
		return testing.AllocsPerRun(2, func() { checkBody(v, body) })
	}
	small, large := allocs(300), allocs(1200)
	t.Logf("allocations: %.0f for 300 unknown fields, %.0f for 1200", small, large)
	if large > 6*small {
		t.Fatalf("allocations: %.0f for 300 unknown fields, %.0f for 1200 (ratio %.1f): not linear", small, large, large/small)
	}
}

// TestManyUnknownFields: 6,000 unknown fields (a 59 KB body) are refused
// with 400 and a message that names the first ten and counts the rest.
func TestManyUnknownFields(t *testing.T) {
	srv := serveConfig(t, recordingConfig(t, newFakeNode(t)))
	body := unknownKeys(6000)
	if len(body) > MaxBodyBytes {
		t.Fatalf("body of %d bytes is over the limit", len(body))
	}
	resp, got := send(t, http.MethodPost, srv.URL+Prefix+"/node/ping", http.Header{"X-Auth-Token": {testToken}}, body)
	want := `request body has unknown fields "k0", "k1", "k10", "k100", "k1000", "k1001", "k1002", "k1003", "k1004", "k1005" and 5990 more`
	var e ErrorBody
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(got, &e) != nil || e.Status != CodeInvalidInput || e.Error != want {
		t.Fatalf("got %d %.300s, want 400 with %s", resp.StatusCode, got, want)
	}
}

func BenchmarkUnknownFields(b *testing.B) {
	v, err := newValidator(slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	body := unknownKeys(6000)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if ok, _ := checkBody(v, body); ok {
			b.Fatal("accepted")
		}
	}
}

// TestParseAddress: a mixed-case address must carry its EIP-55 checksum;
// all lower and all upper case have none to check.
func TestParseAddress(t *testing.T) {
	const good = "0x035C68d5251AfF759Ea945A05783F2290EA0Accf"
	tests := []struct {
		in   string
		want error
	}{
		{good, nil},
		{strings.ToLower(good), nil},
		{"0x" + strings.ToUpper(good[2:]), nil},
		{good[2:], nil}, // without 0x, as go-ethereum reads it
		{"0x035c68d5251AfF759Ea945A05783F2290EA0Accf", ErrAddressChecksum}, // one letter's case flipped
		{"0x035C68d5251AfF759Ea945A05783F2290EA0AccF", ErrAddressChecksum},
		{"035c68d5251AfF759Ea945A05783F2290EA0Accf", ErrAddressChecksum},
		{"0x12", ErrInvalidAddress},
		{"0x035C68d5251AfF759Ea945A05783F2290EA0Accg", ErrInvalidAddress},
		{"", ErrInvalidAddress},
	}
	for _, tt := range tests {
		a, err := ParseAddress(tt.in)
		if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("ParseAddress(%q) = %v, want %v", tt.in, err, tt.want)
		}
		if err == nil && a.Hex() != good {
			t.Errorf("ParseAddress(%q) = %s, want %s", tt.in, a.Hex(), good)
		}
	}
}
