package gitconfig

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitList is what git reads of a file: `git config -f F --list -z`, each
// record "name\nvalue" or "name" for a key without a value; ok is false when
// git refuses the file.
func gitList(t *testing.T, text string) ([]Entry, bool) {
	path := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	cmd := exec.Command("git", "config", "-f", path, "--list", "-z")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	var es []Entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		name, value, has := strings.Cut(string(rec), "\n")
		es = append(es, Entry{Name: name, Value: value, HasValue: has})
	}
	return es, true
}

// Every file the parser reads, it reads as git does; a file git refuses, it
// refuses. (It may refuse more than git: its callers then ask git.)
func TestParse_AgreesWithGit(t *testing.T) {
	files := []string{
		"",
		"\n\n",
		"[venom]\n\tkeep = 3\n",
		"[venom]\nkeep=3\n[Venom]\n  KeepFor  =  2d  \n",
		"[venom]\n\tenabled\n",
		"[venom]\n\tenabled =\n",
		"[venom]\n\trollbackNote = \"  quoted  \" and more  # comment\n",
		"[venom]\n\trollbackNote = a\\tb\\nc\\\\d\\\"e\n",
		"[venom]\n\trollbackNote = one \\\n two\n",
		"[venom]\n\trollbackNote = \"semi;colon # hash\" ; comment\n",
		"[venom]\r\n\tkeep = 5\r\n",
		"\xef\xbb\xbf[venom]\n\tkeep = 5\n",
		"# comment\n; another\n[venom] keep = 7 ; trailing\n",
		"[venom \"Sub.Section\"]\n\tkeep = 1\n",
		"[venom \"a\\\"b\\\\c\\d\"]\n\tkeep = 1\n",
		"[venom.Sub]\n\tkeep = 1\n",
		"[user]\n\tname = A \"B\" C\n[venom]\n\tkeep = 9\n[alias]\n\tlg = log --graph \\\n --oneline\n",
		"[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\trequired = true\n",
		"[venom]\n\tkeep-for = 1\n\tk9 = x\n",
		"[venom]\n\tkeep = 3\n[venom]\n\tkeep = 4\n",
		"[venom]\n\tkeep = \"unterminated\n",
		"[venom\n\tkeep = 1\n",
		"[venom]\n\t9keep = 1\n",
		"[venom]\n\tkeep = a\\qb\n",
		"[venom]\n\tkeep = 1 \\",
		"[venom]\n\tke_ep = 1\n",
		"[venom \"x\"\n",
		"[venom x]\n",
		"[]\n",
		"[ve nom]\n",
		"\xef\xbbx\n",
		"[venom]\n\tkeep = \t\n",
		"[venom]\n\tkeep = \"\"\n",
		"[venom]\n\tkeep = x\ry\n",
		"[venom]\n\trollbackNote = a\tb  c\n",
		"[venom]\n\trollbackNote = a \"\" b\n",
		"[venom]\n\trollbackNote = \"a\" \\\n b\n",
		"[venom]\n\tkeep = é\n",
		"[venom]\n\tkeep",
		"[venom]keep=1",
	}
	for _, text := range files {
		want, gitReads := gitList(t, text)
		got, err := Parse([]byte(text))
		if err != nil {
			continue // refused: the caller asks git
		}
		assert.True(t, gitReads, "git refuses %q, which the parser read as %v", text, got)
		if len(want) == 0 {
			want = nil
		}
		assert.Equal(t, want, got, "%q", text)
	}
}

// The cases that matter are read, not refused: a parser that refused every
// file would agree with git too.
func TestParse_ReadsTheCommonFiles(t *testing.T) {
	for _, text := range []string{
		"[user]\n\tname = A \"B\" C\n[venom]\n\tkeep = 9\n[alias]\n\tlg = log --graph \\\n --oneline\n",
		"[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\trequired = true\n",
		"[venom]\n\trollbackNote = \"  quoted  \" and more  # comment\n",
		"[venom]\r\n\tkeep = 5\r\n",
	} {
		_, err := Parse([]byte(text))
		assert.NoError(t, err, "%q", text)
	}
}

func TestPlainEnvironment(t *testing.T) {
	assert.True(t, PlainEnvironment([]string{"HOME=/h", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=x", "GIT_SSL_CAINFO=/c"}))
	// What git itself sets when it runs git venom-checkpoint.
	assert.True(t, PlainEnvironment([]string{"HOME=/h", "GIT_EXEC_PATH=/usr/lib/git-core"}))
	for _, v := range []string{"GIT_DIR=x", "GIT_CONFIG_PARAMETERS='a.b'='c'", "GIT_CONFIG_COUNT=0", "GIT_CONFIG=/f",
		"GIT_WORK_TREE=/", "GIT_INDEX_FILE=i", "GIT_CEILING_DIRECTORIES=/", "GIT_TRACE=1", "GIT_NEW_THING=1"} {
		assert.False(t, PlainEnvironment([]string{"HOME=/h", v}), v)
	}
}

// ReadFile: a file that is not there has no entries, as for git; one that
// cannot be read or parsed is an error.
func TestReadFile_AbsentReadableAndBroken(t *testing.T) {
	dir := t.TempDir()
	entries, err := ReadFile(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	require.Empty(t, entries)

	good := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(good, []byte("[core]\n\tbare = false\n"), 0o644))
	entries, err = ReadFile(good)
	require.NoError(t, err)
	require.Equal(t, []Entry{{Name: "core.bare", Value: "false", HasValue: true}}, entries)
	entries, err = ReadFile(filepath.Join(good, "under-a-file")) // ENOTDIR: not there either
	require.NoError(t, err)
	require.Empty(t, entries)

	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("[core\n"), 0o644))
	_, err = ReadFile(bad)
	require.Error(t, err)
	_, err = ReadFile(dir) // a folder
	require.Error(t, err)
}

// TestReadFile_OnceWhileTheFileStays: a file is parsed once while its
// stat data stays, and read again once it moves, even to the same size;
// a file changed in the last second is never kept, so a change in the
// same tick of the clock is not missed.
func TestReadFile_OnceWhileTheFileStays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	write := func(text string) {
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	write("[a]\n\tb = 1\n")
	read := func() []Entry {
		e, err := ReadFile(path)
		require.NoError(t, err)
		return e
	}
	n := parses.Load()
	require.Equal(t, []Entry{{Name: "a.b", Value: "1", HasValue: true}}, read())
	require.Equal(t, "1", read()[0].Value)
	require.Equal(t, n+2, parses.Load(), "a file changed in the last second is read each time")

	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
	// Its change time is still now: only a test build can move the margin.
	if !testhook.Enabled {
		t.Skip("needs -tags venomtest (VENOM_TEST_RACY_MS)")
	}
	t.Setenv("VENOM_TEST_RACY_MS", "1")
	time.Sleep(5 * time.Millisecond)
	n = parses.Load()
	require.Equal(t, "1", read()[0].Value)
	e := read()
	require.Equal(t, "1", e[0].Value)
	require.Equal(t, n+1, parses.Load(), "a file that stayed is read once")
	e[0].Value = "changed by a caller"
	require.Equal(t, "1", read()[0].Value, "callers get their own copy")

	write("[a]\n\tb = 2\n") // same size
	require.NoError(t, os.Chtimes(path, old, old))
	time.Sleep(5 * time.Millisecond)
	require.Equal(t, "2", read()[0].Value)
	require.NoError(t, os.Remove(path))
	require.Empty(t, read())
}
