package ignore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParse_LikeGit checks the line handling of add_patterns_from_buffer and
// the fields parse_path_pattern derives.
func TestParse_LikeGit(t *testing.T) {
	const (
		noDir, endsWith, mustBeDir, negative = flagNoDir, flagEndsWith, flagMustBeDir, flagNegative
	)
	for _, c := range []struct {
		name, content string
		want          []pattern
	}{
		{"bom, comment, empty line", "\xef\xbb\xbf#c\n\nfoo\n", []pattern{{"foo", 3, noDir}}},
		{"a BOM later is literal", "a\n\xef\xbb\xbfb", []pattern{{"a", 1, noDir}, {"\xef\xbb\xbfb", 4, noDir}}},
		{"crlf, last line without newline", "a\r\nb/c\r\nd", []pattern{{"a", 1, noDir}, {"b/c", 3, 0}, {"d", 1, noDir}}},
		{"only the \\r before \\n goes", "a\r\r\n", []pattern{{"a\r", 2, noDir}}},
		{"a lone \\r is an empty pattern", "\r\n", []pattern{{"", 0, noDir}}},
		{"spaces trimmed, not tabs", "a  \nb\t\n  \n", []pattern{{"a", 1, noDir}, {"b\t", 2, noDir}, {"", 0, noDir}}},
		{"escaped space kept", `a\ ` + " \n", []pattern{{`a\ `, 1, noDir}}},
		{"a trailing backslash keeps spaces", "a \\", []pattern{{"a \\", 2, noDir}}},
		{"# only at column 0", " #a\n\\#b\n", []pattern{{" #a", 3, noDir}, {`\#b`, 0, noDir}}},
		{"negative dir-only", "!foo/\n", []pattern{{"foo", 3, noDir | mustBeDir | negative}}},
		{"\\! is literal", `\!x`, []pattern{{`\!x`, 0, noDir}}},
		{"anchored", "/foo\n/a/b/\n", []pattern{{"/foo", 4, 0}, {"/a/b", 4, mustBeDir}}},
		{"middle slash and literal prefix", "a/*.c\n", []pattern{{"a/*.c", 2, 0}}},
		{"endswith", "*.c\n*\n*.c/\n*/x\n", []pattern{
			{"*.c", 0, noDir | endsWith}, {"*", 0, noDir | endsWith},
			{"*.c", 0, noDir | endsWith | mustBeDir}, {"*/x", 0, endsWith},
		}},
		{"not endswith", "*.[ch]\n**\n", []pattern{{"*.[ch]", 0, noDir}, {"**", 0, noDir}}},
		{"NUL ends a line", "ab\x00cd\n", []pattern{{"ab", 2, noDir}}},
		{"lone ! and /", "!\n/\n", []pattern{{"", 0, noDir | negative}, {"", 0, noDir | mustBeDir}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := Parse([]byte(c.content), "d/")
			assert.Equal(t, c.want, l.patterns)
			assert.Equal(t, "d/", l.base)
			assert.False(t, l.Unsupported())
		})
	}
	assert.Empty(t, Parse(nil, "").patterns)
}

