package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Nothing in the state folder is reached through a link,
// a FIFO or a device, and temporary files have names nobody can plant.

// stateDir is the repository's venom state folder, made if missing.
func stateDir(t *testing.T, env *Env) string {
	t.Helper()
	common := env.CommonDir()
	dir := filepath.Join(common, "venom")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// assertContent checks that a file still holds exactly content.
func assertContent(t *testing.T, path, content string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, content, string(b), "%s was written through a link", path)
}

// venomWithin runs a venom command that must end by itself within d: one
// still running then is killed and fails the test (a FIFO must never block).
func venomWithin(t *testing.T, env *Env, d time.Duration, cmd string, args ...string) Result {
	t.Helper()
	c := env.Command(nil, cmd, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	// Its own process group, so that git's child dies with it.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, c.Start())
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return Result{Args: append([]string{"venom-" + cmd}, args...), Stdout: out.String(), Stderr: errb.String(), Code: code}
	case <-time.After(d):
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("git venom-%s %v still running after %s: blocked on a FIFO?", cmd, args, d)
		return Result{}
	}
}

// failsNaming checks a failed.state error whose message says what the
// state file or folder name is (".../venom/lock is a FIFO").
func failsNaming(t *testing.T, r Result, name, is string) {
	t.Helper()
	r.Fails(t, 1, "failed.state")
	assert.Contains(t, r.Stdout+r.Stderr, "/"+name+" is a "+is+", not a", "the error names the file and what it is")
}

func TestSecurity_StateLockLinkRefused(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	target := env.OutsideFile("victim", "precious\n")
	lock := filepath.Join(stateDir(t, env), "lock")
	require.NoError(t, os.Symlink(target, lock))

	r := env.Venom("checkpoint", "--agent=a1", "--json")
	failsNaming(t, r, "venom/lock", "symbolic link")
	assertContent(t, target, "precious\n")
	fi, err := os.Lstat(lock)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is left as it was found")
	assert.Empty(t, env.Git("for-each-ref", "refs/venom"), "nothing was captured")
}

func TestSecurity_StateLogLinkRefused(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	// One line without its newline: read through the link, it would be a
	// torn tail to cut, and the record would be appended after it.
	target := env.OutsideFile("victim.log", "one line of the user's, no newline")
	log := filepath.Join(stateDir(t, env), "log.jsonl")
	require.NoError(t, os.Symlink(target, log))

	failsNaming(t, env.Venom("checkpoint", "--agent=a1", "--json"), "venom/log.jsonl", "symbolic link")
	assertContent(t, target, "one line of the user's, no newline")
	failsNaming(t, env.Venom("checkpoint", "list", "--json"), "venom/log.jsonl", "symbolic link")
	assertContent(t, target, "one line of the user's, no newline")
}

func TestSecurity_StateFIFORefused(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lock", "log.jsonl"} {
		t.Run(name, func(t *testing.T) {
			env := NewEnv(t)
			require.NoError(t, syscall.Mkfifo(filepath.Join(stateDir(t, env), name), 0o644))
			r := venomWithin(t, env, 20*time.Second, "checkpoint", "--agent=a1", "--json")
			failsNaming(t, r, "venom/"+name, "FIFO")
		})
	}
}

func TestSecurity_StateFolderLinkRefused(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	outside := filepath.Join(env.Root, "outside")
	// What a cleanup of venom/tmp would remove, were venom/ followed.
	require.NoError(t, os.MkdirAll(filepath.Join(outside, "tmp"), 0o755))
	keep := env.OutsideFile("tmp/keep", "keep me\n")
	common := env.CommonDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(common, "venom")))

	failsNaming(t, env.Venom("checkpoint", "--agent=a1", "--json"), "venom", "symbolic link")
	assertContent(t, keep, "keep me\n")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"tmp"}, names, "nothing was made in the folder venom/ leads to")
}

// A link for one of venom/'s folders is never followed: the capture goes
// on without what that folder holds. In the folder pending/ leads to, a
// file named as an agent's dead mark (a1.1) would be removed by the
// pending check of list were the link followed. (A link for tmp/ is
// removed as a link, with or without statefile: no test can tell.)
func TestSecurity_StateSubfolderLinkNotFollowed(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"index", "pending"} {
		t.Run(name, func(t *testing.T) {
			env := NewEnv(t)
			outside := filepath.Join(env.Root, "outside")
			require.NoError(t, os.MkdirAll(outside, 0o755))
			mark := env.OutsideFile("a1.1", "not a mark\n")
			require.NoError(t, os.Symlink(outside, filepath.Join(stateDir(t, env), name)))
			env.Write("a.txt", "a\n")
			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			env.Write("a.txt", "b\n")
			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			env.Venom("checkpoint", "list", "--json").OK(t)
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing was written in the folder venom/%s leads to", name)
			assertContent(t, mark, "not a mark\n")
			assert.Equal(t, "b", env.Git("show", "refs/venom/checkpoints/a1/2:a.txt"))
		})
	}
}

