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
	"fmt"
	"os"
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

// RootInOthers judges root in a repository another user owns: every
// state file, lock, pack and ref git-venom makes there is root's, and the
// owner's own commands can then neither take the lock nor write the log.
// Under sudo (sudoUID set: git lets root into the repository SUDO_UID's
// user owns, ensure_valid_ownership) it is a person's own repository
// reached by mistake: refused before anything is written. Without sudo,
// root came in through safe.directory, an administrator's explicit
// choice (docs/checkpoints.md#the-log): it goes on, with a warning that
// says how to give the state back.
func (r *Repo) RootInOthers(sudoUID string) (warning string, err error) {
	if os.Geteuid() != 0 {
		return "", nil
	}
	owner, ok := ownerOf(r.CommonDir)
	if !ok || owner == 0 {
		return "", nil
	}
	if sudoUID == "" {
		return fmt.Sprintf("running as root in a repository user %d owns: what git-venom writes there is root's, and that user's own git-venom commands fail until it is theirs again (chown -R %d %s)",
			owner, owner, r.CommonDir), nil
	}
	return "", errcode.Newf(errcode.UnsupportedRootInOthers, map[string]int{"owner": owner},
		"running as root (sudo) in %s, which user %d owns: the state git-venom makes there would be root's and lock its owner out; nothing was written",
		r.Top, owner).
		Hint("run it as the repository's owner (user %d), without sudo", owner)
}
