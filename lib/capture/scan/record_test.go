package scan

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScanRecord_RoundTrip(t *testing.T) {
	rec := &Record{Format: recordFormat, Members: "m", Settings: "s", Excludes: []string{"/x/info/exclude", ""},
		Dirs: []dirState{{Path: "", Stat: fsStat{Mtime: -1, Ctime: 2, Ino: 1 << 40, Size: 4096, Mode: 0o40755}, Listed: 7},
			{Path: "a b/\nc", Listed: 1}},
		Untracked: []string{"a b/new.txt", "nested"},
		Ignores:   []dirState{{Path: ".gitignore", Sum: "abc"}}}
	got, err := decodeRecord(rec.encode())
	require.NoError(t, err)
	require.Equal(t, rec, got)

	// A failed record has no folders, which is not an empty tree's.
	failed := &Record{Format: recordFormat, Members: "m", Failed: 2, Excludes: []string{}, Untracked: []string{}, Ignores: []dirState{}}
	got, err = decodeRecord(failed.encode())
	require.NoError(t, err)
	require.Nil(t, got.Dirs)
	require.Equal(t, 2, got.Failed)

	b := rec.encode()
	for _, cut := range []int{0, 3, 10, len(b) - 1} {
		_, err := decodeRecord(b[:cut])
		require.Error(t, err, "cut at %d", cut)
	}
	_, err = decodeRecord(append(b, 0))
	require.Error(t, err)
}

// TestSortTail: a list sorted but for its tail comes out as sort.Strings
// gives it, whatever the tail.
func TestSortTail(t *testing.T) {
	for _, list := range [][]string{
		nil, {"a"}, {"a", "b"}, {"b", "a"}, {"a", "c", "e", "b", "d"}, {"a", "b", "c", "0"},
		{"a", "b", "z", "y"}, {"a", "a", "b", "a"}, {"d/1", "d/2", "e/1", "d/3", "a", "e/0"},
	} {
		want := append([]string(nil), list...)
		sort.Strings(want)
		got := sortTail(append([]string(nil), list...))
		if len(want) == 0 {
			want = got
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("sortTail(%q) = %q, want %q", list, got, want)
		}
	}
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 500; n++ {
		list := make([]string, rng.Intn(40))
		for i := range list {
			list[i] = fmt.Sprint(rng.Intn(30))
		}
		head := rng.Intn(len(list) + 1)
		sort.Strings(list[:head])
		want := append([]string(nil), list...)
		sort.Strings(want)
		if got := sortTail(list); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("sortTail gave %q, want %q", got, want)
		}
	}
}
