package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/relayd/relayd/internal/api/openapi"
	"github.com/relayd/relayd/internal/courier"
)

// validator checks every request against the operation the OpenAPI
// document (package openapi) declares for it. It runs after authentication
// and before the handler, and answers input the document does not allow
// with 400 and the error envelope, so handlers see only documented input.
// Handlers keep their own checks (what a schema cannot say, such as a
// PeerId that must decode to a secp256k1 key), with the same messages.
type validator struct {
	router routers.Router
	log    *slog.Logger
}

// newValidator routes requests over the embedded document.
func newValidator(log *slog.Logger) (*validator, error) {
	router, err := documentRouter()
	if err != nil {
		return nil, err
	}
	return &validator{router: router, log: log}, nil
}

// documentRouter loads and checks the embedded document once (it is fixed
// at build time); the router only reads it, so every Server shares it.
var documentRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi.Load()
	if err != nil {
		return nil, err
	}
	// Authentication is the server's own (auth.go) and has already
	// happened: the document's security requirements are for its readers.
	doc.Security = nil
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			op.Security = nil
		}
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: router: %w", err)
	}
	return router, nil
})

// wrap returns h preceded by the validation of its request.
func (v *validator) wrap(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if v.check(w, r) {
			h(w, r)
		}
	}
}

// check validates r. On failure it writes the 400 answer and returns
// false. It leaves r's body readable again for the handler.
func (v *validator) check(w http.ResponseWriter, r *http.Request) bool {
	if direct := directBodies[r.Method+" "+r.Pattern]; direct != nil {
		raw, parsed, ok := readJSONBody(w, r, true)
		if !ok {
			return false
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		if direct(parsed) {
			return true
		}
		// Invalid: the document's validator explains why, in the words it uses
		// for every other operation.
		return v.checkDocument(w, r, raw)
	}
	return v.checkDocument(w, r, nil)
}

// directBodies are the operations whose bodies are checked directly, by
// method and mux pattern, without a parameter to validate: the hot ones,
// where kin-openapi's generic validation (routing, a cloned request, a
// second decoding of the body, the schema walk) cost more than the rest of
// the API's work. A direct check accepts exactly what the document accepts
// (TestDirectMessageBodyAgreesWithDocument) and hands anything else to the
// document's validator for the error message.
var directBodies = map[string]func(any) bool{
	http.MethodPost + " " + Prefix + "/messages": validMessageBody,
}

// validMessageBody is the document's MessageRequest: an object with the string fields body (at
// least 1 character) and recipient (1 to 64 characters), lengths counted in Unicode code points
// as JSON Schema does, and optionally replies (an integer from 0 to courier.MaxReplies; 2.0 is an
// integer in JSON Schema) and reliable (a boolean), and no other field.
func validMessageBody(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) < 2 || len(m) > 4 {
		return false
	}
	for k, f := range m {
		switch k {
		case "body", "recipient":
		case "replies":
			n, ok := f.(float64)
			if !ok || n != math.Trunc(n) || n < 0 || n > courier.MaxReplies {
				return false
			}
		case "reliable":
			if _, ok := f.(bool); !ok {
				return false
			}
		default:
			return false
		}
	}
	body, ok1 := m["body"].(string)
	recipient, ok2 := m["recipient"].(string)
	if !ok1 || !ok2 || body == "" || recipient == "" {
		return false
	}
	return len(recipient) <= maxRecipientChars || utf8.RuneCountInString(recipient) <= maxRecipientChars
}

// maxRecipientChars is the document's Recipient maxLength.
const maxRecipientChars = 64

// checkDocument validates r against the document; raw is its body when it
// was already read (nil otherwise).
func (v *validator) checkDocument(w http.ResponseWriter, r *http.Request, raw []byte) bool {
	// Route on the path alone: the document's server URL is relative.
	vr := r.Clone(r.Context())
	vr.URL = &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	route, params, err := v.router.FindRoute(vr)
	if err != nil {
		// The mux serves it but the document lacks it: spec_test.go fails
		// on that. The handler's own checks still apply.
		v.log.Warn("operation is not in the OpenAPI document; request not validated", "method", r.Method, "pattern", r.Pattern)
		return true
	}
	// Validate the parameters the handler will see: the mux's unescaped
	// values, not the router's escaped ones.
	for name := range params {
		if pv := r.PathValue(name); pv != "" {
			params[name] = pv
		}
	}
	if body := route.Operation.RequestBody; body != nil && body.Value != nil {
		if raw == nil {
			var ok bool
			if raw, _, ok = readJSONBody(w, r, body.Value.Required); !ok {
				return false
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		vr.Body = io.NopCloser(bytes.NewReader(raw))
		vr.ContentLength = int64(len(raw))
		vr.GetBody = nil
		vr.Header.Set("Content-Type", "application/json")
	}
	err = validateRequest(vr, route, params)
	if err == nil {
		return true
	}
	code, msg := describe(err)
	v.log.Debug("request refused by validation", "op", route.Operation.OperationID, "code", code)
	writeError(w, http.StatusBadRequest, code, msg)
	return false
}

// validateRequest runs kin-openapi's request validation, turning a panic
// of the library on strange input into an error: bad input must never
// crash a handler goroutine or become a 500.
func validateRequest(r *http.Request, route *routers.Route, params map[string]string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("request could not be validated")
		}
	}()
	return openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: params,
		Route:      route,
		Options: &openapi3filter.Options{
			MultiError:          true, // pick the most useful error below
			SkipSettingDefaults: true, // handlers apply their own defaults
		},
	})
}

