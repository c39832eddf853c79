package tests

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A person labels a checkpoint; the next capture finds the tree unchanged
// and reuses it with another label. Both labels stay: list shows them,
// --json has labels (label is the newest), and the first still names the
// checkpoint for venom-diff, a rollback and a revert, whose results plain
// git confirms. The fold snapshot keeps them too.
func TestLabels_AReuseKeepsTheEarlierLabel(t *testing.T) {
	t.Parallel()
	env := NewEnv(t).With("VENOM_TEST_FOLD_EVERY=1")
	env.Write("a.txt", "before\n")
	env.Checkpoint("--agent=a1", "--label=before-refactor")                   // k1
	env.Checkpoint("--agent=a1", "--reason=turn_start", "--label=turn_start") // t1 reuses k1
	env.Write("a.txt", "refactored\n")
	env.Checkpoint("--agent=a1", "--reason=turn_end") // k2

	k1 := env.Item(t, "a1", "k1")
	require.NotNil(t, k1.Label)
	assert.Equal(t, "turn_start", *k1.Label, "label is the newest")
	assert.Equal(t, []string{"before-refactor", "turn_start"}, k1.Labels)
	assert.Equal(t, []string{}, env.Item(t, "a1", "k2").Labels)
	table := env.Venom("checkpoint", "list").OK(t).Stdout
	assert.Regexp(t, `(?m)^k1 +manual .* before-refactor, turn_start$`, table)

	// venom-diff by the first label: k1 against the files, as git sees it.
	var d struct {
		Files []struct {
			Path   string `json:"path"`
			Change string `json:"change"`
		} `json:"files"`
	}
	env.Venom("diff", "before-refactor", "--json").OK(t).JSON(t, &d)
	require.Len(t, d.Files, 1)
	assert.Equal(t, "a.txt", d.Files[0].Path)
	assert.Equal(t, "modify", d.Files[0].Change)
	assert.Equal(t, env.Venom("diff", "k1", "k2").OK(t).Stdout,
		env.Venom("diff", "--from=before-refactor", "--to=last").OK(t).Stdout)

	// A revert between two labels' checkpoints names them by id.
	var rv struct {
		Checkpoint string `json:"checkpoint"`
		Revert     struct {
			From string `json:"from"`
			To   string `json:"to"`
		} `json:"revert"`
	}
	env.Venom("rollback", "--revert=before-refactor..k2", "--dry-run", "--json").OK(t).JSON(t, &rv)
	assert.Equal(t, "k2", rv.Checkpoint)
	assert.Equal(t, "k1", rv.Revert.From)

	// The rollback goes to k1, and the file is what k1's ref holds.
	var p struct {
		Checkpoint string `json:"checkpoint"`
		Plan       string `json:"plan"`
	}
	env.Venom("rollback", "before-refactor", "--dry-run", "--json").OK(t).JSON(t, &p)
	assert.Equal(t, "k1", p.Checkpoint)
	env.Venom("rollback", "before-refactor", "--plan="+p.Plan, "--json").OK(t)
	assert.Equal(t, "before\n", env.Read("a.txt"))
	assert.Equal(t, "before\n", env.Git("cat-file", "-p", "refs/venom/checkpoints/a1/1:a.txt")+"\n")
}

// A label given to two checkpoints names the newer, and the commands say
// so on stderr, naming both; --json says which in its checkpoint.
func TestLabels_OnTwoCheckpointsTheNewestAndSaysWhich(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "one\n")
	env.Checkpoint("--agent=a1", "--label=green") // k1
	env.Write("a.txt", "two\n")
	env.Checkpoint("--agent=a1", "--label=green") // k2
	env.Write("a.txt", "three\n")

	r := env.Venom("diff", "green", "--stat").OK(t)
	assert.Contains(t, r.Stderr, `note: label "green" is on k2, k1 of a1: k2 is the newest`)
	r = env.Venom("rollback", "green", "--dry-run").OK(t)
	assert.Contains(t, r.Stderr, `note: label "green" is on k2, k1 of a1: k2 is the newest`)
	r = env.Venom("rollback", "green", "--dry-run", "--json").OK(t)
	assert.Equal(t, "k2", r.Map(t)["checkpoint"])
	assert.Empty(t, r.Stderr)
	// A label on one checkpoint needs no note.
	env.Checkpoint("--agent=a1", "--label=blue") // k3
	assert.Empty(t, env.Venom("diff", "blue").OK(t).Stderr)
}

