package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tree is the model of one worktree: what is on disk, what the index
// tracks, where HEAD is, and every capture git-venom logged of it (by any
// agent, reuses included), in log order: the windows of a rollback's
// classes.
type tree struct {
	name     string
	dir      string
	files    files  // on disk, .git left out
	index    files  // the index's paths (any stage)
	indexSum string // the index file's bytes, to check nobody wrote it
	head     string // HEAD's commit, "" when unborn
	branch   string // "" when detached
	merging  bool
	// gitPaths: git's answers for the paths of its files (the index,
	// MERGE_HEAD, the common dir), asked once: they stay put all run.
	gitPaths map[string]string
	// headKey: the bytes git's last answer for HEAD (headSeen) rested on.
	headKey  string
	headSeen [2]string
	captures []capture
	// written: paths a rollback or an edit of the model wrote last, with
	// when, for same-second edits.
	written map[string]time.Time
}

// capture is one capture of a tree as the log has it.
type capture struct {
	agent  *agent
	reason string
	turn   int // the agent's turn this capture belongs to (running at it), 0 if none
	ck     *checkpoint
	view   files
	// open: the agents of the tree with a started turn running right
	// after this capture, and its number.
	open map[*agent]int
}

// agent is the model of one agent.
type agent struct {
	id        string
	tree      *tree
	isolation string
	turn      int  // the open turn, 0 when none
	turns     int  // the last turn number used
	started   bool // the open turn began with a turn_start
	ckpts     []*checkpoint
	safety    int // the last rollback's safety checkpoint, 0 before any
	// harness: turns come from Claude Code's hooks (UserPromptSubmit,
	// Stop), and tool writes are recorded (PostToolUse Write).
	harness bool
	session string
	edits   map[int]map[string]bool // turn -> paths its edit calls named
	ignEdit []ignoredEdit
	// turnRecs: the agent's turns by number, with their checkpoints.
	turnRecs map[int]*turnRec
}

// ignoredEdit is an edit call that named an ignored path, after the
// tree's first n captures.
type ignoredEdit struct {
	path  string
	after int
}

func (a *agent) guarded() bool { return a.isolation == "in_place" }

// checkpoint is one of an agent's checkpoints: what its capture saw.
type checkpoint struct {
	n      int
	reason string
	view   files
	head   string
	branch string
	first  int // index in its tree's captures of the capture that made it
	pruned bool
}

// counted are the reasons venom.keep counts (docs/checkpoints.md,
// Retention and clean).
var counted = map[string]bool{"turn_start": true, "turn_end": true, "takeover": true, "takeback": true,
	"fork": true, "rollback": true}

// prune applies retention to a's checkpoints: of the counted reasons
// only the newest venom.keep stay, and the newest checkpoint always
// (manual and pre_rollback ones go by age only, never within a run).
func (w *world) prune(a *agent) {
	seen := 0
	newest := true
	for i := len(a.ckpts) - 1; i >= 0; i-- {
		c := a.ckpts[i]
		if c.pruned {
			continue
		}
		if counted[c.reason] {
			seen++
			if seen > w.keep && !newest {
				c.pruned = true
				w.stats["pruned"]++
			}
		}
		newest = false
	}
}

// refCommit is a checkpoint ref's commit as git reads it: its tree and
// its first parent ("" when none).
type refCommit struct{ tree, parent string }

// checkpointRefs lists the checkpoint refs under prefix (an agent's, or
// all of them) with one git for-each-ref, each with its commit.
func (w *world) checkpointRefs(t *tree, prefix string) map[string]refCommit {
	out := w.git(t.dir, "for-each-ref", "--format=%(refname) %(tree) %(parent)", prefix)
	refs := map[string]refCommit{}
	for _, line := range strings.Split(out, "\n") {
		f := append(strings.Fields(line), "", "")
		if f[0] != "" {
			refs[f[0]] = refCommit{tree: f[1], parent: f[2]}
		}
	}
	return refs
}

