package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A symbolic ref planted where git-venom keeps refs of its own (by a
// local attacker, or by anyone who can write the repository's refs) must
// never be followed: git update-ref and git notes write the ref it names,
// so deleting or updating "a checkpoint ref" through it deletes or moves
// the person's branch. Each command leaves such a ref alone and says so,
// doctor names it with a fix that removes the link only, and the branch
// holds what it held.

// plantSymref makes name a symbolic ref to target.
func (e *Env) plantSymref(name, target string) {
	e.t.Helper()
	e.GitRaw("update-ref", "--no-deref", "-d", name)
	e.Git("symbolic-ref", name, target)
}

// assertSymrefLeft: name is still a symbolic ref to target, and each
// branch of want holds its commit.
func (e *Env) assertSymrefLeft(t *testing.T, name, target string, want map[string]string) {
	t.Helper()
	got := e.GitRaw("symbolic-ref", "-q", name)
	assert.Equal(t, target, strings.TrimSpace(got.Stdout), "the planted symbolic ref %s is left alone", name)
	for branch, commit := range want {
		r := e.GitRaw("rev-parse", "--verify", "-q", branch)
		assert.Equal(t, commit, strings.TrimSpace(r.Stdout), "%s moved or went", branch)
	}
}

// assertDoctorNamesSymref: doctor fails naming the symbolic ref, and
// running its fix removes the link and leaves the branches as they are.
func (e *Env) assertDoctorNamesSymref(t *testing.T, name string, want map[string]string) {
	t.Helper()
	var rep doctorReport
	e.Venom("checkpoint", "doctor", "--json").JSON(t, &rep)
	msg, fix := rep.check(t, "checkpoints.symrefs")
	require.Contains(t, msg, name, "doctor names the symbolic ref")
	for _, c := range rep.Checks {
		if c.Fix != nil && strings.Contains(*c.Fix, name) && c.ID != "checkpoints.symrefs" {
			t.Errorf("doctor's %s advises a command on %s: %s", c.ID, name, *c.Fix)
		}
	}
	_, cmds, found := strings.Cut(fix, "If you did not make them: ")
	require.True(t, found, fix)
	r := e.run(e.Dir, nil, "sh", "-c", cmds)
	require.Equal(t, 0, r.Code, "%s: %s", fix, r.Stderr)
	assert.NotEqual(t, 0, e.GitRaw("symbolic-ref", "-q", name).Code, "doctor's fix removes %s", name)
	for branch, commit := range want {
		assert.Equal(t, commit, strings.TrimSpace(e.GitRaw("rev-parse", "--verify", "-q", branch).Stdout),
			"doctor's fix moved %s", branch)
	}
}

// TestSecurity_SymrefFetchLeavesTheBranch: fetch deletes what an earlier
// fetch brought and the remote no longer has, and writes what passed;
// a symbolic ref at either kind of name made it delete the branch it
// names (git update-ref --stdin: delete <name> <the branch's commit>), or
// move it to a fetched commit.
func TestSecurity_SymrefFetchLeavesTheBranch(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 2)
	b, _ := c.fetcher(t)
	b.Git("branch", "work")
	want := map[string]string{"refs/heads/main": b.Git("rev-parse", "main"), "refs/heads/work": b.Git("rev-parse", "work")}
	base := "refs/venom/remotes/origin/" + c.machine + "/a1/"
	stale, wanted := base+"k1", base+"1"
	b.plantSymref(stale, "refs/heads/main")
	b.plantSymref(wanted, "refs/heads/work")

	var got fetchResult
	b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &got)
	b.assertSymrefLeft(t, stale, "refs/heads/main", want)
	b.assertSymrefLeft(t, wanted, "refs/heads/work", want)
	refused := map[string]string{}
	for _, r := range got.Refused {
		refused[r.Ref] = r.Reason
	}
	assert.Equal(t, "symbolic", refused[stale], "%+v", got)
	assert.Equal(t, "symbolic", refused[wanted], "%+v", got)
	assert.NotContains(t, got.Deleted, stale)
	// The rest of the copy is written.
	assert.Equal(t, c.a.Git("rev-parse", "refs/venom/checkpoints/a1/2"), b.Git("rev-parse", base+"2"))
	b.assertDoctorNamesSymref(t, stale, want)
}