// A name that is no checkpoint but is close to a label, or a label with
// a checkpoint's shape, gets a hint naming the checkpoint; a label only
// a pruned checkpoint had says so; and with no such agent a malformed
// name is still invalid_params before not_found.agent.
func TestLabels_HintsNameTheCheckpoint(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Checkpoint("--agent=a1", "--reason=turn_start", "--label=old") // k1, t1
	env.Write("a.txt", "1\n")
	env.Checkpoint("--agent=a1", "--reason=turn_end", "--label=before-refactor") // k2
	env.Write("a.txt", "2\n")
	env.Checkpoint("--agent=a1", "--label=k9") // k3

	r := env.Venom("diff", "befor-refactor").Fails(t, 2, "invalid_params.checkpoint")
	assert.Contains(t, r.Stderr, "\nhint: did you mean \"before-refactor\", the label of a1/k2?\n")
	r = env.Venom("rollback", "Before-Refactor", "--dry-run").Fails(t, 2, "invalid_params.checkpoint")
	assert.Contains(t, r.Stderr, "\nhint: did you mean \"before-refactor\", the label of a1/k2?\n")
	env.Venom("rollback", "Before-Refactor", "--dry-run", "--json").Fails(t, 2, "invalid_params.checkpoint")
	r = env.Venom("rollback", "k9", "--dry-run").Fails(t, 3, "not_found.checkpoint")
	assert.Contains(t, r.Stderr, "\nhint: \"k9\" is also a label, of a1/k3: name it k3\n")
	r = env.Venom("rollback", "--revert=before-refactor", "--dry-run").Fails(t, 2, "invalid_params.usage")
	assert.Contains(t, r.Stderr, "names one checkpoint, a1/k2")
	// The hint is a whole command that runs as printed.
	var hinted string
	for _, l := range strings.Split(r.Stderr, "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(l, "hint:")), "git venom-rollback "); ok {
			hinted = "git venom-rollback " + c
		}
	}
	require.Equal(t, "git venom-rollback --revert=k2..last --dry-run", hinted, r.Stderr)
	sh := exec.Command("sh", "-c", hinted)
	sh.Dir, sh.Env = env.Dir, env.Environ()
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "a.txt")
	for _, out := range []string{r.Stderr} {
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			assert.LessOrEqual(t, len([]rune(l)), 80, l)
		}
	}

	before := env.List(t, "--agent=a1", "--before=before-refactor")
	require.Len(t, before.Checkpoints, 1)
	assert.Equal(t, "k1", before.Checkpoints[0].Checkpoint)

	env.Venom("checkpoint", "prune", "--agent=a1", "--keep=1").OK(t) // k1 goes
	require.Empty(t, env.Git("for-each-ref", "refs/venom/checkpoints/a1/1"))
	r = env.Venom("diff", "old").Fails(t, 3, "not_found.checkpoint")
	assert.Contains(t, r.Stderr, `label "old" was on a1/k1, which was pruned or removed`)

	env.Venom("rollback", "--agent=zz", "before-refactor", "--dry-run").Fails(t, 2, "invalid_params.checkpoint")
	env.Venom("rollback", "--agent=zz", "k2", "--dry-run").Fails(t, 3, "not_found.agent")
}

// A relabel's event line says relabeled and shows the label it replaced
// and the new one, both cut to fit 80 columns rather than the old one
// left out; --json has both whole.
func TestLabels_RelabelEventShowsBothLabels(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "1\n")
	env.Checkpoint("--agent=a1", "--label=before-refactor")
	env.Checkpoint("--agent=a1", "--reason=turn_start", "--label=turn_start")
	long := "Refactor the reconciliation adapters to use the new ledger snapshot API"
	env.Checkpoint("--agent=a1", "--reason=turn_end", "--label="+long)

	out := env.Venom("checkpoint", "events", "--types=agent.checkpoint_reused").OK(t).Stdout
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, out)
	for _, l := range lines {
		assert.LessOrEqual(t, len([]rune(l)), 80, l)
	}
	assert.Regexp(t, `^\d+ \S+ agent\.checkpoint_reused a1/k1 relabeled "be[^"]*" → "tu[^"]*"$`, lines[0])
	assert.Regexp(t, `^\d+ \S+ agent\.checkpoint_reused a1/k1 relabeled "tu[^"]*" → "Re[^"]*…"$`, lines[1])

	// The label it has as its newest again: a plain reuse, said so.
	assert.Equal(t, "Nothing changed since a1/k1: it is labeled \""+long+"\" already\n",
		env.Venom("checkpoint", "--agent=a1", "--label="+long).OK(t).Stdout)
	reused := env.Records("checkpoint.reused")
	require.Len(t, reused, 3)
	assert.NotContains(t, reused[2], "label")
	assert.Len(t, strings.Split(strings.TrimSuffix(env.Venom("checkpoint", "events").OK(t).Stdout, "\n"), "relabeled"), 3)

	evs := eventLines(t, env.Venom("checkpoint", "events", "--json", "--types=agent.checkpoint_reused").OK(t).Stdout)
	require.Len(t, evs, 3)
	assert.Equal(t, false, evs[2].Data["relabeled"])
	assert.Equal(t, long, evs[1].Data["label"])
	assert.Equal(t, "turn_start", evs[1].Data["previous_label"])
	assert.Equal(t, []string{"before-refactor", "turn_start", long}, env.Item(t, "a1", "k1").Labels)
}

