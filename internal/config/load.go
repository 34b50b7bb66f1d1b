package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	koanfenv "github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/v2"
	gotoml "github.com/pelletier/go-toml/v2"
)

// ErrHelp is returned by Parse and Load when the user asked for usage text.
var ErrHelp = flag.ErrHelp

// ErrVersion is returned by Parse and Load when the user asked for the version (--version).
var ErrVersion = errors.New("version requested")

// ErrFile is wrapped by every error about the config file (a *FileError).
var ErrFile = errors.New("config file")

// Flags that are no key of the config file: --config names the file, --version asks a question.
const (
	configFlag  = "config"
	versionFlag = "version"
)

// maxConfigFile bounds what Load reads of a config file: a node's configuration is a few
// kilobytes, and a bigger file is the wrong path.
const maxConfigFile = 1 << 20

// FileError is an error about the config file: its path, the line when known (0 otherwise),
// the key it is about when there is one, and what is wrong. Its text never contains the value
// of a key.
type FileError struct {
	Path string
	Line int
	Key  string
	Msg  string
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString("config file " + e.Path)
	if e.Line > 0 {
		b.WriteString(", line " + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return oneLine(b.String())
}

// oneLine escapes the control characters of s (a parser's message may quote one from the file)
// so that an error stays one line.
func oneLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, "%U", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (e *FileError) Unwrap() error { return ErrFile }

// SourceKind says which layer gave a key its value.
type SourceKind int

// The layers, weakest first: a flag wins over its environment variable, which wins over the
// config file, which wins over the default.
const (
	FromDefault SourceKind = iota
	FromFile
	FromEnv
	FromFlag
)

// Source is where a key's value came from.
type Source struct {
	Kind SourceKind
	Name string // FromEnv: the variable; FromFile: the file's path
	Line int    // FromFile: the key's line, 0 when unknown
}

func (s Source) String() string {
	switch s.Kind {
	case FromFlag:
		return "flag"
	case FromEnv:
		return "env " + s.Name
	case FromFile:
		if s.Line > 0 {
			return fmt.Sprintf("file %s:%d", s.Name, s.Line)
		}
		return "file " + s.Name
	}
	return "default"
}

// Loaded is a configuration read by Load, with where each key's value came from.
type Loaded struct {
	// Config is the configuration. Load has not validated it: call Validate (after
	// LoadPasswordFile).
	Config Config
	// File is the config file read (--config, RELAYD_CONFIG); empty when none was.
	File string
	// FileSource is where File was named (a flag or the environment).
	FileSource Source

	fs      *flag.FlagSet // its values point into Config
	sources map[string]Source
}

// Source returns where the key (a flag's name) got its value.
func (l *Loaded) Source(key string) Source { return l.sources[key] }

// Parse is Load's Config.
func Parse(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	l, err := Load(args, getenv, out)
	if l == nil {
		return Config{}, err
	}
	return l.Config, err
}

// Load reads the configuration of `relayd`. Each key (a flag's name) takes its value from the
// first of: the flag in args; the environment variable RELAYD_<UPPER_SNAKE> of its name (read
// through getenv; an empty one counts as unset); the config file named by --config or
// RELAYD_CONFIG (TOML for .toml, YAML for .yaml and .yml); the flag's default. Usage text and
// flag-syntax errors are written to out. It returns ErrHelp for -h, ErrVersion for --version,
// an error naming the variable for a bad environment value and a *FileError (ErrFile) for
// anything wrong with the file: syntax, an unknown key, a value of the wrong type, a file other
// users may read that holds a secret. It does not validate: call Validate.
func Load(args []string, getenv func(string) string, out io.Writer) (*Loaded, error) {
	l := &Loaded{sources: map[string]Source{}}
	fs := flags(&l.Config, out)
	l.fs = fs
	configPath := fs.String(configFlag, "", "read settings from this TOML (.toml) or YAML (.yaml, .yml) file: its keys are the flag names; a flag or RELAYD_* variable wins over it (docs/CONFIG.md)")
	showVersion := fs.Bool(versionFlag, false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return l, err
	}
	if fs.NArg() > 0 {
		return l, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *showVersion {
		return l, ErrVersion
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })

	// The layers, each a koanf instance of its own so that a key's source is known.
	flagLayer := map[string]any{}
	fs.Visit(func(f *flag.Flag) { flagLayer[f.Name] = f.Value.String() })
	flagK := koanf.New(".")
	if err := flagK.Load(confmap.Provider(flagLayer, ""), nil); err != nil {
		return l, err
	}
	keyOfEnv := map[string]string{}
	var environ []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == versionFlag || f.Name == configFlag {
			return
		}
		name := EnvName(f.Name)
		keyOfEnv[name] = f.Name
		if v := getenv(name); v != "" {
			environ = append(environ, name+"="+v)
		}
	})
	envK := koanf.New(".")
	err := envK.Load(koanfenv.Provider("", koanfenv.Opt{
		Prefix:        "RELAYD_",
		EnvironFunc:   func() []string { return environ },
		TransformFunc: func(name, v string) (string, any) { return keyOfEnv[name], v },
	}), nil)
	if err != nil {
		return l, err
	}

	switch {
	case given[configFlag]:
		l.File, l.FileSource = *configPath, Source{Kind: FromFlag}
	case getenv(EnvName(configFlag)) != "":
		l.File, l.FileSource = getenv(EnvName(configFlag)), Source{Kind: FromEnv, Name: EnvName(configFlag)}
	}
	fileK := koanf.New(".")
	var fileData []byte
	if l.File != "" {
		if fileData, err = loadFile(fileK, l.File, fs); err != nil {
			return l, err
		}
	}

	merged := koanf.New(".")
	for _, layer := range []*koanf.Koanf{fileK, envK, flagK} {
		if err := merged.Merge(layer); err != nil {
			return l, err
		}
	}
	keys := merged.Keys()
	slices.Sort(keys)
	for _, key := range keys {
		switch {
		case given[key]:
			l.sources[key] = Source{Kind: FromFlag}
		case envK.Exists(key):
			name := EnvName(key)
			l.sources[key] = Source{Kind: FromEnv, Name: name}
			v := envK.String(key)
			if err := fs.Set(key, v); err != nil {
				return l, fmt.Errorf("%s: invalid value %q: %s", name, v, valueProblem(fs.Lookup(key), err))
			}
		default:
			line := keyLine(fileData, key, false)
			l.sources[key] = Source{Kind: FromFile, Name: l.File, Line: line}
			f := fs.Lookup(key)
			texts, problem := fileTexts(kindOf(f), fileK.Get(key))
			if problem != "" {
				return l, &FileError{Path: l.File, Line: line, Key: key, Msg: problem}
			}
			for _, t := range texts {
				if err := fs.Set(key, t); err != nil {
					return l, &FileError{Path: l.File, Line: line, Key: key, Msg: fmt.Sprintf("invalid value %q: %s", t, valueProblem(f, err))}
				}
			}
		}
	}
	c := &l.Config
	c.identitySetByUser = merged.Exists("identity")
	if !c.identitySetByUser {
		c.Identity = filepath.Join(c.Data, "identity.json")
	}
	return l, nil
}

