package statefile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func TestOpen_RefusesALinkOnTheWay(t *testing.T) {
	dir := tempDir(t)
	outside := filepath.Join(dir, "outside")
	require.NoError(t, os.Mkdir(outside, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "state"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "state", "venom")))

	_, err := Open(filepath.Join(dir, "state", "venom", "lock"), os.O_RDWR|os.O_CREATE, 0o666)
	var nr *NotRegularError
	require.ErrorAs(t, err, &nr)
	assert.Equal(t, filepath.Join(dir, "state", "venom"), nr.Path)
	assert.Equal(t, "symbolic link", nr.Kind)
	assert.Contains(t, err.Error(), "not a folder")
	assert.Error(t, MkdirAll(filepath.Join(dir, "state", "venom", "index")))
	assert.Error(t, WriteAtomic(filepath.Join(dir, "state", "venom", "x.json"), []byte("{}"), 0o666))
	entries, _ := os.ReadDir(outside)
	assert.Empty(t, entries, "nothing made through the link")
}

func TestOpen_RefusesALinkFIFOOrFolderAtTheEnd(t *testing.T) {
	dir := tempDir(t)
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "folder"), 0o755))
	for name, kind := range map[string]string{"link": "symbolic link", "fifo": "FIFO", "folder": "directory"} {
		_, err := Open(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o666)
		var nr *NotRegularError
		require.ErrorAs(t, err, &nr, name)
		assert.Equal(t, kind, nr.Kind)
	}
	b, _ := os.ReadFile(target)
	assert.Equal(t, "keep", string(b))
	_, err := ReadFile(filepath.Join(dir, "missing"))
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

func TestWriteAtomic_ReplacesALinkAndLeavesNoTemporary(t *testing.T) {
	dir := tempDir(t)
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("keep"), 0o644))
	p := filepath.Join(dir, "state", "meta.json")
	require.NoError(t, MkdirAll(filepath.Dir(p)))
	require.NoError(t, os.Symlink(target, p))

	require.NoError(t, WriteAtomic(p, []byte("new"), 0o666))
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
	b, _ := ReadFile(p)
	assert.Equal(t, "new", string(b))
	b, _ = os.ReadFile(target)
	assert.Equal(t, "keep", string(b))
	entries, _ := os.ReadDir(filepath.Dir(p))
	assert.Len(t, entries, 1, "no temporary file left")
}

func TestCreateTemp_NamesAreNewAndUnpredictable(t *testing.T) {
	dir := filepath.Join(tempDir(t), "tmp")
	a, err := CreateTemp(dir, "capture-*.index")
	require.NoError(t, err)
	b, err := CreateTemp(dir, "capture-*.index")
	require.NoError(t, err)
	a.Close()
	b.Close()
	assert.NotEqual(t, a.Name(), b.Name())
	for _, n := range []string{a.Name(), b.Name()} {
		base := filepath.Base(n)
		assert.True(t, strings.HasPrefix(base, "capture-") && strings.HasSuffix(base, ".index"), base)
		assert.Len(t, base, len("capture-.index")+16)
	}
	name, err := TempName(dir, "x-*")
	require.NoError(t, err)
	_, err = os.Lstat(name)
	assert.True(t, errors.Is(err, os.ErrNotExist), "TempName leaves the name free")
}

func TestRemoveAll_DoesNotFollowTheFolderAbove(t *testing.T) {
	dir := tempDir(t)
	outside := filepath.Join(dir, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "tmp"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "tmp", "keep"), nil, 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "venom")))
	assert.Error(t, RemoveAll(filepath.Join(dir, "venom", "tmp")))
	assert.FileExists(t, filepath.Join(outside, "tmp", "keep"))
}

// git is the oracle for core.sharedRepository: for each value, the modes
// git gives a ref, the folder it makes for it and a loose object are the
// ones Shared.Mode computes, and git refuses the values ParseShared does.
func TestShared_AgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	values := []string{"umask", "group", "all", "world", "everybody", "true", "false", "yes", "off",
		"0", "1", "2", "0640", "0660", "0664", "0666", "0600", "600", "0644", "0400", "bogus", "0x10", "8", " 0660", "+0660", "1k", "0k", "0b1", "1_0", "-1", "TRUE", "Group"}
	gitIn := func(dir string, args ...string) (string, error) {
		c := exec.Command("git", append([]string{"-C", dir}, args...)...)
		c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := c.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	// One git init; each value gets a copy of its own.
	fixture := tempDir(t)
	_, err := gitIn(fixture, "init", "-q")
	require.NoError(t, err)
	for _, v := range values {
		t.Run(v, func(t *testing.T) {
			dir := tempDir(t)
			git := func(args ...string) (string, error) { return gitIn(dir, args...) }
			gittest.CopyTree(t, fixture, dir)
			_, err := git("config", "core.sharedRepository", v)
			require.NoError(t, err)
			s, perr := ParseShared(v, true)
			blob, gerr := git("hash-object", "-w", "--stdin")
			if gerr != nil {
				assert.Error(t, perr, "git refuses %q: %s", v, blob)
				return
			}
			require.NoError(t, perr, "git takes %q", v)
			_, err = git("update-ref", "refs/venom/d/x", blob)
			require.NoError(t, err)
			mode := func(p string) uint32 {
				var st syscall.Stat_t
				require.NoError(t, syscall.Lstat(filepath.Join(dir, ".git", p), &st))
				return st.Mode &^ syscall.S_IFMT
			}
			file, folder := uint32(0o666&^umask), uint32(0o777&^umask)
			assert.Equal(t, mode("refs/venom/d/x"), s.Mode(file, false), "a ref")
			assert.Equal(t, mode("refs/venom/d"), s.Mode(folder, true), "a ref's new folder")
			assert.Equal(t, mode("objects/"+blob[:2]+"/"+blob[2:]), s.Mode(0o444, false), "a loose object")
		})
	}
	s, err := ParseShared("", false)
	assert.NoError(t, err)
	assert.Equal(t, SharedGroup, s, "a key without a value is group")
}
