package checkpoints

import (
	"context"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/worktreeid"
)

// Find returns the agent's checkpoint id when it still counts: logged, not
// pruned or removed, and its ref in r still holding the logged commit
// (docs/checkpoints.md#the-log). Anything else is not_found.checkpoint; a malformed id is
// invalid_params.checkpoint.
func Find(r *repo.Repo, a *agents.Agent, id string) (*agents.Checkpoint, error) {
	if tn, i, err := ids.ParseToolCall(id); err == nil {
		return findTool(r, a, id, tn, i)
	}
	n, err := ids.ParseCheckpoint(id)
	if err != nil {
		return nil, errcode.Newf(errcode.InvalidParamsCheckpoint, map[string]string{"checkpoint": id}, "%v", err)
	}
	c := a.Checkpoint(id)
	if c == nil || !c.Live() || len(c.Repos) == 0 {
		why := "never existed"
		if c != nil || a.ForgotCheckpoint(id) {
			why = "was pruned or removed"
		}
		e := errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": id}, "checkpoint %s/%s %s", a.ID, id, why)
		return nil, LabelHint(e, a, id).Hint("git venom-checkpoint list shows the checkpoints")
	}
	for _, rs := range c.Repos {
		switch refState(r, a.ID, n, rs.Commit) {
		case refGone:
			return nil, errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": id, "repo": rs.Repo},
				"checkpoint %s/%s cannot be used: its ref %s is gone", a.ID, id, ids.RefName(a.ID, n)).
				Hint("something deleted it; nothing brings it back. git venom-checkpoint doctor lists such checkpoints")
		case refMoved:
			return nil, errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": id, "repo": rs.Repo},
				"checkpoint %s/%s cannot be used: its ref %s no longer holds the logged commit %s", a.ID, id,
				ids.RefName(a.ID, n), rs.Commit).
				Hint("git venom-checkpoint doctor says how to put the ref back")
		}
	}
	return c, nil
}

// Usable reports whether c's refs in r still hold the logged commits
// (docs/checkpoints.md#the-log): a checkpoint whose ref is gone or moved counts for nothing.
func Usable(r *repo.Repo, a *agents.Agent, c *agents.Checkpoint) bool {
	for _, rs := range c.Repos {
		if refState(r, a.ID, c.N, rs.Commit) != refHolds {
			return false
		}
	}
	return len(c.Repos) > 0
}

type refStatus int

const (
	refHolds refStatus = iota
	refGone
	refMoved
)

// refState compares the checkpoint's ref with the commit the log recorded.
func refState(r *repo.Repo, agent string, n int, commit string) refStatus {
	want, err := git.NewOid(commit)
	got, rerr := refs.Resolve(r, agent, n)
	switch {
	case rerr != nil || got == nil:
		return refGone
	case err != nil || !got.Equal(want):
		return refMoved
	}
	return refHolds
}

// TreeOf opens the agent's tree for a command that reads or writes its
// files: only the worktree the command runs in (treeOf). The caller frees
// it unless it is s.Repo.
func TreeOf(ctx context.Context, s *state.Store, a *agents.Agent) (*repo.Repo, error) {
	return treeOf(ctx, s, a)
}

// InThisWorktree refuses an agent whose tree is not the worktree the
// command runs in (treeOf's errors), so that a capture or a hook records
// nothing for it: no turn opened, no edit, no binding.
func InThisWorktree(ctx context.Context, s *state.Store, a *agents.Agent) error {
	tree, err := treeOf(ctx, s, a)
	if err != nil {
		return err
	}
	if tree != s.Repo {
		tree.Free()
	}
	return nil
}

// StillItsTree checks that tree, opened at the agent's path, is still the
// worktree the agent registered in (docs/rollback.md#stale-trees): not a
// link to another, nor another worktree made at the same path after its
// own was removed, nor one whose links git worktree prune would judge
// broken. A rollback would otherwise take a person's worktree for the
// agent's own, unguarded, and overwrite their edits: conflict.tree_stale.
func StillItsTree(a *agents.Agent, tree *repo.Repo) error {
	st := worktreeid.Check(a.Tree, tree.Top, tree.GitDir, tree.CommonDir, a.Worktree)
	if st == nil {
		return nil
	}
	return errcode.Newf(errcode.ConflictTreeStale, map[string]string{"agent": a.ID, "tree": a.Tree, "reason": st.Reason},
		"agent %s's worktree is gone: %s is not the worktree it registered in (%s)", a.ID, a.Tree, st.Detail).
		Hint("git venom-checkpoint doctor lists such agents; their checkpoints stay readable: git venom-checkpoint list --agent=%s", a.ID)
}
