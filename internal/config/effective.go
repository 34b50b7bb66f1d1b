package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Redacted stands in for a secret in the effective configuration.
const Redacted = "[redacted]"

// Entry is one key of the effective configuration: its value as TOML, secrets redacted, and
// where the value came from.
type Entry struct {
	Key    string
	Value  string
	Source Source
}

// Effective returns every key of the configuration in name order, with its value as a TOML
// value (so that the whole is a config file) and its source. Secrets never appear: the API
// token and the keystore password show as Redacted, the provider URL only as its scheme and
// host (its path, query and user info may hold an API key).
func (l *Loaded) Effective() []Entry {
	var entries []Entry
	l.fs.VisitAll(func(f *flag.Flag) {
		if f.Name == configFlag || f.Name == versionFlag {
			return
		}
		src := l.sources[f.Name]
		if f.Name == "password" && src.Kind == FromDefault && l.Config.PasswordFile != "" && l.Config.Password != "" {
			src = l.sources["passwordFile"] // read from that file by LoadPasswordFile
		}
		entries = append(entries, Entry{Key: f.Name, Value: l.value(f), Source: src})
	})
	return entries
}

// value renders f's current value as TOML, redacted.
func (l *Loaded) value(f *flag.Flag) string {
	v := f.Value.(flag.Getter).Get()
	switch f.Name {
	case "apiToken", "password":
		if v.(string) != "" {
			return tomlString(Redacted)
		}
	case "provider":
		return tomlString(RedactURL(v.(string)))
	}
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case time.Duration:
		return tomlString(v.String())
	case []string:
		items := make([]string, len(v))
		for i, s := range v {
			items[i] = tomlString(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return tomlString(f.Value.String())
}

// WriteEffective writes the effective configuration to w as a TOML config file whose comments
// say where each value came from.
func (l *Loaded) WriteEffective(w io.Writer) error {
	entries := l.Effective()
	width := 0
	for _, e := range entries {
		width = max(width, len(e.Key)+3+len(e.Value))
	}
	var b strings.Builder
	b.WriteString("# relayd's effective configuration: a flag wins over RELAYD_*, which wins over the config file,\n# which wins over the default. Secrets are redacted.\n")
	if l.File != "" {
		fmt.Fprintf(&b, "# config file: %s (%s)\n", l.File, l.FileSource)
	} else {
		b.WriteString("# config file: none\n")
	}
	for _, e := range entries {
		line := e.Key + " = " + e.Value
		fmt.Fprintf(&b, "%-*s  # %s\n", width, line, e.Source)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Annotate adds to a *FieldError from Validate or LoadPasswordFile where the flag's value came
// from when that was not the command line (an environment variable or a line of the config
// file), so that the user knows what to fix. Other errors come back as they are.
func (l *Loaded) Annotate(err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return err
	}
	switch src := l.sources[fe.Flag]; src.Kind {
	case FromEnv, FromFile:
		return fmt.Errorf("%w (set by %s)", err, src)
	}
	return err
}

// RedactURL returns what may be shown of a URL that may hold secrets in its path, query,
// fragment or user info (a provider's API key): its scheme and host, followed by /[redacted]
// when anything was left out. A string that is no such URL is Redacted whole.
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return Redacted
	}
	shown := u.Scheme + "://" + u.Host
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		shown += "/" + Redacted
	}
	return shown
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError, r < 0x20, r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