// Completion offers a checkpoint's labels after its other names, each
// once, where a shell takes them as one word: not one with a space, nor
// one spelled as another name (k9), which would not name it.
func TestLabels_CompletionOffersThem(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("a.txt", "1\n")
	env.Checkpoint("--agent=a1", "--label=before-refactor")                   // k1
	env.Checkpoint("--agent=a1", "--reason=turn_start", "--label=turn_start") // reuses k1
	env.Write("a.txt", "2\n")
	env.Checkpoint("--agent=a1", "--label=two words") // k2
	env.Checkpoint("--agent=a1", "--label=k9")
	env.Checkpoint("--agent=a1", "--label=before-refactor")

	out := env.Venom("rollback", "__complete", "").OK(t).Stdout
	assert.Equal(t, "k1\nk2\nlast\nbefore-refactor\nturn_start\n", out)
	assert.Equal(t, "before-refactor\n", env.Venom("diff", "__complete", "k1", "be").OK(t).Stdout)
}

// A fetched copy's checkpoints are named by their labels too, with the
// copy in front (origin/a1/ship-it) or with --agent=<copy>; a local
// label with slashes stays a local label.
func TestLabels_OfAFetchedCopy(t *testing.T) {
	t.Parallel()
	p := newSharedPair(t)
	a, b := p.a, p.b
	a.Venom("checkpoint", "--agent=a1", "--label=ship-it").OK(t) // reuses k3
	a.Venom("checkpoint", "push", "--agent=a1", "--json").OK(t)
	b.Venom("checkpoint", "fetch", "--json").OK(t)
	b.Turn("me", func() { b.Write("mine.txt", "mine\n") })
	b.Venom("checkpoint", "--agent=me", "--label=feature/x/wip").OK(t)

	want := b.Venom("diff", "origin/a1/k1", "origin/a1/k3", "--name-only").OK(t).Stdout
	assert.Equal(t, want, b.Venom("diff", "origin/a1/k1", "origin/a1/ship-it", "--name-only").OK(t).Stdout)
	assert.Equal(t, want, b.Venom("diff", "--agent="+p.copyID, "k1", "ship-it", "--name-only").OK(t).Stdout)
	var dry copyRollback
	b.Venom("rollback", "origin/a1/ship-it", "--outside=overwrite", "--dry-run", "--json").OK(t).JSON(t, &dry)
	assert.Equal(t, p.copyID, dry.Copy)
	assert.Equal(t, "k3", dry.Checkpoint)

	var own struct {
		Checkpoint string `json:"checkpoint"`
	}
	b.Venom("rollback", "--agent=me", "feature/x/wip", "--dry-run", "--json").OK(t).JSON(t, &own)
	assert.Equal(t, "k2", own.Checkpoint) // the turn's end, reused
	b.Venom("rollback", "origin/a1/ship-itt", "--dry-run").Fails(t, 2, "invalid_params.checkpoint")
}

// Completion offers a turn only while its checkpoint is there: after a
// prune the pruned turns go, and after clean none is offered.
func TestCompletion_TurnsThatResolve(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for i, f := range []string{"a.txt", "b.txt", "c.txt"} {
		env.Turn("a1", func() { env.Write(f, strconv.Itoa(i)) })
	}
	turns := func() string { return env.Venom("rollback", "__complete", "--agent=a1", "--revert=").OK(t).Stdout }
	assert.Equal(t, "--revert=t1\n--revert=t2\n--revert=t3\n", turns())
	env.Venom("checkpoint", "prune", "--agent=a1", "--keep=2").OK(t)
	offered := strings.Fields(turns())
	require.NotEmpty(t, offered)
	for _, o := range offered {
		env.Venom("rollback", "--agent=a1", o, "--dry-run").OK(t)
	}
	assert.NotContains(t, offered, "--revert=t1")
	env.Venom("checkpoint", "clean", "--agent=a1").OK(t)
	assert.Empty(t, turns())
}
