package rollback

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/treepath"
)

// directFile is one file of a directCase: its path, mode and blob.
type directFile struct {
	path    string
	mode    uint32
	content string
}

// directCase is a repository's settings and the files a rollback writes
// there, with how many of them git checkout-index must write.
type directCase struct {
	name   string
	config [][2]string
	attrs  string // the top's .gitattributes, in the tree, not written
	// subAttrs is sub/.gitattributes, in the tree, not written.
	subAttrs string
	// byGit tells the regular files checkout-index writes; nil: all of
	// them when viaGit is not 0.
	byGit  func(path string) bool
	files  []directFile
	viaGit int
	// check looks at what was written, beyond its being git's.
	check func(t *testing.T, dir string)
}

var plainFiles = []directFile{
	{"a.txt", 0o100644, "plain\n"},
	{"d/e/f/deep.txt", 0o100644, "deep\n"},
	{"run.sh", 0o100755, "#!/bin/sh\necho hi\n"},
	{"d/ln", 0o120000, "e/f/deep.txt"},
	{"dangling", 0o120000, "no/such/file"},
	{"cr.bin", 0o100644, "with\r\ncrlf\rand lone cr\n"},
	{"empty", 0o100644, ""},
}

// manyFiles are n files beneath dir: every fourth a link, every fifth
// of the others an executable.
func manyFiles(n int, dir string) []directFile {
	var out []directFile
	for i := 0; i < n; i++ {
		switch {
		case i%4 == 3:
			out = append(out, directFile{fmt.Sprintf("%sl%d", dir, i), 0o120000, fmt.Sprintf("f%d", i-1)})
		case i%5 == 0:
			out = append(out, directFile{fmt.Sprintf("%sx%d", dir, i), 0o100755, fmt.Sprintf("#!/bin/sh\necho %d\n", i)})
		default:
			out = append(out, directFile{fmt.Sprintf("%sf%d", dir, i), 0o100644, fmt.Sprintf("file %d\n", i)})
		}
	}
	return out
}

func directCases() []directCase {
	upper := func(t *testing.T, dir string) {
		b, err := os.ReadFile(filepath.Join(dir, "s/x.up"))
		require.NoError(t, err)
		require.Equal(t, "HELLO\n", string(b), "the smudge filter ran")
	}
	crlf := func(p string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(dir, p))
			require.NoError(t, err)
			require.Equal(t, "one\r\ntwo\r\n", string(b), "%s got CRLF", p)
		}
	}
	return []directCase{
		{name: "plain", files: plainFiles},
		{name: "symlinks-false", config: [][2]string{{"core.symlinks", "false"}}, files: plainFiles,
			check: func(t *testing.T, dir string) {
				fi, err := os.Lstat(filepath.Join(dir, "d/ln"))
				require.NoError(t, err)
				require.True(t, fi.Mode().IsRegular(), "d/ln is %v", fi.Mode())
			}},
		{name: "filter", config: [][2]string{{"filter.upper.smudge", "tr a-z A-Z"}, {"filter.upper.clean", "cat"}},
			attrs: "*.up filter=upper\n", files: append([]directFile{{"s/x.up", 0o100644, "hello\n"}}, plainFiles...),
			viaGit: 1 + 5, check: upper}, // "filter" anywhere: every file but the links
		{name: "eol-crlf", attrs: "*.txt eol=crlf\n", files: []directFile{{"n.txt", 0o100644, "one\ntwo\n"},
			{"ln", 0o120000, "n.txt"}}, viaGit: 1, check: crlf("n.txt")},
		{name: "autocrlf", config: [][2]string{{"core.autocrlf", "true"}},
			files: []directFile{{"n.txt", 0o100644, "one\ntwo\n"}, {"ln", 0o120000, "n.txt"}}, viaGit: 1, check: crlf("n.txt")},
		{name: "autocrlf-novalue", config: [][2]string{{"core.autocrlf", ""}},
			files: []directFile{{"n.txt", 0o100644, "one\ntwo\n"}}, viaGit: 1, check: crlf("n.txt")},
		{name: "text", attrs: "* text\n", config: [][2]string{{"core.eol", "crlf"}},
			files: []directFile{{"n.txt", 0o100644, "one\ntwo\n"}}, viaGit: 1, check: crlf("n.txt")},
		{name: "ident", attrs: "*.c ident\n", files: []directFile{{"i.c", 0o100644, "/* $Id$ */\n"}}, viaGit: 1,
			check: func(t *testing.T, dir string) {
				b, err := os.ReadFile(filepath.Join(dir, "i.c"))
				require.NoError(t, err)
				require.Contains(t, string(b), "$Id: ", "ident expanded")
			}},
		{name: "working-tree-encoding", attrs: "*.u16 text working-tree-encoding=UTF-16LE\n",
			files: []directFile{{"w.u16", 0o100644, "hi\n"}}, viaGit: 1,
			check: func(t *testing.T, dir string) {
				b, err := os.ReadFile(filepath.Join(dir, "w.u16"))
				require.NoError(t, err)
				require.Equal(t, "h\x00i\x00\n\x00", string(b), "encoded")
			}},
		{name: "macro", attrs: "[attr]crlfy text eol=crlf\n*.m crlfy\n",
			files: []directFile{{"m.m", 0o100644, "one\ntwo\n"}}, viaGit: 1, check: crlf("m.m")},
		{name: "many", files: manyFiles(100, ""), viaGit: 0},
		{name: "many-mixed", config: [][2]string{{"filter.upper.smudge", "tr a-z A-Z"}, {"filter.upper.clean", "cat"}},
			subAttrs: "* filter=upper\n", files: append(manyFiles(80, ""), manyFiles(20, "sub/")...), viaGit: 15,
			byGit: func(p string) bool { return strings.HasPrefix(p, "sub/") },
			check: func(t *testing.T, dir string) {
				b, err := os.ReadFile(filepath.Join(dir, "sub/f1"))
				require.NoError(t, err)
				require.Equal(t, "FILE 1\n", string(b), "the smudge filter ran")
			}},
		{name: "attributes-written", files: []directFile{{"a.txt", 0o100644, "a\n"},
			{"sub/.gitattributes", 0o100644, "*.txt eol=crlf\n"}, {"sub/n.txt", 0o100644, "one\ntwo\n"}}, viaGit: 3},
	}
}