// refTree lists the tree of ref's commit (refs: checkpointRefs'
// listing) with git ls-tree, once a world for each tree: a tree's id
// names its entries.
func (w *world) refTree(t *tree, refs map[string]refCommit, ref string) files {
	c, ok := refs[ref]
	if !ok || c.tree == "" {
		w.failf("git for-each-ref lists no commit at %s", ref)
	}
	if w.treeFiles == nil {
		w.treeFiles = map[string]files{}
	}
	f, ok := w.treeFiles[c.tree]
	if !ok {
		f = w.lsTree(t.dir, c.tree)
		w.treeFiles[c.tree] = f
	}
	return f.clone()
}

// agentRefs lists a's checkpoint refs (checkpointRefs).
func (w *world) agentRefs(a *agent) map[string]refCommit {
	return w.checkpointRefs(a.tree, "refs/venom/checkpoints/"+a.id+"/")
}

// checkRefs compares an agent's checkpoint refs, as agentRefs listed
// them, with the model's live checkpoints.
func (w *world) checkRefs(a *agent, refs map[string]refCommit, after string) {
	prefix := "refs/venom/checkpoints/" + a.id + "/"
	got := map[string]bool{}
	for r := range refs {
		if strings.HasPrefix(r, prefix) {
			got[r] = true
		}
	}
	for _, c := range a.ckpts {
		ref := fmt.Sprintf("refs/venom/checkpoints/%s/%d", a.id, c.n)
		if got[ref] == c.pruned {
			w.failf("after %s: %s exists=%v, the model says pruned=%v (venom.keep=%d)", after, ref, got[ref], c.pruned, w.keep)
		}
		delete(got, ref)
	}
	for r := range got {
		w.failf("after %s: %s exists and the model knows no such checkpoint", after, r)
	}
}

func (a *agent) latest() *checkpoint {
	for i := len(a.ckpts) - 1; i >= 0; i-- {
		if !a.ckpts[i].pruned {
			return a.ckpts[i]
		}
	}
	return nil
}

// view is what a capture of the tree must hold now: git add -A's tree,
// every tracked path as the work tree has it, and every untracked path
// that is not ignored.
func (t *tree) view() files {
	out := files{}
	for p, e := range t.files {
		if _, tracked := t.index[p]; tracked || !ignored(p) {
			out[p] = entry{mode: e.mode, oid: e.oid}
		}
	}
	return out
}

// sync reads the tree back from disk and git: after a git command of the
// person's, whose effects the model does not predict (git is not under
// test).
func (w *world) sync(t *tree) {
	f, err := readDisk(t.dir)
	if err != nil {
		w.failf("reading %s: %v", t.dir, err)
	}
	t.files = f
	w.syncGit(t)
}

func (w *world) syncGit(t *tree) {
	t.index = w.lsIndex(t.dir)
	t.indexSum = fileHash(w.gitPath(t, "index"))
	t.head, t.branch = w.headOf(t)
	_, err := os.Stat(w.gitPath(t, "MERGE_HEAD"))
	t.merging = err == nil
}

// headOf is t's HEAD commit ("" when unborn) and branch ("" when
// detached), as git answers. The answer rests on HEAD's bytes, those of
// the loose ref HEAD names and packed-refs: while they are what they were
// git's last answer stands, and no git starts (TestHeadOf_IsGits).
func (w *world) headOf(t *tree) (head, branch string) {
	key, ok := w.headBytes(t)
	if ok && key == t.headKey {
		return t.headSeen[0], t.headSeen[1]
	}
	head, branch = w.askHead(t.dir)
	t.headKey, t.headSeen = "", [2]string{head, branch}
	if ok {
		t.headKey = key
	}
	return head, branch
}

