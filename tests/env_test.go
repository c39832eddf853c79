package tests

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gitconfig"
	"github.com/git-venom/git-venom/lib/gittest"
)

// Env is one hermetic test world: a repository in a temp dir, its own HOME
// and git config, and a clock that ticks 60 s a commit (git's test_tick).
type Env struct {
	t    *testing.T
	Root string // the temp dir
	Dir  string // the repository's top level
	Home string
	mu   sync.Mutex
	tick int
	busy bool // a command runs in this process (inprocess_helpers_test.go)
	here int  // commands that ran in this process
	// Extra environment for every command, like VENOM_AGENT=a1.
	Extra []string
	// Binary: every command runs the built binary, where it is the point
	// (most run in this process: inprocess_helpers_test.go).
	Binary bool
	// Dispatch: binaries run through git venom-<cmd>, git's own process
	// (else started as git starts them: runBinary).
	Dispatch bool
}

// NewEnv makes a repository with one initial commit. It copies one
// made once a run by the same git steps (initialRepo) and puts the
// copy's stat data in its index as git update-index --refresh does
// (restatIndex; else it runs that): no git process for three. The
// fsmonitor mode makes each one afresh.
func NewEnv(t *testing.T) *Env {
	t.Helper()
	if fsmonitorMode() {
		env := NewBareEnv(t)
		env.Write("README.md", "hello\n")
		env.Commit("initial")
		return env
	}
	env := newWorld(t)
	gittest.CopyTree(t, initialRepo(t), env.Dir)
	env.tick = 1
	if !restatIndex(env.Dir) {
		env.Git("update-index", "-q", "--refresh")
	}
	return env
}

// restatIndex writes into top/.git/index each entry's stat data as git
// records it (fill_stat_data) from the file under top, and the file's
// new checksum; false, with nothing written, where walkIndex is unsure
// or a file is not there to stat.
func restatIndex(top string) bool {
	idx := filepath.Join(top, ".git", "index")
	b, err := os.ReadFile(idx)
	if err != nil {
		return false
	}
	whole := true
	ok := walkIndex(b, func(entry []byte, flags uint16, name string) {
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(name)))
		if err != nil {
			whole = false
			return
		}
		st, isUnix := fi.Sys().(*syscall.Stat_t)
		if !isUnix {
			whole = false
			return
		}
		be := binary.BigEndian
		for i, v := range []int64{st.Ctim.Sec, st.Ctim.Nsec, st.Mtim.Sec, st.Mtim.Nsec,
			int64(st.Dev), int64(st.Ino)} {
			be.PutUint32(entry[4*i:], uint32(v))
		}
		be.PutUint32(entry[28:], st.Uid)
		be.PutUint32(entry[32:], st.Gid)
		be.PutUint32(entry[36:], uint32(st.Size))
	})
	if !ok || !whole {
		return false
	}
	sum := sha1.Sum(b[:len(b)-sha1.Size])
	copy(b[len(b)-sha1.Size:], sum[:])
	return os.WriteFile(idx, b, 0o644) == nil
}

// worldConfig is the hermetic world's global git config. No command of a
// test starts git's auto maintenance (a commit would, once a process, and
// a gc whenever loose objects pile up): a test that wants gc runs it.
const worldConfig = "[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n" +
	"[maintenance]\n\tauto = false\n"

// NewBareEnv makes an empty repository with no commit.
func NewBareEnv(t *testing.T) *Env {
	t.Helper()
	env := newWorld(t)
	env.Git("init", "-q")
	if fsmonitorMode() {
		env.UseWatchman(runWatchman(t))
	}
	return env
}

// newWorld makes a test's folders and global config, the repository's
// folder empty.
func newWorld(t *testing.T) *Env {
	t.Helper()
	root := trashDir(t)
	env := &Env{t: t, Root: root, Dir: filepath.Join(root, "repo"), Home: filepath.Join(root, "home")}
	require.NoError(t, os.MkdirAll(env.Home, 0o755))
	require.NoError(t, os.MkdirAll(env.Dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(env.Home, ".gitconfig"),
		[]byte(worldConfig), 0o644))
	return env
}

