package repo

/*
#include <git2.h>

static int venom_owner_validation(int on) {
	return git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, on);
}
*/
import "C"

import (
	"errors"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
)

func init() {
	// safe.directory is git's rule, and git(1) applies it: Open takes a
	// repository without asking git only when the current user owns every
	// path git's ensure_valid_ownership checks (discover's ownedByUs), and
	// asks git rev-parse otherwise, which refuses a repository that
	// safe.directory (system, global or command-line config) does not
	// allow. libgit2 1.5 has a rule of its own that refuses
	// safe.directory=*, which git accepts; checked twice, a repository git
	// works in would be refused. So libgit2 checks no owner. The other
	// repositories libgit2 opens are nested ones whose HEAD a capture
	// reads, as git's own resolve_gitlink_ref does without the check.
	C.venom_owner_validation(0)
}

// unsafeRepository is git's refusal of a repository that safe.directory
// does not allow, said as git says it, or nil for any other failure. git
// exits 128 as for no repository at all; so does this, with the code for
// no repository and git's reason and advice.
func unsafeRepository(err error) error {
	var g *gitcli.Error
	if !errors.As(err, &g) {
		return nil
	}
	_, rest, found := strings.Cut(g.Stderr, "detected dubious ownership in repository at '")
	if !found {
		return nil
	}
	at, _, _ := strings.Cut(rest, "'\n")
	return errcode.Newf(errcode.UnsupportedCheckpointNoRepo, nil,
		"git refuses the repository at %s: detected dubious ownership (another user owns it, and safe.directory does not allow it)", at).
		Wrap(err).
		Hint("git config --global --add safe.directory %s", at)
}
