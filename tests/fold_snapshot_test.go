package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fold snapshot (lib/state/snapshot.go): fold.json beside
// log.jsonl holds the fold up to a mark, and commands fold only the records
// after it. Whatever happens to it, every command answers as a fold of the
// whole log does.

// foldHistory plays turns of agent a1 with venom.keep=2, so that most of
// its checkpoints are pruned, on env (whose commands may write snapshots).
func foldHistory(t *testing.T, env *Env, turns int, from int) {
	t.Helper()
	for i := from; i < from+turns; i++ {
		env.Turn("a1", func() { env.Write(fmt.Sprintf("f%d.txt", i%3), fmt.Sprintf("turn %d\n", i)) })
		env.Tick()
	}
}

// foldViews are commands whose output is the fold: listings, the agents,
// dry runs to the oldest and the newest live checkpoints, to a long-pruned
// one, to a long-ended turn and to one that never existed.
func foldViews(t *testing.T, env *Env) []string {
	t.Helper()
	l := env.List(t, "--agent=a1")
	require.NotEmpty(t, l.Checkpoints)
	oldest := l.Checkpoints[len(l.Checkpoints)-1].Checkpoint
	newest := l.Checkpoints[0].Checkpoint
	var out []string
	for _, args := range [][]string{
		{"checkpoint", "list", "--agent=a1", "--json"},
		{"checkpoint", "list", "--agent=a1", "--before=k2", "--json"},
		{"checkpoint", "agents", "--json"},
		{"rollback", "--agent=a1", "--checkpoint=" + oldest, "--restore=files", "--dry-run", "--json"},
		{"rollback", "--agent=a1", "--checkpoint=" + newest, "--restore=files", "--dry-run", "--json"},
		{"rollback", "--agent=a1", "--checkpoint=k2", "--restore=files", "--dry-run", "--json"},
		{"rollback", "--agent=a1", "--checkpoint=t1", "--restore=files", "--dry-run", "--json"},
		{"rollback", "--agent=a1", "--checkpoint=k999", "--restore=files", "--dry-run", "--json"},
	} {
		r := env.Venom(args[0], args[1:]...)
		out = append(out, fmt.Sprintf("%v -> exit %d\n%s", args, r.Code, r.Stdout))
	}
	return out
}

// assertAsWholeFold checks that the commands answer the same with the
// snapshot there and with it moved away (so the whole log is folded).
func assertAsWholeFold(t *testing.T, env *Env) {
	t.Helper()
	snap := filepath.Join(env.StateDir(), "fold.json")
	with := foldViews(t, env)
	aside := snap + ".aside"
	if _, err := os.Lstat(snap); err == nil {
		require.NoError(t, os.Rename(snap, aside))
		defer func() { require.NoError(t, os.Rename(aside, snap)) }()
	}
	whole := foldViews(t, env)
	for i := range with {
		assert.Equal(t, whole[i], with[i])
	}
}

func TestFoldSnapshot_CommandsAnswerAsTheWholeLog(t *testing.T) {
	t.Parallel()
	// Snapshots keep only the newest three captures' history whole: a
	// dry run to k1, a manual checkpoint older than that (and kept:
	// venom.keep does not count manual ones), folds the whole log.
	env := NewEnv(t).With("VENOM_TEST_FOLD_EVERY=1", "VENOM_TEST_FOLD_RECENT=3")
	env.SetGlobal("venom.keep", "2")
	env.Write("f1.txt", "before\n")
	env.Take(t, "--agent=a1")
	foldHistory(t, env, 6, 0)
	fi, err := os.Lstat(filepath.Join(env.StateDir(), "fold.json"))
	require.NoError(t, err, "a writer made a snapshot")
	require.True(t, fi.Mode().IsRegular())
	assertAsWholeFold(t, env)
	// k2 is long pruned: the snapshot left it out, and it is still
	// "pruned or removed", not "never existed".
	r := env.Venom("rollback", "--agent=a1", "--checkpoint=k2", "--restore=files", "--dry-run")
	r.Fails(t, 3, "not_found.checkpoint")
	assert.Contains(t, r.Stderr, "was pruned or removed")
	env.AssertSeqGapless(t)
}

// TestFoldSnapshot_CrashWhileWriting kills a capture while it writes the
// snapshot: before its new snapshot is renamed into place (the old one
// stands) and just after (the new one stands). Either is true of the log.
func TestFoldSnapshot_CrashWhileWriting(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"fold-snapshot-written", "fold-snapshot-installed"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.SetGlobal("venom.keep", "2")
			foldHistory(t, env.With("VENOM_TEST_FOLD_EVERY=1"), 3, 0)
			snap := filepath.Join(env.StateDir(), "fold.json")
			old, err := os.ReadFile(snap)
			require.NoError(t, err)
			foldHistory(t, env, 3, 3) // the snapshot now lags the log
			env.Write("f0.txt", "crash\n")

			cmd := env.StartPaused(point, []string{"VENOM_TEST_FOLD_EVERY=1"}, "checkpoint", "--agent=a1", "--json")
			Kill9(t, cmd)
			require.True(t, lockFree(env))
			now, err := os.ReadFile(snap)
			require.NoError(t, err)
			if point == "fold-snapshot-written" {
				assert.Equal(t, string(old), string(now), "the old snapshot stands until the new one is whole")
			} else {
				assert.NotEqual(t, string(old), string(now), "the new snapshot stands")
			}
			assertAsWholeFold(t, env)

			// The next writer goes on, leaving no temporary file.
			res := env.Take(t, "--agent=a1")
			require.False(t, res.Reused)
			require.Empty(t, env.TmpFiles())
			env.AssertSeqGapless(t)
			assertAsWholeFold(t, env)
		})
	}
}