// loadFile reads the config file at path into k and checks its keys against the flags of fs. It
// returns the file's bytes, to find keys' lines in.
func loadFile(k *koanf.Koanf, path string, fs *flag.FlagSet) ([]byte, error) {
	ferr := func(line int, key, format string, a ...any) error {
		return &FileError{Path: path, Line: line, Key: key, Msg: fmt.Sprintf(format, a...)}
	}
	var parser koanf.Parser
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		parser = toml.Parser()
	case ".yaml", ".yml":
		parser = yaml.Parser()
	default:
		return nil, ferr(0, "", "must be TOML (a name ending in .toml) or YAML (.yaml, .yml)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, ferr(0, "", "cannot be read: %v", errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, ferr(0, "", "cannot be read: %v", err)
	}
	if !st.Mode().IsRegular() {
		return nil, ferr(0, "", "is not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, ferr(0, "", "cannot be read: %v", err)
	}
	if len(data) > maxConfigFile {
		return nil, ferr(0, "", "is larger than %d bytes", maxConfigFile)
	}
	if err := k.Load(rawbytes.Provider(data), parser); err != nil {
		line, msg := syntaxError(err)
		if m := tomlDuplicate.FindStringSubmatch(msg); m != nil && line == 0 {
			line = keyLine(data, m[1], true)
		}
		return nil, ferr(line, "", "%s", msg)
	}
	raw := k.Raw()
	keys := make([]string, 0, len(raw))
	for key := range raw {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		line := keyLine(data, key, false)
		switch f := fs.Lookup(key); {
		case key == configFlag:
			return nil, ferr(line, key, "a config file cannot name another one")
		case key == versionFlag:
			return nil, ferr(line, key, "is a command-line flag only")
		case f == nil:
			msg := "unknown key (the keys are the flag names of relayd -h"
			if near := nearestFlag(fs, key); near != "" {
				msg += "; did you mean " + near + "?"
			}
			return nil, ferr(line, key, "%s)", msg)
		}
		if _, ok := raw[key].(map[string]any); ok {
			return nil, ferr(line, key, "is a table: the file is flat, one line per flag name")
		}
	}
	// Secrets in a file that others may read are as good as published.
	if perm := st.Mode().Perm(); perm&0o007 != 0 {
		for _, secret := range []string{"apiToken", "password"} {
			if _, ok := raw[secret]; ok {
				return nil, ferr(keyLine(data, secret, false), secret, "the file is accessible to other users (mode %04o) and holds a secret: restrict it, e.g. chmod 600 %s", perm, path)
			}
		}
	}
	return data, nil
}

// tomlDuplicate matches go-toml's error about a key set twice, which has no position.
var tomlDuplicate = regexp.MustCompile(`^key (\S+) is already defined`)

// yamlLine finds the line yaml.v3 gives in its errors.
var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// syntaxError returns the line (0 when unknown) and one-line text of a parser's error.
func syntaxError(err error) (int, string) {
	var de *gotoml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		return row, strings.TrimPrefix(de.Error(), "toml: ")
	}
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 0, strings.TrimPrefix(strings.TrimPrefix(msg, "yaml: "), "toml: ")
}

