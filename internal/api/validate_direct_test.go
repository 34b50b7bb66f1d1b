package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayd/relayd/internal/courier"
	"github.com/relayd/relayd/internal/identity"
)

// checkMessage runs the validator over a POST /messages with body as the mux would hand it
// (direct: with its pattern, so the direct check applies) or as an unrouted request (the
// document's validator alone).
func checkMessage(v *validator, body string, direct bool) (bool, *httptest.ResponseRecorder) {
	r := httptest.NewRequest(http.MethodPost, Prefix+"/messages", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if direct {
		r.Pattern = Prefix + "/messages"
	}
	w := httptest.NewRecorder()
	return v.check(w, r), w
}

// The direct check of a message body accepts exactly what the OpenAPI document accepts, and
// every body it refuses gets the document validator's answer, word for word.
func TestDirectMessageBodyAgreesWithDocument(t *testing.T) {
	v, err := newValidator(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const peer = "16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT"
	bodies := []string{
		`{"body":"hello","recipient":"` + peer + `"}`,
		`{"recipient":"me","body":"x"}`,
		`{"body":"é","recipient":"` + strings.Repeat("é", 64) + `"}`, // 64 characters, 128 bytes
		`{"body":"a","recipient":"` + strings.Repeat("a", 64) + `"}`,
		`{"body":"a","body":"b","recipient":"alias"}`, // a repeated key: the last one counts, for both
		` {"body":"a","recipient":"alias"} `,
		`{"body":"a","recipient":"me","replies":0}`,
		`{"body":"a","recipient":"me","replies":16,"reliable":true}`,
		`{"body":"a","recipient":"me","replies":2.0,"reliable":false}`,
		`{"body":"a","recipient":"me","replies":1e1}`,
		`{"reliable":false,"body":"a","recipient":"me"}`,
		// Refused:
		`{"body":"a","recipient":"me","replies":17}`,
		`{"body":"a","recipient":"me","replies":-1}`,
		`{"body":"a","recipient":"me","replies":1.5}`,
		`{"body":"a","recipient":"me","replies":"1"}`,
		`{"body":"a","recipient":"me","replies":null}`,
		`{"body":"a","recipient":"me","replies":true}`,
		`{"body":"a","recipient":"me","reliable":"true"}`,
		`{"body":"a","recipient":"me","reliable":1}`,
		`{"body":"a","recipient":"me","reliable":null}`,
		`{"body":"a","recipient":"me","replies":1,"reliable":true,"x":1}`,
		`{"body":"a","replies":1,"reliable":true}`,
		`{"body":"a","recipient":"` + strings.Repeat("é", 65) + `"}`,
		`{"body":"a","recipient":"` + strings.Repeat("a", 65) + `"}`,
		`{"body":"","recipient":"me"}`,
		`{"body":"a","recipient":""}`,
		`{"body":null,"recipient":"me"}`,
		`{"body":"a","recipient":null}`,
		`{"body":1,"recipient":"me"}`,
		`{"body":"a","recipient":["me"]}`,
		`{"Body":"a","recipient":"me"}`, // field names are case-sensitive in the document
		`{"body":"a"}`,
		`{"recipient":"me"}`,
		`{"body":"a","recipient":"me","path":["x"]}`,
		`{"body":"a","recipient":"me","hops":2}`,
		`{"body":"a","recipient":"me","x":1}`,
		`{}`,
		`[]`,
		`"text"`,
		`null`,
		``,
		`{"body":"a","recipient":"me"} x`,
		`{"body":"a",`,
	}
	accepted := 0
	for _, body := range bodies {
		okDirect, wDirect := checkMessage(v, body, true)
		okDoc, wDoc := checkMessage(v, body, false)
		if okDirect != okDoc {
			t.Errorf("%.80s: direct %v, document %v (%s)", body, okDirect, okDoc, wDoc.Body)
			continue
		}
		if okDirect {
			accepted++
			continue
		}
		if wDirect.Code != wDoc.Code || !bytes.Equal(wDirect.Body.Bytes(), wDoc.Body.Bytes()) {
			t.Errorf("%.80s: direct %d %s, document %d %s", body, wDirect.Code, wDirect.Body, wDoc.Code, wDoc.Body)
		}
	}
	if accepted != 11 {
		t.Fatalf("%d bodies accepted, want 11", accepted)
	}
}

// FuzzDirectMessageBody: whatever the body, the direct check of a message accepts exactly what
// the OpenAPI document accepts, and refuses with the document's answer word for word.
func FuzzDirectMessageBody(f *testing.F) {
	for _, s := range []string{`{"body":"a","recipient":"me"}`, `{"body":"a","recipient":"me","replies":16,"reliable":true}`,
		`{"body":"a","recipient":"me","replies":1e1}`, `{"body":"a","recipient":"me","replies":-0}`, `{"body":"a","recipient":"me","replies":16.000001}`,
		`{"body":"","recipient":"me"}`, `{"body":"a","recipient":"me","reliable":0}`, `{"body":"a","recipient":"me","x":null}`, `[]`, `{`} {
		f.Add(s)
	}
	v, err := newValidator(slog.New(slog.DiscardHandler))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		okDirect, wDirect := checkMessage(v, body, true)
		okDoc, wDoc := checkMessage(v, body, false)
		if okDirect != okDoc {
			t.Fatalf("%q: direct %v, document %v (%s)", body, okDirect, okDoc, wDoc.Body)
		}
		if !okDirect && (wDirect.Code != wDoc.Code || !bytes.Equal(wDirect.Body.Bytes(), wDoc.Body.Bytes())) {
			t.Fatalf("%q: direct %d %s, document %d %s", body, wDirect.Code, wDirect.Body, wDoc.Code, wDoc.Body)
		}
	})
}

