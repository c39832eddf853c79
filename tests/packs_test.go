package tests

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// packWorld is a repository whose user already has packs of their own: one
// made by git repack, one more with a .keep. Captures must never touch
// them, and must leave git's own housekeeping nothing to do.
type packWorld struct {
	*Env
	userFiles map[string]string // path → sha256 of the user's pack files
}

func newPackWorld(t *testing.T, extra ...string) *packWorld {
	env := NewEnv(t)
	env.Extra = append(env.Extra, extra...)
	env.Write("src/main.go", "package main\n")
	env.Commit("code")
	env.Git("repack", "-d", "-q")
	env.Write("docs/notes.txt", "notes\n")
	env.Commit("notes")
	env.Git("repack", "-q") // the new objects only: a second pack
	env.Git("prune-packed")
	packs := env.PackNames()
	require.Len(t, packs, 2)
	require.NoError(t, os.WriteFile(env.Path(".git/objects/pack/"+packs[1]+".keep"), []byte("mine\n"), 0o444))
	w := &packWorld{Env: env, userFiles: map[string]string{}}
	files, _ := filepath.Glob(env.Path(".git/objects/pack/*"))
	for _, f := range files {
		w.userFiles[f] = fileHash(f)
	}
	require.Equal(t, "0", env.CountObjects()["count"], "loose objects before the captures")
	return w
}

// PackNames lists objects/pack's packs (pack-<hex>), sorted.
func (e *Env) PackNames() []string {
	e.t.Helper()
	files, err := filepath.Glob(e.Path(".git/objects/pack/*.pack"))
	require.NoError(e.t, err)
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".pack"))
	}
	sort.Strings(out)
	return out
}

// CountObjects is git count-objects -v as a map.
func (e *Env) CountObjects() map[string]string {
	e.t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(e.Git("count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		m[k] = v
	}
	return m
}

// capture changes one file, adds another, and takes a checkpoint.
func (w *packWorld) capture(t *testing.T, i int) {
	w.Write("work.txt", fmt.Sprintf("step %d\n", i))
	w.Write(fmt.Sprintf("new/%d.txt", i%50), fmt.Sprintf("file of step %d\n", i))
	w.Tick()
	w.Venom("checkpoint", "--agent=a1").OK(t)
}

// check is what every test here asserts after its captures, with plain git.
func (w *packWorld) check(t *testing.T, captures, threshold int) {
	t.Helper()
	counts := w.CountObjects()
	require.Equal(t, "0", counts["count"], "loose objects after %d captures", captures)
	require.Equal(t, "0", counts["garbage"], "garbage in objects/pack")
	packs, _ := strconv.Atoi(counts["packs"])
	require.LessOrEqual(t, packs, 2+threshold+2, "packs after %d captures", captures)
	t.Logf("%d captures: %d packs (2 the user's)", captures, packs)
	// The user's packs, byte for byte.
	for f, h := range w.userFiles {
		require.FileExists(t, f)
		require.Equal(t, h, fileHash(f), "%s changed", f)
	}
	// Every checkpoint's commit and tree is there.
	refs := w.VenomRefs()
	require.Len(t, refs, captures)
	var ids []string
	for _, r := range refs {
		name, _, _ := strings.Cut(r, "=")
		ids = append(ids, name, name+"^{tree}")
	}
	batch := w.gitInput(strings.Join(ids, "\n")+"\n", "cat-file", "--batch-check")
	require.NotContains(t, batch, "missing")
	w.Git("fsck", "--connectivity-only", "--no-dangling")
	// git's own gc --auto finds nothing to do: the same packs, no loose object.
	before := w.PackNames()
	w.Git("-c", "gc.autoDetach=false", "gc", "--auto")
	require.Equal(t, before, w.PackNames(), "git gc --auto repacked")
	require.Equal(t, "0", w.CountObjects()["count"])
}

// gitInput runs git with stdin and returns its stdout.
func (e *Env) gitInput(stdin string, args ...string) string {
	e.t.Helper()
	c := exec.Command("git", args...)
	c.Dir = e.Dir
	c.Env = e.Environ()
	c.Stdin = strings.NewReader(stdin)
	out, err := c.Output()
	require.NoError(e.t, err, "git %v", args)
	return string(out)
}

// With the default threshold, some hundreds of captures leave a handful
// of packs, no loose object, and nothing for git gc --auto to do; the
// user's packs stay as they were and a rollback still works.
func TestPacks_HundredsOfCapturesStayAHandful(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t)
	const n = 200
	start := time.Now()
	for i := 1; i <= n; i++ {
		w.capture(t, i)
	}
	t.Logf("%d captures in %v", n, time.Since(start).Round(time.Millisecond))
	w.check(t, n, 8)
	// A rollback to an early checkpoint reads objects that were merged.
	res := w.Rollback("--agent=a1", "--checkpoint=k3", "--restore=files", "--outside=overwrite")
	require.NotEmpty(t, res.Repos[0].Files)
	require.Equal(t, "step 3\n", w.Read("work.txt"))
	require.Equal(t, w.CheckpointTree("a1", 3), w.RecipeTree())
}