// headBytes is what git's answer for HEAD rests on in the files backend,
// false when it rests on more (a ref outside refs/heads/, a symbolic one,
// reftable's placeholder).
func (w *world) headBytes(t *tree) (string, bool) {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return "\x00" + err.Error()
		}
		return string(b)
	}
	common := w.gitPathOf(t, "--git-common-dir")
	head := read(w.gitPath(t, "HEAD"))
	key := head + "\x00" + read(filepath.Join(common, "packed-refs"))
	if ref, ok := strings.CutPrefix(head, "ref: "); ok {
		ref = strings.TrimSpace(ref)
		loose := read(filepath.Join(common, filepath.FromSlash(ref)))
		if !strings.HasPrefix(ref, "refs/heads/") || ref == "refs/heads/.invalid" || strings.HasPrefix(loose, "ref:") {
			return "", false
		}
		key += "\x00" + loose
	}
	return key, true
}

// askHead is git's answer for HEAD in dir: one git rev-parse, two git
// calls for an unborn HEAD, which it refuses.
func (w *world) askHead(dir string) (head, branch string) {
	r := w.gitRaw(dir, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD", "--")
	if out := strings.Fields(r.out); r.code == 0 && len(out) == 3 && out[2] == "--" {
		if out[1] == "HEAD" {
			return out[0], ""
		}
		return out[0], strings.TrimPrefix(out[1], "refs/heads/")
	}
	head = strings.TrimSpace(w.gitRaw(dir, "rev-parse", "-q", "--verify", "HEAD").out)
	branch = strings.TrimSpace(w.gitRaw(dir, "symbolic-ref", "-q", "--short", "HEAD").out)
	return head, branch
}

func (w *world) gitPath(t *tree, name string) string {
	return w.gitPathOf(t, "--git-path", name)
}

// gitPathsAsked are the paths the model reads in a tree's git dir: the
// first git rev-parse of a tree answers them too.
var gitPathsAsked = [][]string{{"--git-path", "index"}, {"--git-path", "MERGE_HEAD"}, {"--git-path", "HEAD"},
	{"--git-common-dir"}}

// gitPathOf is git rev-parse --path-format=absolute's answer to args,
// asked once a tree.
func (w *world) gitPathOf(t *tree, args ...string) string {
	key := strings.Join(args, " ")
	if p, ok := t.gitPaths[key]; ok {
		return p
	}
	if t.gitPaths == nil {
		t.gitPaths = map[string]string{}
	}
	asked := [][]string{args}
	if len(t.gitPaths) == 0 {
		asked = append(asked, gitPathsAsked...)
	}
	argv := []string{"rev-parse", "--path-format=absolute"}
	for _, a := range asked {
		argv = append(argv, a...)
	}
	lines := strings.Split(w.git(t.dir, argv...), "\n")
	if len(lines) != len(asked) {
		w.failf("git %s answered %d lines, not %d", strings.Join(argv, " "), len(lines), len(asked))
	}
	for i, a := range asked {
		t.gitPaths[strings.Join(a, " ")] = lines[i]
	}
	return lines[0]
}

// checkTree compares the model of t with the disk and git.
func (w *world) checkTree(t *tree, after string) {
	disk, err := readDisk(t.dir)
	if err != nil {
		w.failf("after %s: reading %s: %v", after, t.dir, err)
	}
	if d := diffFiles("the files of "+t.name, t.files, disk); d != "" {
		w.failf("after %s: the work tree is not what the model says\n%s", after, d)
	}
	head, branch := w.headOf(t)
	if head != t.head || branch != t.branch {
		w.failf("after %s: %s's HEAD is %s on %q, the model says %s on %q", after, t.name, head, branch, t.head, t.branch)
	}
	if sum := fileHash(w.gitPath(t, "index")); sum != t.indexSum {
		w.failf("after %s: %s's index file changed and the model says it must not", after, t.name)
	}
}

// --- edits, applied to the disk and the model together ---

func (w *world) abs(t *tree, p string) string { return filepath.Join(t.dir, filepath.FromSlash(p)) }

// clearWay removes what stands in the way of writing p: a file or link
// where one of its folders must go, a folder where it must go.
func (w *world) clearWay(t *tree, p string) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		q := strings.Join(parts[:i], "/")
		if fi, err := os.Lstat(w.abs(t, q)); err == nil && !fi.IsDir() {
			w.removePath(t, q)
		}
	}
	if fi, err := os.Lstat(w.abs(t, p)); err == nil && (fi.IsDir() || fi.Mode()&os.ModeSymlink != 0) {
		w.removePath(t, p)
	}
}