// initialRepo is the folder of a repository NewEnv's steps made once a
// run (git init, README.md, git add -A and git commit at the first tick),
// in the test binary's own temporary folder: what NewEnv copies.
func initialRepo(t *testing.T) string {
	initialOnce.Do(func() {
		root, err := os.MkdirTemp(runDir, "initial-")
		if err != nil {
			initialErr = err
			return
		}
		env := &Env{t: t, Root: root, Dir: filepath.Join(root, "repo"), Home: filepath.Join(root, "home")}
		for _, step := range []func() error{
			func() error { return os.MkdirAll(env.Home, 0o755) },
			func() error { return os.MkdirAll(env.Dir, 0o755) },
			func() error {
				return os.WriteFile(filepath.Join(env.Home, ".gitconfig"), []byte(worldConfig), 0o644)
			},
			func() error { return env.gitStep("init", "-q") },
			func() error { return os.WriteFile(env.Path("README.md"), []byte("hello\n"), 0o644) },
			func() error { env.Tick(); return env.gitStep("add", "-A") },
			func() error { return env.gitStep("commit", "-q", "--allow-empty", "-m", "initial") },
		} {
			if initialErr = step(); initialErr != nil {
				return
			}
		}
		initialDir = env.Dir
	})
	require.NoError(t, initialErr, "making the initial repository")
	return initialDir
}

var (
	initialOnce sync.Once
	initialDir  string
	initialErr  error
)

