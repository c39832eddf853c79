package tests

import (
	"os"
	"path/filepath"
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
	commit := a.CommitID("feature from a1")
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

// copyRollback is git venom-rollback --json of a fetched copy.
type copyRollback struct {
	RollbackResult
	Copy string `json:"copy"`
}

func (p *sharedPair) rollback(t *testing.T, args ...string) copyRollback {
	t.Helper()
	var r copyRollback
	p.b.Venom("rollback", append([]string{"--agent=" + p.copyID, "--json"}, args...)...).OK(t).JSON(t, &r)
	return r
}

// forge makes, in the git dir dir (plain git only), a log copy for the
// copy's namespace prefix (refs/venom/shared/<m>/a1/ on the remote,
// refs/venom/remotes/<copy>/ here) whose records name commit instead of
// checkpoint leaf n's, and points both refs at them: what a later push
// of another history, or a hand-made update-ref, leaves.
func forge(e *Env, dir, prefix, n, commit string) {
	e.t.Helper()
	gd := "--git-dir=" + dir
	old := e.Git(gd, "rev-parse", prefix+n)
	log := e.Git(gd, "show", prefix+"log:log.jsonl")
	require.Contains(e.t, log, old)
	blob := e.GitInput(strings.ReplaceAll(log, old, commit)+"\n", gd, "hash-object", "-w", "--stdin")
	tree := e.GitInput("100644 blob "+blob+"\tlog.jsonl\n", gd, "mktree")
	logCommit := e.Git(gd, "commit-tree", tree, "-m", "venom log a1")
	e.Git(gd, "update-ref", prefix+"log", logCommit)
	e.Git(gd, "update-ref", prefix+n, commit)
}

// TestShareCopy_RollbackRestoresACopysFilesUnderALocalAgent: my clone
// restores my colleague's agent's k3 files here, recorded under my local
// agent (safety checkpoint, log records); refs/venom/remotes, HEAD, the
// branch and the index stay; the dry run's plan must be quoted; a person's
// edit since my agent's last turn is an outside edit; --restore=all is
// refused; a path-scoped form covers its paths only; and --undo (a local
// rollback to the safety checkpoint) brings my files back.
func TestShareCopy_RollbackRestoresACopysFilesUnderALocalAgent(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	b, cp := p.b, p.copyID

	// No local agent: nothing is made up, the error says what to type.
	r := b.Venom("rollback", "--agent="+cp, "k3", "--dry-run")
	r.Fails(t, 2, "invalid_params.into")
	assert.Contains(t, r.Stderr, "--into=<agent>")
	assert.Contains(t, r.Stderr, "git venom-checkpoint --agent=<id>")

	b.Turn("me", func() { b.Write("mine.txt", "mine\n") })
	b.Write("base.txt", "my own edit\n") // after my agent's last turn: outside
	remotes := b.gitRefs("", "refs/venom/remotes/")
	mine := b.gitRefs("", "refs/venom/checkpoints/")
	snap := b.Snapshot()

	// The refusals.
	b.Venom("rollback", "--agent="+cp, "k3", "--restore=all", "--dry-run", "--json").Fails(t, 2, "invalid_params.usage")
	b.Venom("rollback", "--agent="+cp, "k3", "--into=nobody", "--dry-run", "--json").Fails(t, 3, "not_found.agent")
	b.Venom("rollback", "--agent=me", "k1", "--into=me", "--dry-run", "--json").Fails(t, 2, "invalid_params.into")
	b.Venom("rollback", "--agent="+cp, "k3", "--into="+cp, "--dry-run", "--json").Fails(t, 2, "invalid_params.into")
	b.Venom("rollback", "--agent="+cp, "k9", "--dry-run", "--json").Fails(t, 3, "not_found.checkpoint")
	refused := b.Venom("rollback", "--agent="+cp, "k3", "--dry-run", "--json")
	refused.Fails(t, 5, "conflict.outside_edits")
	assert.Contains(t, refused.Stdout, "base.txt")

	// A path-scoped dry run covers its paths only. The copy's feature.txt
	// was never in this tree: what lay between the copy's k3 and the tree
	// my agent found is a gap, so it is outside, as base.txt is.
	some := p.rollback(t, "k3", "--outside=overwrite", "--dry-run", "--", "feature.txt")
	assert.Equal(t, map[string]string{"feature.txt": "outside"}, some.Classes())

	// The whole tree: the plan, then the real call quoting it.
	dry := p.rollback(t, "k3", "--outside=overwrite", "--dry-run")
	text := b.Venom("rollback", "--agent="+cp, "k3", "--outside=overwrite", "--dry-run").OK(t).Stdout
	assert.Contains(t, text, "Restore the files of k3 of the fetched copy "+cp+" here, recorded under me")
	assert.Contains(t, text, "HEAD, the branch, the index and the conversation stay as they are")
	assert.Contains(t, text, "To run it:\n  git venom-rollback --agent="+cp+" k3 --outside=overwrite --plan="+dry.Plan)
	assert.Equal(t, "me", dry.Agent)
	assert.Equal(t, cp, dry.Copy)
	assert.Equal(t, "k3", dry.Checkpoint)
	assert.Equal(t, "files", dry.Restore)
	assert.False(t, dry.Repos[0].Head.Moves)
	assert.Equal(t, map[string]string{"feature.txt": "outside", "base.txt": "outside", "mine.txt": "turn"}, dry.Classes())
	// Another copy's or checkpoint's plan is another plan.
	other := p.rollback(t, "k2", "--outside=overwrite", "--dry-run")
	assert.NotEqual(t, dry.Plan, other.Plan)
	b.Venom("rollback", "--agent="+cp, "k2", "--outside=overwrite", "--plan="+dry.Plan, "--json").Fails(t, 5, "conflict.rollback_stale")
	// Quoting it without the copy is the local agent's plan, not this one.
	b.Venom("rollback", "--agent=me", "k1", "--restore=files", "--outside=overwrite", "--plan="+dry.Plan, "--json").
		Fails(t, 5, "conflict.rollback_stale")

	res := p.rollback(t, "k3", "--outside=overwrite", "--plan="+dry.Plan)
	assert.Equal(t, "me", res.Agent)
	assert.Equal(t, cp, res.Copy)
	require.NotNil(t, res.Exact)
	assert.True(t, *res.Exact)
	assert.False(t, res.Conversation.Rewinds)
	// The files are the copy's k3, as plain git shows it.
	for _, f := range []string{"feature.txt", "base.txt"} {
		assert.Equal(t, b.Git("show", p.copyRef("3")+":"+f), strings.TrimRight(b.Read(f), "\n"), f)
	}
	assert.NoFileExists(t, b.Path("mine.txt"))
	assert.Equal(t, "README.md\nbase.txt\nfeature.txt", b.Git("ls-tree", "-r", "--name-only", p.copyRef("3")))
	// HEAD, the branch, the index: untouched (the files are the rollback's).
	now := b.Snapshot()
	now.Files = snap.Files
	assert.Equal(t, snap, now)
	// Nothing fetched changed; the safety checkpoint and the rollback's
	// are the local agent's, with my edit in the safety one.
	assert.Equal(t, remotes, b.gitRefs("", "refs/venom/remotes/"))
	after := b.gitRefs("", "refs/venom/checkpoints/")
	assert.Len(t, after, len(mine)+2)
	safety := "refs/venom/checkpoints/me/" + strings.TrimPrefix(res.Safety, "k")
	assert.Equal(t, "my own edit", b.Git("show", safety+":base.txt"))
	assert.Equal(t, "mine", b.Git("show", safety+":mine.txt"))
	var started map[string]any
	for _, rec := range b.LogRecords() {
		assert.NotEqual(t, cp, rec["agent"], "nothing is logged under the copy")
		if rec["type"] == "rollback.started" {
			started = rec
		}
	}
	require.NotNil(t, started)
	assert.Equal(t, "me", started["agent"])
	assert.Equal(t, cp, started["copy"])
	assert.Equal(t, "k3", started["checkpoint"])

	// --undo is the local agent's: back to the safety checkpoint.
	var undo RollbackResult
	b.Venom("rollback", "--undo", "--agent=me", "--dry-run", "--json").OK(t).JSON(t, &undo)
	b.Venom("rollback", "--undo", "--agent=me", "--plan="+undo.Plan, "--json").OK(t)
	assert.Equal(t, "my own edit\n", b.Read("base.txt"))
	assert.Equal(t, "mine\n", b.Read("mine.txt"))
	assert.NoFileExists(t, b.Path("feature.txt"))
	assert.Equal(t, "M base.txt\n?? mine.txt", b.Git("status", "--porcelain"), "trimmed: \" M base.txt\"")
	now = b.Snapshot()
	now.Files = snap.Files // written twice: same contents, new mtimes
	assert.Equal(t, snap, now)
	assert.Equal(t, remotes, b.gitRefs("", "refs/venom/remotes/"))
}

// TestShareCopy_RollbackPlanStaleAfterAFetchReplacesTheCopy: a plan of a
// copy's checkpoint binds its commit: after a fetch brings another commit
// for the same checkpoint (another history pushed under the same names),
// quoting the old plan is refused, and nothing is written.
func TestShareCopy_RollbackPlanStaleAfterAFetchReplacesTheCopy(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	a, b := p.a, p.b
	b.Turn("me", func() { b.Write("mine.txt", "mine\n") })
	dry := p.rollback(t, "k3", "--outside=overwrite", "--dry-run")

	// On the remote, k3 becomes a commit with k3's trailers and k2's tree,
	// its log record following it: it passes fetch's checks.
	m := strings.Split(p.copyID, "/")[1]
	prefix := "refs/venom/shared/" + m + "/a1/"
	gd := "--git-dir=" + p.remote
	msg := a.Git(gd, "log", "-1", "--format=%B", prefix+"3")
	replaced := a.Git(gd, "commit-tree", a.Git(gd, "rev-parse", prefix+"2^{tree}"), "-m", msg)
	forge(a, p.remote, prefix, "3", replaced)
	var got fetchResult
	b.Venom("checkpoint", "fetch", "--json").OK(t).JSON(t, &got)
	require.Empty(t, got.Refused)
	require.Equal(t, replaced, b.Git("rev-parse", p.copyRef("3")))

	before := b.gitRefs("", "refs/venom/")
	b.Venom("rollback", "--agent="+p.copyID, "k3", "--outside=overwrite", "--plan="+dry.Plan, "--json").Fails(t, 5, "conflict.rollback_stale")
	assert.Equal(t, before, b.gitRefs("", "refs/venom/"), "nothing written, no safety checkpoint")
	assert.Equal(t, "mine\n", b.Read("mine.txt"))
}

// TestShareCopy_RollbackRechecksTheCopyRef: a copy ref and its log changed
// here since the fetch (update-ref, log made to agree) are checked again
// at rollback time, as fetch checks them: a commit whose trailers do not
// name the copy's agent and checkpoint, or whose tree holds a path git
// would refuse, is failed.copy_checks, before anything is written.
func TestShareCopy_RollbackRechecksTheCopyRef(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	b := p.b
	b.Turn("me", func() { b.Write("mine.txt", "mine\n") })
	prefix := "refs/venom/remotes/" + p.copyID + "/"
	gd := "--git-dir=" + b.CommonDir()
	k3tree := b.Git("rev-parse", p.copyRef("3")+"^{tree}")
	msg := b.Git("log", "-1", "--format=%B", p.copyRef("3"))

	// Trailers naming no checkpoint: an ordinary commit of k3's tree.
	plain := b.Git("commit-tree", k3tree, "-m", "not a checkpoint")
	forge(b, strings.TrimPrefix(gd, "--git-dir="), prefix, "3", plain)
	before := b.gitRefs("", "refs/venom/")
	r := b.Venom("rollback", "--agent="+p.copyID, "k3", "--dry-run", "--json")
	r.Fails(t, 1, "failed.copy_checks")
	assert.Contains(t, r.Stdout, `"reason":"trailers"`)

	// k3's trailers, and a tree with a .git folder beside k3's files.
	inner := b.GitInput("100644 blob "+b.Git("rev-parse", p.copyRef("3")+":feature.txt")+"\tconfig\n", "mktree")
	entries := b.Git("ls-tree", k3tree) + "\n040000 tree " + inner + "\t.git\n"
	bad := b.GitInput(entries, "mktree")
	hostile := b.Git("commit-tree", bad, "-m", msg)
	forge(b, strings.TrimPrefix(gd, "--git-dir="), prefix, "3", hostile)
	r = b.Venom("rollback", "--agent="+p.copyID, "k3", "--dry-run", "--json")
	r.Fails(t, 1, "failed.copy_checks")
	assert.Contains(t, r.Stdout, `"reason":"path"`)
	assert.Equal(t, len(before), len(b.gitRefs("", "refs/venom/")))
	assert.NoDirExists(t, b.Path(".git/config"))
	assert.Equal(t, "mine\n", b.Read("mine.txt"))
}

// TestShareCopy_DoctorSeesShortNamesAndRemotesFiles: refspecs a user
// might configure that send or write checkpoints by a short name
// (venom/checkpoints/..., which git completes with refs/), or in a
// remote kept the old way, in $GIT_DIR/remotes/<name> (Push: and Pull:
// lines), warn as the config's refspecs do.
func TestShareCopy_DoctorSeesShortNamesAndRemotesFiles(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.TurnN("a1", 1)
	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	require.Equal(t, "ok", rep.status()["checkpoints.mirror"])

	env.Git("remote", "add", "origin", env.bareRemote("origin"))
	env.Git("config", "--add", "remote.origin.push", "venom/checkpoints/a1/1:refs/venom/checkpoints/a1/1")
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "warn", rep.status()["checkpoints.mirror"])
	msg, _ := rep.check(t, "checkpoints.mirror")
	assert.Contains(t, msg, "remote origin pushes refs/venom/checkpoints/")
	// git itself does send them by that name: the warning is not idle.
	env.Git("push", "-q", "origin")
	assert.NotEmpty(t, env.gitRefs(filepath.Join(env.Root, "origin.git"), "refs/venom/checkpoints/"))
	env.Git("config", "--unset-all", "remote.origin.push")

	common := env.CommonDir()
	require.NoError(t, os.MkdirAll(filepath.Join(common, "remotes"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(common, "remotes", "old"),
		[]byte("URL: "+env.bareRemote("old")+"\nPush: refs/heads/main:refs/heads/main\nPull: +refs/*:refs/*\n"), 0o644))
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "warn", rep.status()["checkpoints.mirror"])
	msg, fix := rep.check(t, "checkpoints.mirror")
	assert.Contains(t, msg, "remote old fetches into refs/venom/checkpoints/ (so the remote can place checkpoint refs here) with +refs/*:refs/*")
	assert.NotContains(t, msg, "refs/heads/main")
	assert.Contains(t, fix, filepath.Join(common, "remotes", "old"))
}

