package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// decodeBody reads the request body as exactly one JSON object into v,
// refusing unknown fields, wrong types, trailing data and bodies over
// MaxBodyBytes. On failure it writes a 400 envelope and returns false.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	err := decodeJSON(r.Body, v)
	if err == nil {
		return true
	}
	writeError(w, http.StatusBadRequest, CodeInvalidInput, err.Error())
	return false
}

func decodeJSON(body io.Reader, v any) error {
	raw, err := io.ReadAll(body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("request body larger than %d bytes", tooLarge.Limit)
	case err != nil:
		return fmt.Errorf("read request body: %v", err)
	case len(bytes.TrimLeft(raw, jsonSpace)) == 0:
		return errors.New("request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &typeErr):
			return fmt.Errorf("field %q must be a %s, not a JSON %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()), typeErr.Value)
		case errors.As(err, &syntaxErr):
			return fmt.Errorf("malformed JSON at byte %d: %v", syntaxErr.Offset, err)
		default:
			return fmt.Errorf("invalid JSON body: %v", err)
		}
	}
	// Decoder.More is not enough: it reports no more input at a stray '}'
	// or ']'. Only JSON whitespace may follow the value.
	if len(bytes.TrimLeft(raw[dec.InputOffset():], jsonSpace)) != 0 {
		return errors.New("request body has data after the JSON object")
	}
	return nil
}

// jsonSpace is the whitespace JSON allows between tokens (RFC 8259).
const jsonSpace = " \t\r\n"

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "struct", "map":
		return "object"
	default:
		return "number"
	}
}

// TimeFormat is how the API writes times: ISO 8601 in UTC with milliseconds, as the admin
// WebSocket's frames do.
const TimeFormat = "2006-01-02T15:04:05.000Z"