// gitStep runs git in the repository, its failure an error (no test's
// to fail: initialRepo's steps are the run's).
func (e *Env) gitStep(args ...string) error {
	if r := e.run(e.Dir, nil, "git", args...); r.Code != 0 {
		return fmt.Errorf("git %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return nil
}

// Environ is the child environment, built from scratch (no inherited
// VENOM_*, CLAUDECODE, CODEX_*, GIT_*).
func (e *Env) Environ() []string {
	e.mu.Lock()
	tick := e.tick
	e.mu.Unlock()
	date := fmt.Sprintf("%d +0000", 1700000000+60*tick)
	env := []string{
		"PATH=" + binDir + ":" + gitDir + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + e.Home,
		"XDG_CONFIG_HOME=" + filepath.Join(e.Home, ".config"),
		"TMPDIR=" + e.Root,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(e.Home, ".gitconfig"),
		"GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_DATE=" + date,
		"LANG=C",
		"TERM=dumb",
	}
	return append(env, e.Extra...)
}

// Tick advances the clock by 60 s.
func (e *Env) Tick() {
	e.mu.Lock()
	e.tick++
	e.mu.Unlock()
}

// Path is a path inside the repository.
func (e *Env) Path(rel string) string { return filepath.Join(e.Dir, rel) }

// Write writes a file, making its folders.
func (e *Env) Write(rel, content string) {
	e.t.Helper()
	p := e.Path(rel)
	require.NoError(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(e.t, os.WriteFile(p, []byte(content), 0o644))
}

// Read reads a file of the repository.
func (e *Env) Read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.Path(rel))
	require.NoError(e.t, err)
	return string(b)
}

// Remove removes a file or folder.
func (e *Env) Remove(rel string) {
	e.t.Helper()
	require.NoError(e.t, os.RemoveAll(e.Path(rel)))
}

// Commit stages everything and commits.
func (e *Env) Commit(msg string) {
	e.t.Helper()
	e.Tick()
	e.Git("add", "-A")
	e.Git("commit", "-q", "--allow-empty", "-m", msg)
}

// CommitID commits as Commit does and returns the new commit's id.
func (e *Env) CommitID(msg string) string {
	e.t.Helper()
	e.Commit(msg)
	if id, ok := plainHead(e.Dir, e.Environ()); ok {
		return id
	}
	return e.Git("rev-parse", "HEAD")
}

// plainHead is git rev-parse HEAD read in plainCommonDir's case, where
// HEAD holds the id or names a branch whose loose file does (git commit
// writes it so: a loose ref wins over packed-refs); false otherwise.
func plainHead(top string, environ []string) (string, bool) {
	dir, ok := plainCommonDir(top, environ)
	if !ok {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	if ref, isRef := bytes.CutPrefix(b, []byte("ref: refs/heads/")); err == nil && isRef {
		name := strings.TrimSuffix(string(ref), "\n")
		if !strings.HasSuffix(string(ref), "\n") || name == "" || strings.Contains(name, "..") {
			return "", false
		}
		b, err = os.ReadFile(filepath.Join(dir, "refs", "heads", filepath.FromSlash(name)))
	}
	if err != nil || !isHexLine(b) {
		return "", false
	}
	return string(b[:40]), true
}

// Git runs git in the repository and returns its trimmed stdout.
func (e *Env) Git(args ...string) string {
	e.t.Helper()
	r := e.run(e.Dir, nil, "git", args...)
	if r.Code != 0 {
		e.t.Fatalf("git %s: exit %d\n%s", strings.Join(args, " "), r.Code, r.Stderr)
	}
	return strings.TrimSpace(r.Stdout)
}

// CommonDir is what git rev-parse --path-format=absolute --git-common-dir
// prints in the repository, found without a process where git would
// find it there: a plain environment and a .git folder at the top that
// git takes for a repository (HEAD, objects, refs) and shares with no
// other; anything else asks git. Many tests and helpers ask it often.
func (e *Env) CommonDir() string {
	e.t.Helper()
	if dir, ok := plainCommonDir(e.Dir, e.Environ()); ok {
		return dir
	}
	return e.Git("rev-parse", "--path-format=absolute", "--git-common-dir")
}

// gitDirs is what git rev-parse --absolute-git-dir --path-format=absolute
// --git-common-dir --git-path index prints in the repository. In
// plainCommonDir's case the first two are that folder and the index is
// its index file (no GIT_INDEX_FILE there); anything else asks git.
func (e *Env) gitDirs() (gitDir, common, index string) {
	e.t.Helper()
	if dir, ok := plainCommonDir(e.Dir, e.Environ()); ok {
		return dir, dir, filepath.Join(dir, "index")
	}
	dirs := strings.Split(e.Git("rev-parse", "--absolute-git-dir",
		"--path-format=absolute", "--git-common-dir", "--git-path", "index"), "\n")
	require.Len(e.t, dirs, 3)
	return dirs[0], dirs[1], dirs[2]
}

// plainCommonDir is top/.git resolved, in the case CommonDir reads itself.
func plainCommonDir(top string, environ []string) (string, bool) {
	if !gitconfig.PlainEnvironment(environ) {
		return "", false
	}
	gitDir := filepath.Join(top, ".git")
	if st, err := os.Lstat(gitDir); err != nil || !st.IsDir() {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "commondir")); !os.IsNotExist(err) {
		return "", false
	}
	for _, d := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(gitDir, d)); err != nil || !st.IsDir() {
			return "", false
		}
	}
	// git's validate_headref: a symbolic ref into refs/ or an object id.
	headPath := filepath.Join(gitDir, "HEAD")
	if st, err := os.Lstat(headPath); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	head, err := os.ReadFile(headPath)
	if err != nil {
		return "", false
	}
	if !bytes.HasPrefix(head, []byte("ref: refs/")) && !isHexLine(head) {
		return "", false
	}
	real, err := filepath.EvalSymlinks(gitDir)
	if err != nil {
		return "", false
	}
	return real, true
}

