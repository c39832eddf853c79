package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCapture_StatPassSequenceAsGitAddAll: captures of a tree large
// enough for the stat pass to split among threads (over a thousand
// tracked and untracked files) record git add -A's tree after each of
// a sequence of changes: paths sorting around '/', names with bytes of
// 0x80 and more, same-size edits with the mtime set back, a folder
// emptied, a folder replaced by a file of its name, a file swapped for a
// folder, a link and a FIFO in turn, ignore rules changed.
func TestCapture_StatPassSequenceAsGitAddAll(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	extra, timings := carryEnv(env)
	for i := 0; i < 1100; i++ {
		env.Write(fmt.Sprintf("t%d/f%04d.txt", i/300, i), fmt.Sprintf("tracked %d\n", i))
	}
	for _, p := range []string{"a", "a-b", "a.b", "a0", "s/a", "s/a-b", "s/a.b", "s/a0", "é/x", "\xff\xfe/y", "s/é"} {
		env.Write(p, p+"\n")
	}
	env.Write("gone/all/x", "x\n")
	env.Write("gone/all/y", "y\n")
	env.Write("gone/keep", "keep\n")
	env.Commit("base")
	for i := 0; i < 1100; i++ {
		env.Write(fmt.Sprintf("u%d/g%04d.txt", i/250, i), fmt.Sprintf("untracked %d\n", i))
	}
	check := func(what string) {
		t.Helper()
		tree, _ := carryCapture(t, env, extra, timings)
		require.Equal(t, env.RecipeTree(), tree, what)
	}
	check("first")
	check("steady")
	// Around '/': a folder a/ beside a, a-b, a.b, a0.
	env.Remove("s/a")
	env.Write("s/a/b", "now a folder\n")
	check("a file replaced by a folder, sorting around '/'")
	// Same size, mtime set back to what it was.
	for _, p := range []string{"t0/f0001.txt", "u0/g0001.txt", "é/x"} {
		fi, err := os.Lstat(env.Path(p))
		require.NoError(t, err)
		b := []byte(env.Read(p))
		b[0] ^= 0x20
		require.NoError(t, os.WriteFile(env.Path(p), b, 0o644))
		require.NoError(t, os.Chtimes(env.Path(p), fi.ModTime(), fi.ModTime()))
	}
	check("same-size edits, mtime set back")
	// Every file of a folder deleted, a sibling kept.
	require.NoError(t, os.RemoveAll(env.Path("gone/all")))
	require.NoError(t, os.RemoveAll(env.Path("u1")))
	check("folders emptied")
	// A folder deleted and a file of its name made.
	require.NoError(t, os.RemoveAll(env.Path("t1")))
	env.Write("t1", "a file where a folder was\n")
	require.NoError(t, os.RemoveAll(env.Path("u2")))
	env.Write("u2", "a file where an untracked folder was\n")
	check("folder -> file")
	// file -> folder -> link -> FIFO, tracked and untracked.
	for _, p := range []string{"t2/f0700.txt", "u3/g0800.txt"} {
		env.Remove(p)
		env.Write(p+"/inner", "folder\n")
		check("file -> folder " + p)
		require.NoError(t, os.RemoveAll(env.Path(p)))
		require.NoError(t, os.Symlink("../t0", env.Path(p)))
		check("folder -> link " + p)
		env.Remove(p)
		if p[0] == 'u' { // git add refuses a FIFO at a tracked path
			require.NoError(t, syscall.Mkfifo(env.Path(p), 0o644))
			check("link -> FIFO " + p)
			env.Remove(p)
		}
		env.Write(p, "a file again\n")
		check("-> file again " + p)
	}
	// A tracked folder swapped for a link to a copy of it.
	require.NoError(t, os.Rename(env.Path("t3"), env.Path("t3moved")))
	require.NoError(t, os.Symlink("t3moved", env.Path("t3")))
	check("tracked folder -> link")
	// Ignore rules.
	env.Write(".gitignore", "/u4/\n*.b\n")
	check("ignored")
	env.Write(".gitignore", "*.b\n")
	check("unignored u4")
	env.Remove(".gitignore")
	check("no ignore")
	// Names with high bytes appear and vanish.
	env.Write("\xc3\x28/\x80", "invalid utf-8\n")
	check("high bytes added")
	require.NoError(t, os.RemoveAll(env.Path("\xff\xfe")))
	require.NoError(t, os.RemoveAll(env.Path("\xc3\x28")))
	check("high bytes gone")
	// Racy: an edit within the capture's racy window, of the same size.
	env.Write("u0/g0002.txt", "UNTRACKED 2\n"[:len("untracked 2\n")])
	time.Sleep(10 * time.Millisecond)
	check("racy edit")
}

// TestCapture_ScanRecordCutAtAPathIsDamaged: a scan record cut where one
// of its untracked paths starts (written, renamed, and the crash before
// its last blocks reached the disk) is a damaged record: the capture goes
// to git status and records git add -A's tree, not the list the cut
// record holds, missing that file.
func TestCapture_ScanRecordCutAtAPathIsDamaged(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("d/c.txt", "c\n")
	env.Commit("base")
	last := "z/" + strings.Repeat("q", 200)
	env.Write("z/a", "a\n")
	env.Write(last, "the last untracked path\n")
	env.Checkpoint("--agent=a1")
	time.Sleep(2100 * time.Millisecond) // past the racy window
	env.Checkpoint("--agent=a1")
	common := env.CommonDir()
	records, err := filepath.Glob(filepath.Join(common, "venom", "index", "*.scan"))
	require.NoError(t, err)
	require.Len(t, records, 1)
	b, err := os.ReadFile(records[0])
	require.NoError(t, err)
	at := bytes.Index(b, append([]byte{2, 200, 1}, strings.Repeat("q", 200)...))
	require.Greater(t, at, 0, "the last path's bytes in the record")
	require.NoError(t, os.WriteFile(records[0], b[:at], 0o644))
	env.Write("d/new.txt", "a change elsewhere\n")
	tree := env.CheckpointTree("a1", mustAtoi(t, strings.TrimPrefix(env.Checkpoint("--agent=a1"), "k")))
	require.Equal(t, env.RecipeTree(), tree)
	require.Contains(t, env.Git("ls-tree", "-r", "--name-only", tree), last)
}
