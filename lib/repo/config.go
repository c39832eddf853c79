package repo

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitconfig"
)

// ConfigLast reads the named keys (lower-case, as git prints them) as git
// config --get does: every scope, the repository's own and `git -c`
// included, the last value of each winning; a key no scope sets is absent.
// It reads in process when the environment and the files allow
// (ConfigFiles), else it asks git.
func (r *Repo) ConfigLast(ctx context.Context, names ...string) (map[string]gitconfig.Entry, error) {
	if entries, ok := r.ConfigFiles(names...); ok {
		last := map[string]gitconfig.Entry{}
		for _, e := range entries {
			last[e.Name] = e
		}
		return last, nil
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	out, err := r.Git.Run(ctx, "config", "-z", "--get-regexp", "^("+strings.Join(quoted, "|")+")$")
	last := map[string]gitconfig.Entry{}
	if gitcli.ExitCode(err) == 1 { // no key at all
		return last, nil
	}
	if err != nil {
		return last, err
	}
	// -z --get-regexp prints "key\nvalue\0", or "key\0" for a key written
	// without "=".
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		name, value, hasValue := strings.Cut(string(rec), "\n")
		last[name] = gitconfig.Entry{Name: name, Value: value, HasValue: hasValue}
	}
	return last, nil
}

// ConfigFiles reads every entry of the named keys (lower-case) from the
// files git reads, in git's order, as git config --get-all lists them:
// values as written, no path or type conversion. ok is false, and the
// caller asks git, unless the environment and the files are plain (no
// `-c`, no include, no per-worktree config, nothing this reader might
// read otherwise than git).
func (r *Repo) ConfigFiles(names ...string) (entries []gitconfig.Entry, ok bool) {
	files, ok := config.ScopeFiles(r.environ)
	if !ok {
		return nil, false
	}
	files = append(files, filepath.Join(r.CommonDir, "config"))
	worktreeConfig := false
	entries, ok = config.Entries(files, func(name string) bool {
		worktreeConfig = worktreeConfig || strings.HasPrefix(name, "extensions.")
		return slices.Contains(names, name)
	})
	// extensions.worktreeConfig adds a file per worktree: git's to read.
	if !ok || worktreeConfig {
		return nil, false
	}
	return entries, true
}