// TestShareCopy_NamedWithoutTheMachine: a fetched copy's checkpoint is
// named <remote>/<agent>/k<n> wherever a checkpoint is named
// (docs/checkpoints.md#names): rollback, diff, list and explain read it as the copy's full id,
// <remote>/<machine>/<agent>, and give the same plan. Two machines'
// agents of one name make the short form ambiguous: refused, with each
// full form as a hint.
func TestShareCopy_NamedWithoutTheMachine(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	b, cp := p.b, p.copyID
	b.Turn("me", func() { b.Write("mine.txt", "mine\n") })

	var full, short copyRollback
	b.Venom("rollback", "--agent="+cp, "k3", "--outside=overwrite", "--dry-run", "--json").OK(t).JSON(t, &full)
	b.Venom("rollback", "origin/a1/k3", "--outside=overwrite", "--dry-run", "--json").OK(t).JSON(t, &short)
	assert.Equal(t, full.Plan, short.Plan)
	assert.Equal(t, cp, short.Copy)
	assert.Equal(t, "me", short.Agent)
	b.Venom("rollback", "--agent=origin/a1", "last", "--outside=overwrite", "--dry-run", "--json").OK(t).JSON(t, &short)
	assert.Equal(t, full.Plan, short.Plan, "last of the copy is its k3")
	// VENOM_AGENT filling --agent names the local agent that records it.
	var env copyRollback
	b.VenomIn(b.Dir, []string{"VENOM_AGENT=me"}, "rollback", "origin/a1/k3", "--outside=overwrite", "--dry-run", "--json").
		OK(t).JSON(t, &env)
	assert.Equal(t, full.Plan, env.Plan)

	// The diff and the list of the copy, short or full, agree.
	assert.Equal(t, b.Venom("diff", "--agent="+cp, "k1", "k3", "--name-only").OK(t).Stdout,
		b.Venom("diff", "origin/a1/k1", "origin/a1/k3", "--name-only").OK(t).Stdout)
	assert.Equal(t, b.Venom("diff", "--agent="+cp, "k1", "k3", "--name-only").OK(t).Stdout,
		b.Venom("diff", "origin/a1/k1", "k3", "--name-only").OK(t).Stdout)
	assert.Equal(t, "base.txt\nfeature.txt", strings.TrimSpace(b.Venom("diff", "origin/a1/k1", "origin/a1/k3", "--name-only").OK(t).Stdout))
	assert.Equal(t, b.Venom("checkpoint", "list", "--agent="+cp, "--json").OK(t).Stdout,
		b.Venom("checkpoint", "list", "--agent=origin/a1", "--json").OK(t).Stdout)

	// The real call quotes the plan with the short name.
	res := p.b.Venom("rollback", "origin/a1/k3", "--outside=overwrite", "--plan="+full.Plan, "--json").OK(t)
	var done copyRollback
	res.JSON(t, &done)
	assert.Equal(t, cp, done.Copy)
	assert.Equal(t, b.Git("show", p.copyRef("3")+":feature.txt"), strings.TrimRight(b.Read("feature.txt"), "\n"))

	// Refusals.
	b.Venom("rollback", "origin/nobody/k1", "--dry-run", "--json").Fails(t, 3, "not_found.agent")
	b.Venom("rollback", "origin/a1/zz", "--dry-run", "--json").Fails(t, 2, "invalid_params.checkpoint")
	b.Venom("rollback", "a1/k1", "--dry-run", "--json").Fails(t, 2, "invalid_params.checkpoint")
	b.Venom("rollback", "--agent=me", "origin/a1/k3", "--dry-run", "--json").Fails(t, 2, "invalid_params.usage")
	b.Venom("diff", "origin/a1/k1", "other/a1/k3", "--json").Fails(t, 3, "not_found.agent")

	// A second machine's a1 on the same remote: the short form is
	// ambiguous, and each hint works as printed.
	other := "refs/venom/remotes/origin/00000000-0000-4000-8000-000000000000/a1/"
	for _, leaf := range []string{"log", "1", "2", "3"} {
		b.Git("update-ref", other+leaf, b.Git("rev-parse", p.copyRef(leaf)))
	}
	amb := b.Venom("rollback", "origin/a1/k3", "--dry-run")
	amb.Fails(t, 2, "invalid_params.agent")
	assert.Contains(t, amb.Stderr, "--agent="+cp)
	assert.Contains(t, amb.Stderr, "--agent=origin/00000000-0000-4000-8000-000000000000/a1")
	b.Venom("checkpoint", "list", "--agent="+cp, "--json").OK(t)
}

