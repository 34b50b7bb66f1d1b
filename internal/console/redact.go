package console

import (
	"net/url"
	"regexp"
	"strings"
)

// redactedText replaces a secret in what relayctl prints.
const redactedText = "REDACTED"

// tokenParam matches the value of an apiToken query parameter in any text.
var tokenParam = regexp.MustCompile(`(?i)(apiToken=)[^&#\s"']*`)

// Redact returns s with token (as typed, query-escaped or path-escaped)
// and the value of any apiToken query parameter replaced, so an error that
// quotes the admin URL never shows the token.
func Redact(s, token string) string {
	if token != "" {
		for _, v := range []string{token, url.QueryEscape(token), url.PathEscape(token)} {
			s = strings.ReplaceAll(s, v, redactedText)
		}
	}
	return tokenParam.ReplaceAllString(s, "${1}"+redactedText)
}

// RedactError wraps err so that its text goes through Redact; errors.Is and
// errors.As still see err.
func RedactError(err error, token string) error {
	if err == nil {
		return nil
	}
	return &redactedError{err: err, token: token}
}

type redactedError struct {
	err   error
	token string
}

func (e *redactedError) Error() string { return Redact(e.err.Error(), e.token) }
func (e *redactedError) Unwrap() error { return e.err }
