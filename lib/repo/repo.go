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
	"github.com/git-venom/git-venom/lib/gitconfig"
	"github.com/git-venom/git-venom/lib/statefile"
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

	environ []string // the command's, for reading git config as git would
	once    sync.Once
	lib     *git.Repository
	err     error

	fsyncOnce sync.Once        // core.fsync, read once as git reads its config
	fsync     *gitconfig.Entry // nil: unset
	fsyncErr  error
}

// Open finds the repository and worktree of dir the way git does, honouring
// GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE (docs/checkpoints.md#how-a-capture-runs). Not a repository,
// or a bare one: unsupported.checkpoint_no_repo (docs/rollback.md).
func Open(ctx context.Context, dir string, environ []string) (*Repo, error) {
	if err := checkEnvironment(environ); err != nil {
		return nil, err
	}
	if p, ok := discover(dir, environ); ok {
		return New(p.withState(), environ), nil
	}
	p, err := discoverWithGit(ctx, dir, environ)
	if err != nil {
		return nil, err
	}
	return New(p.withState(), environ), nil
}

// discoverWithGit asks git for the repository of dir, and checks the
// selection that git's environment made.
func discoverWithGit(ctx context.Context, dir string, environ []string) (Paths, error) {
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
			if e := unsafeRepository(err); e != nil {
				return Paths{}, e
			}
			if strings.Contains(err.Error(), "not a git repository") {
				// git's own words would say it twice, in 160 columns.
				return Paths{}, errcode.Newf(errcode.UnsupportedCheckpointNoRepo, nil,
					"not in a git repository").
					Hint("git init   makes one; or cd into one")
			}
			return Paths{}, errcode.New(errcode.UnsupportedCheckpointNoRepo, nil).Wrap(err)
		}
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 5 || lines[0] == "true" {
		return Paths{}, errcode.Newf(errcode.UnsupportedCheckpointNoRepo, nil, "the repository has no working tree")
	}
	if lines[4] != "sha1" {
		return Paths{}, errcode.Newf(errcode.UnsupportedObjectFormat, map[string]string{"object_format": lines[4]},
			"the repository uses %s objects; git-venom handles sha1 repositories only (libgit2 1.5)", lines[4])
	}
	if len(lines) < 6 || lines[5] == "" {
		return Paths{}, errcode.Newf(errcode.UnsupportedCheckpointNoRepo, nil, "not inside a working tree")
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
	if err := checkSelection(ctx, user, environ, p); err != nil {
		return Paths{}, err
	}
	return p, nil
}

// withState adds the paths of the venom state directory.
func (p Paths) withState() Paths {
	p.StateDir = filepath.Join(p.CommonDir, "venom")
	p.Log = filepath.Join(p.StateDir, "log.jsonl")
	p.Lock = filepath.Join(p.StateDir, "lock")
	return p
}

// New makes a Repo of known paths; its git runs in Top with GIT_DIR and
// GIT_WORK_TREE set, so leaked variables never pick another repository.
func New(p Paths, environ []string) *Repo {
	env := append(gitcli.CleanEnv(environ), "GIT_DIR="+p.GitDir, "GIT_WORK_TREE="+p.Top)
	r := &Repo{Paths: p, Git: &gitcli.Runner{Dir: p.Top, Env: env}, environ: environ}
	if p.CommonDir != "" {
		statefile.Share(p.CommonDir, r.sharedRepository)
	}
	return r
}

// OpenTree opens the worktree whose top level is exactly tree. It fails when
// tree is gone or is not the root of a worktree of its own (docs/checkpoints.md#how-a-capture-runs: git would
// otherwise walk up into an enclosing repository).
func OpenTree(ctx context.Context, tree string, environ []string) (*Repo, error) {
	fi, err := os.Stat(tree)
	if err != nil || !fi.IsDir() {
		return nil, errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "tree_missing"},
			"the agent's tree %s is missing", tree)
	}
	env := withoutRepoVars(environ)
	r, err := Open(ctx, tree, env)
	if err != nil {
		return nil, err
	}
	if r.Top != canonical(tree) {
		return nil, errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "not_a_git_root"},
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

