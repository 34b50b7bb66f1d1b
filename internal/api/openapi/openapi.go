// Package openapi owns the OpenAPI 3 document of the node's REST API, the
// single source of truth of everything served under /api/v2, and the
// embedded Swagger UI that renders it. The document is embedded in the
// binary; internal/api validates requests against it and its tests check
// that the served routes and the document agree. This package must not
// import internal/api or anything of the node's core.
package openapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
	"gopkg.in/yaml.v3"
)

// Title is the title of the reference UI page.
const Title = "relayd REST API"

//go:embed openapi.yaml
var specYAML []byte

// YAML returns the OpenAPI document as written, in YAML. The caller owns
// the returned slice.
func YAML() []byte { return bytes.Clone(specYAML) }

// specJSON converts the document once; the embedded YAML is fixed at build
// time and a test checks that it converts.
var specJSON = sync.OnceValues(func() ([]byte, error) { return toJSON(specYAML) })

// JSON returns the OpenAPI document converted to JSON (the same data as
// YAML, indented, keys sorted). It is converted once; the caller owns the
// returned slice. It returns nil only if the embedded YAML is broken, which
// the package's tests rule out.
func JSON() []byte {
	b, err := specJSON()
	if err != nil {
		return nil
	}
	return bytes.Clone(b)
}

// Load parses the document into a fresh kin-openapi model and validates it
// (structure, references, and that every example matches its schema). The
// caller may modify the returned document.
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(specYAML)
	if err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: validate: %w", err)
	}
	return doc, nil
}

// UIHandler serves the interactive reference at prefix (which should end
// in "/", e.g. "/api/v2/_swagger/"): Swagger UI 5 from assets embedded in
// the binary, the document as prefix+"openapi.json" and
// prefix+"openapi.yaml". It needs no authentication: it only serves static
// content, and every operation tried from the page needs the API token,
// given through its Authorize button (either security scheme). The page
// calls the node itself, through the document's relative server URL.
func UIHandler(prefix string) http.Handler {
	prefix = strings.TrimSuffix(prefix, "/") + "/"
	ui := v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       Title,
		SwaggerJSON: prefix + "openapi.json",
		BasePath:    prefix,
		SettingsUI: map[string]string{
			"defaultModelsExpandDepth": "1", // show the schemas section, collapsed
			"displayRequestDuration":   "true",
			"docExpansion":             `"list"`,
			"persistAuthorization":     "false", // never keep the token in the browser's storage
		},
	})
	jsonDoc := JSON()
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"openapi.json", func(w http.ResponseWriter, r *http.Request) {
		serveDoc(w, "application/json", jsonDoc)
	})
	mux.HandleFunc("GET "+prefix+"openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		serveDoc(w, "application/yaml", specYAML)
	})
	mux.Handle("GET "+prefix, ui)
	return mux
}

func serveDoc(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(body)
}

// toJSON converts a YAML document to indented JSON.
func toJSON(doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("openapi: parse YAML: %w", err)
	}
	v = jsonValue(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("openapi: encode JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// jsonValue turns YAML's decoded values into values encoding/json accepts:
// mappings with non-string keys (an unquoted response code such as 200)
// get string keys.
func jsonValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonValue(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonValue(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonValue(e)
		}
		return x
	default:
		return v
	}
}
