package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// privateIndex is the one private index of env's tree.
func privateIndex(t *testing.T, env *Env) string {
	t.Helper()
	common := env.CommonDir()
	found, err := filepath.Glob(filepath.Join(common, "venom", "index", "*.index"))
	require.NoError(t, err)
	require.Len(t, found, 1)
	return found[0]
}

// The files a rollback writes are recorded in the private index with their
// object ids and stat data, as git checkout records them: the rollback
// capture finds them clean without reading them, the private index agrees
// with plain git about every file, and an edit after the rollback (same
// size, the old modification time put back) is still captured.
func TestRollback_WrittenFilesRecorded(t *testing.T) {
	t.Parallel()
	var files []string
	for i := 0; i < 30; i++ {
		files = append(files, fmt.Sprintf("src/d%d/f%02d.txt", i%4, i))
	}
	env := NewEnv(t)
	env.Write("src/main.txt", "v1\n")
	for _, f := range files {
		env.Write(f, "base "+f+"\n")
	}
	// Written in process whatever bytes they hold (no attribute, no
	// core.autocrlf), and so recorded: git stores them as they are.
	env.Write("src/crlf.txt", "one\r\ntwo\r\n")
	env.Write("src/bin.dat", "\x00\r\x01\r\n\xff")
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("src/crlf.txt", "one\r\ntwo\r\nthree\r\n")
	env.Write("src/bin.dat", "\x00\r\x02")
	env.Write("src/main.txt", "v2, longer\n")
	for _, f := range files {
		env.Write(f, "agent "+f+", longer\n")
	}
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Tick()
	k1 := env.CheckpointTree("a1", 1)
	res := env.Rollback("--checkpoint=k1", "--restore=files")
	require.True(t, *res.Exact)
	require.Equal(t, k1, env.CheckpointTree("a1", 4), "the rollback capture holds T")
	require.Equal(t, "", env.Git("status", "--porcelain"))

	// The private index holds the restored files' stat data: git, reading
	// it by stat data alone (diff-files never hashes a file whose stat
	// data matches), finds nothing changed, and its entries are T's.
	idx := privateIndex(t, env)
	withIndex := func(args ...string) string {
		r := env.run(env.Dir, []string{"GIT_INDEX_FILE=" + idx}, "git", args...)
		require.Equal(t, 0, r.Code, r.Stderr)
		return strings.TrimSpace(r.Stdout)
	}
	// README.md, which the rollback did not write, may be racy against the
	// private index it patched (written in the second of its mtime): then
	// it is smudged (lib/racy), and git lists it until it reads it.
	for _, p := range strings.Fields(withIndex("diff-files", "--name-only")) {
		require.Equal(t, "README.md", p)
	}
	require.Equal(t, env.Git("ls-files", "-s"), withIndex("ls-files", "-s"))
	require.Equal(t, k1, withIndex("write-tree"))
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(env.Path("src/main.txt"), &st))
	debug := withIndex("ls-files", "--debug", "src/main.txt")
	require.Contains(t, debug, fmt.Sprintf("mtime: %d:%d", st.Mtim.Sec, st.Mtim.Nsec))
	require.Contains(t, debug, fmt.Sprintf("ino: %d", st.Ino))

	// An edit of a restored file that keeps its size and modification
	// time: its change time moved, so the next capture reads it.
	p := env.Path(files[3])
	fi, err := os.Stat(p)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, os.WriteFile(p, []byte(strings.ToUpper(env.Read(files[3]))), 0o644))
	require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	require.Equal(t, env.Git("hash-object", files[3]), env.Git("rev-parse", "refs/venom/checkpoints/a1/5:"+files[3]))
	require.NotEqual(t, k1, env.CheckpointTree("a1", 5))
	// The private index's tree, on which that capture was built, is T's
	// (capture.Known: the rollback's expected tree, not made again). The
	// oracle reads every file: git without USE_NSEC trusts whole-second
	// ctimes, so its index would miss an edit in the rollback's second.
	fresh := filepath.Join(env.Root, "fresh.index")
	r := env.run(env.Dir, []string{"GIT_INDEX_FILE=" + fresh}, "git", "add", "-A")
	require.Equal(t, 0, r.Code, r.Stderr)
	r = env.run(env.Dir, []string{"GIT_INDEX_FILE=" + fresh}, "git", "write-tree")
	require.Equal(t, 0, r.Code, r.Stderr)
	require.Equal(t, strings.TrimSpace(r.Stdout), env.CheckpointTree("a1", 5))
}