// readJSONBody reads the request body and checks that it is one JSON value
// of at most MaxBodyBytes, with the same messages as decodeBody, and returns
// it raw and decoded. An empty body is accepted when the operation does not
// require one.
func readJSONBody(w http.ResponseWriter, r *http.Request, required bool) ([]byte, any, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			writeError(w, http.StatusBadRequest, CodeInvalidInput, "Content-Type must be application/json, not "+quote(ct))
			return nil, nil, false
		}
	}
	var raw bytes.Buffer
	var parsed any
	err := decodeJSON(io.TeeReader(r.Body, &raw), &parsed)
	if err != nil && !required && len(bytes.TrimLeft(raw.Bytes(), jsonSpace)) == 0 {
		return nil, nil, true
	}
	if err != nil {
		writeBodyError(w, err)
		return nil, nil, false
	}
	return raw.Bytes(), parsed, true
}

// An issue is one reason a request is invalid. Lower ranks are reported
// first: an unknown field usually means a misspelt one, which also
// explains a missing required field; a missing field explains less than a
// wrong one.
type issue struct {
	rank int
	code string
	msg  string
}

const (
	rankUnknownField = iota
	rankMissing
	rankType
	rankValue
	rankOther
)

// describe turns a validation error into the error envelope's code and
// message, naming the offending field.
//
// The validator reports one error per unknown field, each carrying the
// whole object: the unknown fields of an object are listed once, on its
// first error, so that the work stays linear in the size of the body.
func describe(err error) (code, msg string) {
	c := collector{listed: map[string]bool{}}
	c.collect(err, nil)
	if len(c.issues) == 0 {
		return CodeInvalidInput, "invalid request"
	}
	best := slices.MinFunc(c.issues, func(a, b issue) int { return a.rank - b.rank })
	return best.code, best.msg
}

// collector gathers the issues of one validation error.
type collector struct {
	issues []issue
	// listed holds the objects (parameter name and JSON pointer) whose
	// unknown fields are already among the issues.
	listed map[string]bool
}

func (c *collector) collect(err error, param *openapi3.Parameter) {
	switch e := err.(type) {
	case openapi3.MultiError:
		for _, x := range e {
			c.collect(x, param)
		}
	case *openapi3filter.RequestError:
		if e.Parameter != nil {
			param = e.Parameter
		}
		switch {
		case e.Err == nil:
			c.issues = append(c.issues, issue{rankOther, CodeInvalidInput, e.Error()})
		case errors.Is(e.Err, openapi3filter.ErrInvalidRequired) && param != nil:
			c.issues = append(c.issues, issue{rankMissing, fieldCode(param.Name, paramSchema(param)),
				fmt.Sprintf("%s parameter %q is required", param.In, param.Name)})
		case errors.Is(e.Err, openapi3filter.ErrInvalidRequired):
			c.issues = append(c.issues, issue{rankMissing, CodeInvalidInput, "request body is empty; a JSON object is required"})
		default:
			c.collect(e.Err, param)
		}
	case *openapi3.SchemaError:
		if e.SchemaField == "properties" {
			where := fmt.Sprintf("%q", e.JSONPointer())
			if param != nil {
				where = param.Name + where
			}
			if c.listed[where] {
				return
			}
			c.listed[where] = true
		}
		c.issues = append(c.issues, schemaIssue(e, param))
	default:
		code, msg := CodeInvalidInput, err.Error()
		if param != nil {
			code = fieldCode(param.Name, paramSchema(param))
			msg = fmt.Sprintf("%s parameter %q: %v", param.In, param.Name, err)
		}
		c.issues = append(c.issues, issue{rankOther, code, msg})
	}
}