// removePath removes p, a file, link or whole folder.
func (w *world) removePath(t *tree, p string) {
	if err := os.RemoveAll(w.abs(t, p)); err != nil {
		w.failf("removing %s: %v", p, err)
	}
	delete(t.files, p)
	for q := range t.files {
		if strings.HasPrefix(q, p+"/") {
			delete(t.files, q)
		}
	}
}

func (w *world) writeFile(t *tree, p string, data []byte, exec bool) {
	w.clearWay(t, p)
	full := w.abs(t, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		w.failf("mkdir for %s: %v", p, err)
	}
	mode := os.FileMode(0o644)
	m := "100644"
	if exec {
		mode, m = 0o755, "100755"
	}
	// In place when a file is there: same inode, as an editor that
	// rewrites; the mode too.
	if err := os.WriteFile(full, data, mode); err != nil {
		w.failf("writing %s: %v", p, err)
	}
	if err := os.Chmod(full, mode); err != nil {
		w.failf("chmod %s: %v", p, err)
	}
	t.files[p] = entry{mode: m, oid: blobID(data), size: len(data)}
	t.written[p] = time.Now()
}

func (w *world) symlink(t *tree, p, target string) {
	w.clearWay(t, p)
	full := w.abs(t, p)
	_ = os.Remove(full)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		w.failf("mkdir for %s: %v", p, err)
	}
	if err := os.Symlink(target, full); err != nil {
		w.failf("symlink %s: %v", p, err)
	}
	t.files[p] = entry{mode: "120000", oid: blobID([]byte(target)), size: len(target)}
}

func (w *world) flipMode(t *tree, p string) {
	e := t.files[p]
	mode, m := os.FileMode(0o755), "100755"
	if e.mode == "100755" {
		mode, m = 0o644, "100644"
	}
	if err := os.Chmod(w.abs(t, p), mode); err != nil {
		w.failf("chmod %s: %v", p, err)
	}
	e.mode = m
	t.files[p] = e
}

// sameSizeEdit rewrites an existing regular file in place with other
// bytes of the same length and puts its mtime back, nanoseconds and all:
// only the ctime (and the content) tell the edit, as an editor's save in
// the second a rollback or a capture looked at the file.
func (w *world) sameSizeEdit(t *tree, p string) bool {
	e, ok := t.files[p]
	// .gitignore stays as setup wrote it: the model's ignore rules are
	// fixed.
	if !ok || e.mode == "120000" || p == ".gitignore" {
		return false
	}
	full := w.abs(t, p)
	fi, err := os.Lstat(full)
	if err != nil {
		w.failf("stat %s: %v", p, err)
	}
	old, err := os.ReadFile(full)
	if err != nil {
		w.failf("read %s: %v", p, err)
	}
	data := []byte(w.content("s", len(old)))
	if blobID(data) == e.oid {
		return false
	}
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		w.failf("open %s: %v", p, err)
	}
	if _, err := f.Write(data); err != nil {
		w.failf("write %s: %v", p, err)
	}
	f.Close()
	if err := os.Chtimes(full, fi.ModTime(), fi.ModTime()); err != nil {
		w.failf("chtimes %s: %v", p, err)
	}
	e.oid = blobID(data)
	t.files[p] = e
	return true
}

// content is n bytes (at least 8) of text that names the step.
func (w *world) content(who string, n int) string {
	s := fmt.Sprintf("%s%d.%d %x", who, w.seed, len(w.steps), w.rng.Int63())
	for len(s) < n-1 {
		s += " " + s
	}
	if n < 2 {
		n = 2
	}
	return s[:n-1] + "\n"
}
