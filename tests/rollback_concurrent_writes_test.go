package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRollback_WritesDuringTheRollbackRecordedAsOnDisk: files changed by
// someone else after the rollback placed them and before its capture (a
// file rewritten in place keeping its size and modification time, one
// deleted, one new) are recorded as they are on disk: the after-capture's
// tree is git add -A's, not the expected tree (capture.Known, 948314b),
// and the rollback says it is not exact.
func TestRollback_WritesDuringTheRollbackRecordedAsOnDisk(t *testing.T) {
	t.Parallel()
	var files []string
	for i := 0; i < 30; i++ {
		files = append(files, fmt.Sprintf("src/d%d/f%02d.txt", i%4, i))
	}
	env := NewEnv(t)
	for _, f := range files {
		env.Write(f, "base "+f+"\n")
	}
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	for _, f := range files {
		// More bytes than twice the private index: the turn's capture
		// moves the index on to S, the known tree's base.
		env.Write(f, strings.Repeat("agent "+f+", longer\n", 40))
	}
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Tick()
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--json"}
	plan := env.DryRun(args[:3]...).Plan
	timings := filepath.Join(env.Root, "timings")
	p := env.pause("rollback-files-placed", []string{"VENOM_TEST_PAUSE_RESUME=1", "VENOM_TEST_TIMINGS=" + timings}, "rollback",
		append(args, "--plan="+plan)...)
	// The files are placed: rewrite one in place, same size, same mtime.
	rewritten := env.Path(files[5])
	fi, err := os.Stat(rewritten)
	require.NoError(t, err)
	require.Equal(t, "base "+files[5]+"\n", env.Read(files[5]))
	f, err := os.OpenFile(rewritten, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(strings.ToUpper("base "+files[5])), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Chtimes(rewritten, fi.ModTime(), fi.ModTime()))
	env.Remove(files[7])
	env.Write("src/d1/someone.txt", "someone else's\n")
	require.NoError(t, os.Remove(p.file))
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the rollback did not end")
	}
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
	var res struct {
		After string `json:"after"`
		Exact *bool  `json:"exact"`
	}
	require.NoError(t, json.Unmarshal(p.out.Bytes(), &res), p.out.String())
	require.NotNil(t, res.Exact)
	require.False(t, *res.Exact, "someone wrote during the rollback")
	require.Equal(t, env.RecipeTree(), env.refTree("refs/venom/checkpoints/a1/"+res.After[1:]),
		"the after-capture holds what is on disk")
	b, err := os.ReadFile(timings)
	require.NoError(t, err)
	require.Contains(t, string(b), "noted-known-back ", "the known tree was used")
}

// TestRollback_WritesDuringTheRollbackCRAndMode: files the rollback wrote
// in process and trusts without reading (Written.Direct, CR bytes
// included, b20ad40), changed by someone else after they were placed and
// before the after-capture: a CR put in place of a byte (same size, same
// mtime), a byte of a file holding CRs changed (same size, same mtime), an
// exec bit set. The after-capture is git add -A's tree and not exact.
func TestRollback_WritesDuringTheRollbackCRAndMode(t *testing.T) {
	t.Parallel()
	var files []string
	for i := 0; i < 12; i++ {
		files = append(files, fmt.Sprintf("src/d%d/f%02d.txt", i%3, i))
	}
	base := func(f string) string { return "base\r\n" + f + "\r\nbin\x00\r\n" }
	env := NewEnv(t)
	for _, f := range files {
		env.Write(f, base(f))
	}
	env.Write("src/plain.txt", "plain line one\nplain line two\n")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	for _, f := range files {
		env.Write(f, strings.Repeat("agent "+f+", longer\n", 40))
	}
	env.Write("src/plain.txt", strings.Repeat("agent plain\n", 40))
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Tick()
	args := []string{"--agent=a1", "--checkpoint=k1", "--restore=files", "--json"}
	plan := env.DryRun(args[:3]...).Plan
	p := env.pause("rollback-files-placed", []string{"VENOM_TEST_PAUSE_RESUME=1"}, "rollback",
		append(args, "--plan="+plan)...)
	sameSize := func(rel string, edit func(string) string) {
		path := env.Path(rel)
		fi, err := os.Stat(path)
		require.NoError(t, err)
		old := env.Read(rel)
		now := edit(old)
		require.Equal(t, len(old), len(now))
		require.NotEqual(t, old, now)
		require.NoError(t, os.WriteFile(path, []byte(now), 0))
		require.NoError(t, os.Chtimes(path, fi.ModTime(), fi.ModTime()))
	}
	require.Equal(t, base(files[2]), env.Read(files[2]))
	// A CR in place of a newline, in a file without one.
	sameSize("src/plain.txt", func(s string) string { return strings.Replace(s, "\n", "\r", 1) })
	// A byte changed in a file holding CRs.
	sameSize(files[2], func(s string) string { return strings.Replace(s, "base", "BASE", 1) })
	// A CR taken out (turned into a space) in another.
	sameSize(files[6], func(s string) string { return strings.Replace(s, "\r", " ", 1) })
	// An exec bit.
	require.NoError(t, os.Chmod(env.Path(files[9]), 0o755))
	require.NoError(t, os.Remove(p.file))
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the rollback did not end")
	}
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)
	var res struct {
		After string `json:"after"`
		Exact *bool  `json:"exact"`
	}
	require.NoError(t, json.Unmarshal(p.out.Bytes(), &res), p.out.String())
	require.NotNil(t, res.Exact)
	require.False(t, *res.Exact, "someone wrote during the rollback")
	require.Equal(t, env.RecipeTree(), env.refTree("refs/venom/checkpoints/a1/"+res.After[1:]),
		"the after-capture holds what is on disk")
}
