package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/gitconfig"
)

// systemConfig is git's system file as Debian builds git (ETC_GITCONFIG).
const systemConfig = "/etc/gitconfig"

// fromFiles reads the venom.* keys of the system and global files in
// process, as git config --show-scope --get-regexp would list them, in the
// plain case only: ok is false, and the caller asks git, whenever the
// environment holds a git variable that could change which files are read
// or how (any GIT_* other than the few below), a file includes another, or a
// file is one this reader is not certain to read as git does.
func fromFiles(environ []string) (out [][2]string, ok bool) {
	files, ok := ScopeFiles(environ)
	if !ok {
		return nil, false
	}
	entries, ok := Entries(files, func(name string) bool { return strings.HasPrefix(name, "venom.") })
	for _, e := range entries {
		out = append(out, [2]string{e.Name, e.Value})
	}
	return out, ok
}

// Entries reads the entries of the config files (a missing one is empty)
// whose names keep accepts, in order; ok is false when a file includes
// another or is one this reader is not certain to read as git does.
func Entries(files []string, keep func(name string) bool) (out []gitconfig.Entry, ok bool) {
	for _, path := range files {
		text, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false
		}
		entries, err := gitconfig.Parse(text)
		if err != nil {
			return nil, false
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name, "include.") || strings.HasPrefix(e.Name, "includeif.") {
				return nil, false
			}
			if keep(e.Name) {
				out = append(out, e)
			}
		}
	}
	return out, true
}

// ScopeFiles lists the system and global config files git reads, in its
// order, in the plain case only: ok is false when the environment holds a
// git variable that could change which files are read or how (any GIT_*
// other than GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM and
// the harmless few), and the caller then asks git.
func ScopeFiles(environ []string) (files []string, ok bool) {
	var system, global []string
	if !gitconfig.PlainEnvironment(environ) {
		return nil, false
	}
	env := map[string]string{}
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		env[name] = v
	}
	noSystem := false
	if v, set := env["GIT_CONFIG_NOSYSTEM"]; set {
		b, known := envBool(v)
		if !known {
			return nil, false
		}
		noSystem = b
	}
	if !noSystem {
		if v, set := env["GIT_CONFIG_SYSTEM"]; set {
			if v == "" {
				return nil, false
			}
			system = []string{v}
		} else {
			system = []string{systemConfig}
		}
	}
	// git_global_config: GIT_CONFIG_GLOBAL alone, else the XDG file and
	// then ~/.gitconfig.
	if v, set := env["GIT_CONFIG_GLOBAL"]; set {
		if v == "" {
			return nil, false
		}
		global = []string{v}
	} else {
		home, haveHome := env["HOME"]
		if haveHome && home == "" {
			return nil, false // git would read /.gitconfig
		}
		if xdg := env["XDG_CONFIG_HOME"]; xdg != "" {
			global = append(global, filepath.Join(xdg, "git", "config"))
		} else if haveHome && home != "" {
			global = append(global, filepath.Join(home, ".config", "git", "config"))
		}
		if haveHome && home != "" {
			global = append(global, filepath.Join(home, ".gitconfig"))
		}
	}
	for _, path := range append(system, global...) {
		if !filepath.IsAbs(path) {
			return nil, false
		}
	}
	return append(system, global...), true
}

// envBool is git_env_bool's reading of a set variable; known is false for a
// value git would read as a number or refuse.
func envBool(v string) (b, known bool) {
	switch strings.ToLower(v) {
	case "":
		return false, true
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}
