package tests

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Damage inside log.jsonl (not a torn tail) is found with
// its line number; reading commands go on with the whole records and warn;
// doctor fails and advises nothing that deletes a ref; prune and clean
// refuse; writers go on above every seq a line claims.

// logOfThreeCheckpoints takes k1, k2, k3 of a1 and returns the log's lines
// (without their newlines): agent.registered, then the three records.
func logOfThreeCheckpoints(t *testing.T) (*Env, []string) {
	env := NewEnv(t)
	for i := 1; i <= 3; i++ {
		env.Write("f.txt", fmt.Sprintf("version %d\n", i))
		require.Equal(t, fmt.Sprintf("k%d", i), *env.Take(t, "--agent=a1").Checkpoint)
	}
	lines := logLines(t, env)
	require.Len(t, lines, 4)
	require.Contains(t, lines[2], `"checkpoint":"k2"`)
	return env, lines
}

func logLines(t *testing.T, env *Env) []string {
	t.Helper()
	b, err := os.ReadFile(env.LogPath())
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// writeLog puts lines back as the log, each ending in a newline.
func writeLog(t *testing.T, env *Env, lines []string) {
	t.Helper()
	require.NoError(t, os.WriteFile(env.LogPath(), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// half is a record cut short inside: what a bad disk or a careless edit
// leaves, as opposed to a crash, which leaves no newline.
func half(line string) string { return line[:len(line)/2] }

func TestSecurity_LogRecordCutInTheMiddle(t *testing.T) {
	t.Parallel()
	env, _ := logOfThreeCheckpoints(t)
	// k1 old enough for retention to delete it (venom.keepFor is 14d).
	env.AgeCheckpoints("a1", 30*24*time.Hour, "k1")
	lines := logLines(t, env)
	k2 := env.Git("rev-parse", "refs/venom/checkpoints/a1/2")
	lines[2] = half(lines[2])
	writeLog(t, env, lines)
	refs := env.VenomRefs()

	// list goes on with the whole records, and says once, on stderr, that
	// the log is damaged and where to look.
	var ids []string
	for _, it := range env.List(t, "--agent=a1").Checkpoints {
		ids = append(ids, it.Checkpoint)
	}
	assert.Equal(t, []string{"k3", "k1"}, ids)
	for _, args := range [][]string{{"list", "--agent=a1"}, {"list"}} {
		r := env.Venom("checkpoint", args...).OK(t)
		assert.Contains(t, r.Stdout, "k3")
		assert.Contains(t, r.Stdout, "k1")
		assert.NotContains(t, r.Stdout, "k2")
		assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "one line: %q", r.Stderr)
		assert.Contains(t, r.Stderr, "warning:")
		assert.Contains(t, r.Stderr, "line 3")
		assert.Contains(t, r.Stderr, "git venom-checkpoint doctor")
	}
	// With --json, stdout is the answer and stderr stays quiet.
	r := env.Venom("checkpoint", "list", "--agent=a1", "--json").OK(t)
	assert.Empty(t, r.Stderr)

	// doctor fails, names the line, and advises no deletion of the ref of
	// the checkpoint whose record is damaged.
	var rep doctorReport
	r = env.Venom("checkpoint", "doctor", "--json")
	require.Equal(t, 1, r.Code, "%s %s", r.Stdout, r.Stderr)
	r.JSON(t, &rep)
	assert.False(t, rep.OK)
	assert.Equal(t, "fail", rep.status()["state.log"])
	msg, fix := rep.check(t, "state.log")
	assert.Contains(t, msg, "line 3 is not JSON")
	assert.Contains(t, fix, "by hand")
	msg, fix = rep.check(t, "checkpoints.refs")
	assert.Contains(t, msg, "refs/venom/checkpoints/a1/2")
	assert.Contains(t, msg, "damaged")
	assert.NotContains(t, fix, "update-ref")
	assert.Contains(t, fix, "keep every ref")
	h := env.Venom("checkpoint", "doctor")
	assert.Equal(t, 1, h.Code)
	assert.Contains(t, h.Stdout, "fail  state.log")
	assert.NotContains(t, h.Stdout, "update-ref -d")
	assert.Empty(t, h.Stderr, "doctor's report says it; no warning besides")

	// prune and clean refuse while the log is damaged, though retention
	// would delete k1 (old) and clean every ref of a1: no ref goes.
	env.Venom("checkpoint", "prune", "--json").Fails(t, 1, "failed.state")
	r = env.Venom("checkpoint", "clean", "--agent=a1")
	r.Fails(t, 1, "failed.state")
	assert.Contains(t, r.Stderr, "line 3")
	assert.Contains(t, r.Stderr, "doctor")
	assert.Equal(t, refs, env.VenomRefs())
	assert.Equal(t, k2, env.Git("rev-parse", "refs/venom/checkpoints/a1/2"))
	assert.Equal(t, []string{"a1/1", "a1/2", "a1/3"}, env.CheckpointRefs("a1"))

	// A turn_end capture prunes by itself: not on a damaged log either.
	env.Write("f.txt", "version 4\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
	env.Write("f.txt", "version 5\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	assert.Equal(t, []string{"a1/1", "a1/2", "a1/3", "a1/4", "a1/5"}, env.CheckpointRefs("a1"))

	// The captures went on, their seqs above every seq the log holds, and
	// the damaged line is still there as it was.
	after := logLines(t, env)
	assert.Equal(t, lines[2], after[2])
	assertSeqsAbove(t, after[4:], 4)
}

// assertSeqsAbove checks that the records go up by one from above seq.
func assertSeqsAbove(t *testing.T, lines []string, above int) {
	t.Helper()
	require.NotEmpty(t, lines)
	for i, l := range lines {
		var seq int
		_, err := fmt.Sscanf(l, `{"seq":%d,`, &seq)
		require.NoError(t, err, l)
		assert.Equal(t, above+1+i, seq, l)
	}
}

// A whole last line that is not JSON is damage, not a torn tail: it is
// never cut, and the next record goes above the seq it claims, so no two
// lines claim one seq.
func TestSecurity_LogWholeLastLineIsKeptAndSeqGoesAboveIt(t *testing.T) {
	t.Parallel()
	env, lines := logOfThreeCheckpoints(t)
	lines[3] = half(lines[3]) // k3's record, seq 4, its newline kept
	writeLog(t, env, lines)

	var rep doctorReport
	r := env.Venom("checkpoint", "doctor", "--json")
	require.Equal(t, 1, r.Code, "%s %s", r.Stdout, r.Stderr)
	r.JSON(t, &rep)
	msg, _ := rep.check(t, "state.log")
	assert.Contains(t, msg, "line 4 is not JSON (it claims seq 4)")

	env.Write("f.txt", "version 4\n")
	env.Take(t, "--agent=a1")
	after := logLines(t, env)
	assert.Equal(t, lines[:4], after[:4], "the damaged line stays")
	assertSeqsAbove(t, after[4:], 4)
	// k3's ref was at the next number, so its trailers had it adopted again
	// (docs/checkpoints.md#refs): it is listed.
	var ids []string
	for _, it := range env.List(t, "--agent=a1").Checkpoints {
		ids = append(ids, it.Checkpoint)
	}
	assert.Equal(t, []string{"k4", "k3", "k2", "k1"}, ids)
}

func TestSecurity_LogRepeatedSkippedAndBackwardSeqFailDoctor(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		edit func(lines []string) []string
		want []string
	}{
		"repeated": {func(l []string) []string { return []string{l[0], l[1], l[1], l[2], l[3]} },
			[]string{"line 3 repeats seq 2"}},
		"skipped": {func(l []string) []string { return []string{l[0], l[1], l[3]} },
			[]string{"line 3 skips seq 3"}},
		"backwards": {func(l []string) []string { return []string{l[0], l[1], l[2], l[3], l[1]} },
			[]string{"line 5 has seq 2 after seq 4"}},
		"several": {func(l []string) []string { return []string{l[1], l[0], l[3], l[3]} },
			[]string{"4 damaged lines", "line 1 skips seq 1", "line 2 has seq 1 after seq 2", "line 3 skips seq 3",
				"line 4 repeats seq 4"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, lines := logOfThreeCheckpoints(t)
			writeLog(t, env, c.edit(lines))
			var rep doctorReport
			r := env.Venom("checkpoint", "doctor", "--json")
			require.Equal(t, 1, r.Code, "%s %s", r.Stdout, r.Stderr)
			r.JSON(t, &rep)
			assert.Equal(t, "fail", rep.status()["state.log"])
			msg, _ := rep.check(t, "state.log")
			for _, w := range c.want {
				assert.Contains(t, msg, w)
			}
			env.Venom("checkpoint", "prune", "--json").Fails(t, 1, "failed.state")
		})
	}
}

// Many damaged lines: doctor lists the first ten and counts the rest.
func TestSecurity_LogDamageListIsCapped(t *testing.T) {
	t.Parallel()
	env, lines := logOfThreeCheckpoints(t)
	for i := 0; i < 25; i++ {
		lines = append(lines, lines[1])
	}
	writeLog(t, env, lines)
	var rep doctorReport
	r := env.Venom("checkpoint", "doctor", "--json")
	require.Equal(t, 1, r.Code)
	r.JSON(t, &rep)
	msg, _ := rep.check(t, "state.log")
	assert.Contains(t, msg, "25 damaged lines")
	assert.Contains(t, msg, "line 5 has seq 2 after seq 4")
	assert.Contains(t, msg, "line 14 has seq 2 after seq 4")
	assert.NotContains(t, msg, "line 15 ")
	assert.Contains(t, msg, "and 15 more")
}

// What a crash leaves stays a torn tail, NUL bytes included (a file
// system that grew the file but never wrote the data): ignored, a warning
// from doctor, cut by the next writer, no damage.
func TestSecurity_LogNULFilledTailIsATornTail(t *testing.T) {
	t.Parallel()
	env, _ := logOfThreeCheckpoints(t)
	f, err := os.OpenFile(env.LogPath(), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(make([]byte, 4096))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	r := env.Venom("checkpoint", "list", "--agent=a1").OK(t)
	assert.Empty(t, r.Stderr)
	var rep doctorReport
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "warn", rep.status()["state.log"])
	env.Write("f.txt", "version 4\n")
	require.Equal(t, "k4", *env.Take(t, "--agent=a1").Checkpoint)
	env.AssertSeqGapless(t)
	env.Venom("checkpoint", "doctor", "--json").OK(t).JSON(t, &rep)
	assert.Equal(t, "ok", rep.status()["state.log"])
}

// A rollback decides which paths a person changed from the log's turns and
// edits: with a record missing from the fold a person's edit can look like
// the agent's, and be overwritten without the outside-edit refusal. So the
// dry run and the real call refuse while the log is damaged, and nothing
// changes; once the line is mended they work again.
func TestSecurity_LogDamageStopsRollback(t *testing.T) {
	t.Parallel()
	env, _ := logOfThreeCheckpoints(t)
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite"}
	plan := env.DryRun(args...).Plan
	lines := logLines(t, env)
	whole := lines[2]
	lines[2] = half(whole)
	writeLog(t, env, lines)
	before := env.Snapshot()
	refs := env.VenomRefs()

	r := env.Venom("rollback", append(args, "--dry-run", "--json")...).Fails(t, 1, "failed.state")
	assert.Contains(t, r.Stdout, `"lines":[3]`)
	env.Venom("rollback", append(args, "--plan="+plan, "--json")...).Fails(t, 1, "failed.state")
	r = env.Venom("rollback", append(args, "--dry-run")...)
	assert.Equal(t, 1, r.Code)
	assert.Contains(t, r.Stderr, "no rollback runs until it is mended")
	assert.Contains(t, r.Stderr, "git venom-checkpoint doctor")
	env.AssertUntouched(t, before)
	assert.Equal(t, refs, env.VenomRefs())
	assert.Equal(t, "version 3\n", env.Read("f.txt"))

	lines[2] = whole
	writeLog(t, env, lines)
	env.Rollback(args...)
	assert.Equal(t, "version 1\n", env.Read("f.txt"))
}
