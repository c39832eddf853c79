package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ptyRun runs a venom command on a pseudo-terminal (script(1)), answering
// each prompt as it appears; it returns everything the terminal showed.
func (e *Env) ptyRun(t *testing.T, answers []string, cmd string, args ...string) (string, int) {
	t.Helper()
	return e.ptyRunLine(t, answers, "git venom-"+cmd+" "+strings.Join(args, " "))
}

// ptyRunLine is ptyRun for a whole shell command line.
func (e *Env) ptyRunLine(t *testing.T, answers []string, line string) (string, int) {
	t.Helper()
	return e.ptyRunThen(t, answers, nil, line)
}

// ptyRunThen is ptyRunLine calling before(i), when given, just before it
// types the i-th answer: a test changes the tree while a person reads.
func (e *Env) ptyRunThen(t *testing.T, answers []string, before func(i int), line string) (string, int) {
	t.Helper()
	s := e.startScreen(t, line)
	prompts := 0
	deadline := time.After(60 * time.Second)
	for !s.Ended() {
		select {
		case <-deadline:
			t.Fatalf("no end; the terminal showed:\n%s", s.Shown())
		case <-time.After(20 * time.Millisecond):
		}
		shown := s.Shown()
		seen := strings.Count(shown, "[y/N]") + strings.Count(shown, "[K/o]") + strings.Count(shown, "[m/N]")
		if seen > prompts && prompts < len(answers) {
			if before != nil {
				before(prompts)
			}
			s.Type(keys(answers[prompts]))
			prompts++
		}
	}
	return s.Wait()
}

// keys is what the person types for an answer: the line and Enter, or a
// control key alone ("\x03" Ctrl-C, "\x04" Ctrl-D), which the terminal
// turns into SIGINT or end of input.
func keys(answer string) string {
	if len(answer) == 1 && answer[0] < 0x20 {
		return answer
	}
	return answer + "\n"
}

func interactiveEnv(t *testing.T) *Env {
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t) // in place: guarded
	env.Write("agent.txt", "agent\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Write("README.md", "a person's edit\n")
	return env
}

func TestRollback_InteractiveKeepsOutsideByDefault(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	screen, code := env.ptyRun(t, []string{"", "y"}, "rollback", "--checkpoint=k1", "--restore=files")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "README.md")
	require.Contains(t, screen, "Keep them as they are, or overwrite them? [K/o]")
	require.Contains(t, screen, "\x1b[", "no colour on a terminal")
	require.Contains(t, screen, "↺ Rolled back to k1 (before the first turn) · 1 file · safety k3\r\n  undo: git venom-rollback --undo")
	require.Equal(t, "a person's edit\n", env.Read("README.md"))
	require.NoFileExists(t, env.Path("agent.txt"))
	// The real call quoted the plan shown, with --outside=keep.
	require.Contains(t, screen, env.Records("rollback.started")[0]["plan"].(string))
}

func TestRollback_InteractiveOverwrite(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	screen, code := env.ptyRun(t, []string{"o", "y"}, "rollback", "--checkpoint=k1", "--restore=files")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "(overwritten)")
	require.Equal(t, "hello\n", env.Read("README.md"))
}

func TestRollback_InteractiveNo(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	snap := env.Snapshot()
	logLen := len(env.LogRecords())
	screen, code := env.ptyRun(t, []string{"", "n"}, "rollback", "--checkpoint=k1", "--restore=files")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "Nothing was changed.")
	env.AssertUntouched(t, snap)
	require.Equal(t, logLen, len(env.LogRecords()))
	// With --json, or with no terminal, there is no dialogue.
	env.Venom("rollback", "--checkpoint=k1", "--restore=files", "--json").Fails(t, 2, "invalid_params.plan")
}

// An answer to [K/o] that is neither is asked again (as
// git add -p does), never taken for keep.
func TestRollback_InteractiveAsksAgainOnAnUnknownAnswer(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	screen, code := env.ptyRun(t, []string{"maybe", "o", "y"}, "rollback", "--checkpoint=k1", "--restore=files")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "Answer k to keep them or o to overwrite them. [K/o]")
	require.Contains(t, screen, "(overwritten)")
	require.Equal(t, "hello\n", env.Read("README.md"))
}

// An answer to [y/N] that is neither yes nor no is asked again, never
// taken for No (it was: "sure" changed nothing and said so).
func TestRollback_InteractiveAsksAgainAtYesNo(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	screen, code := env.ptyRun(t, []string{"", "sure", "y"}, "rollback", "--checkpoint=k1", "--restore=files")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "Answer y to go ahead or n to stop. [y/N]")
	require.NotContains(t, screen, "Nothing was changed.")
	require.NoFileExists(t, env.Path("agent.txt"))
	require.Equal(t, "a person's edit\n", env.Read("README.md"))
}

// A rollback with nothing to do says so and asks
// nothing; no safety or after checkpoint is made for it.
func TestRollback_InteractiveNothingToDo(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t) // k1, the files as they are
	refs := env.Git("for-each-ref", "refs/venom/")
	screen, code := env.ptyRun(t, []string{"y"}, "rollback", "k1")
	require.Equal(t, 0, code, screen)
	require.Contains(t, screen, "Nothing to roll back: the files, HEAD and the conversation are as k1 has them.")
	require.NotContains(t, screen, "[y/N]")
	require.Equal(t, refs, env.Git("for-each-ref", "refs/venom/"), "checkpoints made for nothing")
}

// A dry run that outside edits refuse shows, where the interactive call
// would ask, the plan that keeps them (marked) and the whole commands
// that go on; it still exits 5, and --json is the refusal alone.
func TestRollback_RefusedDryRunShowsTheKeepPlanAndCommands(t *testing.T) {
	t.Parallel()
	env := interactiveEnv(t)
	snap := env.Snapshot()
	r := env.Venom("rollback", "k1", "--restore=files", "--dry-run").Fails(t, 5, "conflict.outside_edits")
	require.Contains(t, r.Stdout, "  modify README.md (kept)\n")
	m := regexp.MustCompile(`keeps them as they are\. To run it:\n  git venom-rollback (k1 --restore=files --outside=keep --plan=p1-[0-9a-f]{16})\n`).FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.Stdout)
	require.Contains(t, r.Stdout, "see its plan:\n  git venom-rollback k1 --restore=files --outside=overwrite --dry-run\n")
	require.NotContains(t, r.Stderr, "--outside=keep leaves")
	require.Contains(t, r.Stderr, "hint:   README.md: changed outside the agent's turns")
	for _, l := range strings.Split(r.Stdout+r.Stderr, "\n") {
		// A command or the repository's path alone on its line may be longer.
		if !strings.HasPrefix(l, "  git venom-rollback ") && strings.TrimSpace(l) != env.Dir {
			require.LessOrEqual(t, len(l), 80, l)
		}
	}
	j := env.Venom("rollback", "k1", "--restore=files", "--dry-run", "--json").Fails(t, 5, "conflict.outside_edits")
	require.Equal(t, []string{"error"}, Keys(t, j.Stdout))
	env.AssertUntouched(t, snap)

	// The command shown runs as printed.
	env.Venom("rollback", strings.Fields(m[1])...).OK(t)
	require.Equal(t, "a person's edit\n", env.Read("README.md"))
	require.NoFileExists(t, env.Path("agent.txt"))
}
