package refs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/repo"
)

var ident = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}

// world is an empty repository with three commits that no branch holds.
type world struct {
	t       *testing.T
	dir     string
	r       *repo.Repo
	commits []*git.Oid
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir()}
	w.git("init", "-q")
	r, err := repo.Open(context.Background(), w.dir, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"))
	require.NoError(t, err)
	t.Cleanup(r.Free)
	w.r = r
	for _, m := range []string{"one", "two", "three"} {
		id, err := git.NewOid(w.git("commit-tree", "-m", m, "4b825dc642cb6eb9a060e54bf8d69288fbee4904"))
		require.NoError(t, err)
		w.commits = append(w.commits, id)
	}
	return w
}

func (w *world) git(args ...string) string {
	w.t.Helper()
	return gittest.Run(w.t, w.dir, "", ident, args...)
}

// refs is git's list of refs/venom/, name and object.
func (w *world) refs() string {
	return w.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/venom/")
}

// eachWay runs f with create in process (libgit2, a small packed-refs)
// and through git update-ref (a packed-refs over the limit).
func eachWay(t *testing.T, f func(t *testing.T)) {
	for _, way := range []struct {
		name  string
		limit int64
	}{{"libgit2", packedRefsInProcess}, {"git update-ref", -1}} {
		t.Run(way.name, func(t *testing.T) {
			saved := packedRefsInProcess
			packedRefsInProcess = way.limit
			t.Cleanup(func() { packedRefsInProcess = saved })
			f(t)
		})
	}
}

// Create makes a ref only where none is: an existing ref, whatever it
// holds, is refused with ErrExists and keeps its commit.
func TestCreate_RefusesAnExistingRef(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w := newWorld(t)
		require.NoError(t, Create(w.r, "a1", 1, w.commits[0]))
		assert.Equal(t, "refs/venom/checkpoints/a1/1 "+w.commits[0].String(), w.refs())
		assert.ErrorIs(t, Create(w.r, "a1", 1, w.commits[1]), ErrExists)
		assert.ErrorIs(t, Create(w.r, "a1", 1, w.commits[0]), ErrExists)
		assert.Equal(t, "refs/venom/checkpoints/a1/1 "+w.commits[0].String(), w.refs(), "the ref was not moved")
	})
}

// Either way a ref is made as git update-ref makes it: its reflog (with
// core.logAllRefUpdates=always) has one entry with the message, none
// otherwise, and a ref where a folder of the name would be is an error,
// not ErrExists.
func TestCreate_AsGitMakesIt(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w := newWorld(t)
		require.NoError(t, CreateTool(w.r, "a1", 2, 1, w.commits[0]))
		assert.Equal(t, "refs/venom/tools/a1/2/1 "+w.commits[0].String(), w.refs())
		assert.Empty(t, w.git("reflog", "show", "--format=%gs", "refs/venom/tools/a1/2/1"), "no reflog unless always")
		w.git("config", "core.logAllRefUpdates", "always")
		r, err := repo.Open(context.Background(), w.dir, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"))
		require.NoError(t, err)
		t.Cleanup(r.Free)
		require.NoError(t, CreateTool(r, "a1", 2, 2, w.commits[1]))
		assert.Equal(t, "venom tool call", w.git("reflog", "show", "--format=%gs", "refs/venom/tools/a1/2/2"))
		w.git("update-ref", "refs/venom/tools/a1/3", w.commits[2].String())
		err = CreateTool(r, "a1", 3, 1, w.commits[0])
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrExists)
		assert.Equal(t, "refs/venom/tools/a1/2/1 "+w.commits[0].String()+"\nrefs/venom/tools/a1/2/2 "+w.commits[1].String()+
			"\nrefs/venom/tools/a1/3 "+w.commits[2].String(), w.refs())
	})
}

func TestResolve_CommitOrNil(t *testing.T) {
	w := newWorld(t)
	got, err := Resolve(w.r, "a1", 7)
	require.NoError(t, err)
	assert.Nil(t, got, "no ref is nil, not an error")
	w.git("update-ref", "refs/venom/checkpoints/a1/7", w.commits[2].String())
	got, err = Resolve(w.r, "a1", 7)
	require.NoError(t, err)
	assert.Equal(t, w.commits[2].String(), got.String())
}