// With the threshold lowered to 2 (VENOM_TEST_PACK_THRESHOLD) merges run
// nearly every capture: a thousand captures' worth of merging in fewer.
func TestPacks_LowThresholdMergesOften(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t, "VENOM_TEST_PACK_THRESHOLD=2")
	const n = 120
	for i := 1; i <= n; i++ {
		w.capture(t, i)
	}
	w.check(t, n, 2)
	names := w.recorded()
	require.NotEmpty(t, names)
	for _, name := range names {
		require.FileExists(t, w.Path(".git/objects/pack/"+name+".idx"))
	}
	w.Rollback("--agent=a1", "--checkpoint=k1", "--restore=files", "--outside=overwrite")
	require.Equal(t, "step 1\n", w.Read("work.txt"))
}

// recorded lists git-venom's record of its packs.
func (e *Env) recorded() []string {
	ents, _ := os.ReadDir(filepath.Join(e.StateDir(), "packs"))
	var out []string
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), "pack-") {
			out = append(out, de.Name())
		}
	}
	return out
}

// A capture's commit is in its pack: no loose object after one capture.
func TestPacks_CommitGoesInThePack(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t)
	w.capture(t, 1)
	require.Equal(t, "0", w.CountObjects()["count"])
	commit := w.Git("rev-parse", "refs/venom/checkpoints/a1/1")
	require.Len(t, w.recorded(), 1)
	idx := w.Path(".git/objects/pack/" + w.recorded()[0] + ".idx")
	f, err := os.Open(idx)
	require.NoError(t, err)
	defer f.Close()
	require.Contains(t, w.gitStdin(f, "show-index"), commit)
}

// gitStdin runs git with stdin from r.
func (e *Env) gitStdin(r io.Reader, args ...string) string {
	e.t.Helper()
	c := exec.Command("git", args...)
	c.Dir = e.Dir
	c.Env = e.Environ()
	c.Stdin = r
	out, err := c.Output()
	require.NoError(e.t, err, "git %v", args)
	return string(out)
}

// A kill -9 at each step of a merge leaves every object readable, and the
// next capture finishes the merge or undoes it: no intent, no temporary
// file, no pack without its index, the record naming exactly what is there.
func TestPacks_KilledMergeRecovers(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"pack-merge-sealed", "pack-merge-intent", "pack-merge-install",
		"pack-merge-installed", "pack-merge-remove"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			w := newPackWorld(t, "VENOM_TEST_PACK_THRESHOLD=2")
			// Up to the threshold: the next capture's pack starts a merge.
			i := 1
			for ; i == 1 || len(w.recorded()) < 2; i++ {
				w.capture(t, i)
			}
			w.Write("work.txt", "killed\n")
			cmd := w.StartPaused(point, nil, "checkpoint", "--agent=a1")
			Kill9(t, cmd)
			require.True(t, lockFree(w.Env))
			// Every object of every checkpoint the killed capture left.
			w.Git("fsck", "--connectivity-only", "--no-dangling")
			for _, r := range w.VenomRefs() {
				name, _, _ := strings.Cut(r, "=")
				w.Git("cat-file", "-e", name+"^{tree}")
			}
			w.capture(t, i)
			_, err := os.Stat(filepath.Join(w.StateDir(), "packs", "merge"))
			require.True(t, os.IsNotExist(err), "the merge's intent is left")
			files, _ := filepath.Glob(w.Path(".git/objects/pack/*"))
			for _, f := range files {
				require.False(t, strings.Contains(filepath.Base(f), "tmp_"), "left %s", f)
				if strings.HasSuffix(f, ".pack") {
					require.FileExists(t, strings.TrimSuffix(f, ".pack")+".idx")
				}
			}
			for _, name := range w.recorded() {
				require.FileExists(t, w.Path(".git/objects/pack/"+name+".idx"))
			}
			require.Equal(t, len(w.PackNames())-2, len(w.recorded()), "packs outside the record")
			w.check(t, len(w.VenomRefs()), 2)
		})
	}
}