// TestWrite_AsGitCheckoutWrites: the files a rollback writes, in process
// where nothing could convert them and by checkout-index elsewhere, are
// byte for byte, mode for mode, what `git checkout` writes for the same
// index entries in the same repository, under umask 022 and 077; the
// count of files checkout-index wrote shows which way each went.
func TestWrite_AsGitCheckoutWrites(t *testing.T) {
	for _, umask := range []int{0o022, 0o077} {
		for _, c := range directCases() {
			t.Run(fmt.Sprintf("%s-umask%03o", c.name, umask), func(t *testing.T) {
				old := unix.Umask(umask)
				defer unix.Umask(old)
				directCaseRun(t, c)
			})
		}
	}
}

func directCaseRun(t *testing.T, c directCase) {
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	gittest.Run(t, dir, "", env, "init", "-q")
	for _, kv := range c.config {
		gittest.Run(t, dir, "", env, "config", kv[0], kv[1])
	}
	if c.config != nil && c.config[0] == [2]string{"core.autocrlf", ""} {
		// A key without "=", which git reads as true.
		f, err := os.OpenFile(filepath.Join(dir, ".git/config"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString("[core]\n\tautocrlf\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	if c.attrs != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte(c.attrs), 0o644))
	}
	if c.subAttrs != "" {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "sub/.gitattributes"), []byte(c.subAttrs), 0o644))
	}
	// The blobs, in one hash-object of files outside the tree.
	blobs := t.TempDir()
	var list []string
	for i, f := range c.files {
		list = append(list, filepath.Join(blobs, fmt.Sprint(i)))
		require.NoError(t, os.WriteFile(list[i], []byte(f.content), 0o644))
	}
	oids := strings.Fields(gittest.Run(t, dir, strings.Join(list, "\n")+"\n", env, "hash-object", "-w", "--no-filters", "--stdin-paths"))
	require.Len(t, oids, len(c.files))
	var writes []entry
	var info, paths []string
	for i, f := range c.files {
		writes = append(writes, entry{f.path, f.mode, oids[i]})
		info = append(info, fmt.Sprintf("%o %s\t%s", f.mode, oids[i], f.path))
		paths = append(paths, f.path)
	}
	ctx := context.Background()
	r, err := repo.Open(ctx, dir, env)
	require.NoError(t, err)
	defer r.Free()
	tmp := filepath.Join(r.StateDir, "tmp")
	ap := newApplier(ctx, r, tmp)
	root, err := treepath.Open(r.Top)
	require.NoError(t, err)
	defer root.Close()
	require.NoError(t, ap.write(root, writes, noPoint))
	require.Equal(t, c.viaGit, ap.viaGit, "files written by checkout-index")
	require.Equal(t, len(writes)-c.viaGit, ap.direct, "files written in process")
	ours := lookAt(t, dir, paths)
	if c.check != nil {
		c.check(t, dir)
	}
	// Direct: the regular files written in process, CR or not.
	for _, w := range ap.written {
		byGit := c.viaGit != 0
		if c.byGit != nil {
			byGit = c.byGit(w.Path)
		}
		require.Equal(t, !byGit, w.Direct, "%s direct", w.Path)
	}
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "the stage and the index are removed")

	// git's own checkout of the same entries, in the same tree.
	gittest.Run(t, dir, strings.Join(info, "\n")+"\n", env, "update-index", "--add", "--index-info")
	for _, p := range paths {
		require.NoError(t, os.Remove(filepath.Join(dir, p)))
	}
	gittest.Run(t, dir, "", env, append([]string{"checkout", "--"}, paths...)...)
	require.Equal(t, lookAt(t, dir, paths), ours)
}

