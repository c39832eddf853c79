// Package config reads the venom.* keys from git config's global and system
// scopes only (docs/checkpoints.md#configuration, docs/checkpoints.md#configuration: user-only keys, so a cloned repository
// cannot weaken them), with the defaults of docs/checkpoints.md#configuration.
package config

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
)

// DefaultRollbackNote is docs/checkpoints.md#configuration's rollback_note.
const DefaultRollbackNote = "Note: the files were rolled back to their state {when}. Changes made after that point are gone, and what you remember of them may no longer be true. Read the files before you rely on them."

// Config is the venom.* settings.
type Config struct {
	Enabled       bool
	MaxFileBytes  int64
	MaxTotalBytes int64
	Keep          int
	KeepFor       time.Duration
	KeepSafety    time.Duration
	Timeout       time.Duration
	RollbackNote  string
	DiffMaxBytes  int64
	// Copy* are the budgets of a fetched copy's checkpoint (lib/share):
	// the paths, depth, largest file and bytes its tree checks out to.
	CopyMaxPaths      int64
	CopyMaxDepth      int64
	CopyMaxFileBytes  int64
	CopyMaxTotalBytes int64
	// Exclude is every venom.exclude value, in the order git lists them:
	// gitignore patterns a capture leaves out (docs/checkpoints.md#what-a-capture-holds).
	Exclude []string
}

// Defaults are docs/checkpoints.md#configuration's values.
func Defaults() Config {
	return Config{
		Enabled:       true,
		MaxFileBytes:  52428800,
		MaxTotalBytes: 536870912,
		Keep:          100,
		KeepFor:       14 * 24 * time.Hour,
		KeepSafety:    30 * 24 * time.Hour,
		Timeout:       30 * time.Second,
		RollbackNote:  DefaultRollbackNote,
		DiffMaxBytes:  256 << 10,
		// A monorepo's checkout is a few hundred thousand paths, a few
		// dozen folders deep; a copy past these is a bomb or a mistake.
		CopyMaxPaths:      500000,
		CopyMaxDepth:      256,
		CopyMaxFileBytes:  256 << 20,
		CopyMaxTotalBytes: 4 << 30,
	}
}

// Load reads the keys of the global and system scopes: in process when
// environ is plain and the files are too (fromFiles), else through git
// config, keeping those scopes only.
func Load(ctx context.Context, g *gitcli.Runner, environ []string) (Config, error) {
	c := Defaults()
	if keys, ok := fromFiles(environ); ok {
		for _, kv := range keys {
			if err := c.setKey(kv[0], kv[1]); err != nil {
				return c, err
			}
		}
		return c, nil
	}
	return fromGit(ctx, g)
}

// fromGit reads the keys through git config.
func fromGit(ctx context.Context, g *gitcli.Runner) (Config, error) {
	c := Defaults()
	out, err := g.Run(ctx, "config", "--show-scope", "-z", "--get-regexp", `^venom\.`)
	if err != nil {
		if gitcli.ExitCode(err) == 1 { // no key at all
			return c, nil
		}
		return c, errcode.Newf(errcode.InvalidParamsConfig, nil, "cannot read git config").Wrap(err)
	}
	return c, c.parse(out)
}

// parse reads "scope\0key\nvalue\0" records.
func (c *Config) parse(out []byte) error {
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		scope := string(fields[i])
		if scope != "global" && scope != "system" {
			continue
		}
		key, value, _ := strings.Cut(string(fields[i+1]), "\n")
		if err := c.setKey(key, value); err != nil {
			return err
		}
	}
	return nil
}

// setKey sets one key as git config names it, or says which is wrong.
func (c *Config) setKey(key, value string) error {
	if err := c.set(strings.ToLower(key), value); err != nil {
		return errcode.Newf(errcode.InvalidParamsConfig, map[string]string{"key": key, "value": value},
			"git config %s: %v", key, err)
	}
	return nil
}

func (c *Config) set(key, value string) error {
	var err error
	switch key {
	case "venom.enabled":
		c.Enabled, err = ParseBool(value)
	case "venom.maxfilebytes":
		c.MaxFileBytes, err = ParseBytes(value)
	case "venom.maxtotalbytes":
		c.MaxTotalBytes, err = ParseBytes(value)
	case "venom.keep":
		var n int64
		n, err = ParseBytes(value)
		c.Keep = int(n)
	case "venom.keepfor":
		c.KeepFor, err = ParseDuration(value)
	case "venom.keepsafety":
		c.KeepSafety, err = ParseDuration(value)
	case "venom.timeout":
		// Some of git's keys take 0 for "no limit"; this one cannot: a
		// hook must end within it, and a wait for the lock with 0 would
		// give up at once.
		var d time.Duration
		if d, err = ParseDuration(value); err == nil && d <= 0 {
			err = fmt.Errorf("%q is not a positive duration: hooks and waits for the lock need a deadline", value)
		}
		if err == nil {
			c.Timeout = d
		}
	case "venom.rollbacknote":
		c.RollbackNote = value
	case "venom.diffmaxbytes":
		c.DiffMaxBytes, err = ParseBytes(value)
	case "venom.copymaxpaths":
		c.CopyMaxPaths, err = ParseBytes(value)
	case "venom.copymaxdepth":
		c.CopyMaxDepth, err = ParseBytes(value)
	case "venom.copymaxfilebytes":
		c.CopyMaxFileBytes, err = ParseBytes(value)
	case "venom.copymaxtotalbytes":
		c.CopyMaxTotalBytes, err = ParseBytes(value)
	case "venom.exclude":
		// A multi-valued key, each value one or more gitignore lines.
		c.Exclude = append(c.Exclude, value)
	}
	return err
}

// ParseBool reads a git boolean.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1", "":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean", s)
}

// ParseBytes reads an integer with git's optional k, m or g suffix.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k':
			mult, s = 1<<10, s[:n-1]
		case 'm':
			mult, s = 1<<20, s[:n-1]
		case 'g':
			mult, s = 1<<30, s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a non-negative number", s)
	}
	if v > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is too large", s) // it would wrap around
	}
	return v * mult, nil
}

// tooLong refuses a duration past what time.Duration holds (about 292
// years): converted, it wrapped around to a negative or small one, and a
// venom.keepFor meant as "for ever" pruned everything.
func tooLong(s string) error {
	return fmt.Errorf("%q is too long: at most 106751d", s)
}

// ParseDuration reads durations like 14d, 30s, 2h, 1w, or Go's 1h30m.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n := len(s); n > 1 {
		unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[n-1]]
		if unit != 0 {
			v, err := strconv.ParseFloat(s[:n-1], 64)
			if err != nil || !(v >= 0) || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%q is not a duration", s)
			}
			if v*float64(unit) >= math.MaxInt64 {
				return 0, tooLong(s)
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= 0 {
		if v > math.MaxInt64/int64(time.Second) {
			return 0, tooLong(s)
		}
		return time.Duration(v) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return d, nil
}