// A file changed between the dry run and the real call, even one that
// keeps its size and modification time, makes the quoted plan stale: the
// real call refuses it and writes nothing.
func TestRollback_StaleAfterEditBetweenDryRunAndRealCall(t *testing.T) {
	t.Parallel()
	for _, which := range []string{"written", "other"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			env := newAgent(t, "worktree", func(env *Env) {
				env.Write("src/main.txt", "v2\n")
				env.Write("src/other.txt", "o2\n")
			})
			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
			rel := "src/main.txt" // one the rollback writes
			if which == "other" {
				rel = "src/other.txt" // T has no such file: the rollback deletes it
			}
			p := env.Path(rel)
			fi, err := os.Stat(p)
			require.NoError(t, err)
			time.Sleep(10 * time.Millisecond)
			require.NoError(t, os.WriteFile(p, []byte("zz\n"), 0o644))
			require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
			snap := env.Snapshot()
			env.Venom("rollback", "--checkpoint=k1", "--restore=files", "--plan="+plan, "--json").
				Fails(t, 5, "conflict.rollback_stale")
			env.AssertUntouched(t, snap)
			require.Equal(t, "zz\n", env.Read(rel))
		})
	}
}

// A file the rollback writes through a conversion that does not give back
// its blob when git reads the file again (a smudge filter whose clean
// filter does not undo it, a CRLF blob under the text attribute) is not
// taken on trust: the rollback capture records the file's clean content,
// as git add would, and the rollback is not exact.
func TestRollback_WrittenFilesConvertedAreRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, file, content, attrs string }{
		{"filter", "a.up", "hello\n", "*.up filter=upper\n"},
		{"crlf", "a.txt", "hello\r\n", "*.txt text\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Git("config", "filter.upper.smudge", "tr a-z A-Z")
			env.Git("config", "filter.upper.clean", "cat")
			env.Write(c.file, c.content)
			env.Write("other.txt", "o1\n")
			env.Commit("base")
			env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
			// The attributes come after T was captured, from outside the
			// tree (the rollback leaves them alone).
			attrs := strings.TrimSpace(env.Git("rev-parse", "--path-format=absolute", "--git-path", "info/attributes"))
			require.NoError(t, os.MkdirAll(filepath.Dir(attrs), 0o755))
			require.NoError(t, os.WriteFile(attrs, []byte(c.attrs), 0o644))
			env.Write(c.file, "changed by the agent\n")
			env.Write("other.txt", "o2\n")
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
			env.Tick()
			res := env.Rollback("--checkpoint=k1", "--restore=files")
			clean := env.Git("hash-object", c.file)
			require.NotEqual(t, env.Git("rev-parse", "HEAD:"+c.file), clean, "the conversion does not round-trip")
			require.Equal(t, clean, env.Git("rev-parse", "refs/venom/checkpoints/a1/4:"+c.file),
				"the rollback capture holds the file's clean content")
			require.False(t, *res.Exact)
		})
	}
}

// TestRollback_NotedTreeWithFilesNotNoted: a rollback whose plan holds
// files the private index is not told of (a link, a deletion of a file the
// user's index holds) beside many it is, a file holding CRs among them
// (written in process under no attribute: git stores it as it is): the
// index's tree is the expected one with those put back to S's entries
// (capture.Known), and every capture after it, with the files not touched
// since, is the recipe's tree.
func TestRollback_NotedTreeWithFilesNotNoted(t *testing.T) {
	t.Parallel()
	var files []string
	for i := 0; i < 20; i++ {
		files = append(files, fmt.Sprintf("src/d%d/f%02d.txt", i%3, i))
	}
	env := NewEnv(t)
	for _, f := range files {
		env.Write(f, "base "+f+"\n")
	}
	env.Write("src/cr.txt", "one\r\ntwo\r\n")
	require.NoError(t, os.Symlink("d0", env.Path("src/ln")))
	env.Commit("base")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	for _, f := range files {
		// More bytes than twice the private index: the turn's capture
		// moves the index on to S, the known tree's base.
		env.Write(f, strings.Repeat("agent "+f+", longer\n", 40))
	}
	env.Write("src/cr.txt", "one\r\ntwo\r\nthree\r\n")
	env.Write("src/new.txt", "new\n")
	env.Git("add", "src/new.txt") // tracked: S holds no untracked file
	env.Remove("src/ln")
	require.NoError(t, os.Symlink("d1", env.Path("src/ln")))
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Tick()
	k1 := env.CheckpointTree("a1", 1)
	timings := filepath.Join(env.Root, "timings")
	plan := env.DryRun("--checkpoint=k1", "--restore=files").Plan
	var res RollbackResult
	env.VenomIn(env.Dir, []string{"VENOM_TEST_TIMINGS=" + timings}, "rollback", "--checkpoint=k1", "--restore=files",
		"--plan="+plan, "--json").OK(t).JSON(t, &res)
	require.True(t, *res.Exact)
	require.Equal(t, k1, env.CheckpointTree("a1", 4), "the rollback capture holds T")
	b, err := os.ReadFile(timings)
	require.NoError(t, err)
	// Put back: the link and the deletion. The CR file, written in
	// process under no attribute, is noted: git stores it as it is.
	require.Contains(t, string(b), "noted-known-back 2\n", "the known tree stood for the index's")

	// Another file edited: the capture is built on the private index's
	// tree, and every restored file, untouched, is taken from it.
	env.Tick()
	env.Write("src/other.txt", "other\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 5))
	env.Tick()
	env.Write(files[0], "edited after\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 6))
}