// lookAt describes each path's file: its type and permission bits, and its
// bytes or its link's target.
func lookAt(t *testing.T, dir string, paths []string) map[string]string {
	out := map[string]string{}
	for _, p := range paths {
		abs := filepath.Join(dir, p)
		fi, err := os.Lstat(abs)
		require.NoError(t, err)
		var body []byte
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(abs)
			require.NoError(t, err)
			body = []byte(target)
		} else {
			body, err = os.ReadFile(abs)
			require.NoError(t, err)
		}
		out[p] = fmt.Sprintf("%v %q", fi.Mode(), body)
	}
	return out
}

// TestWrite_TwoThreadsShareNoCache: 4,000 files in as many folders,
// staged by the two writing threads, five times over. They once shared
// the attribute check's cache, whose map then failed with a fatal
// concurrent map access (the 100,000-file bench) or a race under -race.
func TestWrite_TwoThreadsShareNoCache(t *testing.T) {
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	gittest.Run(t, dir, "", env, "init", "-q")
	oid := gittest.Run(t, dir, "same\n", env, "hash-object", "-w", "--no-filters", "--stdin")
	var writes []entry
	for i := 0; i < 4000; i++ {
		writes = append(writes, entry{fmt.Sprintf("d%d/f", i), 0o100644, oid})
	}
	ctx := context.Background()
	r, err := repo.Open(ctx, dir, env)
	require.NoError(t, err)
	defer r.Free()
	ap := newApplier(ctx, r, filepath.Join(r.StateDir, "tmp"))
	for round := 0; round < 5; round++ {
		d, free := ap.newDirect(nil, writes, true)
		require.NotNil(t, d)
		stage, err := os.Open(t.TempDir())
		require.NoError(t, err)
		st := make([]staged, len(writes))
		err = d.stageAll(ctx, int(stage.Fd()), writes, st, nil)
		free()
		require.NoError(t, err)
		names, err := stage.Readdirnames(-1)
		require.NoError(t, err)
		require.NoError(t, stage.Close())
		require.Len(t, names, len(writes))
		for i := range st {
			require.Equal(t, stagedName(i), st[i].name)
		}
	}
}