// isHexLine is a SHA-1 object id and a newline.
func isHexLine(b []byte) bool {
	if len(b) != 41 || b[40] != '\n' {
		return false
	}
	for _, c := range b[:40] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// GitRaw runs git and returns the untrimmed result.
func (e *Env) GitRaw(args ...string) Result {
	e.t.Helper()
	return e.run(e.Dir, nil, "git", args...)
}

// Result is one command's outcome.
type Result struct {
	Args   []string
	Stdout string
	Stderr string
	Code   int
}

// Venom runs `git venom-<cmd> args...` in the repository: Venom("checkpoint", "list").
func (e *Env) Venom(cmd string, args ...string) Result {
	e.t.Helper()
	return e.venom(e.Dir, nil, "", cmd, args...)
}

// VenomIn runs a venom command in dir with extra environment.
func (e *Env) VenomIn(dir string, extraEnv []string, cmd string, args ...string) Result {
	e.t.Helper()
	return e.venom(dir, extraEnv, "", cmd, args...)
}

// VenomInput runs a venom command with stdin.
func (e *Env) VenomInput(stdin string, cmd string, args ...string) Result {
	e.t.Helper()
	return e.venom(e.Dir, nil, stdin, cmd, args...)
}

func (e *Env) run(dir string, extra []string, name string, args ...string) Result {
	return e.runInput(dir, extra, "", name, args...)
}

func (e *Env) runInput(dir string, extra []string, stdin string, name string, args ...string) Result {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(e.Environ(), extra...)
	return runCmd(cmd, stdin, args)
}

// runCmd runs cmd with stdin, its outcome reported with args.
func runCmd(cmd *exec.Cmd, stdin string, args []string) Result {
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			code = -1
			errb.WriteString(err.Error())
		}
	}
	return Result{Args: args, Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// whyBinary appends "test, command, reason, arguments" (tab-separated)
// to the file VENOM_TEST_WHY_BINARY names, when set, for each command a
// test runs (reason "": in process): what keeps the commands binaries.
func whyBinary(t *testing.T, cmd string, args []string, why string) {
	p := os.Getenv("VENOM_TEST_WHY_BINARY")
	if p == "" {
		return
	}
	whyMu.Lock()
	defer whyMu.Unlock()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	name := "?"
	if t != nil {
		name = t.Name()
	}
	fmt.Fprintf(f, "%s\t%s\t%s\t%q\n", name, cmd, why, args)
}

var whyMu sync.Mutex

// Command returns an unstarted venom command, for crash and concurrency tests.
func (e *Env) Command(extra []string, cmd string, args ...string) *exec.Cmd {
	whyBinary(e.t, cmd, args, "unstarted Command")
	c := exec.Command("git", append([]string{"venom-" + cmd}, args...)...)
	c.Dir = e.Dir
	c.Env = append(e.Environ(), extra...)
	return c
}

// OK fails the test unless the command exited 0 without a crash.
func (r Result) OK(t *testing.T) Result {
	t.Helper()
	if r.Code != 0 || strings.Contains(r.Stderr, "panic:") || strings.Contains(r.Stderr, "goroutine ") {
		t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", r.Args, r.Code, r.Stdout, r.Stderr)
	}
	return r
}

// Fails checks the exact exit code and, for --json output, the error code.
func (r Result) Fails(t *testing.T, exit int, code string) Result {
	t.Helper()
	if r.Code != exit {
		t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", r.Args, r.Code, exit, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stderr, "panic:") {
		t.Fatalf("%v crashed:\n%s", r.Args, r.Stderr)
	}
	if code == "" {
		return r
	}
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(r.Stdout), &env) == nil && env.Error.Code != "" {
		if env.Error.Code != code {
			t.Fatalf("%v: error code %s, want %s\n%s", r.Args, env.Error.Code, code, r.Stdout)
		}
		return r
	}
	if !strings.Contains(r.Stderr, code) {
		t.Fatalf("%v: want error %s\nstdout: %s\nstderr: %s", r.Args, code, r.Stdout, r.Stderr)
	}
	return r
}

// JSON decodes stdout, which must be exactly one JSON document.
func (r Result) JSON(t *testing.T, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	require.NoError(t, dec.Decode(v), "stdout: %s", r.Stdout)
	var extra any
	require.Error(t, dec.Decode(&extra), "more than one JSON document on stdout: %s", r.Stdout)
}