// Delete removes a ref only while it holds the commit named: a ref moved
// by someone else stays; a ref already gone is no error.
func TestDelete_RefusesAMovedRef(t *testing.T) {
	w := newWorld(t)
	w.git("update-ref", "refs/venom/checkpoints/a1/1", w.commits[1].String())
	require.NoError(t, Delete(w.r, "a1", 1, w.commits[0]))
	assert.Equal(t, "refs/venom/checkpoints/a1/1 "+w.commits[1].String(), w.refs(), "a moved ref stays")
	require.NoError(t, Delete(w.r, "a1", 1, w.commits[1]))
	assert.Empty(t, w.refs())
	require.NoError(t, Delete(w.r, "a1", 1, w.commits[1]), "a ref already gone")
}

// DeleteAll deletes the refs in one update-ref transaction, each only
// while it holds its old value. One moved or locked ref fails that
// transaction; each ref is then tried alone, so only the stuck ones stay,
// reported with git's reason.
func TestDeleteAll_OneTransactionThenEachAlone(t *testing.T) {
	w := newWorld(t)
	name := func(n string) string { return "refs/venom/checkpoints/a1/" + n }
	for i, n := range []string{"1", "2", "3"} {
		w.git("update-ref", name(n), w.commits[i].String())
	}
	all := []Deletion{{name("1"), w.commits[0].String()}, {name("2"), w.commits[1].String()}, {name("3"), w.commits[2].String()}}
	assert.Empty(t, DeleteAll(context.Background(), w.r, all))
	assert.Empty(t, w.refs())

	for i, n := range []string{"1", "2", "3", "4"} {
		w.git("update-ref", name(n), w.commits[i%3].String())
	}
	w.git("update-ref", name("2"), w.commits[2].String()) // moved by someone else
	lockFile := filepath.Join(w.dir, ".git", name("3")+".lock")
	require.NoError(t, os.WriteFile(lockFile, nil, 0o644)) // another git writing it
	failed := DeleteAll(context.Background(), w.r, []Deletion{
		{name("1"), w.commits[0].String()}, {name("2"), w.commits[1].String()},
		{name("3"), w.commits[2].String()}, {name("4"), w.commits[0].String()}})
	require.Len(t, failed, 2)
	assert.Contains(t, failed, name("2"))
	assert.Contains(t, failed, name("3"))
	assert.Equal(t, name("2")+" "+w.commits[2].String()+"\n"+name("3")+" "+w.commits[2].String(), w.refs(),
		"the moved and the locked ref stay as they were; the others went")
	assert.FileExists(t, lockFile, "another process's lock is not ours to remove")
	assert.Nil(t, DeleteAll(context.Background(), w.r, nil))
}