// TestWrite_UnnamedInItsFolder: a regular file whose folder is in the
// tree is made unnamed there (its inode taken near the folder's, as git's
// checkout takes it) and held, named nowhere, with the modes git's
// checkout gives under umask 022 and 077; one whose folder is missing is
// made unnamed in the nearest folder above; nothing is ever named in the
// tree or in the stage. Where it cannot be linked into the stage (here a
// stage on another file system), nameHeld names a copy there.
func TestWrite_UnnamedInItsFolder(t *testing.T) {
	for _, umask := range []int{0o022, 0o077} {
		t.Run(fmt.Sprintf("umask%03o", umask), func(t *testing.T) {
			old := unix.Umask(umask)
			defer unix.Umask(old)
			dir := t.TempDir()
			env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			gittest.Run(t, dir, "", env, "init", "-q")
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "have/sub"), 0o755))
			blob := func(content string) string {
				return gittest.Run(t, dir, content, env, "hash-object", "-w", "--no-filters", "--stdin")
			}
			contents := []string{"a\n", "#!/bin/sh\n", "b\n", "c\n", "top\n"}
			writes := []entry{
				{"have/a.txt", 0o100644, blob(contents[0])},
				{"have/run.sh", 0o100755, blob(contents[1])},
				{"have/sub/b.txt", 0o100644, blob(contents[2])},
				{"new/c.txt", 0o100644, blob(contents[3])},
				{"top.txt", 0o100644, blob(contents[4])},
			}
			ctx := context.Background()
			r, err := repo.Open(ctx, dir, env)
			require.NoError(t, err)
			defer r.Free()
			root, err := treepath.Open(r.Top)
			require.NoError(t, err)
			defer root.Close()
			ap := newApplier(ctx, r, filepath.Join(r.StateDir, "tmp"))
			d, free := ap.newDirect(root, writes, true)
			require.NotNil(t, d)
			defer free()
			stage, err := os.Open(t.TempDir())
			require.NoError(t, err)
			defer stage.Close()
			folders := &folderCache{root: root}
			defer folders.close()
			var held []staged
			for i, e := range writes {
				s, err := d.write(int(stage.Fd()), stagedName(i), e, folders)
				require.NoError(t, err)
				held = append(held, s)
				require.Equal(t, stagedName(i), s.name)
				require.True(t, s.unnamed, "%s made unnamed in its folder, or the top for new/", e.path)
				require.True(t, s.held, "%s held unnamed", e.path)
				b, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", s.fd))
				require.NoError(t, err)
				require.Equal(t, contents[i], string(b), "%s", e.path)
				var st unix.Stat_t
				require.NoError(t, unix.Fstat(s.fd, &st))
				perm := uint32(0o666)
				if e.mode == 0o100755 {
					perm = 0o777
				}
				require.Equal(t, perm&^uint32(umask), st.Mode&0o777, "%s", e.path)
			}
			defer closeHeld(held)
			left, err := os.ReadDir(stage.Name())
			require.NoError(t, err)
			require.Empty(t, left, "nothing named in the stage")
			// Named in the stage: by a link, and where none can be made,
			// as a copy of the same bytes and mode.
			require.NoError(t, nameHeld(int(stage.Fd()), &held[0]))
			require.Equal(t, contents[0], readFile(t, filepath.Join(stage.Name(), held[0].name)))
			if other, err := otherFileSystem(t, dir); err == nil && !unnamedRefused.Load() {
				defer os.RemoveAll(other)
				defer unnamedRefused.Store(false)
				sf, err := os.Open(other)
				require.NoError(t, err)
				defer sf.Close()
				require.NoError(t, nameHeld(int(sf.Fd()), &held[1]))
				require.True(t, unnamedRefused.Load(), "not linked across file systems")
				name := filepath.Join(other, held[1].name)
				require.Equal(t, contents[1], readFile(t, name))
				fi, err := os.Lstat(name)
				require.NoError(t, err)
				require.Equal(t, os.FileMode(0o777)&^os.FileMode(umask), fi.Mode().Perm())
			}
			var names []string
			require.NoError(t, filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
				if e.Name() == ".git" {
					return filepath.SkipDir
				}
				names = append(names, p[len(dir):])
				return err
			}))
			require.Equal(t, []string{"", "/have", "/have/sub"}, names, "nothing named in the tree")
		})
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}

// otherFileSystem makes a folder on a file system other than dir's: on
// /dev/shm, /tmp or /var/tmp, whichever is not dir's (tests/run may put
// TMPDIR on /dev/shm).
func otherFileSystem(t *testing.T, dir string) (string, error) {
	var mine unix.Stat_t
	if err := unix.Stat(dir, &mine); err != nil {
		return "", err
	}
	for _, base := range []string{"/dev/shm", "/tmp", "/var/tmp"} {
		var st unix.Stat_t
		if unix.Stat(base, &st) == nil && st.Dev != mine.Dev {
			return os.MkdirTemp(base, "stage-")
		}
	}
	t.Log("no other file system to stage on: the copy case is not run")
	return "", os.ErrNotExist
}
