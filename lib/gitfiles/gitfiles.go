// Package gitfiles lists the files outside the work tree whose content can
// change how git treats a file of the tree: its config files (every scope,
// and what they include) and its attributes files, which decide the clean
// filters, and its exclude files, which decide what is ignored. A capture
// keys its shortcuts on them (a memo, a scan record) and reads them to know
// when git would store a file as it is.
package gitfiles

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/git-venom/git-venom/lib/gitcli"
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
	w := ConfigWalk{Home: gitcli.Getenv(r.Env, "HOME"), Top: r.Top}
	for _, f := range configs {
		w.Read(f, 0)
	}
	return append(append(append(configs, attrs...), w.Included...), w.AttributesFiles...)
}

// Kind is what one of git's files says.
type Kind int

const (
	Config     Kind = iota // settings: filters, line endings, core.attributesFile, ...
	Attributes             // gitattributes(5): which filter, text and eol rules apply
	Exclude                // gitignore(5) rules besides the tree's .gitignore files
)

// Scope is where git reads a file from, in the order git reads config.
type Scope int

const (
	System   Scope = iota // git's own folder, $(prefix)/etc, or GIT_CONFIG_SYSTEM
	Global                // the user's: $XDG_CONFIG_HOME/git or ~/.config/git, ~/.gitconfig, or GIT_CONFIG_GLOBAL
	Local                 // the repository's: $GIT_COMMON_DIR/config and info/
	Worktree              // one worktree's: config.worktree
)

// File is one of git's files outside the work tree.
type File struct {
	Path  string
	Kind  Kind
	Scope Scope
	// Read: git reads the file in this environment. The list also holds
	// the files git would read were the environment set otherwise
	// (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME, an unknown
	// extensions.worktreeConfig), unread: a cache keyed on these files
	// takes them all, as reading more than git does only makes it more
	// careful; a reader of settings takes the read ones.
	Read bool
}

// List is the one list of git's config, attributes and exclude files that
// can change how git treats a file of r's tree, in git's order within each
// kind (system and global alone without r.GitDir; core.attributesFile and
// core.excludesFile replace the default global ones). exact says these are
// exactly the files git reads: no git variable selects others
// (gitconfig.PlainEnvironment), those it follows are plain, and the system
// folder of the git on PATH is known.
func List(r Repo) (files []File, exact bool) {
	files, exact, _ = list(r)
	return files, exact
}