// TestFoldSnapshot_NotTrusted: a snapshot planted as a link, one of another
// format, and one whose log was rewritten beneath it are passed over; the
// next writer replaces them (a link itself, never what it points at).
func TestFoldSnapshot_NotTrusted(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, env *Env, snap string){
		"a planted link": func(t *testing.T, env *Env, snap string) {
			data, err := os.ReadFile(snap)
			require.NoError(t, err)
			target := filepath.Join(env.Root, "elsewhere.json")
			// A snapshot that says the agent is archived: followed, it
			// would change every answer.
			lie := bytes.ReplaceAll(data, []byte(`"state":"settled"`), []byte(`"state":"archived"`))
			lie = bytes.ReplaceAll(lie, []byte(`"state":"running"`), []byte(`"state":"archived"`))
			require.NotEqual(t, string(data), string(lie))
			data = lie
			require.NoError(t, os.WriteFile(target, data, 0o644))
			require.NoError(t, os.Remove(snap))
			require.NoError(t, os.Symlink(target, snap))
			t.Cleanup(func() {
				after, err := os.ReadFile(target)
				require.NoError(t, err)
				assert.Equal(t, string(data), string(after), "nothing is written through the link")
			})
		},
		"another format": func(t *testing.T, env *Env, snap string) {
			require.NoError(t, os.WriteFile(snap, []byte(`{"format":"git-venom fold 99","log":{},"state":{}}`), 0o644))
		},
		"damaged": func(t *testing.T, env *Env, snap string) {
			require.NoError(t, os.WriteFile(snap, []byte(`{"format":"git-venom fold 2","log":{"offs`), 0o644))
		},
		"log cut beneath it": func(t *testing.T, env *Env, snap string) {
			log := filepath.Join(env.StateDir(), "log.jsonl")
			data, err := os.ReadFile(log)
			require.NoError(t, err)
			// Back to the log as it stood before the last turn.
			for i := 0; i < 4; i++ {
				data = data[:len(data)-1]
				data = data[:len(data)-len(data[lastLine(data):])]
			}
			require.NoError(t, os.WriteFile(log, data, 0o644))
		},
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.SetGlobal("venom.keep", "2")
			foldHistory(t, env.With("VENOM_TEST_FOLD_EVERY=1"), 4, 0)
			snap := filepath.Join(env.StateDir(), "fold.json")
			spoil(t, env, snap)
			assertAsWholeFold(t, env)
			env.Write("f1.txt", "next\n")
			env.With("VENOM_TEST_FOLD_EVERY=1").Take(t, "--agent=a1")
			fi, err := os.Lstat(snap)
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular(), "the next writer replaced it")
			assertAsWholeFold(t, env)
		})
	}
}

// lastLine is where data's last line starts (data without its final newline).
func lastLine(data []byte) int {
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' {
			return i + 1
		}
	}
	return 0
}

// TestFoldSnapshot_ForgottenLabelStillSaysPruned: a label whose only
// checkpoint was pruned long ago, so that a fold snapshot left the
// checkpoint out, still says where it was (not_found, exit 3), as a fold
// of the whole log says, not that nothing was ever given it
// (invalid_params, exit 2).
func TestFoldSnapshot_ForgottenLabelStillSaysPruned(t *testing.T) {
	t.Parallel()
	env := NewEnv(t).With("VENOM_TEST_FOLD_EVERY=1", "VENOM_TEST_FOLD_RECENT=3")
	env.SetGlobal("venom.keep", "1")
	env.Write("f1.txt", "before\n")
	env.Checkpoint("--agent=a1", "--reason=turn_start")
	env.Write("f1.txt", "labelled\n")
	green := env.Checkpoint("--agent=a1", "--reason=turn_end", "--label=green")
	foldHistory(t, env, 6, 0)
	env.Venom("checkpoint", "prune", "--agent=a1").OK(t)
	foldHistory(t, env, 3, 6)
	require.Empty(t, env.Git("for-each-ref", "refs/venom/checkpoints/a1/"+strings.TrimPrefix(green, "k")))

	want := `label "green" was on a1/` + green + `, which was pruned or removed`
	r := env.Venom("diff", "--agent=a1", "green").Fails(t, 3, "not_found.checkpoint")
	assert.Contains(t, r.Stderr, want)
	// The whole log, without the snapshot, says the same.
	require.NoError(t, os.RemoveAll(filepath.Join(env.StateDir(), "fold.d")))
	require.NoError(t, os.Remove(filepath.Join(env.StateDir(), "fold.json")))
	r = env.Venom("diff", "--agent=a1", "green").Fails(t, 3, "not_found.checkpoint")
	assert.Contains(t, r.Stderr, want)
}
