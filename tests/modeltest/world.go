package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// entry is one path of a tree as git records it: mode and blob id.
type entry struct {
	mode string // 100644, 100755 or 120000
	oid  string
	size int
}

// files maps a repository path to its entry.
type files map[string]entry

func (f files) clone() files {
	out := make(files, len(f))
	for k, v := range f {
		out[k] = v
	}
	return out
}

func (f files) sorted() []string {
	out := make([]string, 0, len(f))
	for k := range f {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// blobID is git's object id of a blob holding data: sha1("blob <n>\0" data).
func blobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// ignored is the model's reading of the .gitignore every world commits
// ("*.log" and "build/"): a path is ignored when its name ends in .log or
// a folder on its way is named build.
func ignored(p string) bool {
	parts := strings.Split(p, "/")
	for _, d := range parts[:len(parts)-1] {
		if d == "build" {
			return true
		}
	}
	return strings.HasSuffix(parts[len(parts)-1], ".log")
}

// failure stops a seed: the message, printed with the seed and its steps.
type failure struct{ msg string }

// world is one seed's universe: a repository with its main worktree and a
// linked one, a HOME, the model of each tree and of each agent.
type world struct {
	seed   int64
	rng    *rand.Rand
	opt    options
	root   string
	home   string
	bin    string
	trees  []*tree
	agents []*agent
	steps  []string
	stats  map[string]int
	keep   int // venom.keep
	// treeFiles: git ls-tree's listing of each tree id asked so far.
	treeFiles map[string]files
}

type options struct {
	steps int
	// kinds switched off (known defects being fixed elsewhere).
	off map[string]bool
	// keep the world's folder on failure.
	keep bool
	// fsck runs git fsck after interrupts and at the end.
	fsck bool
}

func sortStrings(s []string) { sort.Strings(s) }

func (w *world) failf(format string, args ...any) {
	panic(failure{fmt.Sprintf(format, args...)})
}

// note records a step, for the replay list a failure prints.
func (w *world) note(format string, args ...any) {
	w.steps = append(w.steps, fmt.Sprintf("%3d ", len(w.steps)+1)+fmt.Sprintf(format, args...))
}

type result struct {
	args   []string
	out    string
	err    string
	code   int
	signal string
}

func (r result) String() string {
	return fmt.Sprintf("%v: exit %d%s\nstdout: %s\nstderr: %s", r.args, r.code, r.signal, r.out, r.err)
}

func (w *world) environ(extra ...string) []string {
	gitPath, _ := exec.LookPath("git")
	env := []string{
		"PATH=" + w.bin + ":" + filepath.Dir(gitPath) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + w.home,
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"TMPDIR=" + w.root,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(w.home, ".gitconfig"),
		"LANG=C",
		"TERM=dumb",
		"VENOM_CALLER=person",
	}
	return append(env, extra...)
}

func (w *world) command(dir string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir = dir
	c.Env = w.environ()
	return c
}

func runCmd(c *exec.Cmd, stdin string) result {
	var out, errb bytes.Buffer
	c.Stdin = strings.NewReader(stdin)
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	return finish(c, err, &out, &errb)
}

func finish(c *exec.Cmd, err error, out, errb *bytes.Buffer) result {
	r := result{args: c.Args, out: out.String(), err: errb.String()}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				r.signal = " (" + st.Signal().String() + ")"
			}
		} else {
			r.code = -1
			r.err += err.Error()
		}
	}
	return r
}

// git runs git in dir and fails the seed unless it exits 0.
func (w *world) git(dir string, args ...string) string {
	r := runCmd(w.command(dir, "git", args...), "")
	if r.code != 0 {
		w.failf("git %s in %s: %s", strings.Join(args, " "), dir, r)
	}
	return strings.TrimSpace(r.out)
}

func (w *world) gitRaw(dir string, args ...string) result {
	return runCmd(w.command(dir, "git", args...), "")
}

// venom runs git venom-<cmd> in dir.
func (w *world) venom(dir string, cmd string, args ...string) result {
	r := runCmd(w.command(dir, "git", append([]string{"venom-" + cmd}, args...)...), "")
	if strings.Contains(r.err, "panic:") || strings.Contains(r.err, "goroutine ") {
		w.failf("venom crashed: %s", r)
	}
	return r
}

// readDisk lists the files and links under dir, .git left out, as git
// would record them.
func readDisk(dir string) (files, error) {
	out := files{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = entry{mode: "120000", oid: blobID([]byte(target)), size: len(target)}
		case t.IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			mode := "100644"
			if fi.Mode()&0o100 != 0 {
				mode = "100755"
			}
			out[rel] = entry{mode: mode, oid: blobID(b), size: len(b)}
		case t.IsDir():
		default:
			return fmt.Errorf("%s: unexpected file type %v", rel, t)
		}
		return nil
	})
	return out, err
}

// lsTree reads a tree-ish with git ls-tree -r.
func (w *world) lsTree(dir, treeish string) files {
	out := files{}
	s := w.git(dir, "ls-tree", "-r", "-z", "--full-tree", treeish)
	for _, rec := range strings.Split(s, "\x00") {
		if rec == "" {
			continue
		}
		tab := strings.IndexByte(rec, '\t')
		f := strings.Fields(rec[:tab])
		out[rec[tab+1:]] = entry{mode: f[0], oid: f[2]}
	}
	return out
}

// lsIndex reads a worktree's index with git ls-files -s (every stage; a
// conflicted path counts as tracked).
func (w *world) lsIndex(dir string) files {
	out := files{}
	s := w.git(dir, "ls-files", "-s", "-z")
	for _, rec := range strings.Split(s, "\x00") {
		if rec == "" {
			continue
		}
		tab := strings.IndexByte(rec, '\t')
		f := strings.Fields(rec[:tab])
		p := rec[tab+1:]
		if _, ok := out[p]; ok && f[2] != "0" && f[2] != "2" {
			continue
		}
		out[p] = entry{mode: f[0], oid: f[1]}
	}
	return out
}

// diffFiles says how a and b differ, for a failure message (oids and
// modes only, size ignored).
func diffFiles(what string, want, got files) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, m := range []files{want, got} {
		for _, p := range m.sorted() {
			if seen[p] {
				continue
			}
			seen[p] = true
			x, okx := want[p]
			y, oky := got[p]
			if okx == oky && x.mode == y.mode && x.oid == y.oid {
				continue
			}
			fmt.Fprintf(&b, "  %s: model %s, git %s\n", p, show(x, okx), show(y, oky))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return what + ":\n" + b.String()
}

func show(e entry, ok bool) string {
	if !ok {
		return "absent"
	}
	return e.mode + " " + e.oid[:10]
}

func sameFiles(a, b files) bool {
	if len(a) != len(b) {
		return false
	}
	for p, x := range a {
		y, ok := b[p]
		if !ok || x.mode != y.mode || x.oid != y.oid {
			return false
		}
	}
	return true
}

// fileHash is the sha1 of a file's bytes, or "absent".
func fileHash(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "absent"
	}
	return blobID(b)
}

// sleepPast waits until the wall clock's second is past t's.
func sleepPast(t time.Time) {
	next := t.Truncate(time.Second).Add(time.Second)
	if d := time.Until(next); d > 0 {
		time.Sleep(d + 5*time.Millisecond)
	}
}