// list is List, and whether git's system folder is known.
func list(r Repo) (files []File, exact, known bool) {
	env := func(name string) (string, bool) { return gitcli.LookupEnv(r.Env, name) }
	exact = gitconfig.PlainEnvironment(r.Env)
	add := func(path string, k Kind, s Scope, read bool) {
		if read && !filepath.IsAbs(path) {
			exact = false
		}
		files = append(files, File{Path: path, Kind: k, Scope: s, Read: read})
	}

	// System: $(prefix)/etc/gitconfig and gitattributes, /etc's listed
	// whatever the prefix; GIT_CONFIG_SYSTEM replaces the config file and
	// GIT_CONFIG_NOSYSTEM turns it off.
	noSystem := false
	if v, set := env("GIT_CONFIG_NOSYSTEM"); set {
		b, known := envBool(v)
		exact = exact && known
		noSystem = b
	}
	systemConfig, setSystem := env("GIT_CONFIG_SYSTEM")
	if setSystem && systemConfig == "" {
		exact = false
	}
	sysconf, known := gitSysconfDir()
	exact = exact && known
	_, noSystemAttrs := env("GIT_ATTR_NOSYSTEM")
	dirs := []string{"/etc"}
	if known && sysconf != "/etc" {
		dirs = append(dirs, sysconf)
	}
	for _, dir := range dirs {
		ours := dir == sysconf
		add(filepath.Join(dir, "gitconfig"), Config, System, ours && !noSystem && !setSystem)
		add(filepath.Join(dir, "gitattributes"), Attributes, System, ours && !noSystemAttrs)
	}
	if systemConfig != "" {
		add(systemConfig, Config, System, !noSystem)
	}

	// Global: GIT_CONFIG_GLOBAL alone, else the XDG file and then
	// ~/.gitconfig (git_global_config); the attributes and exclude files
	// from the XDG folder (xdg_config_home).
	globalConfig, setGlobal := env("GIT_CONFIG_GLOBAL")
	if setGlobal && globalConfig == "" {
		exact = false
	}
	home, setHome := env("HOME")
	if !setGlobal && setHome && home == "" {
		exact = false // git would read /.gitconfig
	}
	if globalConfig != "" {
		add(globalConfig, Config, Global, true)
	}
	xdg, _ := env("XDG_CONFIG_HOME")
	if xdg != "" {
		add(filepath.Join(xdg, "git", "config"), Config, Global, !setGlobal)
		add(filepath.Join(xdg, "git", "attributes"), Attributes, Global, true)
		add(filepath.Join(xdg, "git", "ignore"), Exclude, Global, true)
	}
	if home != "" {
		add(filepath.Join(home, ".config", "git", "config"), Config, Global, !setGlobal && xdg == "")
		add(filepath.Join(home, ".gitconfig"), Config, Global, !setGlobal)
		add(filepath.Join(home, ".config", "git", "attributes"), Attributes, Global, xdg == "")
		if xdg == "" {
			add(filepath.Join(home, ".config", "git", "ignore"), Exclude, Global, true)
		}
	}

	// The repository's: its config and info/ are the common dir's; a
	// worktree's config.worktree counts only under
	// extensions.worktreeConfig, which is in the config itself.
	if r.GitDir != "" {
		add(filepath.Join(r.CommonDir, "config"), Config, Local, true)
		add(filepath.Join(r.CommonDir, "config.worktree"), Config, Worktree, false)
		if r.GitDir != r.CommonDir {
			add(filepath.Join(r.GitDir, "config.worktree"), Config, Worktree, false)
		}
		add(filepath.Join(r.CommonDir, "info", "attributes"), Attributes, Local, true)
		if r.GitDir != r.CommonDir {
			add(filepath.Join(r.GitDir, "info", "attributes"), Attributes, Local, false)
		}
		add(filepath.Join(r.CommonDir, "info", "exclude"), Exclude, Local, true)
	}
	return files, exact, known
}

// Paths are the paths of the files of kind k, read or not.
func Paths(files []File, k Kind) []string {
	var out []string
	for _, f := range files {
		if f.Kind == k {
			out = append(out, f.Path)
		}
	}
	return out
}

// Outside are the config and attributes files outside the tree that
// git may read here, whichever scopes the environment turns off: reading
// more than git does only makes an answer more careful. ok is false when
// git's system folder is unknown (the list then lacks its files).
func Outside(r Repo) (configs, attrs []string, ok bool) {
	files, _, ok := list(r)
	return Paths(files, Config), Paths(files, Attributes), ok
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

// gitSysconfDir is where the git on PATH, the one gitcli runs, reads its
// system files: git's Makefile puts them in $(prefix)/etc, or /etc when
// the prefix is /usr (Debian's git reads /etc/gitattributes). Run as git
// venom-*, PATH starts with git's exec path, $(prefix)/libexec/git-core
// (Debian: /usr/lib/git-core), whose git is the same program with the
// same prefix: the folder is the same whichever way the command was run.
func gitSysconfDir() (string, bool) {
	path := os.Getenv("PATH")
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			// The answer also depends on the working folder.
			return findSysconfDir()
		}
	}
	m := &sysconfMemo
	m.Lock()
	defer m.Unlock()
	if !m.set || m.path != path {
		m.dir, m.known = findSysconfDir()
		m.path, m.set = path, true
	}
	return m.dir, m.known
}

// sysconfMemo is gitSysconfDir's last answer and the PATH it was found
// on: one hook call lists git's files four times (for venom.* settings,
// for the settings a capture depends on, for the file system monitor's
// hook, for shared repositories), and each search stats PATH's folders
// up to git's and each part of git's path, about 1.5% of the call.
var sysconfMemo struct {
	sync.Mutex
	set       bool
	path, dir string
	known     bool
}

func findSysconfDir() (string, bool) {
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
	dir := filepath.Dir(p)
	if filepath.Base(dir) == "git-core" {
		dir = filepath.Dir(dir)
	}
	prefix := filepath.Dir(dir)
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
