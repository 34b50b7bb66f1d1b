package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// originalSpecFile is the published REST API v2 document of the original
// 2022 node (v1.91.0, brand renamed), which its clients were generated from.
const originalSpecFile = "testdata/hoprd-v1.91.0-rest-api-v2-spec.relay.json"

// originalSpec routes requests over the original document.
type originalSpec struct {
	doc    *openapi3.T
	router routers.Router
}

func loadOriginalSpec(t *testing.T) *originalSpec {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(originalSpecFile)
	if err != nil {
		t.Fatal(err)
	}
	// Its examples do not all match its schemas (MultiAddress gives an
	// array as the example of a string): the schemas are what count.
	router, err := legacy.NewRouter(doc, openapi3.DisableExamplesValidation())
	if err != nil {
		t.Fatal(err)
	}
	return &originalSpec{doc: doc, router: router}
}

// find routes a request to Prefix+path (query included) to the original's
// operation, which some paths spell with a trailing slash.
func (o *originalSpec) find(method, path string) (*http.Request, *routers.Route, map[string]string, bool) {
	p, q, _ := strings.Cut(path, "?")
	if q != "" {
		q = "?" + q
	}
	for _, try := range []string{p, p + "/"} {
		req := httptest.NewRequest(method, Prefix+try+q, nil)
		if route, params, err := o.router.FindRoute(req); err == nil {
			return req, route, params, true
		}
	}
	return nil, nil, nil, false
}

// TestOriginalSpecResponses: every exercised response (specCases) of an
// operation the original document lists validates against the original's
// schema for its status, where the original documents that status; relayd
// may add fields. Every operation of the original that relayd serves has a
// validated success. The exceptions are what the interface document rules
// otherwise.
func TestOriginalSpecResponses(t *testing.T) {
	orig := loadOriginalSpec(t)
	f := newSpecFixture(t)
	token := http.Header{"X-Auth-Token": {testToken}}
	validated := map[string]bool{} // "METHOD /original/path" with a 2xx or 101 validated
	for _, tc := range specCases(f) {
		req, route, params, ok := orig.find(tc.method, tc.path)
		if !ok {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.answer(t, tc, token)
			if route.Operation.Responses.Status(resp.StatusCode) == nil {
				return // the original does not document this answer: relayd's document does
			}
			header := resp.Header.Clone()
			// The original documents the metrics as "text/plain;
			// version=0.0.4" and answered it with "; charset=utf-8" added
			// (Express adds it to every text answer), as relayd does; the
			// validator compares the whole value.
			if ct := header.Get("Content-Type"); strings.HasPrefix(ct, "text/plain") {
				header.Set("Content-Type", strings.TrimSuffix(ct, "; charset=utf-8"))
			}
			err := openapi3filter.ValidateResponse(t.Context(), &openapi3filter.ResponseValidationInput{
				RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
				Status:                 resp.StatusCode,
				Header:                 header,
				Body:                   io.NopCloser(bytes.NewReader(body)),
				Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
			})
			if err != nil {
				t.Fatalf("%s %s answered %d %s, which the original document does not allow:\n%v", tc.method, tc.path, resp.StatusCode, body, err)
			}
			if resp.StatusCode < 300 {
				validated[tc.method+" "+route.Path] = true
			}
		})
	}
	// The original's operations relayd serves (at the path or without its
	// trailing slash) must each have a validated success.
	s, err := New(newFakeNode(t).config(false))
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, rt := range s.Routes() {
		served[rt.Method+" "+strings.ToLower(rt.Pattern)] = true
	}
	var missing []string
	for path, item := range orig.doc.Paths.Map() {
		for method := range item.Operations() {
			mine := strings.ToLower(strings.TrimSuffix(path, "/"))
			if !served[method+" "+mine] {
				continue
			}
			if key := method + " " + path; !validated[key] {
				missing = append(missing, key)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations of the original document relayd serves without a validated success in specCases:\n  %s", strings.Join(missing, "\n  "))
	}
}

// TestOriginalSpecOperationsServed lists the original document's operations
// relayd does not serve, so that a change in coverage is a visible choice.
func TestOriginalSpecOperationsServed(t *testing.T) {
	orig := loadOriginalSpec(t)
	s, err := New(newFakeNode(t).config(false))
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, rt := range s.Routes() {
		served[rt.Method+" "+strings.ToLower(rt.Pattern)] = true
	}
	var unserved []string
	for path, item := range orig.doc.Paths.Map() {
		for method := range item.Operations() {
			if !served[method+" "+strings.ToLower(strings.TrimSuffix(path, "/"))] {
				unserved = append(unserved, method+" "+path)
			}
		}
	}
	sort.Strings(unserved)
	// relayd serves every operation of the original document.
	if len(unserved) != 0 {
		b, _ := json.Marshal(unserved)
		t.Errorf("original operations not served: %s", b)
	}
	if n := len(orig.doc.Paths.Map()); n != 27 {
		t.Fatalf("the original document has %d paths; is %s complete?", n, originalSpecFile)
	}
}
