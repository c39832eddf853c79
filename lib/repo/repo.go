// Package repo finds the repository and worktree a command works on, and
// holds every path git-venom uses inside it (one Paths struct, never ".git"
// joined by hand).
package repo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
)

// Paths are the absolute paths of one worktree of a repository.
type Paths struct {
	Top       string // the worktree's top level, symlinks resolved
	GitDir    string // this worktree's git dir
	CommonDir string // the repository's common dir (shared by linked worktrees)
	Index     string // the user's index file of this worktree
	StateDir  string // $COMMON/venom
	Log       string // $COMMON/venom/log.jsonl
	Lock      string // $COMMON/venom/lock
}

// Repo is one worktree of a repository, opened for git-venom.
type Repo struct {
	Paths
	Git *gitcli.Runner

	once sync.Once
	lib  *git.Repository
	err  error
}

// Open finds the repository and worktree of dir the way git does, honouring
// GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE (CONTRACT 8.22). Not a repository,
// or a bare one: unsupported.checkpoint_no_repo (CONTRACT 8.17, 8.28).
func Open(ctx context.Context, dir string, environ []string) (*Repo, error) {
	if err := checkEnvironment(environ); err != nil {
		return nil, err
	}
	user := &gitcli.Runner{Dir: dir, Env: append(gitcli.CleanEnv(environ), userRepoVars(environ)...)}
	// One process in the common case: --show-toplevel fails outside a
	// working tree, and then the others are asked alone to say why.
	out, err := user.Run(ctx, "rev-parse", "--path-format=absolute",
		"--is-bare-repository", "--git-dir", "--git-common-dir", "--git-path", "index", "--show-object-format",
		"--show-toplevel")
	if err != nil {
		out, err = user.Run(ctx, "rev-parse", "--path-format=absolute",
			"--is-bare-repository", "--git-dir", "--git-common-dir", "--git-path", "index", "--show-object-format")
		if err != nil {
			return nil, errcode.New(errcode.UnsupportedCheckpointNoRepo, nil).Wrap(err)
		}
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 5 || lines[0] == "true" {
		return nil, errcode.Newf(errcode.UnsupportedCheckpointNoRepo, nil, "the repository has no working tree")
	}
	if lines[4] != "sha1" {
		return nil, errcode.Newf(errcode.UnsupportedObjectFormat, map[string]string{"object_format": lines[4]},
			"the repository uses %s objects; git-venom handles sha1 repositories only (libgit2 1.5)", lines[4])
	}
	if len(lines) < 6 || lines[5] == "" {
		return nil, errcode.Newf(errcode.UnsupportedCheckpointNoRepo, nil, "not inside a working tree")
	}
	top := lines[5]
	// --git-path index honours GIT_INDEX_FILE as git reads it: a relative
	// value is relative to the top level, not to the current folder.
	p := Paths{
		Top:       canonical(top),
		GitDir:    canonical(lines[1]),
		CommonDir: canonical(lines[2]),
		Index:     lines[3],
	}
	p.StateDir = filepath.Join(p.CommonDir, "venom")
	p.Log = filepath.Join(p.StateDir, "log.jsonl")
	p.Lock = filepath.Join(p.StateDir, "lock")
	return New(p, environ), nil
}

// New makes a Repo of known paths; its git runs in Top with GIT_DIR and
// GIT_WORK_TREE set, so leaked variables never pick another repository.
func New(p Paths, environ []string) *Repo {
	env := append(gitcli.CleanEnv(environ), "GIT_DIR="+p.GitDir, "GIT_WORK_TREE="+p.Top)
	return &Repo{Paths: p, Git: &gitcli.Runner{Dir: p.Top, Env: env}}
}

// OpenTree opens the worktree whose top level is exactly tree. It fails when
// tree is gone or is not the root of a worktree of its own (RFC 4.1: git would
// otherwise walk up into an enclosing repository).
func OpenTree(ctx context.Context, tree string, environ []string) (*Repo, error) {
	fi, err := os.Stat(tree)
	if err != nil || !fi.IsDir() {
		return nil, errcode.Newf(errcode.FailedCheckpointGit, map[string]string{"repo": ".", "reason": "tree_missing"},
			"the agent's tree %s is missing", tree)
	}
	env := withoutRepoVars(environ)
	r, err := Open(ctx, tree, env)
	if err != nil {
		return nil, err
	}
	if r.Top != canonical(tree) {
		return nil, errcode.Newf(errcode.FailedCheckpointGit, map[string]string{"repo": ".", "reason": "not_a_git_root"},
			"%s is not the top level of a git worktree", tree)
	}
	return r, nil
}

// Lib returns the libgit2 handle, opened once.
func (r *Repo) Lib() (*git.Repository, error) {
	r.once.Do(func() {
		r.lib, r.err = git.OpenRepositoryExtended(r.GitDir, git.RepositoryOpenNoSearch, "")
		if r.err == nil {
			r.err = r.lib.SetWorkdir(r.Top, false)
		}
	})
	return r.lib, r.err
}

// Free releases the libgit2 handle.
func (r *Repo) Free() {
	if r.lib != nil {
		r.lib.Free()
	}
}

// SameRepository reports whether two worktrees share one repository.
func (r *Repo) SameRepository(o *Repo) bool { return r.CommonDir == o.CommonDir }

func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// Canonical is the canonical form of a tree path, by which sharers compare.
func Canonical(p string) string { return canonical(p) }

// userRepoVars keeps the variables by which the user selects a repository,
// for the first resolution only (CONTRACT 8.22).
func userRepoVars(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES",
			"GIT_DISCOVERY_ACROSS_FILESYSTEM":
			out = append(out, kv)
		}
	}
	return out
}

func withoutRepoVars(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// checkEnvironment refuses variables that would send objects to another
// store: a capture written there would be lost to this repository.
func checkEnvironment(environ []string) error {
	for _, kv := range environ {
		name, v, _ := strings.Cut(kv, "=")
		if (name == "GIT_OBJECT_DIRECTORY" || name == "GIT_ALTERNATE_OBJECT_DIRECTORIES") && v != "" {
			return errcode.Newf(errcode.UnsupportedEnvironment, map[string]string{"variable": name},
				"%s is set; git-venom writes checkpoints only to the repository's own object store", name).
				Hint("unset %s and run the command again", name)
		}
	}
	return nil
}