// schemaIssue explains one schema violation of the body (param == nil) or
// of a parameter.
func schemaIssue(e *openapi3.SchemaError, param *openapi3.Parameter) issue {
	path := e.JSONPointer()
	if param != nil {
		path = append([]string{param.Name}, path...)
	}
	field := strings.Join(path, ".")
	last := ""
	if len(path) > 0 {
		last = path[len(path)-1]
	}
	switch e.SchemaField {
	case "properties": // an undeclared property, with additionalProperties: false
		names := unknownFields(e)
		where := "request body"
		if field != "" {
			where = "field " + quote(field)
		}
		// A field the document refuses on purpose says why (x-refused:
		// name → reason), e.g. a message's path, which the node picks.
		if refused, ok := e.Schema.Extensions["x-refused"].(map[string]any); ok {
			for _, n := range names {
				if why, ok := refused[n].(string); ok {
					return issue{rankUnknownField, CodeInvalidInput, where + " has an unknown field " + quote(n) + ": " + why}
				}
			}
		}
		if len(names) == 1 {
			return issue{rankUnknownField, CodeInvalidInput, where + " has an unknown field " + quote(names[0])}
		}
		more := ""
		if len(names) > maxNamesListed {
			more = fmt.Sprintf(" and %d more", len(names)-maxNamesListed)
			names = names[:maxNamesListed]
		}
		return issue{rankUnknownField, CodeInvalidInput, where + " has unknown fields " + strings.Join(quoteAll(names), ", ") + more}
	case "required":
		var prop *openapi3.Schema
		if ref := e.Schema.Properties[last]; ref != nil {
			prop = ref.Value
		}
		return issue{rankMissing, fieldCode(last, prop), field + " is required"}
	case "type", "nullable":
		if field == "" {
			return issue{rankType, CodeInvalidInput, "request body must be " + expected(e.Schema) + ", not " + jsonKind(e.Value)}
		}
		return issue{rankType, fieldCode(last, e.Schema), fmt.Sprintf("field %q must be %s, not %s", field, expected(e.Schema), jsonKind(e.Value))}
	}
	name := field
	if name == "" {
		name = "request body"
	}
	if tmpl, ok := e.Schema.Extensions["x-invalid"].(string); ok && tmpl != "" {
		msg := strings.NewReplacer("{field}", name, "{value}", show(e.Value)).Replace(tmpl)
		return issue{rankValue, fieldCode(last, e.Schema), msg}
	}
	reason := e.Reason
	if reason == "" {
		reason = "does not match " + quote(e.SchemaField)
	}
	return issue{rankValue, fieldCode(last, e.Schema), name + " " + show(e.Value) + ": " + reason}
}

// fieldCode is the error code for an invalid field: the x-error-code of its
// schema in the document, else the 2022 node's choice by field name.
func fieldCode(name string, s *openapi3.Schema) string {
	if s != nil {
		if c, ok := s.Extensions["x-error-code"].(string); ok && c != "" {
			return c
		}
	}
	switch strings.ToLower(name) {
	case "peerid":
		return CodeInvalidPeerID
	case "amount":
		return CodeInvalidAmount
	case "currency":
		return CodeInvalidCurrency
	case "recipient", "address":
		return CodeInvalidAddress
	}
	return CodeInvalidInput
}

func paramSchema(p *openapi3.Parameter) *openapi3.Schema {
	if p.Schema != nil {
		return p.Schema.Value
	}
	return nil
}

// maxNamesListed is how many unknown fields a message names.
const maxNamesListed = 10

// unknownFields lists the properties of the offending object that its
// schema does not declare.
func unknownFields(e *openapi3.SchemaError) []string {
	obj, _ := e.Value.(map[string]any)
	var names []string
	for k := range obj {
		if _, ok := e.Schema.Properties[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		names = []string{"?"}
	}
	return names
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = quote(v)
	}
	return out
}

// expected names the JSON type a schema wants, as decodeJSON does.
func expected(s *openapi3.Schema) string {
	if s.Type == nil || len(*s.Type) == 0 {
		return "a valid value"
	}
	switch t := (*s.Type)[0]; t {
	case openapi3.TypeObject:
		return "a JSON object"
	case openapi3.TypeArray:
		return "an array"
	case openapi3.TypeInteger:
		return "an integer"
	default:
		return "a " + t
	}
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a JSON string"
	case bool:
		return "a JSON boolean"
	case []any:
		return "a JSON array"
	case map[string]any:
		return "a JSON object"
	default:
		return "a JSON number"
	}
}

// show renders an offending value for a message, shortened.
func show(v any) string {
	if s, ok := v.(string); ok {
		return quote(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "value"
	}
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
