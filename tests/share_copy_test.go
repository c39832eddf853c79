package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedPair is a colleague's clone (A, agent a1, pushed) and mine (B),
// cloned from the same bare remote, with A's checkpoints fetched into B.
type sharedPair struct {
	a, b   *Env
	remote string
	copyID string // origin/<A's machine>/a1
}

// copyRef is the ref fetch wrote in B for the copy's checkpoint leaf n
// ("1", "2", ... or "log").
func (p *sharedPair) copyRef(leaf string) string {
	return "refs/venom/remotes/" + p.copyID + "/" + leaf
}

// newSharedPair: A commits base.txt and pushes main; a1 works two turns
// in A (turn 1 writes feature.txt and edits base.txt, turn 2 appends to
// feature.txt); A pushes a1's checkpoints; B clones main and fetches them.
func newSharedPair(t *testing.T) *sharedPair {
	t.Helper()
	a := NewEnv(t)
	remote := a.bareRemote("remote")
	a.Git("remote", "add", "origin", remote)
	a.Write("base.txt", "base\n")
	a.Commit("base")
	a.Git("push", "-q", "origin", "main")
	a.Turn("a1", func() {
		a.Write("feature.txt", "feature one\n")
		a.Write("base.txt", "base, changed by a1\n")
	})
	a.Turn("a1", func() { a.Write("feature.txt", "feature one\nfeature two\n") })
	a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t)

	b := NewBareEnv(t)
	b.Git("remote", "add", "origin", remote)
	b.Git("fetch", "-q", "origin")
	b.Git("checkout", "-q", "-B", "main", "origin/main")
	var got fetchResult
	b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &got)
	require.Len(t, got.Copies, 1)
	require.Equal(t, []string{"k1", "k2", "k3"}, got.Copies[0].Checkpoints)
	return &sharedPair{a: a, b: b, remote: remote, copyID: got.Copies[0].Copy}
}

// TestShareCopy_ExplainNamesTheColleaguesTurns: my colleague commits what
// their agent did and pushes it with the agent's checkpoints; after a fetch
// here, explain --remotes (or --agent=<copy>) names the copy's turns, with
// copy, machine and agent, in --json and in text. Without either, the
// copy's turns are not looked at. A copy ref moved since the fetch counts
// for nothing.
func TestShareCopy_ExplainNamesTheColleaguesTurns(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	a, b := p.a, p.b
	commit := a.Commit("feature from a1")
	a.Git("push", "-q", "origin", "main")
	b.Git("pull", "-q", "--ff-only", "origin", "main")
	require.Equal(t, commit, b.Git("rev-parse", "HEAD"))
	machine := strings.Split(p.copyID, "/")[1]

	plain := b.explain(t, commit)
	require.Len(t, plain.Commits, 1)
	assert.Empty(t, plain.Commits[0].Turns, "a copy's turns count only when asked for")

	for _, args := range [][]string{{"--remotes"}, {"--agent=" + p.copyID}} {
		res := b.explain(t, append([]string{commit}, args...)...)
		require.Len(t, res.Commits, 1, args)
		c := res.Commits[0]
		files := map[string][]string{}
		for _, f := range c.Files {
			files[f.Path] = f.Turns
		}
		// feature.txt as committed is what turn 2 ended with; base.txt
		// what turn 1 ended with (turn 2 left it alone).
		assert.Equal(t, []string{p.copyID + "/t2"}, files["feature.txt"], args)
		assert.Equal(t, []string{p.copyID + "/t1"}, files["base.txt"], args)
		require.Len(t, c.Turns, 2, args)
		for i, tn := range c.Turns {
			assert.Equal(t, p.copyID+"/t"+string(rune('1'+i)), tn.ID)
			assert.Equal(t, "a1", tn.Agent)
			assert.Equal(t, p.copyID, tn.Copy)
			assert.Equal(t, machine, tn.Machine)
			assert.Nil(t, tn.Prompt, "a copy's transcript is on its own machine")
		}
		// The checkpoints compared are the copy's, as plain git shows them.
		assert.Equal(t, b.Git("rev-parse", commit+":feature.txt"), b.Git("rev-parse", p.copyRef("3")+":feature.txt"))
	}
	text := b.Venom("checkpoint", "explain", commit, "--remotes").OK(t).Stdout
	assert.Contains(t, text, p.copyID+"/t2")
	assert.Contains(t, text, "fetched copy "+p.copyID+": agent a1 of machine "+machine)

	// A copy ref moved here since the fetch (to the copy's own k1) is no
	// checkpoint of the copy's any more: its turns cannot be looked at.
	b.Git("update-ref", p.copyRef("3"), b.Git("rev-parse", p.copyRef("1")))
	res := b.explain(t, commit, "--agent="+p.copyID)
	files := map[string][]string{}
	for _, f := range res.Commits[0].Files {
		files[f.Path] = f.Turns
	}
	assert.Empty(t, files["feature.txt"])
	assert.Equal(t, 1, res.Unavailable, "turn 2 ended at the moved ref")
	// A copy named that does not exist is not_found.agent.
	b.Venom("checkpoint", "explain", commit, "--agent=origin/"+machine+"/nobody", "--json").Fails(t, 3, "not_found.agent")
}