// The handler reads the body the direct check read.
func TestDirectMessageBodyLeavesTheBodyReadable(t *testing.T) {
	v, err := newValidator(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"body":"hello","recipient":"me"}`
	r := httptest.NewRequest(http.MethodPost, Prefix+"/messages", strings.NewReader(body))
	r.Pattern = Prefix + "/messages"
	if !v.check(httptest.NewRecorder(), r) {
		t.Fatal("refused")
	}
	var req MessageRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Body != "hello" || req.Recipient != "me" {
		t.Fatalf("%+v %v", req, err)
	}
}

// The direct check follows the document: if MessageRequest or Recipient change, so must it.
func TestDirectMessageBodyMatchesTheSchema(t *testing.T) {
	router, err := documentRouter()
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/api/v2/messages", nil)
	route, _, err := router.FindRoute(r)
	if err != nil {
		t.Fatal(err)
	}
	s := route.Operation.RequestBody.Value.Content.Get("application/json").Schema.Value
	if !s.Type.Is("object") || s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has || len(s.Properties) != 4 || len(s.Required) != 2 ||
		!slices.Equal(s.Required, []string{"body", "recipient"}) {
		t.Fatalf("MessageRequest changed: %+v", s)
	}
	replies, reliable := s.Properties["replies"].Value, s.Properties["reliable"].Value
	if !replies.Type.Is("integer") || replies.Min == nil || *replies.Min != 0 || replies.Max == nil || *replies.Max != courier.MaxReplies ||
		replies.Nullable || replies.Format != "" || replies.ExclusiveMin.Value != nil || replies.ExclusiveMax.Value != nil || replies.MultipleOf != nil {
		t.Fatalf("MessageRequest.replies changed: %+v", replies)
	}
	if !reliable.Type.Is("boolean") || reliable.Nullable || len(reliable.Enum) != 0 {
		t.Fatalf("MessageRequest.reliable changed: %+v", reliable)
	}
	body, recipient := s.Properties["body"].Value, s.Properties["recipient"].Value
	if !body.Type.Is("string") || body.MinLength != 1 || body.MaxLength != nil || body.Pattern != "" || body.Nullable {
		t.Fatalf("MessageRequest.body changed: %+v", body)
	}
	if !recipient.Type.Is("string") || recipient.MinLength != 1 || recipient.MaxLength == nil || *recipient.MaxLength != maxRecipientChars ||
		recipient.Pattern != "" || recipient.Nullable {
		t.Fatalf("Recipient changed: %+v", recipient)
	}
}

// BenchmarkMessageCheckDirectVsDocument alternates the API's own per-request checks of a
// message before and after the direct path, on the same goroutine: the document's validator
// plus parsing the recipient PeerId (document-ns/op), and the direct check plus resolving the
// recipient through the peer directory, which remembers parsed PeerIds (direct-ns/op).
func BenchmarkMessageCheckDirectVsDocument(b *testing.B) {
	v, err := newValidator(slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	const peer = "16Uiu2HAkySLfojPX9mxK29GP3McjgeXrRAvNCwLYxyAPqJiCoywT"
	body := `{"body":"` + strings.Repeat("x", 100) + `","recipient":"` + peer + `"}`
	dir := newFakeNode(b).dir
	var doc, direct time.Duration
	for b.Loop() {
		t0 := time.Now()
		ok, _ := checkMessage(v, body, false)
		_, err := identity.ParsePeerID(peer)
		t1 := time.Now()
		if !ok || err != nil {
			b.Fatal("document path refused", err)
		}
		ok, _ = checkMessage(v, body, true)
		_, err = dir.Resolve(peer)
		t2 := time.Now()
		if !ok || err != nil {
			b.Fatal("direct path refused", err)
		}
		doc += t1.Sub(t0)
		direct += t2.Sub(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(doc.Nanoseconds())/n, "document-ns/op")
	b.ReportMetric(float64(direct.Nanoseconds())/n, "direct-ns/op")
	b.ReportMetric(float64(direct)/float64(doc), "direct/document")
}
