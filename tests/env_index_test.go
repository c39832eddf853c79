package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

// indexHasValidBit answers as git ls-files -v does (an entry in lower
// case) for the indexes git writes, and is unsure of the ones it cannot
// read whole: RecipeTree skips ls-files -v only on a sure no.
func TestEnv_IndexValidBitIsGits(t *testing.T) {
	long := strings.Repeat("d/", 2100) + "f.txt" // a name past 0xfff bytes
	cases := map[string]struct {
		setup func(e *Env)
		sure  bool
	}{
		"plain": {func(e *Env) {}, true},
		"assume-unchanged": {func(e *Env) {
			e.Git("update-index", "--assume-unchanged", "b.txt")
		}, true},
		"skip-worktree, version 3": {func(e *Env) {
			e.Git("update-index", "--skip-worktree", "a.txt")
		}, true},
		"version 3 and assume-unchanged": {func(e *Env) {
			e.Git("update-index", "--skip-worktree", "a.txt")
			e.Git("update-index", "--assume-unchanged", "d/c.txt")
		}, true},
		"intent to add": {func(e *Env) {
			e.Write("new.txt", "new\n")
			e.Git("add", "-N", "new.txt")
		}, true},
		"long name": {func(e *Env) {
			oid := e.Git("rev-parse", "HEAD:a.txt")
			e.Git("update-index", "--add", "--cacheinfo", "100644,"+oid+","+long)
			e.Git("update-index", "--assume-unchanged", long)
		}, true},
		"cache tree": {func(e *Env) { e.Git("write-tree") }, true},
		"version 4": {func(e *Env) {
			e.Git("update-index", "--index-version", "4", "--assume-unchanged", "b.txt")
		}, false},
		"split index": {func(e *Env) {
			e.Git("update-index", "--assume-unchanged", "b.txt")
			e.Git("update-index", "--split-index")
			e.Write("a.txt", "changed\n")
			e.Git("add", "a.txt")
		}, false},
		"no checksum": {func(e *Env) { // index.skipHash's, git 2.40 on
			e.Git("update-index", "--assume-unchanged", "b.txt")
			_, _, idx := e.gitDirs()
			b, err := os.ReadFile(idx)
			require.NoError(t, err)
			copy(b[len(b)-20:], make([]byte, 20))
			require.NoError(t, os.WriteFile(idx, b, 0o644))
		}, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := NewEnv(t)
			e.Write("a.txt", "a\n")
			e.Write("b.txt", "b\n")
			e.Write("d/c.txt", "c\n")
			e.Commit("base")
			c.setup(e)
			_, _, idx := e.gitDirs()
			b, err := os.ReadFile(idx)
			require.NoError(t, err)
			valid, sure := indexHasValidBit(b)
			assert.Equal(t, c.sure, sure, "read whole")
			lower := false
			for _, rec := range strings.Split(e.GitRaw("ls-files", "-v", "-z").Stdout, "\x00") {
				lower = lower || rec != "" && rec[0] >= 'a' && rec[0] <= 'z'
			}
			if sure {
				assert.Equal(t, lower, valid, "an assume-unchanged entry")
			}
			if name == "long name" {
				_, err := os.Stat(filepath.Join(e.Dir, "d", "d"))
				assert.True(t, os.IsNotExist(err), "the long name is the index's only")
			}
		})
	}
}

// NewEnv's copy has its own stat data in its index, as git's refresh
// would write it: git takes every entry as clean without reading it.
func TestEnv_NewEnvIndexIsFresh(t *testing.T) {
	env := NewEnv(t)
	idx := filepath.Join(env.Dir, ".git", "index")
	before := fileHash(idx)
	assert.Empty(t, env.Git("diff-files", "--name-only"), "an entry whose stat data differs")
	env.Git("update-index", "-q", "--refresh")
	assert.Equal(t, before, fileHash(idx), "git's refresh changed the index")
	assert.Empty(t, env.Git("status", "--porcelain"))

	// A bare copy is stale, as the checks above would see.
	stale := newWorld(t)
	gittest.CopyTree(t, initialRepo(t), stale.Dir)
	assert.Equal(t, "README.md", stale.Git("diff-files", "--name-only"))
	require.True(t, restatIndex(stale.Dir))
	assert.Empty(t, stale.Git("diff-files", "--name-only"))
}