// Links at the names the private index's cache files were once written
// to before their rename (<key>.json.tmp, <key>.scan.tmp) receive nothing.
func TestSecurity_StateOldTempNamesNotWritten(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	metas, err := filepath.Glob(filepath.Join(stateDir(t, env), "index", "*.json"))
	require.NoError(t, err)
	require.Len(t, metas, 1, "the private index's record")
	key := strings.TrimSuffix(metas[0], ".json")
	_, err = os.Stat(key + ".scan")
	require.NoError(t, err, "the quick scan's record")

	var targets []string
	for _, suffix := range []string{".json.tmp", ".scan.tmp"} {
		target := env.OutsideFile("victim"+suffix, "precious"+suffix+"\n")
		require.NoError(t, os.Symlink(target, key+suffix))
		targets = append(targets, target)
	}
	// A new untracked file in a new folder: both records are written again.
	env.Write("d/new.txt", "new\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	assert.Equal(t, "new", env.Git("show", "refs/venom/checkpoints/a1/2:d/new.txt"))
	for i, suffix := range []string{".json.tmp", ".scan.tmp"} {
		assertContent(t, targets[i], "precious"+suffix+"\n")
	}
}

// Under core.sharedRepository the state files and
// folders, and the refs and objects git-venom writes, get the modes git
// gives its own files, so that another member of the group can go on.
func TestSecurity_StateSharedRepositoryModes(t *testing.T) {
	t.Parallel()
	for _, value := range []string{"group", "true", "everybody", "0640"} {
		t.Run(value, func(t *testing.T) {
			env := NewEnv(t)
			env.Git("config", "core.sharedRepository", value)
			common := env.CommonDir()
			// What git itself gives a file and a folder it makes now.
			env.Git("update-ref", "refs/heads/shared/probe", "HEAD")
			wantFile := modeOf(t, filepath.Join(common, "refs/heads/shared/probe"))
			wantDir := modeOf(t, filepath.Join(common, "refs/heads/shared"))
			env.Write("b.txt", "b\n")
			env.Git("add", "b.txt")
			require.Equal(t, wantFile, modeOf(t, filepath.Join(common, "index")), "git's index and ref agree")

			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
			env.Write("d/c.txt", "c\n")
			env.Venom("checkpoint", "--agent=a1", "--json").OK(t)

			var files, dirs int
			for _, top := range []string{"venom", "refs/venom"} {
				require.NoError(t, filepath.Walk(filepath.Join(common, top), func(p string, fi os.FileInfo, err error) error {
					require.NoError(t, err)
					if fi.IsDir() {
						dirs++
						assert.Equal(t, wantDir, modeOf(t, p), "folder %s", p)
					} else {
						files++
						assert.Equal(t, wantFile, modeOf(t, p), "file %s", p)
					}
					return nil
				}))
			}
			assert.GreaterOrEqual(t, files, 6, "lock, log, the private index's files, two refs")
			assert.GreaterOrEqual(t, dirs, 6, "venom, index, pending, refs/venom/checkpoints/a1")
			// A capture's objects, its commit too, go into a pack of its
			// own: it takes the mode git gives a pack it writes itself.
			r := env.runInput(env.Dir, nil, env.Git("rev-parse", "HEAD")+"\n", "git", "pack-objects", "-q",
				filepath.Join(common, "objects", "pack", "pack"))
			require.Equal(t, 0, r.Code, r.Stderr)
			gits := "pack-" + strings.TrimSpace(r.Stdout)
			wantPack := modeOf(t, filepath.Join(common, "objects", "pack", gits+".pack"))
			ours, err := filepath.Glob(filepath.Join(common, "objects", "pack", "pack-*"))
			require.NoError(t, err)
			packs := 0
			for _, p := range ours {
				if strings.HasPrefix(filepath.Base(p), gits) || !(strings.HasSuffix(p, ".pack") || strings.HasSuffix(p, ".idx")) {
					continue
				}
				packs++
				assert.Equal(t, wantPack, modeOf(t, p), "pack file %s", p)
			}
			assert.GreaterOrEqual(t, packs, 2, "a capture's pack and its index")
		})
	}
}

// modeOf is a path's permission bits with setgid, as git's chmod sets them.
func modeOf(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return fi.Mode() & (os.ModePerm | os.ModeSetgid)
}

// sharedGid is a group no one else uses, for the second user's tests.
const sharedGid = 4242

// asOtherUser runs a venom command as nobody, in group sharedGid only.
func asOtherUser(t *testing.T, env *Env, cmd string, args ...string) Result {
	t.Helper()
	argv := append([]string{"--reuid=65534", "--regid=" + strconv.Itoa(sharedGid), "--clear-groups",
		"git", "venom-" + cmd}, args...)
	c := exec.Command("setpriv", argv...)
	// Its own TMPDIR: the test's is root's.
	tmp := filepath.Join(env.Root, "tmp-other-user")
	require.NoError(t, os.MkdirAll(tmp, 0o777))
	require.NoError(t, os.Chmod(tmp, 0o777))
	c.Dir, c.Env = env.Dir, append(env.Environ(), "TMPDIR="+tmp)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("setpriv: %v", err)
	}
	return Result{Args: argv, Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// needRootAndSetpriv skips a test that needs to run commands as another
// user.
func needRootAndSetpriv(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a command as another user")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux), to run a command as another user")
	}
}

