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
	"github.com/git-venom/git-venom/lib/quote"
)

func init() {
	// safe.directory is git's rule, applied by git(1): Open skips asking git
	// only when the user owns every path git checks (ownedByUs), else git
	// rev-parse refuses what safe.directory does not allow. libgit2's own
	// check (which refuses safe.directory=*) is off, so the two never
	// disagree; its other opens are nested repositories' HEADs.
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
	// The message says git's reason; the human line leaves out git's own
	// words after it (its advice is several lines, joined into one), and
	// the path is on the hint's line of its own.
	return errcode.Newf(errcode.UnsupportedCheckpointNoRepo, nil,
		"git refuses the repository at %s: detected dubious ownership (another user owns it, and safe.directory does not allow it)", at).
		Wrap(err).
		Shorter("git refuses another user's repository").
		Hint("safe.directory does not allow it (git: dubious ownership); to trust it:").
		Hint("  %s", quote.Shell([]string{"git", "config", "--global", "--add", "safe.directory", at}))
}

// RootInOthers judges root in a repository another user owns, whose
// state it would leave root's. Under sudo (sudoUID set) it is a person's
// repository reached by mistake: refused before anything is written.
// Without sudo root came through safe.directory, an administrator's
// choice (docs/checkpoints.md#the-log): a warning says how to give the
// state back.
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