// CommitID's id is git rev-parse HEAD's, read without git on a branch
// or a detached HEAD, and from git where HEAD's branch is not a loose
// file holding an id.
func TestEnv_CommitIDIsGits(t *testing.T) {
	cases := map[string]struct {
		setup func(e *Env)
		plain bool
	}{
		"branch":        {func(e *Env) {}, true},
		"nested branch": {func(e *Env) { e.Git("checkout", "-q", "-b", "topic/x") }, true},
		"detached":      {func(e *Env) { e.Git("checkout", "-q", "--detach") }, true},
		"packed, then committed": {func(e *Env) {
			e.Git("branch", "-q", "other")
			e.Git("pack-refs", "--all")
		}, true},
		"branch a symbolic ref": {func(e *Env) {
			e.Git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
			e.Git("symbolic-ref", "HEAD", "refs/heads/alias")
		}, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := NewEnv(t)
			c.setup(e)
			e.Write("a.txt", name+"\n")
			id := e.CommitID("a")
			assert.Equal(t, e.Git("rev-parse", "HEAD"), id)
			got, plain := plainHead(e.Dir, e.Environ())
			assert.Equal(t, c.plain, plain, "read without git")
			if plain {
				assert.Equal(t, id, got)
			}
			if name == "packed, then committed" {
				e.Git("pack-refs", "--all")
				_, plain := plainHead(e.Dir, e.Environ())
				assert.False(t, plain, "HEAD's branch only packed")
			}
		})
	}
}

// plainRefs lists what git for-each-ref lists, in the layouts the tests
// make (tags, a symbolic ref, packed refs a loose one overrides, a ref
// to an object not there, which git lists), and is unsure where it
// cannot read as git does.
func TestEnv_RefsAreGits(t *testing.T) {
	missing := strings.Repeat("ab", 20)
	cases := map[string]struct {
		setup func(e *Env)
		sure  bool
	}{
		"one branch": {func(e *Env) {}, true},
		"tags, branches and a symbolic ref": {func(e *Env) {
			e.Git("tag", "light")
			e.Git("tag", "-a", "-m", "note", "v1.0")
			e.Git("branch", "topic/x-y_z")
			e.Git("update-ref", "refs/remotes/origin/main", "HEAD")
			e.Git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
			e.Git("update-ref", "refs/stash", "HEAD")
			e.Git("update-ref", "refs/venom/checkpoints/a1/1", "HEAD")
		}, true},
		"packed, one loose over it": {func(e *Env) {
			e.Git("tag", "-a", "-m", "note", "v1.0")
			e.Git("branch", "other")
			e.Git("update-ref", "refs/venom/checkpoints/a1/1", "HEAD")
			e.Git("pack-refs", "--all")
			e.Commit("second")
			e.Git("update-ref", "refs/heads/other", "HEAD")
		}, true},
		"a ref to an object not there": {func(e *Env) {
			e.Git("branch", "other")
			e.Write(".git/refs/heads/gone", missing+"\n")
			e.Git("pack-refs", "--all")
			e.Write(".git/refs/tags/gone", missing+"\n")
		}, true},
		"a lock file": {func(e *Env) { e.Write(".git/refs/heads/main.lock", missing+"\n") }, false},
		"a symbolic ref to none": {func(e *Env) {
			e.Git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
		}, false},
	}
	lines := func(refs []plainRef) []string {
		var out []string
		for _, r := range refs {
			out = append(out, r.name+" "+r.oid+" "+r.symref)
		}
		return out
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := NewEnv(t)
			c.setup(e)
			gits := func(skip string) []string {
				var out []string
				for _, l := range strings.Split(e.GitRaw("for-each-ref", "--format=%(refname) %(objectname) %(symref)").Stdout, "\n") {
					if l != "" && (skip == "" || !strings.HasPrefix(l, skip)) {
						out = append(out, l)
					}
				}
				return out
			}
			for _, skip := range []string{"", "refs/venom/"} {
				got, sure := plainRefs(e.Dir, e.Environ(), skip)
				require.Equal(t, c.sure, sure, "read without git, skipping %q", skip)
				if sure {
					assert.Equal(t, gits(skip), lines(got), "skipping %q", skip)
				}
			}
			// Sure or not, listRefs is git's list (git's own where unsure).
			assert.Equal(t, gits(""), lines(e.listRefs("refs/")), "listRefs")
		})
	}
}