// A checkpoint commit is git's, by venom, with its trailers and its parent,
// and ReadCommit reads back what Commit wrote.
func TestCommit_ReadBackAsGitSeesIt(t *testing.T) {
	w := newWorld(t)
	tree, err := git.NewOid("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
	require.NoError(t, err)
	turn := "t2"
	when := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	id, err := Commit(w.r, tree, w.commits[0], Message("a1", "k3", "turn_end", &turn), when)
	require.NoError(t, err)
	assert.Equal(t, "venom <venom@localhost> 1796040000 +0000\n"+w.commits[0].String(),
		w.git("log", "-1", "--format=%an <%ae> %ad%n%P", "--date=raw", id.String()))
	assert.Equal(t, "Venom-Agent: a1\nVenom-Checkpoint: k3\nVenom-Reason: turn_end\nVenom-Turn: t2",
		w.git("log", "-1", "--format=%(trailers:only)", id.String()))

	info, err := ReadCommit(w.r, id)
	require.NoError(t, err)
	assert.Equal(t, tree.String(), info.Tree.String())
	assert.Equal(t, w.commits[0].String(), info.Parent.String())
	assert.True(t, when.Equal(info.When))
	assert.Equal(t, map[string]string{"Venom-Agent": "a1", "Venom-Checkpoint": "k3", "Venom-Reason": "turn_end",
		"Venom-Turn": "t2"}, info.Trailers)

	root, err := Commit(w.r, tree, nil, Message("a1", "k1", "manual", nil), when)
	require.NoError(t, err)
	assert.Empty(t, w.git("log", "-1", "--format=%P", root.String()), "no parent on an unborn HEAD")
	info, err = ReadCommit(w.r, root)
	require.NoError(t, err)
	assert.Nil(t, info.Parent)
	assert.NotContains(t, info.Trailers, "Venom-Turn")
}

// A symbolic ref at a checkpoint's name is never followed: Resolve says
// ErrSymbolic, Delete and DeleteAll leave it (ErrSymbolic) and the branch
// it names keeps its commit, whose value it would otherwise match; Symbolic
// lists it, dangling ones included, and the fix removes the link only.
func TestSymbolic_NeverFollowed(t *testing.T) {
	w := newWorld(t)
	w.git("update-ref", "refs/heads/main", w.commits[0].String())
	w.git("symbolic-ref", "refs/venom/checkpoints/a1/1", "refs/heads/main")
	w.git("symbolic-ref", "refs/venom/remotes/o/m/a1/2", "refs/heads/gone")
	require.NoError(t, Create(w.r, "a1", 2, w.commits[1]))

	_, err := Resolve(w.r, "a1", 1)
	assert.ErrorIs(t, err, ErrSymbolic)
	assert.ErrorIs(t, Delete(w.r, "a1", 1, w.commits[0]), ErrSymbolic)
	assert.ErrorIs(t, Delete(w.r, "a1", 1, nil), ErrSymbolic)
	failed := DeleteAll(context.Background(), w.r, []Deletion{
		{Name: "refs/venom/checkpoints/a1/1", Old: w.commits[0].String()},
		{Name: "refs/venom/checkpoints/a1/2", Old: w.commits[1].String()},
	})
	assert.Len(t, failed, 1)
	assert.ErrorIs(t, failed["refs/venom/checkpoints/a1/1"], ErrSymbolic)
	assert.Equal(t, w.commits[0].String(), w.git("rev-parse", "refs/heads/main"))
	assert.Equal(t, "refs/heads/main", w.git("symbolic-ref", "refs/venom/checkpoints/a1/1"))
	assert.Equal(t, "refs/venom/checkpoints/a1/1 "+w.commits[0].String(), w.refs(), "a1/2 went")

	found, err := Symbolic(w.r, "refs/venom/*", "refs/notes/venom")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"refs/venom/checkpoints/a1/1": "refs/heads/main",
		"refs/venom/remotes/o/m/a1/2": "refs/heads/gone"}, found)
	for _, name := range SymbolicNames(found) {
		w.git("symbolic-ref", "--delete", name)
		assert.Equal(t, "git symbolic-ref --delete "+name, RemoveSymbolicFix(name))
	}
	assert.Equal(t, w.commits[0].String(), w.git("rev-parse", "refs/heads/main"))
	found, err = Symbolic(w.r, "refs/venom/*")
	require.NoError(t, err)
	assert.Empty(t, found)
}