// keyLine returns the first line (from 1; the last one if last) of data where key is set (key =
// or key:, the key bare or quoted) or opens a table ([key]); 0 when none is found.
func keyLine(data []byte, key string, last bool) int {
	lines := bytes.Split(data, []byte("\n"))
	for j := range lines {
		i := j
		if last {
			i = len(lines) - 1 - j
		}
		line := lines[i]
		t := strings.TrimSpace(string(line))
		if t == "["+key+"]" || t == "[["+key+"]]" {
			return i + 1
		}
		for _, q := range []string{key, `"` + key + `"`, "'" + key + "'"} {
			if rest, ok := strings.CutPrefix(t, q); ok {
				rest = strings.TrimLeft(rest, " \t")
				if strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, ":") {
					return i + 1
				}
			}
		}
	}
	return 0
}

// nearestFlag returns the flag whose name equals key but for case, underscores and dashes (the
// key of a mistyped or environment-styled name), or "".
func nearestFlag(fs *flag.FlagSet, key string) string {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '_' || r == '-' {
				return -1
			}
			return unicode.ToLower(r)
		}, strings.TrimPrefix(strings.ToLower(s), "relayd_"))
	}
	var near string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != configFlag && f.Name != versionFlag && norm(f.Name) == norm(key) {
			near = f.Name
		}
	})
	return near
}

// kind is the type of a flag's value, which says what a config file may give it.
type kind int

const (
	kindString kind = iota
	kindBool
	kindInt
	kindDuration
	kindNumber
	kindList
	kindAmount // a token amount: a string ("2.5") or a number
)

// amountFlags are the string flags of token amounts, which a file may give as numbers.
var amountFlags = map[string]bool{"channelFunding": true}

func kindOf(f *flag.Flag) kind {
	if amountFlags[f.Name] {
		return kindAmount
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return kindString
	}
	switch g.Get().(type) {
	case bool:
		return kindBool
	case int:
		return kindInt
	case time.Duration:
		return kindDuration
	case float64:
		return kindNumber
	case []string:
		return kindList
	}
	return kindString
}

// fileTexts turns a config file's value for a flag of kind k into the texts to set the flag to,
// or returns what is wrong (never the value: it may be a secret).
func fileTexts(k kind, v any) ([]string, string) {
	switch k {
	case kindString:
		if s, ok := v.(string); ok {
			return []string{s}, ""
		}
		return nil, "want a string (in quotes), got " + describe(v)
	case kindBool:
		if b, ok := v.(bool); ok {
			return []string{strconv.FormatBool(b)}, ""
		}
		return nil, "want true or false, got " + describe(v)
	case kindInt:
		if i, ok := integer(v); ok {
			return []string{strconv.FormatInt(i, 10)}, ""
		}
		return nil, "want an integer, got " + describe(v)
	case kindDuration:
		if s, ok := v.(string); ok {
			return []string{s}, ""
		}
		if i, ok := integer(v); ok && i == 0 {
			return []string{"0"}, ""
		}
		return nil, `want a duration in quotes such as "10s" or "250ms", got ` + describe(v)
	case kindNumber:
		if i, ok := integer(v); ok {
			return []string{strconv.FormatInt(i, 10)}, ""
		}
		if f, ok := v.(float64); ok {
			return []string{strconv.FormatFloat(f, 'g', -1, 64)}, ""
		}
		return nil, "want a number, got " + describe(v)
	case kindAmount:
		if s, ok := v.(string); ok {
			return []string{s}, ""
		}
		if i, ok := integer(v); ok {
			return []string{strconv.FormatInt(i, 10)}, ""
		}
		if f, ok := v.(float64); ok {
			return []string{strconv.FormatFloat(f, 'f', -1, 64)}, ""
		}
		return nil, `want an amount of tokens such as 100 or "2.5", got ` + describe(v)
	case kindList:
		switch v := v.(type) {
		case string:
			return []string{v}, ""
		case []any:
			texts := make([]string, 0, len(v))
			for _, item := range v {
				s, ok := item.(string)
				if !ok {
					return nil, "want a list of strings, got " + describe(item) + " in the list"
				}
				texts = append(texts, s)
			}
			return texts, ""
		}
		return nil, "want a list of strings (or one comma-separated string), got " + describe(v)
	}
	return nil, "unsupported key"
}

// integer returns v as an integer when the parser gave one.
func integer(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case uint64:
		if v <= 1<<63-1 {
			return int64(v), true
		}
	}
	return 0, false
}

// describe names the type of a parsed value for an error message.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "no value"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64:
		return "an integer"
	case float64:
		return "a number with a fraction"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// valueProblem says what a flag's value must be after its Set failed.
func valueProblem(f *flag.Flag, err error) string {
	switch kindOf(f) {
	case kindBool:
		return "want true or false"
	case kindInt:
		return "want an integer"
	case kindDuration:
		return "want a duration such as 10s or 250ms"
	}
	return err.Error()
}
