package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"
)

// decodeBody reads the request body as exactly one JSON object into v,
// refusing unknown fields, wrong types, trailing data and bodies over
// the operation's limit. On failure it writes the envelope (400, or 413 for a
// message over its operation's own limit) and returns false.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	err := decodeJSON(r.Body, v)
	if err == nil {
		return true
	}
	writeBodyError(w, err)
	return false
}

// writeBodyError answers a request whose body decodeJSON refused.
func writeBodyError(w http.ResponseWriter, err error) {
	if errors.Is(err, errBodyTooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, err.Error())
		return
	}
	writeError(w, http.StatusBadRequest, CodeInvalidInput, err.Error())
}

// errBodyTooLarge is decodeJSON's error for a message over its operation's limit (413): the
// body of an operation with a limit of its own (limitedBody). Any other operation's body over
// MaxBodyBytes is 400, as the API always answered.
var errBodyTooLarge = errors.New("request body larger than")

// limitedBody is the body of an operation with a limit of its own, read through
// http.MaxBytesReader: a read past the limit fails with errBodyTooLarge as well.
type limitedBody struct{ io.ReadCloser }

func (b limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		err = fmt.Errorf("%w: %w", errBodyTooLarge, err)
	}
	return n, err
}

func decodeJSON(body io.Reader, v any) error {
	raw, err := io.ReadAll(body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge) && errors.Is(err, errBodyTooLarge):
		return fmt.Errorf("%w %d bytes", errBodyTooLarge, tooLarge.Limit)
	case errors.As(err, &tooLarge):
		return fmt.Errorf("request body larger than %d bytes", tooLarge.Limit)
	case err != nil:
		return fmt.Errorf("read request body: %v", err)
	case len(bytes.TrimLeft(raw, jsonSpace)) == 0:
		return errors.New("request body is empty; a JSON object is required")
	case !utf8.Valid(raw):
		// encoding/json would replace the bad bytes with U+FFFD: the node would act on (sign,
		// send) text the client did not send.
		return fmt.Errorf("request body is not valid UTF-8 (at byte %d); JSON text must be UTF-8", invalidAt(raw))
	}
	if at, ok := loneSurrogate(raw); ok {
		return fmt.Errorf("request body has a lone UTF-16 surrogate escape at byte %d, which is no character (it would read as U+FFFD)", at)
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

// invalidAt is the offset of the first byte of b that is not valid UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// loneSurrogate finds a \uD800-\uDFFF escape in a JSON string of raw that is not a high
// surrogate followed by a low one (encoding/json decodes such an escape to U+FFFD). It reads
// strings only; raw need not be valid JSON (the decoder says why it is not).
func loneSurrogate(raw []byte) (int, bool) {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && i+1 < len(raw):
			if raw[i+1] != 'u' {
				i++ // the escaped character
				continue
			}
			u, ok := hex4(raw, i+2)
			switch {
			case !ok || u < 0xd800 || u > 0xdfff:
			case u >= 0xdc00:
				return i, true // a low surrogate first
			default:
				low, ok := hex4(raw, i+8)
				if !ok || i+7 >= len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' || low < 0xdc00 || low > 0xdfff {
					return i, true
				}
				i += 6 // the pair's low half
			}
			i += 5
		}
	}
	return 0, false
}

// hex4 reads four hex digits of raw at i.
func hex4(raw []byte, i int) (uint16, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var v uint16
	for _, c := range raw[i : i+4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}
