package plan

import (
	"context"
	"strconv"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/ui"
)

// Head is repos[].head of the result (docs/json.md).
type Head struct {
	Moves bool `json:"moves"`
	// Forward says the move goes forward, a fast-forward back to where
	// an undone rollback found HEAD (docs/rollback.md#undo); a move back
	// drops commits, a move forward brings them back.
	Forward bool    `json:"forward"`
	From    *string `json:"from"`
	To      *string `json:"to"`
	// Commits counts the commits between From and To that the move
	// drops (back) or brings back (forward).
	Commits int `json:"commits"`
	// Branch is the branch the move updates; "" for a detached HEAD.
	Branch string `json:"-"`
	// Passed names those commits, newest first, as git shows them
	// ("<short id> <subject>"), at most MaxDropped of them.
	Passed []string `json:"-"`
}

// MaxDropped bounds Head.Passed: a plan names that many commits, and
// counts the rest.
const MaxDropped = 20

// HeadState is where HEAD is now.
type HeadState struct {
	Commit *string // nil when unborn
	Branch string  // "" when detached or on a ref outside refs/heads
	// OffBranch is the ref outside refs/heads HEAD is attached to, if
	// any (capture.Snapshot.OffBranch).
	OffBranch string
}

// WouldMove reports whether HEAD would move, before any check (docs/rollback.md#head:
// when the checkpoint's head is the current HEAD commit, nothing moves).
func WouldMove(guarded, keepHead bool, cur HeadState, t journal.RepoState) bool {
	return !guarded && !keepHead && !sameOid(cur.Commit, t.Head)
}

// PlanHead decides what happens to HEAD (docs/rollback.md#head): nothing in a guarded tree
// or with --keep-head; else back to the checkpoint's head when it safely can,
// or conflict.head_moved / conflict.commits_pushed. HEAD attached to a ref
// outside refs/heads is never moved: conflict.head_moved. undo (a plan of
// --undo) may also move it forward, when the checkpoint's head is a
// fast-forward from HEAD (planForward).
func PlanHead(ctx context.Context, r *repo.Repo, guarded, keepHead, undo bool, cur HeadState, t journal.RepoState) (Head, error) {
	h := Head{From: cur.Commit, To: cur.Commit, Branch: cur.Branch}
	if !WouldMove(guarded, keepHead, cur, t) {
		return h, nil
	}
	moved := func(why string) error {
		data := map[string]any{"repo": ".", "expected": t.Head, "actual": cur.Commit}
		if t.Branch != "" {
			data["branch"] = t.Branch
		}
		return errcode.Newf(errcode.ConflictHeadMoved, data, "HEAD %s; use --keep-head to restore the files only", why).
			Retry("to restore the files and leave HEAD where it is", "--keep-head")
	}
	switch {
	case cur.OffBranch != "":
		// A move writes a branch or a detached HEAD, no other ref: moving
		// a remote-tracking ref would falsify what the remote holds, and
		// detaching HEAD would change what it is attached to.
		return h, moved("is on " + cur.OffBranch + ", which is not a branch")
	case t.Head == nil:
		return h, moved("had no commit at the checkpoint")
	case cur.Commit == nil:
		return h, moved("has no commit now")
	case t.Branch != cur.Branch:
		if t.Branch == "" {
			return h, moved("was detached at the checkpoint and is on " + cur.Branch + " now")
		}
		return h, moved("left branch " + t.Branch)
	}
	back, err := isAncestor(ctx, r, *t.Head, *cur.Commit)
	switch {
	case err != nil:
		return h, err
	case !back && undo:
		return planForward(ctx, r, h, cur, t)
	case !back:
		return h, moved("is no longer a descendant of the checkpoint's head (rebased?)")
	}
	dropped, err := NotPushed(ctx, r, *t.Head, *cur.Commit)
	if err != nil {
		return h, err
	}
	h.Moves, h.To, h.Commits = true, t.Head, dropped
	if h.Passed, err = oneLines(ctx, r, *t.Head+".."+*cur.Commit); err != nil {
		return h, err
	}
	return h, nil
}

