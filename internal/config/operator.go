package config

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Log formats of --logFormat.
const (
	LogText = "text" // slog's text handler: key=value pairs
	LogJSON = "json" // slog's JSON handler: one object per line
)

// maxPasswordFile bounds what LoadPasswordFile reads: a password is one line, and a bigger file
// is a mistake (the wrong path).
const maxPasswordFile = 4096

// validateOperator checks the flags of an operator's setup: the log format and the password
// sources.
func (c Config) validateOperator() error {
	switch c.LogFormat {
	case "", LogText, LogJSON:
	default:
		return &FieldError{"logFormat", "must be text or json"}
	}
	return nil
}

// LoadPasswordFile reads the keystore password from PasswordFile into Password; without
// PasswordFile it does nothing. The file holds the password on one line (a trailing newline is
// dropped, every other byte counts). It refuses, with a *FieldError naming --passwordFile, a
// file that other users may read or write (mode o+rwx: the password decrypts the node's key,
// and with it its funds), an empty or oversized file, and a PasswordFile given together with
// Password. The error never contains the file's content.
func (c *Config) LoadPasswordFile() error {
	if c.PasswordFile == "" {
		return nil
	}
	if c.Password != "" {
		return &FieldError{"passwordFile", "cannot be used together with --password (RELAYD_PASSWORD): give one of them"}
	}
	f, err := os.Open(c.PasswordFile)
	if err != nil {
		return &FieldError{"passwordFile", fmt.Sprintf("cannot be read: %v", err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return &FieldError{"passwordFile", fmt.Sprintf("cannot be read: %v", err)}
	}
	switch {
	case !st.Mode().IsRegular():
		return &FieldError{"passwordFile", c.PasswordFile + " is not a regular file"}
	case st.Mode().Perm()&0o007 != 0:
		return &FieldError{"passwordFile", fmt.Sprintf("%s is accessible to other users (mode %04o): restrict it, e.g. chmod 600 %s",
			c.PasswordFile, st.Mode().Perm(), c.PasswordFile)}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
	if err != nil {
		return &FieldError{"passwordFile", fmt.Sprintf("cannot be read: %v", err)}
	}
	if len(b) > maxPasswordFile {
		return &FieldError{"passwordFile", fmt.Sprintf("%s is larger than %d bytes: it should hold the password only", c.PasswordFile, maxPasswordFile)}
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return &FieldError{"passwordFile", c.PasswordFile + " is empty"}
	}
	c.Password = string(b)
	return nil
}
