package refs

import (
	"context"
	"errors"
	"sort"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
)

// ErrSymbolic says a ref where git-venom keeps one of its own is a
// symbolic ref. git reads and writes the ref a symbolic ref names (a
// branch, say): deleting or updating "a checkpoint ref" through it would
// delete or move that branch. git-venom never acts through one; doctor
// names it (checkpoints.symrefs) with a fix that removes the link only.
var ErrSymbolic = errors.New("a symbolic ref, left alone: git venom-checkpoint doctor says how to remove it")

// IsSymbolic reports whether the ref name is there as a symbolic ref,
// whatever it names (a missing ref too: an update through it would make
// that ref).
func IsSymbolic(r *repo.Repo, name string) (bool, error) {
	lib, err := r.Lib()
	if err != nil {
		return false, err
	}
	ref, err := lib.References.Lookup(name)
	if err != nil {
		if git.IsErrorCode(err, git.ErrorCodeNotFound) {
			return false, nil
		}
		return false, err
	}
	defer ref.Free()
	return ref.Type() == git.ReferenceSymbolic, nil
}

// Symbolic lists the symbolic refs named by one of globs (libgit2's
// reference globs: refs/venom/* holds every ref below refs/venom/), with
// the ref each names, dangling ones included (git for-each-ref passes
// over those).
func Symbolic(r *repo.Repo, globs ...string) (map[string]string, error) {
	lib, err := r.Lib()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, glob := range globs {
		it, err := lib.NewReferenceIteratorGlob(glob)
		if err != nil {
			return nil, err
		}
		for {
			ref, err := it.Next()
			if err != nil {
				if git.IsErrorCode(err, git.ErrorCodeIterOver) {
					break
				}
				it.Free()
				return nil, err
			}
			if ref.Type() == git.ReferenceSymbolic {
				out[ref.Name()] = ref.SymbolicTarget()
			}
			ref.Free()
		}
		it.Free()
	}
	return out, nil
}

// SymbolicNames is the sorted names of a Symbolic result.
func SymbolicNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RemoveSymbolicFix is the command that removes the symbolic ref name
// itself, never the ref it names.
func RemoveSymbolicFix(name string) string {
	return quote.Shell([]string{"git", "symbolic-ref", "--delete", name})
}

// Under lists the refs under prefix that hold a commit of their own,
// name → object id; a symbolic ref there is left out (checkpoints.symrefs
// names it).
func Under(ctx context.Context, r *repo.Repo, prefix string) (map[string]string, error) {
	out, err := r.Git.Run(ctx, "for-each-ref", "--format=%(objectname) %(refname) %(symref)", prefix)
	if err != nil {
		return nil, err
	}
	have := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			have[f[1]] = f[0]
		}
	}
	return have, nil
}
