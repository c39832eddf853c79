package checkpoints

import (
	"context"
	"errors"
	"slices"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/testhook"
)

// Tool is one tool call a hook reports (docs/checkpoints.md#tool-calls).
type Tool struct {
	Name    string // the harness's tool name: Bash, Edit, apply_patch
	Command string // a shell command's first line, or the paths an edit tool named
	UseID   string // the harness's id of the call, when it gives one
}

// MarkTool captures the agent's tree after a tool call of its open turn.
// When the tree and HEAD are as the turn's last capture left them (the
// turn's start, or its last marked call), it records nothing and returns
// nil: most calls read. Otherwise the capture becomes tool call
// t<n>.<i>: a commit held by its own ref under refs/venom/tools/, and a
// tool.marked record under the turn; no checkpoint number, no reuse, no
// retention.
func MarkTool(ctx context.Context, tx *state.Txn, a *agents.Agent, tool Tool) (*journal.Entry, error) {
	s := tx.Store
	open := a.OpenTurn
	if open == nil || !s.Config.Enabled {
		return nil, nil
	}
	tree, err := treeOf(ctx, s, a)
	if err != nil {
		return nil, err
	}
	if tree != s.Repo {
		defer tree.Free()
	}
	snap, err := capture.TakeHeld(ctx, tree, s.TmpDir(), capture.LimitsOf(s.Config))
	if err != nil {
		return nil, err
	}
	if same(tree, lastCapture(tree, a, open), snap) {
		return nil, nil
	}
	n, err := ids.ParseTurn(open.ID)
	if err != nil {
		return nil, err
	}
	now := journal.Now()
	for i := len(open.Tools) + 1; ; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		call := ids.ToolCall(n, i)
		if refs.ResolveName(tree, ids.ToolRefName(a.ID, n, i)) != nil {
			continue // a killed hook's: passed over, as a foreign checkpoint ref is
		}
		commit, err := writeCommit(tree, snap, refs.ToolMessage(a.ID, call, open.ID), now, anchors(tree, a, snap, Meta{}))
		if err != nil {
			return nil, gitErr("commit", err)
		}
		if err := refs.CreateTool(tree, a.ID, n, i, commit); err != nil {
			if errors.Is(err, refs.ErrExists) {
				continue
			}
			return nil, gitErr("update_ref", err)
		}
		// Between the ref and its record: a kill here leaves a ref no
		// record names, which the next mark passes over and prune,
		// clean and doctor deal with (retention.OrphanToolRefs).
		if err := testhook.PointIn(ctx, "tool-ref-made"); err != nil {
			return nil, err
		}
		rs := journal.RepoState{Repo: ".", Path: tree.Top, Commit: commit.String(), Head: snap.HeadString(),
			Branch: snap.Branch, Skipped: snap.Skipped, Submodules: snap.Submodules}
		if rs.Skipped == nil {
			rs.Skipped = []journal.Skipped{}
		}
		if rs.Submodules == nil {
			rs.Submodules = []journal.Submodule{}
		}
		e, err := tx.Append(journal.ToolMarked, journal.Marked{Agent: a.ID, Turn: open.ID, Mark: call,
			Tool: tool.Name, Command: tool.Command, ToolUseID: tool.UseID, At: journal.Stamp(now),
			Repos: []journal.RepoState{rs}})
		return &e, err
	}
}

// findTool is the tree just before tool call t<n>.<i> ran
// (docs/checkpoints.md#tool-calls), as a rollback's or a diff's target:
// the capture of the turn's previous marked call, or for its first the
// turn's turn_start checkpoint. It is named t<n>.<i>, is mid-turn (its
// files match no point of the conversation), and its seq is that
// capture's, where a rollback's window walk starts.
func findTool(r *repo.Repo, a *agents.Agent, id string, n, i int) (*agents.Checkpoint, error) {
	notFound := func(format string, args ...any) error {
		return errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": id}, format, args...).
			Hint("git venom-checkpoint list --tools shows the tool calls")
	}
	t := a.Turn(ids.Turn(n))
	if t == nil {
		return nil, notFound("agent %s has no turn %s", a.ID, ids.Turn(n))
	}
	j := slices.IndexFunc(t.Tools, func(c agents.ToolCall) bool { return c.Mark == id })
	if j < 0 {
		return nil, notFound("turn %s of agent %s has no marked tool call %s", t.ID, a.ID, id)
	}
	turn := t.ID
	if j == 0 {
		start, err := Find(r, a, t.StartCheckpoint)
		if t.StartCheckpoint == "" || err != nil {
			return nil, notFound("the start of turn %s of agent %s, just before %s, is gone", t.ID, a.ID, id)
		}
		c := *start
		c.Checkpoint, c.Reason, c.Turn, c.MidTurn, c.Label, c.Labels = id, agents.ToolCallReason, &turn, true, nil, nil
		return &c, nil
	}
	prev := t.Tools[j-1]
	pn, pi, _ := ids.ParseToolCall(prev.Mark)
	got := refs.ResolveName(r, ids.ToolRefName(a.ID, pn, pi))
	if got == nil || got.String() != prev.Commit {
		return nil, notFound("the capture of %s, just before %s, is gone: its ref %s no longer holds it",
			prev.Mark, id, ids.ToolRefName(a.ID, pn, pi))
	}
	var through *string
	if start := a.Checkpoint(t.StartCheckpoint); start != nil {
		through = start.ThroughTurn
	}
	return &agents.Checkpoint{Taken: journal.Taken{Agent: a.ID, Checkpoint: id, Reason: agents.ToolCallReason,
		Turn: &turn, ThroughTurn: through, At: prev.At, MidTurn: true,
		Repos: []journal.RepoState{{Repo: ".", Path: a.Tree, Commit: prev.Commit, Head: prev.Head,
			Skipped: []journal.Skipped{}, Submodules: []journal.Submodule{}}}}, Seq: prev.Seq}, nil
}

// lastCapture is the commit the turn's last capture made: its last
// marked tool call's, else its turn_start checkpoint's; "" when neither
// is there to compare with.
func lastCapture(r *repo.Repo, a *agents.Agent, t *agents.Turn) string {
	if k := len(t.Tools); k > 0 {
		return t.Tools[k-1].Commit
	}
	if c := a.Checkpoint(t.StartCheckpoint); c != nil && c.Live() && len(c.Repos) == 1 && Usable(r, a, c) {
		return c.Repos[0].Commit
	}
	return ""
}

// same: the snapshot's tree and HEAD are those of the capture commit.
func same(r *repo.Repo, commit string, snap *capture.Snapshot) bool {
	id, err := git.NewOid(commit)
	if err != nil {
		return false
	}
	info, err := refs.ReadCommit(r, id)
	if err != nil || !info.Tree.Equal(snap.Tree) {
		return false
	}
	return (info.Parent == nil) == (snap.Head == nil) && (snap.Head == nil || info.Parent.Equal(snap.Head))
}