// reachable lets every user reach path (search permission on each folder
// above it that the tests made private) and the test binaries.
func reachable(t *testing.T, path string) {
	t.Helper()
	for d := path; d != "/"; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		require.NoError(t, err)
		if fi.Mode().Perm()&0o001 == 0 {
			require.NoError(t, os.Chmod(d, fi.Mode().Perm()|0o055))
		}
	}
	require.NoError(t, os.Chmod(binDir, 0o755))
}

// A second member of the group captures in a repository that the first
// one's captures set up, and the first goes on after it.
func TestSecurity_StateSharedRepositorySecondUser(t *testing.T) {
	t.Parallel()
	needRootAndSetpriv(t)
	env := NewEnv(t)
	reachable(t, env.Root)
	env.Git("config", "core.sharedRepository", "group")
	common := env.CommonDir()
	// As git init --shared=group leaves a repository, with the group's gid:
	// group-writable folders that pass their group on, writable files.
	require.NoError(t, filepath.Walk(env.Dir, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		require.NoError(t, os.Lchown(p, 0, sharedGid))
		switch {
		case fi.IsDir():
			return os.Chmod(p, os.ModeSetgid|0o775)
		case fi.Mode().IsRegular() && strings.HasPrefix(p, common+"/objects/"):
			return nil
		case fi.Mode().IsRegular():
			return os.Chmod(p, fi.Mode().Perm()|0o060)
		}
		return nil
	}))
	// The repository is root's: git refuses it to nobody without this.
	f, err := os.OpenFile(filepath.Join(env.Home, ".gitconfig"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("[safe]\n\tdirectory = *\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	env.Write("a.txt", "a\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	env.Write("a.txt", "b\n")
	asOtherUser(t, env, "checkpoint", "--agent=a1", "--json").OK(t)
	env.Write("a.txt", "c\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	for n, want := range []string{"a", "b", "c"} {
		assert.Equal(t, want, env.Git("show", fmt.Sprintf("refs/venom/checkpoints/a1/%d:a.txt", n+1)))
	}
	assert.Equal(t, "65534", ownerOf(t, filepath.Join(common, "refs/venom/checkpoints/a1/2")), "the second ref is nobody's")
	// A real rollback by the second member: its safety checkpoint, the
	// temporary index and the staged files in tmp/, the log.
	var dry RollbackResult
	asOtherUser(t, env, "rollback", "--checkpoint=k1", "--restore=files", "--outside=overwrite", "--dry-run", "--json").OK(t).JSON(t, &dry)
	asOtherUser(t, env, "rollback", "--checkpoint=k1", "--restore=files", "--outside=overwrite", "--plan="+dry.Plan, "--json").OK(t)
	assert.Equal(t, "a\n", env.Read("a.txt"))
	env.Write("a.txt", "d\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	records := env.LogRecords()
	for i, r := range records {
		assert.EqualValues(t, i+1, r["seq"])
	}
}

func ownerOf(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	return strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))
}

// A repository another user owns is opened when git's
// safe.directory (global config) allows it, and refused as git refuses it
// otherwise; the repository's own config cannot allow it.
func TestSecurity_StateSafeDirectory(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give the repository to another user")
	}
	cases := []struct {
		name, global, local string
		gitArgs             []string // before venom-checkpoint: git -c ...
		ok                  bool
	}{
		{"star", "*", "", nil, true},
		{"exact path", "$REPO", "", nil, true},
		{"command line", "", "", []string{"-c", "safe.directory=*"}, true},
		{"none", "", "", nil, false},
		{"other path", "/elsewhere", "", nil, false},
		{"repository config only", "", "*", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := NewEnv(t)
			env.Write("a.txt", "a\n")
			if c.local != "" {
				env.Git("config", "--add", "safe.directory", c.local)
			}
			if c.global != "" {
				f, err := os.OpenFile(filepath.Join(env.Home, ".gitconfig"), os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = fmt.Fprintf(f, "[safe]\n\tdirectory = %s\n", strings.ReplaceAll(c.global, "$REPO", env.Dir))
				require.NoError(t, err)
				require.NoError(t, f.Close())
			}
			require.NoError(t, filepath.Walk(env.Dir, func(p string, _ os.FileInfo, err error) error {
				require.NoError(t, err)
				return os.Lchown(p, 65534, 65534)
			}))
			// git's own verdict, the oracle.
			gitSays := env.GitRaw(append(c.gitArgs, "rev-parse", "--show-toplevel")...)
			require.Equal(t, c.ok, gitSays.Code == 0, "git rev-parse: %s", gitSays.Stderr)

			r := env.run(env.Dir, nil, "git", append(c.gitArgs, "venom-checkpoint", "--agent=a1", "--json")...)
			if c.ok {
				r.OK(t)
				assert.Equal(t, "a", env.Git("-c", "safe.directory=*", "show", "refs/venom/checkpoints/a1/1:a.txt"))
				return
			}
			r.Fails(t, 10, "unsupported.checkpoint_no_repo")
			assert.Contains(t, r.Stdout, "dubious ownership", "git's reason is given")
			assert.NoDirExists(t, filepath.Join(env.Dir, ".git", "venom"))
		})
	}
}