// planForward is an undo's move of HEAD forward (docs/rollback.md#undo):
// the rollback it undoes moved the branch back, and the safety checkpoint
// it returns to recorded the head it left. The branch goes forward again
// when that is a fast-forward from HEAD now, which drops nothing. When
// someone moved the branch since, so that going forward would drop their
// commits, it is conflict.head_moved naming them; --keep-head restores the
// files and leaves the branch as they made it.
func planForward(ctx context.Context, r *repo.Repo, h Head, cur HeadState, t journal.RepoState) (Head, error) {
	ahead, err := isAncestor(ctx, r, *cur.Commit, *t.Head)
	if err != nil {
		return h, err
	}
	if !ahead {
		// What going forward would drop: the commits HEAD has that the
		// safety checkpoint's head has not.
		n, err := revList(ctx, r, *t.Head+".."+*cur.Commit)
		if err != nil {
			return h, err
		}
		shown, err := oneLines(ctx, r, *t.Head+".."+*cur.Commit)
		if err != nil {
			return h, err
		}
		data := map[string]any{"repo": ".", "expected": t.Head, "actual": cur.Commit, "commits": n}
		if t.Branch != "" {
			data["branch"] = t.Branch
		}
		where := "HEAD"
		if cur.Branch != "" {
			where = "branch " + cur.Branch
		}
		return h, errcode.Newf(errcode.ConflictHeadMoved, data,
			"%s moved since the rollback: going forward to %s would drop %d commit(s): %s",
			where, short(*t.Head), len(n), strings.Join(shown, "; ")).
			Hint("the commits the rollback dropped stay reachable from its safety checkpoint: git log %s", short(*t.Head))
	}
	brought, err := revList(ctx, r, *cur.Commit+".."+*t.Head)
	if err != nil {
		return h, err
	}
	h.Moves, h.Forward, h.To, h.Commits = true, true, t.Head, len(brought)
	if h.Passed, err = oneLines(ctx, r, *cur.Commit+".."+*t.Head); err != nil {
		return h, err
	}
	return h, nil
}

// isAncestor is git merge-base --is-ancestor a b.
func isAncestor(ctx context.Context, r *repo.Repo, a, b string) (bool, error) {
	if _, err := r.Git.Run(ctx, "merge-base", "--is-ancestor", a, b); err != nil {
		if gitcli.ExitCode(err) == 1 {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// oneLines is the commits of a range, newest first, as "<short id>
// <subject>", at most MaxDropped of them.
func oneLines(ctx context.Context, r *repo.Repo, rng string) ([]string, error) {
	out, err := r.Git.Run(ctx, "log", "--no-decorate", "--no-show-signature", "--format=%h %s",
		"-n", strconv.Itoa(MaxDropped), rng, "--")
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n"), nil
}

func short(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}

// NotPushed checks that no commit a move of HEAD from from back to to
// drops (to..from) is on a remote-tracking ref, and returns how many it
// drops; conflict.commits_pushed otherwise. The plan asks it, and the
// rollback again just before the branch moves: a fetch while the files
// were written may have brought a dropped commit onto a remote-tracking
// ref, and moving the branch back then would make the next push a force
// push.
func NotPushed(ctx context.Context, r *repo.Repo, to, from string) (int, error) {
	dropped, err := revList(ctx, r, to+".."+from)
	if err != nil {
		return 0, err
	}
	local, err := revList(ctx, r, to+".."+from, "--not", "--remotes")
	if err != nil {
		return 0, err
	}
	keep := map[string]bool{}
	for _, c := range local {
		keep[c] = true
	}
	var pushed []string
	for _, c := range dropped {
		if !keep[c] {
			pushed = append(pushed, c)
		}
	}
	if len(pushed) > 0 {
		out, err := r.Git.Run(ctx, "for-each-ref", "--format=%(refname)", "--contains", pushed[0], "refs/remotes")
		if err != nil {
			return 0, err
		}
		refs := strings.Fields(string(out))
		return 0, errcode.Newf(errcode.ConflictCommitsPushed, map[string]any{"repo": ".", "commits": pushed, "refs": refs},
			"%d commit(s) that would be dropped are on %s; use --keep-head", len(pushed), strings.Join(refs, ", ")).
			Hint("moving the branch back would make the next push a force push")
	}
	return len(dropped), nil
}

func revList(ctx context.Context, r *repo.Repo, args ...string) ([]string, error) {
	out, err := r.Git.Run(ctx, append([]string{"rev-list"}, args...)...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

func sameOid(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// Count renders a number of paths: "1 file", "3,000 files".
func Count(n int) string { return ui.Plural(n, "file", "files") }
