// Package gitfiles lists the files outside the work tree whose content can
// change how git treats a file of the tree: its config files (every scope,
// and what they include) and its attributes files, which decide the clean
// filters, and its exclude files, which decide what is ignored. A capture
// keys its shortcuts on them (a memo, a scan record) and reads them to know
// when git would store a file as it is.
package gitfiles

import (
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/gitconfig"
)

// Repo is where git reads one repository's files from: its folders and
// the environment git runs in there.
type Repo struct {
	Top, GitDir, CommonDir string
	Env                    []string
}

// Settings are the files whose change can change what a clean filter
// gives for a file whose own stat data did not change: git's config files
// and the attributes outside the tree, with the files the config includes
// and the attributes files core.attributesFile points at.
func Settings(r Repo) []string {
	configs, attrs, _ := Outside(r)
	w := ConfigWalk{Home: EnvValue(r.Env, "HOME"), Top: r.Top}
	for _, f := range configs {
		w.Read(f, 0)
	}
	return append(append(append(configs, attrs...), w.Included...), w.AttributesFiles...)
}

// XDGPath is git's xdg_config_home(name): $XDG_CONFIG_HOME/git/name, else
// $HOME/.config/git/name.
func XDGPath(env []string, name string) string {
	if x := EnvValue(env, "XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", name)
	}
	if home := EnvValue(env, "HOME"); home != "" {
		return filepath.Join(home, ".config", "git", name)
	}
	return ""
}

// EnvValue is a variable of the environment git runs in (env, the last
// setting winning).
func EnvValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Outside are the config and attributes files outside the tree that
// git may read here, whichever scopes the environment turns off: reading
// more than git does only makes an answer more careful. ok is false when
// git's system folder is unknown (the list then lacks its files).
func Outside(r Repo) (configs, attrs []string, ok bool) {
	configs = []string{"/etc/gitconfig",
		filepath.Join(r.CommonDir, "config"),
		filepath.Join(r.CommonDir, "config.worktree"),
		filepath.Join(r.GitDir, "config.worktree"),
	}
	attrs = []string{"/etc/gitattributes",
		filepath.Join(r.CommonDir, "info", "attributes"),
		filepath.Join(r.GitDir, "info", "attributes"),
	}
	sysconf, ok := gitSysconfDir()
	if ok && sysconf != "/etc" {
		configs = append(configs, filepath.Join(sysconf, "gitconfig"))
		attrs = append(attrs, filepath.Join(sysconf, "gitattributes"))
	}
	for _, name := range []string{"GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL"} {
		if v := EnvValue(r.Env, name); v != "" {
			configs = append(configs, v)
		}
	}
	if xdg := EnvValue(r.Env, "XDG_CONFIG_HOME"); xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
		attrs = append(attrs, filepath.Join(xdg, "git", "attributes"))
	}
	if home := EnvValue(r.Env, "HOME"); home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
		attrs = append(attrs, filepath.Join(home, ".config", "git", "attributes"))
	}
	return configs, attrs, ok
}

// gitSysconfDir is where the git on PATH, the one gitcli runs, reads its
// system files: git's Makefile puts them in $(prefix)/etc, or /etc when
// the prefix is /usr (Debian's git reads /etc/gitattributes).
func gitSysconfDir() (string, bool) {
	p, err := exec.LookPath("git")
	if err != nil {
		return "", false
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	p, err = filepath.Abs(p)
	if err != nil {
		return "", false
	}
	prefix := filepath.Dir(filepath.Dir(p))
	if prefix == "/usr" {
		return "/etc", true
	}
	return filepath.Join(prefix, "etc"), true
}

// ConfigWalk reads config files for what says where attributes come from.
type ConfigWalk struct {
	Home, Top string
	// AttributesFiles are the values of core.attributesFile set anywhere.
	AttributesFiles []string
	// Included are the config files the ones read include.
	Included []string
}

// gitMaxIncludeDepth is git's MAX_INCLUDE_DEPTH.
const gitMaxIncludeDepth = 10

// Read reads one config file and, whatever their condition, the files it
// includes. It returns false when git might read the file differently or
// the config reads attributes from a tree (attr.tree, git 2.42 and later).
func (w *ConfigWalk) Read(path string, depth int) bool {
	if depth > gitMaxIncludeDepth {
		return false
	}
	entries, err := gitconfig.ReadFile(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		name := e.Name
		switch {
		case name == "attr.tree":
			return false
		case name == "core.attributesfile":
			p, ok := w.expand(e)
			if !ok {
				return false
			}
			if !filepath.IsAbs(p) {
				// hash-object runs at the top level.
				p = filepath.Join(w.Top, p)
			}
			w.AttributesFiles = append(w.AttributesFiles, p)
		case name == "include.path" || strings.HasPrefix(name, "includeif.") && strings.HasSuffix(name, ".path"):
			p, ok := w.expand(e)
			if !ok {
				return false
			}
			if !filepath.IsAbs(p) {
				// git: relative to the including file's folder.
				p = filepath.Join(filepath.Dir(path), p)
			}
			w.Included = append(w.Included, p)
			if !w.Read(p, depth+1) {
				return false
			}
		}
	}
	return true
}

// expand is git's interpolate_path for the forms this follows: "~" and
// "~/..." from HOME, and plain paths.
func (w *ConfigWalk) expand(e gitconfig.Entry) (string, bool) {
	v := e.Value
	switch {
	case !e.HasValue:
		return "", false
	case v == "~" || strings.HasPrefix(v, "~/"):
		if w.Home == "" {
			return "", false
		}
		return filepath.Join(w.Home, strings.TrimPrefix(v, "~")), true
	case strings.HasPrefix(v, "~") || strings.HasPrefix(v, "%(prefix)/"):
		return "", false
	}
	return v, true
}