// The events source file (venom/source) read through a link would hand the
// stream an id from any file; it is refused like every state file.
func TestSecurity_StateEventsSourceLinkRefused(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	target := env.OutsideFile("victim", "0123456789abcdef0123456789abcdef0123\n")
	require.NoError(t, os.Symlink(target, filepath.Join(stateDir(t, env), "source")))
	failsNaming(t, env.Venom("checkpoint", "events", "--json"), "venom/source", "symbolic link")
	assertContent(t, target, "0123456789abcdef0123456789abcdef0123\n")
}

// A hard link is a regular file to fstat: a tarball may ship
// .git/venom/lock or log.jsonl as a second name of a person's file, which
// every command would then empty or append to. A state file opened for
// writing must have one name; the person's files keep their content.
func TestSecurity_StateHardLinkRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ state, content string }{
		{"lock", "a person's notes\n"},
		{"log.jsonl", "a person's last line, no newline"},
	} {
		t.Run(c.state, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Write("notes.txt", c.content)
			require.NoError(t, os.Link(env.Path("notes.txt"), filepath.Join(stateDir(t, env), c.state)))

			failsNaming(t, env.Venom("checkpoint", "--agent=a1", "--json"), "venom/"+c.state,
				"file with more than one name (a hard link)")
			assert.Equal(t, c.content, env.Read("notes.txt"))
			assert.Empty(t, env.Git("for-each-ref", "refs/venom"), "nothing was captured")
		})
	}
}

// A repository another user owns, refused, says so in 80 columns, the
// path only in the command to run (git's several lines of advice are not
// repeated inside it, joined by "; "), and that hint trusts the
// repository when run as printed: the same command then takes the
// checkpoint.
func TestSecurity_SafeDirectoryRefusalHintRunsAsPrinted(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give the repository to another user")
	}
	env := NewEnv(t)
	env.Write("a.txt", "a\n")
	require.NoError(t, filepath.Walk(env.Dir, func(p string, _ os.FileInfo, err error) error {
		require.NoError(t, err)
		return os.Lchown(p, 65534, 65534)
	}))
	r := env.Venom("checkpoint", "--agent=a1")
	require.Equal(t, 10, r.Code, "stderr: %s", r.Stderr)
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	require.Len(t, lines, 3, "stderr: %s", r.Stderr)
	assert.Equal(t, "error: unsupported.checkpoint_no_repo: git refuses another user's repository", lines[0])
	assert.Equal(t, "hint: safe.directory does not allow it (git: dubious ownership); to trust it:", lines[1])
	cmd, ok := strings.CutPrefix(lines[2], "hint:   ")
	require.True(t, ok, "the last hint is a command: %q", lines[2])
	for _, l := range lines[:2] {
		assert.LessOrEqual(t, len(l), 80, "%q", l)
	}
	assert.NotContains(t, r.Stderr, "To add an exception", "git's advice repeated")
	assert.NoDirExists(t, filepath.Join(env.Dir, ".git", "venom"))

	env.run(env.Dir, nil, "sh", "-c", cmd).OK(t)
	assert.Equal(t, env.Dir, strings.TrimSpace(env.run(env.Dir, nil, "git", "config", "--global", "--get-all",
		"safe.directory").Stdout))
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	assert.Equal(t, "a", env.Git("-c", "safe.directory=*", "show", "refs/venom/checkpoints/a1/1:a.txt"))
}
