package treepath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// tree makes top/d/x and outside/x, returning both folders.
func tree(t *testing.T) (top, outside string) {
	t.Helper()
	base := t.TempDir()
	top, outside = filepath.Join(base, "top"), filepath.Join(base, "outside")
	for _, f := range []string{filepath.Join(top, "d", "x"), filepath.Join(outside, "x")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return top, outside
}

func eachResolver(t *testing.T, run func(t *testing.T)) {
	t.Run("openat2", run)
	t.Run("walk", func(t *testing.T) {
		walkOnly.Store(true)
		defer walkOnly.Store(false)
		run(t)
	})
}

func TestRootNeverFollowsAParentLink(t *testing.T) {
	eachResolver(t, func(t *testing.T) {
		top, outside := tree(t)
		// d becomes a link to the outside folder, as another process may do mid-rollback.
		if err := os.RemoveAll(filepath.Join(top, "d")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(top, "d")); err != nil {
			t.Fatal(err)
		}
		r, err := Open(top)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Remove("d/x"); !errors.Is(err, ErrNotDir) {
			t.Errorf("Remove through a link: %v, want ErrNotDir", err)
		}
		if _, err := r.Lstat("d/x"); !errors.Is(err, ErrNotDir) {
			t.Errorf("Lstat through a link: %v, want ErrNotDir", err)
		}
		if err := r.RemoveEmptyDir("d"); err == nil {
			t.Errorf("RemoveEmptyDir removed a link")
		}
		if b, err := os.ReadFile(filepath.Join(outside, "x")); err != nil || string(b) != "keep" {
			t.Fatalf("the outside file changed: %q %v", b, err)
		}
		// The link itself is an entry of the tree: it may be removed.
		if fi, err := r.Lstat("d"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat(d) = %v %v, want a link", fi, err)
		}
		if err := r.Remove("d"); err != nil {
			t.Errorf("Remove(d), a link: %v", err)
		}
		if _, err := os.Stat(filepath.Join(outside, "x")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRootOperations(t *testing.T) {
	eachResolver(t, func(t *testing.T) {
		top, _ := tree(t)
		r, err := Open(top)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Remove("d"); err == nil {
			t.Error("Remove removed a folder")
		}
		if err := r.RemoveEmptyDir("d"); err == nil {
			t.Error("RemoveEmptyDir removed a full folder")
		}
		if fi, err := r.Lstat("d/x"); err != nil || !fi.Mode().IsRegular() || fi.Size() != 4 || fi.Name() != "x" {
			t.Errorf("Lstat(d/x) = %v, %v", fi, err)
		}
		if err := r.Remove("d/x"); err != nil {
			t.Fatal(err)
		}
		if err := r.Remove("d/x"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("second Remove: %v, want not exist", err)
		}
		if err := r.Remove("gone/x"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Remove under a missing folder: %v, want not exist", err)
		}
		if err := r.RemoveEmptyDir("d"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(top, "f"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := r.Remove("f/x"); !errors.Is(err, ErrNotDir) {
			t.Errorf("Remove under a file: %v, want ErrNotDir", err)
		}
		for _, p := range []string{"../outside/x", "d/../../outside/x", "/etc/passwd", ".git/config", ""} {
			var e *Error
			if err := r.Remove(p); !errors.As(err, &e) {
				t.Errorf("Remove(%q) = %v, want a rule error", p, err)
			}
		}
	})
}

func TestRootRename(t *testing.T) {
	eachResolver(t, func(t *testing.T) {
		top, outside := tree(t)
		stage := t.TempDir()
		staged := func(content string) string {
			f, err := os.CreateTemp(stage, "f")
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(content)
			f.Close()
			return f.Name()
		}
		r, err := Open(top)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Rename(staged("new"), "a/b/c"); err != nil {
			t.Fatal(err)
		}
		if err := r.Rename(staged("replaced"), "d/x"); err != nil {
			t.Fatal(err)
		}
		for f, want := range map[string]string{"a/b/c": "new", "d/x": "replaced"} {
			if b, err := os.ReadFile(filepath.Join(top, f)); err != nil || string(b) != want {
				t.Errorf("%s = %q %v, want %q", f, b, err, want)
			}
		}
		if err := r.Rename(staged("no"), "d"); err == nil {
			t.Error("Rename replaced a folder")
		}
		if err := os.Symlink(outside, filepath.Join(top, "l")); err != nil {
			t.Fatal(err)
		}
		if err := r.Rename(staged("no"), "l/x"); !errors.Is(err, ErrNotDir) {
			t.Errorf("Rename through a link: %v, want ErrNotDir", err)
		}
		// A link at the last name is replaced, not written through.
		if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(top, "m")); err != nil {
			t.Fatal(err)
		}
		if err := r.Rename(staged("mine"), "m"); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "x")); string(b) != "keep" {
			t.Fatalf("the outside file changed: %q", b)
		}
	})
}

// TestCopyInto is Rename across file systems: the link at the name is
// replaced by a new file, never opened.
func TestCopyInto(t *testing.T) {
	top, outside := tree(t)
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(top, "m")); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(src, []byte("mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := os.Open(top)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	if err := copyFrom(unix.AT_FDCWD, src, false, int(fd.Fd()), "m"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(top, "m"))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("m = %v %v, want an executable file", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "x")); string(b) != "keep" {
		t.Fatalf("the outside file changed: %q", b)
	}
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Errorf("the source is still there: %v", err)
	}
}

// TestRenameFrom moves staged entries from a stage's descriptor, and
// refuses one that is not of the kind asked, or behind a link in the stage.
func TestRenameFrom(t *testing.T) {
	top, outside := tree(t)
	stage := t.TempDir()
	mk := func(p, content string) {
		mustOK(t, os.MkdirAll(filepath.Dir(filepath.Join(stage, p)), 0o755))
		mustOK(t, os.WriteFile(filepath.Join(stage, p), []byte(content), 0o644))
	}
	mk("n/e/f", "staged")
	mustOK(t, os.Symlink("n/e/f", filepath.Join(stage, "l")))
	mustOK(t, os.Symlink(filepath.Join(outside, "x"), filepath.Join(stage, "evil")))
	mustOK(t, os.Symlink(outside, filepath.Join(stage, "via")))
	sfd, err := os.Open(stage)
	mustOK(t, err)
	defer sfd.Close()
	r, err := Open(top)
	mustOK(t, err)
	defer r.Close()
	fd := int(sfd.Fd())
	mustOK(t, r.RenameFrom(fd, "n/e/f", "n/e/f", false))
	if b, _ := os.ReadFile(filepath.Join(top, "n/e/f")); string(b) != "staged" {
		t.Fatalf("n/e/f = %q", b)
	}
	mustOK(t, r.RenameFrom(fd, "l", "l", true))
	if target, _ := os.Readlink(filepath.Join(top, "l")); target != "n/e/f" {
		t.Fatalf("l -> %q", target)
	}
	for _, c := range []struct {
		rel  string
		link bool
	}{{"evil", false}, {"via/x", false}, {"missing", false}, {"n", true}} {
		if err := r.RenameFrom(fd, c.rel, "got", c.link); !errors.Is(err, ErrStaged) || errors.Is(err, ErrNotDir) {
			t.Errorf("RenameFrom(%s, %v) = %v, want ErrStaged", c.rel, c.link, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(top, "got")); !os.IsNotExist(err) {
		t.Errorf("got was placed: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "x")); string(b) != "keep" {
		t.Fatalf("the outside file changed: %q", b)
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A Folder's operations take one name of the folder: a folder inside is
// removed only when empty, a link there is never followed, and a name
// that is not one safe name is refused with the path it would make.
func TestFolderOperations(t *testing.T) {
	eachResolver(t, func(t *testing.T) {
		top, outside := tree(t)
		for _, d := range []string{"d/empty", "d/full"} {
			if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(top, "d", "full", "y"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(top, "d", "link")); err != nil {
			t.Fatal(err)
		}
		r, err := Open(top)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		f, err := r.OpenFolder("d")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.RemoveEmptyDir("full"); err == nil {
			t.Error("RemoveEmptyDir removed a full folder")
		}
		if err := f.RemoveEmptyDir("link"); err == nil {
			t.Error("RemoveEmptyDir removed a link")
		}
		if err := f.Remove("full"); err == nil {
			t.Error("Remove removed a folder")
		}
		if err := f.RemoveEmptyDir("empty"); err != nil {
			t.Error(err)
		}
		if err := f.Remove("x"); err != nil {
			t.Error(err)
		}
		for name, rule := range map[string]Rule{"..": RuleDotDot, ".git": RuleDotGit, "": RuleEmpty} {
			var e *Error
			if err := f.Remove(name); !errors.As(err, &e) || e.Rule != rule || e.Path != "d/"+name {
				t.Errorf("Remove(%q) = %v, want %s at d/%s", name, err, rule, name)
			}
			if err := f.RemoveEmptyDir(name); !errors.As(err, &e) || e.Rule != rule {
				t.Errorf("RemoveEmptyDir(%q) = %v, want %s", name, err, rule)
			}
		}
		if err := f.Remove("full/y"); err == nil {
			t.Error("Remove took a path of two names")
		}
		if _, err := os.Lstat(filepath.Join(top, "d", "full", "y")); err != nil {
			t.Error(err)
		}
		if b, err := os.ReadFile(filepath.Join(outside, "x")); err != nil || string(b) != "keep" {
			t.Fatalf("the outside file changed: %q %v", b, err)
		}
		for _, gone := range []string{"d/empty", "d/x"} {
			if _, err := os.Lstat(filepath.Join(top, gone)); !os.IsNotExist(err) {
				t.Errorf("%s is still there: %v", gone, err)
			}
		}
	})
}

// A Root with a Release takes the files its writes replace off the tree at
// once, by name, and hands each to the Release, which drops it on a thread
// of its own: after Wait none is open any more. A link at the path is
// replaced, never followed. LinkUnnamedIn places an unnamed file at a free
// path and refuses one taken (EEXIST, the entry kept); a Held folder serves
// the next path of the same folder.
func TestReleaseReplacedFiles(t *testing.T) {
	top, outside := tree(t)
	mustOK(t, os.MkdirAll(filepath.Join(top, "r"), 0o755))
	for _, n := range []string{"a", "b"} {
		mustOK(t, os.WriteFile(filepath.Join(top, "r", n), []byte("old "+n), 0o644))
	}
	mustOK(t, os.Symlink(filepath.Join(outside, "x"), filepath.Join(top, "r", "ln")))
	stage := t.TempDir()
	for _, n := range []string{"s1", "s2", "s3"} {
		mustOK(t, os.WriteFile(filepath.Join(stage, n), []byte("staged"), 0o644))
	}
	sfd, err := os.Open(stage)
	mustOK(t, err)
	defer sfd.Close()
	r, err := Open(top)
	mustOK(t, err)
	defer r.Close()
	rel := NewRelease(16)
	r.Release(rel)
	var held Held
	defer held.Close()
	for s, p := range map[string]string{"s1": "r/a", "s2": "r/b", "s3": "r/ln"} {
		mustOK(t, func() error { _, err := r.RenameFromStatIn(&held, int(sfd.Fd()), s, p, false); return err }())
	}
	f, err := r.OpenFolder("r")
	mustOK(t, err)
	defer f.Close()
	for p, taken := range map[string]bool{"r/c": false, "r/a": true} {
		fd, err := f.CreateUnnamed(0o644)
		mustOK(t, err)
		_, err = unix.Write(fd, []byte("new"))
		mustOK(t, err)
		placed, err := r.LinkUnnamedIn(&held, fd, p)
		unix.Close(fd)
		if taken {
			if !errors.Is(err, unix.EEXIST) {
				t.Errorf("%s: LinkUnnamedIn over an entry = %v, want EEXIST", p, err)
			}
			continue
		}
		mustOK(t, err)
		if !placed.Same {
			t.Errorf("%s: not the file linked", p)
		}
	}
	for p, want := range map[string]string{"r/a": "staged", "r/b": "staged", "r/ln": "staged", "r/c": "new"} {
		fi, err := os.Lstat(filepath.Join(top, p))
		mustOK(t, err)
		b, _ := os.ReadFile(filepath.Join(top, p))
		if !fi.Mode().IsRegular() || string(b) != want {
			t.Errorf("%s is %v holding %q, want %q", p, fi.Mode(), b, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "x")); string(b) != "keep" {
		t.Fatalf("the outside file changed: %q", b)
	}
	deleted := func() []string {
		var list []string
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, e := range fds {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil &&
				strings.HasPrefix(target, filepath.Join(top, "r")) && strings.HasSuffix(target, " (deleted)") {
				list = append(list, target)
			}
		}
		sort.Strings(list)
		return list
	}
	rel.Wait()
	if rel.handed != 3 {
		t.Errorf("%d entries handed to the Release, want 3", rel.handed)
	}
	if got := deleted(); len(got) != 0 {
		t.Errorf("held after Wait: %q", got)
	}
}

// TestRenameFromStatInNeverLeavesThePathEmpty: a file replaced by a staged
// one is there, old or new, at every moment: a reader polling the path
// never finds it missing (an unlink before the rename left it missing for
// a moment, and a rollback killed in that moment lost the file from the
// tree).
func TestRenameFromStatInNeverLeavesThePathEmpty(t *testing.T) {
	top, _ := tree(t)
	stage := t.TempDir()
	target := filepath.Join(top, "f")
	mustOK(t, os.WriteFile(target, []byte("old"), 0o644))
	sfd, err := os.Open(stage)
	mustOK(t, err)
	defer sfd.Close()
	r, err := Open(top)
	mustOK(t, err)
	defer r.Close()
	r.Release(NewRelease(16))
	stop := make(chan struct{})
	missing := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				missing <- n
				return
			default:
			}
			if _, err := os.Lstat(target); os.IsNotExist(err) {
				n++
			}
		}
	}()
	var held Held
	defer held.Close()
	for i := 0; i < 3000; i++ {
		mustOK(t, os.WriteFile(filepath.Join(stage, "s"), []byte("new"), 0o644))
		if _, err := r.RenameFromStatIn(&held, int(sfd.Fd()), "s", "f", false); err != nil {
			close(stop)
			t.Fatal(err)
		}
	}
	close(stop)
	if n := <-missing; n > 0 {
		t.Errorf("the path was missing %d times while it was replaced", n)
	}
}