// TestCreate_BesidePackRefs: refs made while git pack-refs --all --prune
// runs in a loop (a person's gc) are all there afterwards, each holding
// its commit, packed or loose; one already packed is refused and kept;
// no lock file is left. A symbolic ref at the name is refused, not
// written through.
func TestCreate_BesidePackRefs(t *testing.T) {
	eachWay(t, func(t *testing.T) {
		w := newWorld(t)
		stop := make(chan struct{})
		done := make(chan int)
		go func() {
			runs := 0
			for {
				select {
				case <-stop:
					done <- runs
					return
				default:
				}
				// A pack-refs that finds a ref locked leaves it loose: not
				// a failure of ours.
				_ = exec.Command("git", "-C", w.dir, "pack-refs", "--all", "--prune").Run()
				runs++
			}
		}()
		const n = 60
		for k := 1; k <= n; k++ {
			require.NoError(t, Create(w.r, "a1", k, w.commits[k%3]))
		}
		close(stop)
		assert.Positive(t, <-done, "pack-refs ran beside the creations")
		var want []string
		for k := 1; k <= n; k++ {
			want = append(want, fmt.Sprintf("refs/venom/checkpoints/a1/%d %s", k, w.commits[k%3]))
		}
		sort.Strings(want)
		assert.Equal(t, strings.Join(want, "\n"), w.refs())

		w.git("pack-refs", "--all", "--prune")
		assert.ErrorIs(t, Create(w.r, "a1", 7, w.commits[0]), ErrExists, "a packed ref is there")
		assert.Equal(t, w.commits[7%3].String(), w.git("rev-parse", "refs/venom/checkpoints/a1/7"), "and keeps its commit")
		w.git("symbolic-ref", "refs/venom/checkpoints/a1/99", "refs/heads/elsewhere")
		assert.ErrorIs(t, Create(w.r, "a1", 99, w.commits[0]), ErrExists)
		assert.Empty(t, w.git("for-each-ref", "refs/heads/"), "nothing written through the link")
		locks, err := filepath.Glob(filepath.Join(w.dir, ".git", "refs", "venom", "checkpoints", "a1", "*.lock"))
		require.NoError(t, err)
		assert.Empty(t, locks)
	})
}

// TestCreate_BesideFoldersPruned: git pack-refs --prune removes the
// folders it empties, which can vanish between libgit2's mkdir of a
// parent and of the ref's own folder ("failed to make directory", seen
// beside a gc loop). Here the empty folders above the agent's are
// removed up to three times while each of 300 refs is made: each is made
// (about a quarter failed before create tried again).
func TestCreate_BesideFoldersPruned(t *testing.T) {
	w := newWorld(t)
	venom := filepath.Join(w.dir, ".git", "refs", "venom")
	var removals atomic.Int32 // left for the ref being made
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Only empty folders go, as in git's pruning.
			for _, dir := range []string{filepath.Join(venom, "checkpoints"), venom} {
				if removals.Load() > 0 && os.Remove(dir) == nil {
					removals.Add(-1)
				}
			}
			time.Sleep(50 * time.Microsecond)
		}
	}()
	for k := 1; k <= 300; k++ {
		removals.Store(3)
		err := createInProcess(w.r, ids.RefName("a1", k), w.commits[0], "venom checkpoint")
		removals.Store(0)
		require.NoError(t, err, "ref %d", k)
		// Empty the agent's folder again, as a prune would.
		require.NoError(t, os.Remove(filepath.Join(venom, "checkpoints", "a1", strconv.Itoa(k))))
		require.NoError(t, os.Remove(filepath.Join(venom, "checkpoints", "a1")))
	}
	close(stop)
	<-done
}

// In a shared repository (core.sharedRepository=group) with reflogs for
// every ref, a ref's reflog and its folders are made writable to the
// group, as git update-ref makes them: libgit2 left them 0644 and 0755
// under umask 022, and another member's git could not append to them.
func TestCreate_SharedReflog(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	eachWay(t, func(t *testing.T) {
		w := newWorld(t)
		w.git("config", "core.sharedRepository", "group")
		w.git("config", "core.logAllRefUpdates", "always")
		r, err := repo.Open(context.Background(), w.dir, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"))
		require.NoError(t, err)
		t.Cleanup(r.Free)
		require.NoError(t, CreateTool(r, "a1", 2, 1, w.commits[0]))
		w.git("update-ref", "refs/venom/by-git/x", w.commits[0].String())
		for _, p := range []string{"logs/refs/venom/tools/a1/2/1", "logs/refs/venom/tools/a1/2", "logs/refs/venom/tools",
			"refs/venom/tools/a1/2/1", "logs/refs/venom/by-git/x", "logs/refs/venom/by-git"} {
			st, err := os.Stat(filepath.Join(w.dir, ".git", p))
			require.NoError(t, err)
			assert.NotZero(t, st.Mode().Perm()&0o020, "%s is %v: not writable to the group", p, st.Mode())
		}
	})
}