// A git cat-file --batch started before the captures reads every object,
// old and new, while merges replace the packs under it.
func TestPacks_ConcurrentReaderNeverMisses(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t, "VENOM_TEST_PACK_THRESHOLD=2")
	w.capture(t, 0)
	cat := exec.Command("git", "cat-file", "--batch")
	cat.Dir, cat.Env = w.Dir, w.Environ()
	in, err := cat.StdinPipe()
	require.NoError(t, err)
	outPipe, err := cat.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cat.Start())
	defer func() { in.Close(); _ = cat.Wait() }()
	out := bufio.NewReader(outPipe)

	var mu sync.Mutex
	var ids []string
	// A checkpoint's objects are fixed by its commit: each commit is read
	// once, and ids is the objects of the refs there now.
	objectsOf := map[string][]string{}
	addIDs := func() {
		var more []string
		for _, r := range w.VenomRefs() {
			_, commit, _ := strings.Cut(r, "=")
			if _, ok := objectsOf[commit]; !ok {
				objs := []string{commit, w.Git("rev-parse", commit+"^{tree}")}
				for _, line := range strings.Split(w.Git("ls-tree", "-r", "-t", commit), "\n") {
					f := strings.Fields(line)
					objs = append(objs, f[2])
				}
				objectsOf[commit] = objs
			}
			more = append(more, objectsOf[commit]...)
		}
		mu.Lock()
		ids = more
		mu.Unlock()
	}
	addIDs()
	done := make(chan struct{})
	failed := make(chan string, 1)
	reads, retried := 0, 0
	go func() {
		defer close(failed)
		for {
			select {
			case <-done:
				return
			default:
			}
			mu.Lock()
			batch := append([]string(nil), ids...)
			mu.Unlock()
			for _, id := range batch {
				// git rescans objects/pack once after a miss, and opens the
				// packs it listed only after: a reader held up between the two
				// while a merge replaces them misses, as beside git repack -a -d.
				// Asked again, it rescans; an object missing thrice running is lost.
				var head string
				var err error
				for try := 0; try < 3; try++ {
					fmt.Fprintln(in, id)
					head, err = out.ReadString('\n')
					if err != nil || !strings.HasSuffix(strings.TrimSpace(head), "missing") {
						break
					}
					retried++
				}
				if err != nil || strings.HasSuffix(strings.TrimSpace(head), "missing") {
					failed <- fmt.Sprintf("%s: %q %v", id, head, err)
					return
				}
				size, _ := strconv.Atoi(strings.Fields(head)[2])
				if _, err := io.CopyN(io.Discard, out, int64(size)+1); err != nil {
					failed <- err.Error()
					return
				}
				reads++
			}
		}
	}()
	merges := 0
	for i := 1; i <= 40; i++ {
		before := len(w.PackNames())
		w.capture(t, i)
		if len(w.PackNames()) <= before {
			merges++ // a merge replaced packs under the reader
		}
		addIDs()
	}
	close(done)
	msg, bad := <-failed
	require.False(t, bad, "the reader missed an object: %s", msg)
	require.Greater(t, merges, 10)
	t.Logf("%d objects read through %d pack changes, %d asked again", reads, merges, retried)
}
