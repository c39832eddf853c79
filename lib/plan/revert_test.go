package plan

import (
	"fmt"
	"strings"
	"testing"

	git "github.com/libgit2/git2go/v34"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConflictLines: the lines a revert's refusal names are the current
// file's lines whose change meets the turn's, and there are some exactly
// when git's merge (libgit2's xdiff) finds a conflict: changes on the same
// or adjacent lines meet, an insertion meets the lines on either side of
// it and nothing else.
func TestConflictLines(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	lib, err := git.OpenRepository(dir)
	require.NoError(t, err)
	defer lib.Free()
	file := func(edits map[int]string, insertAfter map[int]string) []byte {
		var b strings.Builder
		for i := 1; i <= 10; i++ {
			if s, ok := edits[i]; ok {
				b.WriteString(s + "\n")
			} else {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			if s, ok := insertAfter[i]; ok {
				b.WriteString(s + "\n")
			}
		}
		return []byte(b.String())
	}
	blob := func(b []byte) *git.Blob {
		id, err := lib.CreateBlobFromBuffer(b)
		require.NoError(t, err)
		bl, err := lib.LookupBlob(id)
		require.NoError(t, err)
		t.Cleanup(bl.Free)
		return bl
	}
	for _, tc := range []struct {
		name         string
		ours, theirs []byte
		want         []Lines
	}{
		{"same line", file(map[int]string{5: "ours"}, nil), file(map[int]string{5: "theirs"}, nil), []Lines{{5, 5}}},
		{"adjacent lines", file(map[int]string{5: "ours"}, nil), file(map[int]string{6: "theirs"}, nil), []Lines{{5, 5}}},
		{"apart", file(map[int]string{2: "ours"}, nil), file(map[int]string{6: "theirs"}, nil), nil},
		{"insertion after the line changed", file(nil, map[int]string{5: "inserted"}), file(map[int]string{5: "theirs"}, nil),
			[]Lines{{6, 6}}},
		{"insertion before the line changed", file(nil, map[int]string{5: "inserted"}), file(map[int]string{6: "theirs"}, nil),
			[]Lines{{6, 6}}},
		{"insertion a line further", file(nil, map[int]string{5: "inserted"}), file(map[int]string{4: "theirs"}, nil), nil},
		{"a run", file(map[int]string{3: "o3", 4: "o4", 5: "o5"}, nil), file(map[int]string{4: "theirs"}, nil),
			[]Lines{{3, 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := file(nil, nil)
			res, err := git.MergeFile(git.MergeFileInput{Path: "f", Mode: 0o100644, Contents: base},
				git.MergeFileInput{Path: "f", Mode: 0o100644, Contents: tc.ours},
				git.MergeFileInput{Path: "f", Mode: 0o100644, Contents: tc.theirs}, &git.MergeFileOptions{})
			require.NoError(t, err)
			defer res.Free()
			got, err := conflictLines(blob(base), blob(tc.ours), blob(tc.theirs))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, res.Automergeable, len(got) == 0, "the lines named and git's merge disagree")
		})
	}
}

// TestMarkerLines: from each <<<<<<< line to its >>>>>>> line, of the
// markers' length: a line of more "<" is the file's own.
func TestMarkerLines(t *testing.T) {
	merged := "a\n<<<<<<< current\nx\n||||||| base\nb\n=======\ny\n>>>>>>> theirs\nc\n<<<<<<< current\n=======\n>>>>>>> theirs\n"
	assert.Equal(t, []Lines{{2, 8}, {10, 12}}, markerLines([]byte(merged), 7))
	long := "<<<<<<< kept\n<<<<<<<<<< current\nx\n==========\ny\n>>>>>>>>>> theirs\n"
	assert.Equal(t, []Lines{{2, 6}}, markerLines([]byte(long), 10))
}

// TestMarkerSize: conflict-marker-size as git's ll_merge reads it: atoi
// of the value, the default for what is not above 0.
func TestMarkerSize(t *testing.T) {
	for value, want := range map[string]int{"10": 10, "unspecified": 7, "set": 7, "unset": 7, "0": 7, "-3": 7,
		"12abc": 12, "+9": 9, "": 7, "99999": 99999} {
		assert.Equal(t, want, markerSize(value), value)
	}
}
