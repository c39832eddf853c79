package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// InWorktree is a world in a linked worktree of e's repository, made with
// git worktree add -b branch: same HOME and git config, its own clock.
func (e *Env) InWorktree(t *testing.T, name, branch string) *Env {
	t.Helper()
	dir := filepath.Join(e.Root, name)
	e.Git("worktree", "add", "-q", "-b", branch, dir)
	return &Env{t: t, Root: e.Root, Dir: dir, Home: e.Home, Extra: e.Extra}
}

// committedTurn: agent w1 in its own worktree w runs one turn that commits
// twice; it returns the commit before the turn
// and the turn's last.
func committedTurn(t *testing.T, w *Env) (base, tip string) {
	t.Helper()
	base = w.Git("rev-parse", "HEAD")
	w.Venom("checkpoint", "--agent=w1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	w.Write("work.txt", "x\n")
	w.Commit("c1")
	w.Write("work.txt", "x\ny\n")
	tip = w.CommitID("c2")
	w.Venom("checkpoint", "--agent=w1", "--reason=turn_end", "--json").OK(t)
	return base, tip
}

// The undo a rollback prints works after the rollback moved the branch
// back: it moves the branch forward again (a fast-forward), the index with
// it, and undoing that undo moves it back again.
func TestRollback_UndoMovesHeadForwardAgain(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	w := env.InWorktree(t, "wt", "agent-branch")
	base, tip := committedTurn(t, w)
	const branch = "refs/heads/agent-branch"

	back := w.Rollback("--agent=w1", "k1")
	require.Equal(t, base, w.Git("rev-parse", branch))
	require.Equal(t, 2, back.Repos[0].Head.Commits)
	// The dropped commits stay reachable from the safety checkpoint's ref
	// (its parent is the old HEAD), whatever gc does to the reflogs.
	safety := "refs/venom/checkpoints/w1/" + strings.TrimPrefix(back.Safety, "k")
	require.Equal(t, tip, w.Git("rev-parse", safety+"^"))
	require.Contains(t, w.Git("for-each-ref", "--contains", tip, "--format=%(refname)", "refs/venom/"), safety)
	w.Git("reflog", "expire", "--expire=now", "--all")
	w.Git("gc", "-q", "--prune=now")
	w.Git("cat-file", "-e", tip+"^{commit}")

	dry := w.DryRun("--agent=w1", "--undo")
	h := dry.Repos[0].Head
	require.True(t, h.Moves)
	require.True(t, h.Forward)
	require.Equal(t, base, *h.From)
	require.Equal(t, tip, *h.To)
	require.Equal(t, 2, h.Commits)
	screen := w.Venom("rollback", "--agent=w1", "--undo", "--dry-run").OK(t).Stdout
	require.Contains(t, screen, "moves forward from")
	require.Contains(t, screen, "bringing back 2 commits")

	undo := w.Rollback("--agent=w1", "--undo")
	require.True(t, *undo.Exact)
	require.Equal(t, tip, w.Git("rev-parse", branch))
	require.Equal(t, branch, w.Git("symbolic-ref", "HEAD"))
	require.Equal(t, "", w.Git("status", "--porcelain"), "the index follows HEAD, the files are the turn's")
	require.Equal(t, "x\ny\n", w.Read("work.txt"))
	require.Contains(t, w.Git("reflog", "-1", branch), "venom rollback w1")

	// Undoing the undo moves the branch back again.
	again := w.Rollback("--agent=w1", "--undo")
	require.False(t, again.Repos[0].Head.Forward)
	require.Equal(t, 2, again.Repos[0].Head.Commits)
	require.Equal(t, base, w.Git("rev-parse", branch))
	require.Equal(t, "", w.Git("status", "--porcelain"))
	require.Equal(t, "", w.Git("ls-files", "work.txt"))
	// And once more, forward.
	w.Rollback("--agent=w1", "--undo")
	require.Equal(t, tip, w.Git("rev-parse", branch))
	require.Equal(t, "", w.Git("status", "--porcelain"))
}

// When someone committed on the branch after the rollback, going forward
// would drop their commit: the undo is refused, naming it, and the hint's
// command works as printed (--keep-head), leaving the branch where they
// put it.
func TestRollback_UndoForwardRefusedOverNewCommits(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	w := env.InWorktree(t, "wt", "agent-branch")
	_, tip := committedTurn(t, w)
	w.Rollback("--agent=w1", "k1")
	w.Write("p.txt", "the person's\n")
	mine := w.CommitID("the person's work")

	r := w.Venom("rollback", "--agent=w1", "--undo", "--dry-run", "--json").Fails(t, 5, "conflict.head_moved")
	var data struct {
		Commits  []string `json:"commits"`
		Expected string   `json:"expected"`
		Actual   string   `json:"actual"`
	}
	require.NoError(t, json.Unmarshal([]byte(dataOf(t, r)), &data))
	require.Equal(t, []string{mine}, data.Commits)
	require.Equal(t, tip, data.Expected)
	require.Equal(t, mine, data.Actual)

	human := w.Venom("rollback", "--agent=w1", "--undo", "--dry-run").Fails(t, 5, "conflict.head_moved")
	require.Contains(t, human.Stderr, "the person's work")
	cmds := hintCommands(human.Stderr)
	require.Len(t, cmds, 1, human.Stderr)
	args := strings.Fields(strings.TrimPrefix(cmds[0], "git "))
	require.Equal(t, "venom-rollback", args[0])
	var res RollbackResult
	w.Venom("rollback", append(args[1:], "--json")...).OK(t).JSON(t, &res)
	require.False(t, res.Repos[0].Head.Moves)
	var real []string
	for _, a := range args[1:] {
		if a != "--dry-run" {
			real = append(real, a)
		}
	}
	w.Rollback(real...)
	require.Equal(t, mine, w.Git("rev-parse", "refs/heads/agent-branch"), "the person's commit stays on the branch")
	require.Equal(t, "x\ny\n", w.Read("work.txt"))
}
