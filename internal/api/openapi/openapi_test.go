package openapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" || doc.Info.Title != Title {
		t.Fatalf("openapi %q, title %q", doc.OpenAPI, doc.Info.Title)
	}
	// Load hands out a fresh model each time.
	doc.Info.Title = "changed"
	if again, _ := Load(); again.Info.Title != Title {
		t.Fatal("Load shares its model between callers")
	}
}

func TestJSON(t *testing.T) {
	j := JSON()
	if !json.Valid(j) {
		t.Fatal("JSON() is not JSON")
	}
	j[0] = 'x'
	if JSON()[0] == 'x' || YAML()[0] != specYAML[0] {
		t.Fatal("JSON() or YAML() shares its bytes")
	}
	var v struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(JSON(), &v); err != nil {
		t.Fatal(err)
	}
	var op struct {
		Responses map[string]any `json:"responses"`
	}
	if err := json.Unmarshal(v.Paths["/account/addresses"]["get"], &op); err != nil || len(op.Responses) == 0 {
		t.Fatalf("responses of GET /account/addresses lost in conversion: %v", err)
	}
}

func TestToJSONKeys(t *testing.T) {
	got, err := toJSON([]byte("responses:\n  200: ok\n  '404': no\nlist: [1, {a: <b>}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"list":[1,{"a":"<b>"}],"responses":{"200":"ok","404":"no"}}`
	var compact bytes.Buffer
	if err := json.Compact(&compact, got); err != nil || compact.String() != want {
		t.Fatalf("got %s (%v), want %s", got, err, want)
	}
	if _, err := toJSON([]byte("a: [")); err == nil {
		t.Fatal("broken YAML converted")
	}
}

func TestUIHandler(t *testing.T) {
	srv := httptest.NewServer(UIHandler("/docs")) // the trailing slash is added
	defer srv.Close()
	get := func(path string) (int, string, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), b
	}
	if code, ct, b := get("/docs/"); code != 200 || !strings.HasPrefix(ct, "text/html") || !bytes.Contains(b, []byte(`"/docs/openapi.json"`)) {
		t.Fatalf("page: %d %s", code, ct)
	}
	if code, ct, b := get("/docs/openapi.json"); code != 200 || ct != "application/json" || !bytes.Equal(b, JSON()) {
		t.Fatalf("json: %d %s", code, ct)
	}
	if code, ct, b := get("/docs/openapi.yaml"); code != 200 || ct != "application/yaml" || !bytes.Equal(b, YAML()) {
		t.Fatalf("yaml: %d %s", code, ct)
	}
	if code, _, _ := get("/docs/swagger-ui-bundle.js"); code != 200 {
		t.Fatalf("bundle: %d", code)
	}
	if code, _, _ := get("/elsewhere"); code != 404 {
		t.Fatalf("outside the prefix: %d", code)
	}
}