// forEachRef lists what git for-each-ref lists for a pattern, and
// refTree's (and refCommit's) reading is git rev-parse's, read where the
// commit is one loose file or packed entry whose hash holds and asked of
// git elsewhere (a broken object, a tag, a multi-pack index, replace refs).
func TestEnv_RefTreeIsGits(t *testing.T) {
	e := NewEnv(t)
	e.Write("a.txt", "a\n")
	e.Commit("a")
	e.Git("update-ref", "refs/venom/checkpoints/a1/1", "HEAD")
	e.Git("update-ref", "refs/venom/checkpoints/a1/10", "HEAD~1")
	e.Git("update-ref", "refs/venom/checkpointsx", "HEAD")
	e.Git("tag", "-a", "-m", "note", "v1.0")
	for _, pattern := range []string{"refs/venom", "refs/venom/", "refs/venom/checkpoints", "refs/venom/checkpoints/a1/1"} {
		refs, ok := e.forEachRef(pattern)
		require.True(t, ok)
		var got []string
		for _, r := range refs {
			got = append(got, r.name+" "+r.oid)
		}
		assert.Equal(t, e.Git("for-each-ref", "--format=%(refname) %(objectname)", pattern), strings.Join(got, "\n"), pattern)
	}
	check := func(ref string, sure bool) {
		t.Helper()
		want := e.Git("rev-parse", ref+"^{tree}")
		assert.Equal(t, want, e.refTree(ref), ref)
		oid := e.Git("rev-parse", ref)
		id, tree := e.refCommit(ref)
		assert.Equal(t, oid, id, ref)
		assert.Equal(t, want, tree, ref)
		tree, ok := treeOf(e.Dir, e.Environ(), oid)
		require.Equal(t, sure, ok, "%s read without git", ref)
		if ok {
			assert.Equal(t, want, tree, ref)
		}
	}
	check("refs/venom/checkpoints/a1/1", true)
	check("refs/venom/checkpoints/a1/10", true)
	check("refs/tags/v1.0", false)
	// Packed objects, a checkpoint's pack among them; a loose commit again.
	e.Checkpoint("--agent=a2")
	check("refs/venom/checkpoints/a2/1", true)
	e.Git("repack", "-a", "-d", "-q")
	e.Git("prune-packed")
	check("refs/venom/checkpoints/a1/10", true)
	check("refs/venom/checkpoints/a2/1", true)
	e.Git("multi-pack-index", "write")
	check("refs/venom/checkpoints/a1/10", false)
	require.NoError(t, os.Remove(filepath.Join(e.Dir, ".git", "objects", "pack", "multi-pack-index")))
	e.Write("c.txt", "c\n")
	c := e.CommitID("c")
	e.Git("update-ref", "refs/venom/checkpoints/a1/2", "HEAD")
	check("refs/venom/checkpoints/a1/2", true)
	// A loose commit whose bytes are not its id's: git refuses it.
	e.Write("d.txt", "d\n")
	d := e.CommitID("d")
	loose := func(oid string) string { return filepath.Join(e.Dir, ".git", "objects", oid[:2], oid[2:]) }
	b, err := os.ReadFile(loose(c))
	require.NoError(t, err)
	require.NoError(t, os.Chmod(loose(d), 0o644))
	require.NoError(t, os.WriteFile(loose(d), b, 0o644))
	_, ok := treeOf(e.Dir, e.Environ(), d)
	assert.False(t, ok, "a commit file of another id")
	require.NotEqual(t, 0, e.GitRaw("rev-parse", d+"^{tree}").Code)
	e.Git("update-ref", "refs/heads/main", c)
	require.NoError(t, os.Remove(loose(d)))
	// Replace refs.
	e.Git("replace", c, e.Git("rev-parse", "HEAD~1"))
	check("refs/venom/checkpoints/a1/2", false)
}
