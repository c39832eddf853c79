package scan

import (
	"bytes"
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
		Untracked: pathsOf(t, "a b/new.txt", "nested"),
		Ignores:   []dirState{{Path: ".gitignore", Sum: "abc"}}}
	got, err := decodeRecord(rec.encode())
	require.NoError(t, err)
	require.Equal(t, rec, got)

	// A failed record has no folders, which is not an empty tree's.
	failed := &Record{Format: recordFormat, Members: "m", Failed: 2, Excludes: []string{}, Untracked: pathsOf(t), Ignores: []dirState{}}
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

func pathsOf(t *testing.T, list ...string) Paths {
	p, ok := PathsOf(list)
	require.True(t, ok)
	return p
}

// TestPaths_RoundTrip: paths read back as written, whatever they share;
// out of order or twice spoils the list, and damaged bytes are refused.
func TestPaths_RoundTrip(t *testing.T) {
	list := []string{"a", "a/b", "a/b/c.txt", "a/b/d", "a/bb", "b", "b\x80", "z/" + strings.Repeat("y", 300)}
	p := pathsOf(t, list...)
	require.Equal(t, list, p.Strings())
	n, ok := checkPaths(p.data)
	require.True(t, ok)
	require.Equal(t, len(list), n)
	for cut := 0; cut < len(p.data); cut++ {
		n, ok := checkPaths(p.data[:cut])
		require.False(t, ok && n == len(list), "cut at %d", cut)
	}
	_, ok = PathsOf([]string{"a", "a"})
	require.False(t, ok, "twice")
	_, ok = PathsOf([]string{"b", "a"})
	require.False(t, ok, "out of order")
	// Paths no tree holds: a record naming them is damaged.
	for _, bad := range []string{"", "../x", "a/../../x", "/etc/passwd", ".git/config", "a/.GIT/x", "a//b", "a/./b", "a/", "a\x00b"} {
		_, ok = checkPaths(pathsOf(t, bad).data)
		require.False(t, ok, "%q", bad)
	}
	// Zeros, as a file extended by truncate(2) holds: every path is ""
	// after the one before.
	_, ok = checkPaths(make([]byte, 64))
	require.False(t, ok)

	// Read with some folders' paths left out and others merged in, as
	// a quick scan that read those folders again has them.
	base := pathsOf(t, "a/1", "a/2", "b", "c/1", "c/2", "d/x/1", "e")
	merged := Paths{data: base.data, drop: map[string]bool{"c": true, "": true}, add: []string{"0", "c/0", "c/3", "d/x/0", "f"}}
	want := []string{"0", "a/1", "a/2", "c/0", "c/3", "d/x/0", "d/x/1", "f"}
	require.Equal(t, want, merged.Strings())
	var buf bytes.Buffer
	ok, err := merged.writeTo(&buf, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, pathsOf(t, want...).data, buf.Bytes())
	dup := Paths{data: base.data, add: []string{"b"}}
	ok, err = dup.writeTo(&buf, nil)
	require.NoError(t, err)
	require.False(t, ok, "listed twice")
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

// TestScanRecord_TruncatedAtAPathIsDamaged: the untracked paths run to the
// record's end; a record cut where one of them starts (a write that never
// reached the disk whole) must be refused, not read as a shorter list:
// the quick scan trusts the list for every folder it does not read again,
// and a path left out is a file missing from the capture's tree.
func TestScanRecord_TruncatedAtAPathIsDamaged(t *testing.T) {
	rec := &Record{Format: recordFormat, Members: "m", Excludes: []string{}, Dirs: []dirState{{Path: ""}},
		Untracked: pathsOf(t, "a/1", "a/2", "b/"+strings.Repeat("q", 200)), Ignores: []dirState{}}
	b := rec.encode()
	got, err := decodeRecord(b)
	require.NoError(t, err)
	require.Equal(t, rec.Untracked.Strings(), got.Untracked.Strings())
	for cut := 4; cut < len(b); cut++ {
		got, err := decodeRecord(b[:cut])
		if err == nil {
			t.Fatalf("cut at %d of %d: read as a record of untracked %q", cut, len(b), got.Untracked.Strings())
		}
	}
	// A byte damaged in a path's name is a record damaged too.
	for _, at := range []int{len(b) - 1, len(b) - 205} {
		bad := append([]byte(nil), b...)
		bad[at] ^= 0x01
		_, err := decodeRecord(bad)
		require.Error(t, err, "byte %d of %d changed", at, len(b))
	}
}