// TestShareCopy_CopysOwnWorkIsNotAnOutsideEdit: my colleague commits what
// their agent's two turns made and pushes it; I pull it, so my tree holds
// the copy's own work. Rolling back to the copy's k1 takes back those
// turns: what they made is theirs, not an outside edit, so a guarded
// tree needs no --outside. A person's edit made here since is still one.
func TestShareCopy_CopysOwnWorkIsNotAnOutsideEdit(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	a, b := p.a, p.b
	a.Commit("feature from a1")
	a.Git("push", "-q", "origin", "main")
	b.Git("pull", "-q", "--ff-only", "origin", "main")
	b.Turn("me", func() { b.Write("mine.txt", "mine\n") })

	var dry copyRollback
	b.Venom("rollback", "origin/a1/k1", "--dry-run", "--json").OK(t).JSON(t, &dry)
	assert.Equal(t, "me", dry.Agent)
	classes := dry.Classes()
	assert.Equal(t, "turn", classes["mine.txt"])
	for _, f := range []string{"feature.txt", "base.txt"} {
		assert.NotEqual(t, "outside", classes[f], "%s was made by the copy's turns: %v", f, classes)
	}
	b.Venom("rollback", "origin/a1/k1", "--plan="+dry.Plan, "--json").OK(t)
	assert.NoFileExists(t, b.Path("feature.txt"))
	assert.Equal(t, "base\n", b.Read("base.txt"))
	var undo RollbackResult
	b.Venom("rollback", "--undo", "--agent=me", "--dry-run", "--json").OK(t).JSON(t, &undo)
	b.Venom("rollback", "--undo", "--agent=me", "--plan="+undo.Plan, "--json").OK(t)
	assert.Equal(t, "feature one\nfeature two\n", b.Read("feature.txt"))

	// A person's edit of base.txt since is outside, and refused.
	b.Write("base.txt", "my own edit\n")
	refused := b.Venom("rollback", "origin/a1/k1", "--dry-run", "--json")
	refused.Fails(t, 5, "conflict.outside_edits")
	assert.Contains(t, refused.Stdout, "base.txt")
	assert.NotContains(t, refused.Stdout, "feature.txt")

	// A copy ref moved since the fetch no longer vouches for the copy's
	// history: the stretch is a gap again, and the copy's work outside.
	b.Git("checkout", "-q", "--", "base.txt")
	b.Git("update-ref", p.copyRef("2"), b.Git("rev-parse", p.copyRef("1")))
	moved := b.Venom("rollback", "origin/a1/k1", "--dry-run", "--json")
	moved.Fails(t, 5, "conflict.outside_edits")
}
