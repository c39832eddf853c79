package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/worktreeid"
)

// treesCheck warns about agents whose worktree is no longer theirs
// (docs/rollback.md#stale-trees): a link at its path, another worktree made
// there after it was removed, or links git worktree prune would judge
// broken; or whose linked worktree was moved or removed (a main
// worktree's path that is gone is the whole repository moved, not
// listed). A rollback refuses them; archiving them is the way to tidy up.
func treesCheck(ctx context.Context, s *state.Store, st *agents.State) Check {
	const id = "agents.trees"
	var stale, fixes []string
	prune := false
	for _, aid := range st.Order {
		a := st.Agents[aid]
		if a.State == agents.Archived {
			continue
		}
		tree, err := checkpoints.OpenTreeOf(ctx, s, a)
		if errcode.Is(err, errcode.FailedCheckpointGit) && a.Worktree != nil && a.Worktree.Made != "" {
			// A linked worktree moved (git worktree move) or removed
			// (git worktree remove, prune) with its agent still there.
			what := worktreeid.Removed
			if to, ok := worktreeid.MovedTo(a.Worktree); ok {
				what = "moved to " + quote.C(to)
			} else if worktreeid.Listed(a.Worktree) && !prune {
				// Deleted without git worktree remove: git lists it
				// as prunable until this.
				prune = true
				fixes = append(fixes, "git worktree prune")
			}
			stale = append(stale, fmt.Sprintf("%s at %s (%s)", a.ID, quote.C(a.Tree), what))
			fixes = append(fixes, "git venom-checkpoint clean --agent="+a.ID)
			continue
		}
		if err != nil {
			continue // another repository's: a rollback fails on it
		}
		err = checkpoints.StillItsTree(a, tree)
		if tree != s.Repo {
			tree.Free()
		}
		if e, ok := errcode.As(err); ok {
			reason := ""
			if m, ok := e.Data.(map[string]string); ok {
				reason = m["reason"]
			}
			stale = append(stale, fmt.Sprintf("%s at %s (%s)", a.ID, quote.C(a.Tree), reason))
			fixes = append(fixes, "git venom-checkpoint clean --agent="+a.ID)
		}
	}
	if len(stale) == 0 {
		return ok(id, "no agent's tree is another worktree now")
	}
	return bad(id, Warn, strings.Join(fixes, "; ")+" (archives it and removes its checkpoints; a rollback refuses it meanwhile)",
		"%d %s no longer in the worktree it registered in (a rollback refuses it): %s",
		len(stale), plural(len(stale), "agent is", "agents are"), strings.Join(stale, ", "))
}