// TestSecurity_SymrefNoteLeavesTheBranch: git notes writes the notes ref
// through a symbolic ref: explain --note made the branch it names a notes
// commit.
func TestSecurity_SymrefNoteLeavesTheBranch(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.TurnN("a1", 1)
	e.Commit("the agent's work")
	want := map[string]string{"refs/heads/main": e.Git("rev-parse", "main")}
	e.plantSymref("refs/notes/venom", "refs/heads/main")

	r := e.Venom("checkpoint", "explain", "--note", "HEAD")
	r.Fails(t, 1, "failed.note")
	assert.Contains(t, r.Stderr, "symbolic")
	e.assertSymrefLeft(t, "refs/notes/venom", "refs/heads/main", want)
	e.assertDoctorNamesSymref(t, "refs/notes/venom", want)
}

// TestSecurity_SymrefPruneAndCleanLeaveTheBranch: a person keeps an
// agent's checkpoint on a branch of their own (git branch rescue
// refs/venom/checkpoints/a1/1), and the checkpoint's ref becomes a
// symbolic ref to it, before or while clean runs: clean's deletion
// (delete <ref> <logged commit>) deleted the branch. The ref is reported
// as not deleted, and the next prune tries again.
func TestSecurity_SymrefPruneAndCleanLeaveTheBranch(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"before", "while"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			e := NewEnv(t)
			e.TurnN("a1", 1)
			e.TurnN("a1", 2)
			ref := "refs/venom/checkpoints/a1/1"
			e.Git("branch", "rescue", ref)
			want := map[string]string{"refs/heads/main": e.Git("rev-parse", "main"), "refs/heads/rescue": e.Git("rev-parse", "rescue")}
			var r Result
			if when == "before" {
				e.plantSymref(ref, "refs/heads/rescue")
				r = e.Venom("checkpoint", "clean", "--agent=a1", "--json")
			} else {
				resume := e.startResumable("refs-delete", "checkpoint", "clean", "--agent=a1", "--json")
				e.plantSymref(ref, "refs/heads/rescue")
				r = resume()
			}
			r.OK(t)
			assert.Contains(t, r.Stdout, "symbolic", "clean reports the ref it left")
			e.assertSymrefLeft(t, ref, "refs/heads/rescue", want)
			assert.NotEqual(t, 0, e.GitRaw("rev-parse", "--verify", "-q", "refs/venom/checkpoints/a1/2").Code, "the other ref goes")
			e.Venom("checkpoint", "prune", "--agent=a1").OK(t)
			e.assertSymrefLeft(t, ref, "refs/heads/rescue", want)
			e.assertDoctorNamesSymref(t, ref, want)
		})
	}
}

// TestSecurity_SymrefRollbackLeavesTheBranch: a symbolic ref at the
// agent's next checkpoint number (where the rollback's safety checkpoint
// goes) and at the target: the rollback skips the one and refuses the
// other; no branch moves but the one a rollback moves.
func TestSecurity_SymrefRollbackLeavesTheBranch(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.TurnN("a1", 1)
	e.TurnN("a1", 2)
	e.Git("branch", "work")
	want := map[string]string{"refs/heads/main": e.Git("rev-parse", "main"), "refs/heads/work": e.Git("rev-parse", "work")}
	refs := strings.Fields(e.Git("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/a1/"))
	last := fmt.Sprintf("refs/venom/checkpoints/a1/%d", len(refs))
	next := fmt.Sprintf("refs/venom/checkpoints/a1/%d", len(refs)+1)
	e.plantSymref(next, "refs/heads/work")
	e.plantSymref(last, "refs/heads/main")

	e.Venom("rollback", "--agent=a1", fmt.Sprintf("k%d", len(refs)), "--restore=files", "--dry-run").Fails(t, 3, "not_found.checkpoint")
	var dry struct {
		Plan string `json:"plan"`
	}
	e.Venom("rollback", "--agent=a1", "t1", "--restore=files", "--dry-run", "--json").OK(t).JSON(t, &dry)
	e.Venom("rollback", "--agent=a1", "t1", "--restore=files", "--plan="+dry.Plan, "--json").OK(t)
	assert.Equal(t, "turn 1\n", e.Read("turn-a1.txt"))
	e.assertSymrefLeft(t, next, "refs/heads/work", want)
	e.assertSymrefLeft(t, last, "refs/heads/main", want)
	e.assertDoctorNamesSymref(t, next, want)
}
