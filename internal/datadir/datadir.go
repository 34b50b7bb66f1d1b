// Package datadir is a node's data directory at its start: created on --init, and the identity
// keystore it names opened, or created on --init. Its errors name the flag a user fixes
// (FlagError), one line each. It may import internal/identity, nothing else of relayd.
package datadir

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/relayd/relayd/internal/identity"
)

// FlagError is a problem a user fixes by changing one flag or the environment; its text is a
// single line that names the flag.
type FlagError struct {
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return "--" + e.Flag + ": " + e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// Config names the data directory and the keystore (the node's flags of the same names).
type Config struct {
	Data, Identity, Password, PasswordFile string
	// Init creates what is missing; WeakCrypto makes a new keystore with light scrypt (tests).
	Init, WeakCrypto bool
	Logger           *slog.Logger
}

// Open prepares the data directory and returns the node's identity.
func Open(c Config) (*identity.Identity, error) {
	if err := prepare(c); err != nil {
		return nil, err
	}
	params := identity.StandardScrypt
	if c.WeakCrypto {
		params = identity.LightScrypt
	}
	id, created, err := identity.LoadOrCreate(c.Identity, c.Password, c.Init, params)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return nil, &FlagError{"identity", fmt.Errorf("%s does not exist (pass --init to create it)", c.Identity)}
	case errors.Is(err, identity.ErrWrongPassword):
		flag := "password"
		if c.PasswordFile != "" {
			flag = "passwordFile" // the password came from there
		}
		return nil, &FlagError{flag, fmt.Errorf("does not decrypt the keystore %s", c.Identity)}
	case err != nil:
		return nil, &FlagError{"identity", err}
	}
	if created && c.Logger != nil {
		c.Logger.Info("created new identity", "keystore", c.Identity)
	}
	return id, nil
}

func prepare(c Config) error {
	st, err := os.Stat(c.Data)
	switch {
	case err == nil && !st.IsDir():
		return &FlagError{"data", fmt.Errorf("%s is not a directory", c.Data)}
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return &FlagError{"data", err}
	case !c.Init:
		return &FlagError{"data", fmt.Errorf("%s does not exist (pass --init to create it)", c.Data)}
	}
	if err := os.MkdirAll(c.Data, 0o700); err != nil {
		return &FlagError{"data", err}
	}
	return nil
}