// Map decodes stdout as one JSON object.
func (r Result) Map(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Snapshot is what a capture must never change (docs/checkpoints.md#invariants, the first).
type Snapshot struct {
	Index    string // sha256 of the index file, or "absent"
	Head     string // the HEAD file's bytes
	Refs     string // every ref but refs/venom, with values
	Config   string // sha256 of .git/config
	Files    string // sha256 of every working file, with modes and links
	Stash    string
	IndexLck string
}

// Snapshot records the user-visible state.
func (e *Env) Snapshot() Snapshot {
	e.t.Helper()
	gitDir, common, idx := e.gitDirs()
	head, _ := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	refs := e.snapshotRefs()
	var keep []string
	stash := ""
	for _, l := range strings.Split(refs, "\n") {
		if !strings.HasPrefix(l, "refs/venom/") {
			keep = append(keep, strings.TrimSpace(l))
		}
		if name, oid, _ := strings.Cut(l, " "); name == "refs/stash" {
			stash, _, _ = strings.Cut(oid, " ")
		}
	}
	return Snapshot{
		Index:    fileHash(idx),
		Head:     string(head),
		Refs:     strings.Join(keep, "\n"),
		Config:   fileHash(filepath.Join(common, "config")),
		Files:    treeHash(e.Dir),
		Stash:    stash,
		IndexLck: fileHash(idx + ".lock"),
	}
}

// snapshotRefs is git for-each-ref --format='%(refname) %(objectname)
// %(symref)' trimmed, but for the refs under refs/venom/ (Snapshot leaves
// them out), read by plainRefs where it is sure; else git's.
func (e *Env) snapshotRefs() string {
	e.t.Helper()
	refs, ok := plainRefs(e.Dir, e.Environ(), "refs/venom/")
	if !ok {
		return e.Git("for-each-ref", "--format=%(refname) %(objectname) %(symref)")
	}
	lines := make([]string, len(refs))
	for i, r := range refs {
		lines[i] = r.name + " " + r.oid + " " + r.symref
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// AssertUntouched compares the state with an earlier snapshot.
func (e *Env) AssertUntouched(t *testing.T, before Snapshot) {
	t.Helper()
	after := e.Snapshot()
	require.Equal(t, before.Index, after.Index, "the index file changed")
	require.Equal(t, before.Head, after.Head, "HEAD changed")
	require.Equal(t, before.Refs, after.Refs, "a branch, tag or other ref changed")
	require.Equal(t, before.Config, after.Config, "the config changed")
	require.Equal(t, before.Stash, after.Stash, "the stash changed")
	require.Equal(t, before.IndexLck, after.IndexLck, "index.lock changed")
	require.Equal(t, before.Files, after.Files, "the working files changed")
}

func fileHash(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "absent"
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// treeHash hashes every path under dir except .git: names, modes, link
// targets and contents, so any change to the working files shows.
func treeHash(dir string) string {
	var lines []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			lines = append(lines, "error "+p)
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ".git" && fi.IsDir() {
			return filepath.SkipDir
		}
		line := fmt.Sprintf("%q %v %d", rel, fi.Mode(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case fi.Mode().IsRegular():
			line += " " + fileHash(p)
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	s := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(s[:])
}

// RecipeTree computes the tree docs/checkpoints.md#how-a-capture-runs's git recipe gives for the current
// state, with plain git on a copy of the index: the oracle for captures.
func (e *Env) RecipeTree(exclude ...string) string {
	e.t.Helper()
	_, _, idx := e.gitDirs()
	tmp := filepath.Join(e.Root, fmt.Sprintf("recipe-%d.index", len(exclude)))
	_ = os.Remove(tmp)
	noneAssumed := false
	if b, err := os.ReadFile(idx); err == nil {
		require.NoError(e.t, os.WriteFile(tmp, b, 0o644))
		fi, _ := os.Stat(idx)
		require.NoError(e.t, os.Chtimes(tmp, fi.ModTime(), fi.ModTime()))
		valid, ok := indexHasValidBit(b)
		noneAssumed = ok && !valid
	}
	defer os.Remove(tmp)
	pins := []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
		"-c", "core.quotePath=false", "-c", "status.showUntrackedFiles=normal"}
	extra := []string{"GIT_INDEX_FILE=" + tmp}
	var assumed []string
	if !noneAssumed {
		lsv := e.run(e.Dir, extra, "git", append(pins, "ls-files", "-v", "-z")...)
		for _, rec := range strings.Split(lsv.Stdout, "\x00") {
			if len(rec) > 2 && rec[0] >= 'a' && rec[0] <= 'z' {
				assumed = append(assumed, rec[2:])
			}
		}
	}
	if len(assumed) > 0 {
		r := e.runInput(e.Dir, extra, strings.Join(assumed, "\x00")+"\x00", "git",
			append(pins, "update-index", "-z", "--no-assume-unchanged", "--stdin")...)
		require.Equal(e.t, 0, r.Code, r.Stderr)
	}
	spec := ""
	for _, x := range exclude {
		spec += ":(exclude,literal)" + x + "\x00"
	}
	spec += ".\x00"
	// A person's git gc beside the test (TestCrash_*GC*) can remove an
	// empty objects/xx folder between git's mkdir and its temporary file
	// there ("unable to create temporary file"): git's own race, which
	// the next try does not meet.
	for try := 1; ; try++ {
		r := e.runInput(e.Dir, extra, spec, "git", append(pins, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")...)
		w := r
		// git add stages everything else and exits 1 when untracked files lie
		// outside a sparse checkout: it leaves them out, and so does a capture.
		if r.Code == 0 || r.Code == 1 && strings.Contains(r.Stderr, "outside of your sparse-checkout definition") {
			w = e.run(e.Dir, extra, "git", append(pins, "write-tree")...)
		}
		if w.Code != 0 && try < 3 && strings.Contains(w.Stderr, "unable to create temporary file") {
			continue
		}
		require.Equal(e.t, 0, w.Code, w.Stderr)
		return strings.TrimSpace(w.Stdout)
	}
}

// Checkpoint takes a checkpoint and returns its id.
func (e *Env) Checkpoint(args ...string) string {
	e.t.Helper()
	var res struct {
		Checkpoint *string `json:"checkpoint"`
	}
	e.Venom("checkpoint", append(args, "--json")...).OK(e.t).JSON(e.t, &res)
	require.NotNil(e.t, res.Checkpoint)
	return *res.Checkpoint
}

// CheckpointTree is the tree of an agent's checkpoint n, as git
// rev-parse reads it (refTree).
func (e *Env) CheckpointTree(agent string, n int) string {
	e.t.Helper()
	return e.refTree(fmt.Sprintf("refs/venom/checkpoints/%s/%d", agent, n))
}

// LogRecords reads the journal with plain JSON decoding.
func (e *Env) LogRecords() []map[string]any {
	e.t.Helper()
	common := e.CommonDir()
	b, err := os.ReadFile(filepath.Join(common, "venom", "log.jsonl"))
	if err != nil {
		return nil
	}
	var out []map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// indexHasValidBit reports whether an index file's entries carry the
// assume-unchanged bit (CE_VALID, what git ls-files -v prints in lower
// case), read from the file's bytes; false for ok when unsure (see
// walkIndex). RecipeTree skips ls-files -v on a sure no.
func indexHasValidBit(b []byte) (valid, ok bool) {
	ok = walkIndex(b, func(entry []byte, flags uint16, name string) {
		valid = valid || flags&0x8000 != 0
	})
	return valid && ok, ok
}

// walkIndex calls fn with each entry of an index file, false when
// unsure of it: no version 2 or 3 SHA-1 index whose checksum holds,
// every entry and extension read whole, with no split index (whose
// shared file holds entries). An entry starts with its stat data.
func walkIndex(b []byte, fn func(entry []byte, flags uint16, name string)) bool {
	const head, trailer = 12, sha1.Size
	if len(b) < head+trailer || string(b[:4]) != "DIRC" {
		return false
	}
	if sum := sha1.Sum(b[:len(b)-trailer]); !bytes.Equal(sum[:], b[len(b)-trailer:]) {
		return false
	}
	version, n := binary.BigEndian.Uint32(b[4:]), binary.BigEndian.Uint32(b[8:])
	if version != 2 && version != 3 {
		return false
	}
	body, off := b[:len(b)-trailer], head
	for i := uint32(0); i < n; i++ {
		// ctime, mtime, dev, ino, mode, uid, gid, size, oid, then flags.
		fixed := 62
		if off+fixed > len(body) {
			return false
		}
		flags := binary.BigEndian.Uint16(body[off+60:])
		if flags&0x4000 != 0 { // extended flags follow
			if version < 3 {
				return false
			}
			fixed += 2
		}
		end := bytes.IndexByte(body[min(off+fixed, len(body)):], 0)
		if end < 0 || flags&0xfff != 0xfff && end != int(flags&0xfff) {
			return false
		}
		// The entry is padded with one to eight NULs to a multiple of 8.
		size := (fixed + end + 8) &^ 7
		if off+size > len(body) || len(bytes.Trim(body[off+fixed+end:off+size], "\x00")) != 0 {
			return false
		}
		fn(body[off:off+size], flags, string(body[off+fixed:off+fixed+end]))
		off += size
	}
	for off < len(body) { // extensions: signature, size, data
		if off+8 > len(body) || string(body[off:off+4]) == "link" {
			return false
		}
		off += 8 + int(binary.BigEndian.Uint32(body[off+4:]))
	}
	return off == len(body)
}
