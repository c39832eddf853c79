package config

import (
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/gitconfig"
	"github.com/git-venom/git-venom/lib/gitfiles"
	"github.com/git-venom/git-venom/lib/quote"
)

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

// Entries reads the entries of the config files (a missing one is empty,
// as for git) whose names keep accepts, in order; ok is false when a file
// includes another or is one this reader is not certain to read as git
// does.
func Entries(files []string, keep func(name string) bool) (out []gitconfig.Entry, ok bool) {
	for _, path := range files {
		entries, err := gitconfig.ReadFile(path)
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
// order (gitfiles.List), in the plain case only: ok is false when the
// environment holds a git variable that could change which files are read
// or how (any GIT_* other than GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL,
// GIT_CONFIG_SYSTEM and the harmless few), and the caller then asks git.
func ScopeFiles(environ []string) (files []string, ok bool) {
	list, exact := gitfiles.List(gitfiles.Repo{Env: environ})
	if !exact {
		return nil, false
	}
	for _, f := range list {
		if f.Kind == gitfiles.Config && f.Read {
			files = append(files, f.Path)
		}
	}
	return files, true
}

// Ignored lists the venom.* entries of the repository's own config file
// (commonDir/config), which Load never reads: a cloned repository must
// not weaken them, and the person who set one there is told so (the
// command's note, doctor's config.repository).
func Ignored(commonDir string) []gitconfig.Entry {
	files := []string{filepath.Join(commonDir, "config")}
	entries, _ := Entries(files, func(name string) bool { return strings.HasPrefix(name, "venom.") })
	return entries
}

// GlobalCommand is the git config command that sets the entries in the
// person's global config, where git-venom reads them, and removes them
// from the repository's: it works as printed.
func GlobalCommand(entries []gitconfig.Entry) string {
	var cmds []string
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		var values []string
		for _, o := range entries {
			if o.Name == e.Name {
				values = append(values, o.Value)
			}
		}
		if len(values) == 1 {
			cmds = append(cmds, "git config --global "+e.Name+" "+quote.Shell([]string{values[0]}))
		} else {
			for _, v := range values {
				cmds = append(cmds, "git config --global --add "+e.Name+" "+quote.Shell([]string{v}))
			}
		}
		cmds = append(cmds, "git config --unset-all "+e.Name)
	}
	return strings.Join(cmds, " && ")
}
