package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The output names a checkpoint with its agent ("Checkpoint a1/k2"), and
// that name is taken back wherever a checkpoint is named: <agent>/k<n>,
// /t<n>, /last~<n> and /<label>, as --agent=<agent> with the bare name.
func TestNames_AgentQualified(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "0\n")
	env.Checkpoint("--agent=a2")                         // a2/k1: a second agent, so every bare name needs --agent
	env.Turn("a1", func() { env.Write("a.txt", "1\n") }) // a1/k1, k2: t1
	// t2 starts from k2 (nothing changed: reused, labelled) and ends at k3.
	env.Turn("a1", func() { env.Write("b.txt", "2\n") }, "--label=feature/x")
	require.Contains(t, env.Venom("checkpoint", "list", "--agent=a1").OK(t).Stdout, "feature/x")

	same := func(qualified, bare []string, cmd string) {
		t.Helper()
		q := env.Venom(cmd, qualified...).OK(t)
		b := env.Venom(cmd, bare...).OK(t)
		assert.Equal(t, b.Stdout, q.Stdout, "%v against %v", qualified, bare)
	}
	same([]string{"a1/k1", "a1/k2", "--name-only"}, []string{"--agent=a1", "k1", "k2", "--name-only"}, "diff")
	same([]string{"a1/k1", "k3", "--json"}, []string{"--agent=a1", "k1", "k3", "--json"}, "diff")
	same([]string{"--from=a1/t1", "--to=a1/last", "--json"}, []string{"--agent=a1", "--from=t1", "--to=last", "--json"}, "diff")
	same([]string{"a1/k1", "--dry-run", "--json"}, []string{"--agent=a1", "k1", "--dry-run", "--json"}, "rollback")
	same([]string{"--checkpoint=a1/feature/x", "--dry-run", "--json"}, []string{"--agent=a1", "feature/x", "--dry-run", "--json"}, "rollback")
	same([]string{"--revert=a1/t1", "--dry-run", "--json"}, []string{"--agent=a1", "--revert=t1", "--dry-run", "--json"}, "rollback")
	same([]string{"--revert=a1/k1..a1/k2", "--dry-run", "--json"}, []string{"--agent=a1", "--revert=k1..k2", "--dry-run", "--json"}, "rollback")
	same([]string{"--revert=a1/k1..k2", "--dry-run", "--json"}, []string{"--agent=a1", "--revert=k1..k2", "--dry-run", "--json"}, "rollback")
	same([]string{"list", "--before=a1/k3", "--json"}, []string{"list", "--agent=a1", "--before=k3", "--json"}, "checkpoint")
	// VENOM_AGENT names a default, which a name with its agent overrides,
	// as it overrides it for a fetched copy.
	r := env.VenomIn(env.Dir, []string{"VENOM_AGENT=a2"}, "diff", "a1/k1", "a1/k2", "--name-only").OK(t)
	assert.Equal(t, "a.txt\n", r.Stdout)

	// --agent that says otherwise is refused, as for a fetched copy.
	r = env.Venom("rollback", "a1/k1", "--agent=a2", "--dry-run").Fails(t, 2, "invalid_params.usage")
	assert.Contains(t, r.Stderr, "error: invalid_params.usage: a1/k1 is a checkpoint of a1, not of --agent=a2\n")
	env.Venom("diff", "--agent=a2", "a1/k1").Fails(t, 2, "invalid_params.usage")
	env.Venom("checkpoint", "list", "--agent=a2", "--before=a1/k2").Fails(t, 2, "invalid_params.usage")
	r = env.Venom("diff", "a1/k1", "a2/k1").Fails(t, 2, "invalid_params.usage")
	assert.Contains(t, r.Stderr, "are two agents' checkpoints")
	env.Venom("rollback", "--revert=a1/k1..a2/k1", "--dry-run").Fails(t, 2, "invalid_params.usage")
	// A first part that is no agent here leaves the name as it was.
	env.Venom("diff", "--agent=a1", "zz/k1").Fails(t, 2, "invalid_params.checkpoint")

	// The real call, by the plan of the qualified dry run; checked with git.
	dry := env.Venom("rollback", "a1/k2", "--restore=files", "--dry-run").OK(t).Stdout
	plan := regexp.MustCompile(`--plan=p1-[0-9a-f]{16}`).FindString(dry)
	require.NotEmpty(t, plan, dry)
	env.Venom("rollback", "a1/k2", "--restore=files", plan).OK(t)
	assert.Equal(t, env.Git("rev-parse", "refs/venom/checkpoints/a1/2:a.txt"), env.Git("hash-object", "a.txt"))
	assert.Equal(t, "1\n", env.Read("a.txt"))
	assert.NoFileExists(t, env.Path("b.txt"))
}

