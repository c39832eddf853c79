package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// staleGC is a person's `git repack -a -d` or `git gc --prune=now` that
// was already running when a venom command began to rely on objects:
// begin is what such a run does first (it lists the packs it will delete,
// those without a .keep, and the loose objects no ref reaches, and packs
// what refs reach), end what it does last (it deletes what it listed).
// git looks at neither list again in between, so a ref made meanwhile,
// or a .keep added, saves nothing on them: docs/checkpoints.md#objects-a-command-relies-on.
type staleGC struct {
	packs []string // base paths, without .pack
	loose []string
}

func beginStaleGC(e *Env) *staleGC {
	e.t.Helper()
	g := &staleGC{}
	packs, _ := filepath.Glob(e.Path(".git/objects/pack/pack-*.pack"))
	for _, p := range packs {
		base := strings.TrimSuffix(p, ".pack")
		if _, err := os.Stat(base + ".keep"); err != nil {
			g.packs = append(g.packs, base)
		}
	}
	// git prune -n lists the loose objects that gc --prune=now removes.
	for _, l := range strings.Split(e.Git("prune", "-n", "--expire=now"), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			g.loose = append(g.loose, e.Path(".git/objects/"+f[0][:2]+"/"+f[0][2:]))
		}
	}
	// The new pack of what refs reach, as repack -a writes it.
	e.Git("repack", "-a", "-q")
	require.NotEmpty(e.t, g.packs)
	return g
}

func (g *staleGC) end(e *Env) {
	e.t.Helper()
	for _, base := range g.packs {
		for _, ext := range []string{".pack", ".idx", ".keep", ".bitmap", ".rev"} {
			_ = os.Remove(base + ext)
		}
	}
	for _, p := range g.loose {
		_ = os.Remove(p)
	}
}

// fsckWhole fails the test unless git fsck finds every object every ref
// (checkpoints included) needs.
func fsckWhole(t *testing.T, e *Env) {
	t.Helper()
	r := e.GitRaw("fsck", "--full", "--no-dangling")
	require.Equal(t, 0, r.Code, "git fsck: %s%s", r.Stdout, r.Stderr)
	require.NotContains(t, r.Stdout+r.Stderr, "missing")
}

// TestSecurity_GCAlreadyRunningBesideACapture: a capture after a dry run
// finds its tree and blobs stored by the dry run, in a pack no ref
// reaches, and a big file git hash-object wrote loose. A gc --prune=now
// (or repack -a -d) that listed them before the checkpoint's ref existed
// deletes them after, so the capture writes them again into its own held
// pack: its checkpoint stays whole.
func TestSecurity_GCAlreadyRunningBesideACapture(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
	env.Write("precious.txt", "a person's new work, in no checkpoint\n")
	// Past the in-memory bound: git hash-object -w stores it, loose.
	big := strings.Repeat("a big file, stored loose by git\n", 5<<20/32+1)
	env.Write("big.txt", big)
	env.DryRun("--agent=a1", "k1", "--restore=files")

	p := env.pause("commit-write", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "checkpoint", "--agent=a1", "--json")
	gc := beginStaleGC(env)
	resumeEvery(t, p)
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
	gc.end(env)

	fsckWhole(t, env)
	assert.Equal(t, "a person's new work, in no checkpoint\n", env.Git("show", "refs/venom/checkpoints/a1/2:precious.txt")+"\n")
	assert.Equal(t, big, env.GitRaw("show", "refs/venom/checkpoints/a1/2:big.txt").Stdout)
}

// TestSecurity_GCAlreadyRunningBesideARollback: the real call's safety
// checkpoint S relied on the dry run's pack for a person's untracked
// file; a repack -a -d that listed that pack before the safety ref and
// deleted it after the rollback's fresh look left the file deleted, in no
// checkpoint, the rollback exact and its undo failing.
func TestSecurity_GCAlreadyRunningBesideARollback(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--json").OK(t)
	env.Write("precious.txt", "a person's only copy\n")
	env.Write("README.md", "a person's edit\n")
	plan := env.DryRun("--agent=a1", "k1", "--restore=files").Plan

	finish := env.startResumable("rollback-before-safety", "rollback", "--agent=a1", "k1", "--restore=files",
		"--plan="+plan, "--json")
	gc := beginStaleGC(env)
	r := finish().OK(t)
	gc.end(env)

	var res RollbackResult
	r.JSON(t, &res)
	require.Equal(t, "k2", res.Safety)
	_, err := os.Stat(env.Path("precious.txt"))
	require.True(t, os.IsNotExist(err), "the plan deletes precious.txt")
	fsckWhole(t, env)
	assert.Equal(t, "a person's only copy", env.Git("show", "refs/venom/checkpoints/a1/2:precious.txt"))
	assert.Equal(t, "a person's edit", env.Git("show", "refs/venom/checkpoints/a1/2:README.md"))
	// The undo brings them back.
	env.Rollback("--agent=a1", "--undo", "--restore=files")
	assert.Equal(t, "a person's only copy\n", env.Read("precious.txt"))
	assert.Equal(t, "a person's edit\n", env.Read("README.md"))
}