// Odb is a handle on r's object database, for reading or writing objects
// without a revwalk or an index; the caller frees it.
func (r *Repo) Odb() (*git.Odb, error) {
	lib, err := r.Lib()
	if err != nil {
		return nil, err
	}
	return lib.Odb()
}

// Twin is the same worktree with a libgit2 handle of its own, for work on
// another goroutine: libgit2's objects are not to be used by two threads at
// once.
func (r *Repo) Twin() *Repo { return &Repo{Paths: r.Paths, Git: r.Git, environ: r.environ} }

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
// for the first resolution only (docs/checkpoints.md#how-a-capture-runs).
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

// checkSelection refuses a repository that git's environment selects
// ambiguously (docs/checkpoints.md#how-a-capture-runs): harnesses and editors leak GIT_* variables
// into the shells agents run, and a capture into the wrong repository, or a
// rollback through the wrong index, must never happen. Git's own meaning is
// kept wherever it is unambiguous: an explicit GIT_DIR with GIT_WORK_TREE or
// core.worktree, GIT_DIR=.git at the top level as git's hooks have it, and an
// index file outside any other repository.
func checkSelection(ctx context.Context, user *gitcli.Runner, environ []string, p Paths) error {
	gitDir, workTree := gitcli.Getenv(environ, "GIT_DIR"), gitcli.Getenv(environ, "GIT_WORK_TREE")
	refuse := func(name, format string, args ...any) error {
		return errcode.Newf(errcode.UnsupportedEnvironment, map[string]string{"variable": name}, format, args...).
			Hint("unset %s, or set GIT_DIR and GIT_WORK_TREE together, and run the command again", name)
	}
	if v := gitcli.Getenv(environ, "GIT_COMMON_DIR"); v != "" && canonical(naturalCommonDir(p.GitDir)) != p.CommonDir {
		return refuse("GIT_COMMON_DIR", "GIT_COMMON_DIR names %s, which is not the common dir of %s", v, p.GitDir)
	}
	if v := gitcli.Getenv(environ, "GIT_INDEX_FILE"); v != "" {
		if owner := enclosingGitDir(filepath.Dir(p.Index)); owner != "" && owner != p.GitDir && owner != p.CommonDir {
			return refuse("GIT_INDEX_FILE", "GIT_INDEX_FILE names an index of another repository (%s)", owner)
		}
	}
	if gitDir == "" && workTree == "" {
		return nil
	}
	// What the tree is without the variables: its own repository, if any.
	own := &gitcli.Runner{Dir: p.Top, Env: gitcli.CleanEnv(withoutRepoVars(environ))}
	out, err := own.Run(ctx, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir")
	var ownTop, ownGit string
	if err == nil {
		if l := strings.Split(strings.TrimRight(string(out), "\n"), "\n"); len(l) == 2 {
			ownTop, ownGit = canonical(l[0]), canonical(l[1])
		}
	}
	if ownTop == p.Top && ownGit != p.GitDir {
		return refuse(firstSet(workTree, "GIT_WORK_TREE", "GIT_DIR"),
			"git's environment selects %s for the tree %s, which is the worktree of another repository (%s)",
			p.GitDir, p.Top, ownGit)
	}
	if workTree != "" {
		return nil
	}
	// GIT_DIR alone makes the current folder the top level, unless the
	// repository names its worktree.
	if cfg, err := user.Run(ctx, "config", "--get", "core.worktree"); err == nil && strings.TrimSpace(string(cfg)) != "" {
		return nil
	}
	if ownTop != p.Top || ownGit != p.GitDir {
		return refuse("GIT_DIR", "GIT_DIR names %s, but %s is not the top level of its worktree", gitDir, p.Top)
	}
	return nil
}

func firstSet(v, ifSet, otherwise string) string {
	if v != "" {
		return ifSet
	}
	return otherwise
}

// naturalCommonDir is the common dir a git dir names for itself: its
// commondir file for a linked worktree, else itself.
func naturalCommonDir(gitDir string) string {
	c, _ := CommonDir(gitDir)
	return c
}

// enclosingGitDir is the git dir that holds dir, or "" when none does.
func enclosingGitDir(dir string) string {
	for d := canonical(dir); ; d = filepath.Dir(d) {
		if gitDirectory(d, naturalCommonDir(d)) {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}