// loggedGit returns the environment that puts a git before the real one
// on PATH (for a command run as git-venom-<cmd>), logging each call's arguments, and a function returning the
// calls logged since the last that had verb among their arguments.
func loggedGit(t *testing.T, verb string) (extra []string, calls func() []string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + filepath.Join(gitDir, "git") + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755))
	extra = []string{"PATH=" + dir + ":" + binDir + ":" + gitDir + ":/usr/local/bin:/usr/bin:/bin"}
	return extra, func() []string {
		data, _ := os.ReadFile(log)
		require.NoError(t, os.WriteFile(log, nil, 0o644))
		var out []string
		for _, line := range strings.Split(string(data), "\n") {
			if slices.Contains(strings.Fields(line), verb) {
				out = append(out, line[strings.Index(line, verb):])
			}
		}
		return out
	}
}

// A command naming checkpoints with their agent lists the copies fetched
// from a remote of that agent's name once, and only those; plain names
// start no git for-each-ref.
func TestNames_AgentQualifiedListsCopiesOnce(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "0\n")
	env.Checkpoint("--agent=a2")
	env.Turn("a1", func() { env.Write("a.txt", "1\n") })
	extra, calls := loggedGit(t, "for-each-ref")
	// Not through git, which puts its own folder first on PATH.
	run := func(cmd string, args ...string) Result {
		return env.run(env.Dir, extra, filepath.Join(binDir, "git-venom-"+cmd), args...)
	}
	one := []string{"for-each-ref --format=%(refname) refs/venom/remotes/a1/"}

	run("diff", "a1/k1", "a1/k2", "--name-only").OK(t)
	assert.Equal(t, one, calls(), "diff a1/k1 a1/k2")
	run("rollback", "--revert=a1/k1..a1/k2", "--dry-run").OK(t)
	assert.Equal(t, one, calls(), "rollback --revert=a1/k1..a1/k2")
	run("checkpoint", "list", "--before=a1/k2").OK(t)
	assert.Equal(t, one, calls(), "list --before=a1/k2")
	run("diff", "a1/k1", "a2/k1").Fails(t, 2, "invalid_params.usage")
	assert.Equal(t, []string{"for-each-ref --format=%(refname) refs/venom/remotes/a1/ refs/venom/remotes/a2/"}, calls(),
		"two agents' pair")

	run("diff", "--agent=a1", "k1", "k2", "--name-only").OK(t)
	run("rollback", "--agent=a1", "--revert=k1..k2", "--dry-run").OK(t)
	run("diff", "--agent=a1", "zz/k1").Fails(t, 2, "invalid_params.checkpoint")
	assert.Empty(t, calls(), "plain names, and a first part that is no agent")
}

// A local agent named as a remote whose copies were fetched leaves the
// copies' names to the copies.
func TestNames_AgentNamedAsARemoteWithCopies(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	b, cp := p.b, p.copyID
	b.Turn("origin", func() { b.Write("mine.txt", "mine\n") })
	want := b.Venom("diff", "--agent="+cp, "k1", "k3", "--name-only").OK(t).Stdout
	assert.Equal(t, want, b.Venom("diff", "origin/a1/k1", "origin/a1/k3", "--name-only").OK(t).Stdout)
	assert.Equal(t, "base.txt\nfeature.txt\n", want)
	// An agent whose name no remote has is read as the local agent.
	b.Turn("me", func() { b.Write("mine.txt", "mine, again\n") })
	assert.Equal(t, "mine.txt\n", b.Venom("diff", "me/k1", "me/k2", "--name-only").OK(t).Stdout)
}
