package packset

import (
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/packfile"
)

func sizes(ps []pack) []int64 {
	var out []int64
	for _, p := range ps {
		out = append(out, p.size)
	}
	return out
}

func packsOf(sz ...int64) []pack {
	var ps []pack
	for i, s := range sz {
		ps = append(ps, pack{fmt.Sprint("p", i), s})
	}
	return ps
}

// The split is git repack --geometric=2's, cut to the budget.
func TestSplit_GeometricWithinBudget(t *testing.T) {
	for _, c := range []struct {
		in     []int64
		budget int64
		want   []int64
	}{
		{[]int64{1, 2, 4, 8}, 100, nil},                // a progression: nothing
		{[]int64{1, 1, 4, 8}, 100, []int64{1, 1}},      // the bottom breaks it
		{[]int64{1, 1, 3, 100}, 100, []int64{1, 1, 3}}, // 3 < 2*(1+1)
		{[]int64{5, 1, 1, 1, 1, 1}, 100, []int64{1, 1, 1, 1, 1, 5}},
		{[]int64{1, 1, 1, 1, 50, 60}, 100, []int64{1, 1, 1, 1, 50}}, // the budget stops before 60
		{[]int64{200, 300}, 100, nil},
	} {
		got := sizes(split(packsOf(c.in...), c.budget))
		require.Equal(t, c.want, got, "%v", c.in)
	}
}

// Over 100,000 captures of about a kilobyte the packs stay a handful.
func TestSplit_StaysAHandful(t *testing.T) {
	var packs []pack
	most := 0
	for i := 0; i < 100000; i++ {
		packs = append(packs, pack{fmt.Sprint("p", i), 900 + int64(i%7)*50})
		most = max(most, len(packs))
		if len(packs) <= Threshold {
			continue
		}
		if m := split(packs, Budget); len(m) >= 2 {
			var sum int64
			for _, p := range m {
				sum += p.size
			}
			packs = append([]pack{{fmt.Sprint("m", i), sum}}, packs[len(m):]...)
		}
	}
	require.LessOrEqual(t, most, 14)
}

type world struct {
	t       *testing.T
	dir     string
	packDir string
	state   string
	blobs   []string
}

func newWorld(t *testing.T) *world {
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	return &world{t: t, dir: dir, packDir: filepath.Join(dir, ".git", "objects", "pack"),
		state: filepath.Join(dir, ".git", "venom")}
}

// capture writes a pack of n new blobs and records it, as a capture does.
func (w *world) capture(n int) string {
	pw, err := packfile.Create(w.packDir, n)
	require.NoError(w.t, err)
	for i := 0; i < n; i++ {
		data := []byte(fmt.Sprintf("blob %d of capture %d\n", i, len(w.blobs)))
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(data))
		h.Write(data)
		var id [20]byte
		copy(id[:], h.Sum(nil))
		require.NoError(w.t, pw.Add(id, packfile.Blob, data))
		w.blobs = append(w.blobs, fmt.Sprintf("%x", id))
	}
	name, err := pw.Finish()
	require.NoError(w.t, err)
	require.NoError(w.t, Mark(w.state, name))
	return name
}

// readable: git finds every blob written so far.
func (w *world) readable() {
	out := gittest.Run(w.t, w.dir, strings.Join(w.blobs, "\n")+"\n", nil, "cat-file", "--batch-check")
	require.NotContains(w.t, out, "missing")
}

func (w *world) packs() []string {
	m, _ := filepath.Glob(filepath.Join(w.packDir, "*.pack"))
	return m
}

// Merges keep every object, leave a handful of packs, and never touch a
// pack that is not in the record or that has a .keep.
func TestMaintain_MergesOnlyOurs(t *testing.T) {
	w := newWorld(t)
	user := filepath.Join(w.dir, "user.txt")
	require.NoError(t, os.WriteFile(user, []byte("mine\n"), 0o644))
	gittest.Run(t, w.dir, "", nil, "add", "user.txt")
	gittest.Run(t, w.dir, "", nil, "repack", "-q")
	userPacks := w.packs()
	require.Len(t, userPacks, 1)
	userBytes, err := os.ReadFile(userPacks[0])
	require.NoError(t, err)
	kept := w.capture(1)
	require.NoError(t, os.WriteFile(filepath.Join(w.packDir, kept+".keep"), nil, 0o644))
	merges := 0
	for i := 0; i < 200; i++ {
		w.capture(1 + i%3)
		rep, err := Maintain(w.state, w.packDir, Options{})
		require.NoError(t, err)
		if rep.New != "" {
			merges++
		}
		require.LessOrEqual(t, rep.Packs, Threshold+2)
	}
	require.Greater(t, merges, 10)
	w.readable()
	got, err := os.ReadFile(userPacks[0])
	require.NoError(t, err)
	require.Equal(t, userBytes, got)
	require.FileExists(t, filepath.Join(w.packDir, kept+".pack"))
	require.LessOrEqual(t, len(w.packs()), Threshold+3)
	ents, err := os.ReadDir(w.packDir)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), "tmp_"), e.Name())
	}
}

// A recorded pack the user's gc removed leaves the record.
func TestMaintain_DropsGonePacks(t *testing.T) {
	w := newWorld(t)
	gone := w.capture(1)
	w.capture(1)
	require.NoError(t, os.Remove(filepath.Join(w.packDir, gone+".idx")))
	require.NoError(t, os.Remove(filepath.Join(w.packDir, gone+".pack")))
	rep, err := Maintain(w.state, w.packDir, Options{})
	require.NoError(t, err)
	require.Equal(t, []string{gone}, rep.Dropped)
	names, err := Recorded(w.state)
	require.NoError(t, err)
	require.Len(t, names, 1)
}

// A merge interrupted at each step is finished or undone by the next
// Maintain, and every object stays readable at every step.
func TestMaintain_FinishesOrUndoesAnInterruptedMerge(t *testing.T) {
	if !testhook.Enabled {
		t.Skip("the hooks are off: this needs -tags venomtest")
	}
	for _, point := range []string{"pack-merge-sealed", "pack-merge-intent", "pack-merge-install",
		"pack-merge-installed", "pack-merge-remove", "pack-merge-remove#2"} {
		t.Run(point, func(t *testing.T) {
			w := newWorld(t)
			for i := 0; i < 4; i++ {
				w.capture(2)
			}
			t.Setenv("VENOM_TEST_FAIL_AT", point)
			_, err := Maintain(w.state, w.packDir, Options{Threshold: 2})
			require.Error(t, err)
			w.readable()
			os.Unsetenv("VENOM_TEST_FAIL_AT")
			rep, err := Maintain(w.state, w.packDir, Options{Threshold: 100})
			require.NoError(t, err)
			w.readable()
			_, err = os.Stat(intentPath(w.state))
			require.True(t, os.IsNotExist(err), "the intent is left")
			names, err := Recorded(w.state)
			require.NoError(t, err)
			require.Equal(t, len(w.packs()), len(names), "the record and the packs differ (%+v)", rep)
			for _, n := range names {
				require.FileExists(t, filepath.Join(w.packDir, n+".idx"))
			}
			gittest.Run(t, w.dir, "", nil, "count-objects", "-v")
			out := gittest.Run(t, w.dir, "", nil, "count-objects", "-v")
			require.Contains(t, out, "garbage: 0")
		})
	}
}