// TestStack_KnownCases pins git behaviours worth knowing, each checked both
// against an expected list and against git itself.
func TestStack_KnownCases(t *testing.T) {
	r := newGitRepo(t)
	for _, c := range []struct {
		name   string
		files  map[string]string // path -> content; "->x" makes a symlink to x
		want   []string          // what git lists, .gitignore files included
		global string            // info/exclude
	}{
		{
			name:  "a negation cannot re-include a file of an excluded directory",
			files: map[string]string{".gitignore": "d/\n!d/f\n", "d/f": "", "e/f": ""},
			want:  []string{".gitignore", "e/f"},
		},
		{
			name:  "nor can the directory's own .gitignore",
			files: map[string]string{".gitignore": "d\n", "d/.gitignore": "!f\n", "d/f": ""},
			want:  []string{".gitignore"},
		},
		{
			name:  "re-including directories lets a negation reach their files",
			files: map[string]string{".gitignore": "*\n!*/\n!*.txt\n", "a/b.txt": "", "a/b.o": "", "c.txt": ""},
			want:  []string{"a/b.txt", "c.txt"},
		},
		{
			name:  "a dir-only pattern does not match a symlink to a directory",
			files: map[string]string{".gitignore": "lnk/\nl2\n", "d/f": "", "lnk": "->d", "l2": "->d"},
			want:  []string{".gitignore", "d/f", "lnk"},
		},
		{
			name:   "the deeper .gitignore wins, info/exclude comes last",
			files:  map[string]string{".gitignore": "!*.o\n", "a/.gitignore": "x.o\n", "a/x.o": "", "a/y.o": "", "z.o": ""},
			want:   []string{".gitignore", "a/.gitignore", "a/y.o", "z.o"},
			global: "*.o\n",
		},
		{
			name:  "anchored and middle-slash patterns are relative to their .gitignore",
			files: map[string]string{"a/.gitignore": "/f\nb/g\n", "a/f": "", "a/c/f": "", "a/b/g": "", "b/g": "", "f": ""},
			want:  []string{"a/.gitignore", "a/c/f", "b/g", "f"},
		},
		{
			// git compares the literal prefix "x" itself and hands
			// "**/y" to wildmatch, where "**/" is then at the start
			// and may even match nothing: "xy" goes too.
			name:  "x**/y crosses directories, unlike a plain glob",
			files: map[string]string{".gitignore": "x**/y\n", "x/a/y": "", "xz/q/y": "", "x/y": "", "xy": "", "xa": ""},
			want:  []string{".gitignore", "xa"},
		},
		{
			name:  "trailing spaces: trimmed unless escaped",
			files: map[string]string{".gitignore": "a  \nb\\ \n", "a": "", "a ": "", "b": "", "b ": ""},
			want:  []string{".gitignore", "a ", "b"},
		},
		{
			name:  "a symlinked .gitignore is not read",
			files: map[string]string{"real": "f\n", ".gitignore": "->real", "f": ""},
			want:  []string{".gitignore", "f", "real"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r.reset(t)
			for p, content := range c.files {
				full := filepath.Join(r.top, filepath.FromSlash(p))
				require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
				if dest, ok := strings.CutPrefix(content, "->"); ok {
					require.NoError(t, os.Symlink(dest, full))
				} else {
					require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
				}
			}
			if c.global != "" {
				require.NoError(t, os.WriteFile(filepath.Join(r.gitDir, "info", "exclude"), []byte(c.global), 0o644))
			}
			assert.Equal(t, c.want, r.untrackedByGit(t), "git")
			assert.Equal(t, c.want, r.untrackedByStack(t), "Stack")
		})
	}
}

// TestStack_Paths checks Path, DirExcluded and that an excluded directory's
// .gitignore is not read.
func TestStack_Paths(t *testing.T) {
	top := Root(Parse([]byte("skip/\n"), "")).Top([]byte("!keep\n"))
	assert.Equal(t, "", top.Path())
	a := top.Child("a", []byte("x\n"))
	assert.Equal(t, "a/", a.Path())
	assert.False(t, a.DirExcluded())
	assert.True(t, a.Excluded("x", false))
	b := a.Child("b", nil)
	assert.Equal(t, "a/b/", b.Path())
	assert.True(t, b.Excluded("x", true), "a/.gitignore applies below a/")
	skip := b.Child("skip", []byte("!*\n"))
	assert.Equal(t, "a/b/skip/", skip.Path())
	assert.True(t, skip.DirExcluded())
	assert.True(t, skip.Excluded("keep", false), "nothing re-includes inside an excluded directory")
	assert.True(t, skip.Child("c", nil).DirExcluded())
	assert.False(t, top.Unsupported())
}
