//go:build venomtest

package tests

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/checkpointcmd"
	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/diffcmd"
	"github.com/git-venom/git-venom/lib/gitconfig"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/rollbackcmd"
	"github.com/git-venom/git-venom/lib/ui"
)

// Env.Venom, VenomIn and VenomInput run a command in this process, through
// cli.Run as the binary's main does, with the world's environment, folder
// and standard input and streams of their own: a test pays for the
// command's work, not for starting a binary and git's dispatch to it (about
// 45 ms of CPU a call). They start the built binary instead wherever the
// process would not be the command's alone: see binaryOnly. With
// VENOM_TEST_BINARIES=1 every command runs the binary.

// gitExecPath is git's --exec-path, which git puts first on the PATH of
// the commands it runs.
var gitExecPath string

// inProcessSetup keeps libgit2 in this process from reading the person's
// global config: a command's libgit2 reads the world's ~/.gitconfig, which
// a process-wide setting cannot follow per world, so the worlds whose
// global config says anything libgit2 reads run the binary (worldConfigPlain).
func inProcessSetup(empty string) error {
	if err := os.MkdirAll(empty, 0o755); err != nil {
		return err
	}
	for _, level := range []git.ConfigLevel{git.ConfigLevelGlobal, git.ConfigLevelXDG} {
		if err := git.SetSearchPath(level, empty); err != nil {
			return err
		}
	}
	out, err := exec.Command("git", "--exec-path").Output()
	gitExecPath = strings.TrimSpace(string(out))
	if err != nil {
		return err
	}
	// A command finds the programs it starts on this process's PATH.
	worldPath = gitExecPath + ":" + binDir + ":" + gitDir + ":/usr/local/bin:/usr/bin:/bin"
	for _, name := range []string{"git", "sh", "watchman", "codex", "opencode", "less", "man"} {
		if !samePath(name, worldPath) {
			toolsDiffer = name
		}
	}
	// A Codex turn's end is looked for in the process's Codex home.
	home, _ := os.UserHomeDir()
	if _, err := os.Lstat(filepath.Join(home, ".codex")); err == nil || os.Getenv("CODEX_HOME") != "" {
		toolsDiffer = "Codex home"
	}
	return nil
}

// worldPath is the PATH a world's command has, git's exec path first;
// toolsDiffer names a program the test process would find elsewhere.
var worldPath, toolsDiffer string

// samePath reports whether name is the same file, or missing in both,
// on path and on this process's PATH.
func samePath(name, path string) bool {
	mine, errMine := exec.LookPath(name)
	theirs := ""
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			theirs = p
			break
		}
	}
	if errMine != nil || theirs == "" {
		return errMine != nil && theirs == ""
	}
	a, errA := os.Stat(mine)
	b, errB := os.Stat(theirs)
	if errA != nil || errB != nil {
		return false
	}
	if os.SameFile(a, b) {
		return true
	}
	// Debian's git is two copies, /usr/bin/git and the exec path's.
	x, errX := os.ReadFile(mine)
	y, errY := os.ReadFile(theirs)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// grammars are each binary's main: its name and a fresh grammar.
var grammars = map[string]func() any{
	"checkpoint": func() any { return checkpointcmd.New() },
	"rollback":   func() any { return rollbackcmd.New() },
	"diff":       func() any { return diffcmd.New() },
}

// commandKnobs are the VENOM_TEST_* knobs a command reads from its own
// environment (testhook.IntIn), not the process's: they run in process.
var commandKnobs = map[string]bool{"VENOM_TEST_PACK_THRESHOLD": true, "VENOM_TEST_FOLD_EVERY": true,
	"VENOM_TEST_FOLD_RECENT": true}

// commandPoints are the fault points whose every call reads the command's
// context (testhook.PointIn): VENOM_TEST_FAIL_AT naming only these runs
// in process. The others read the process's environment. A command with
// VENOM_TEST_PAUSE_AT stays a binary: the test signals the paused pid.
var commandPoints = map[string]bool{}

func init() {
	for _, p := range strings.Fields(`dry-run-captured rollback-captured rollback-before-safety
		rollback-after-safety rollback-files-placed rollback-before-ended rollback-apply-unlink
		rollback-apply-write rollback-apply-staged rollback-place-each rollback-apply-index
		rollback-unlink-each rollback-head rollback-index-restore rollback-undo prune-refs-deleted
		hook-locked share-push share-fetch-log share-fetch-refs after-ref tool-ref-made
		diff-captured refs-delete capture-object-write capture-write-tree capture-hash-object
		capture-status private-moved-on capture-scan`) {
		commandPoints[p] = true
	}
}

// commandPointsOnly reports whether the VENOM_TEST_FAIL_AT list names
// only commandPoints (each name, or name#n).
func commandPointsOnly(list string) bool {
	for _, f := range strings.Split(list, ",") {
		if p, _, _ := strings.Cut(f, "#"); !commandPoints[p] {
			return false
		}
	}
	return true
}

// binaryOnly says why a command must run as the binary, or "" when it can
// run here with the same outcome: not for what it reads from its process,
// not its Env (a VENOM_TEST_* knob, a Codex home, PATH's programs, TZ,
// libgit2's global config, core.sharedRepository), nor for help, --version
// (man; the build's version), a hook's delivery (it notifies SIGPIPE;
// install and uninstall run here), events --follow (runs until stopped), or
// a second command of one world at once (lock holders name the pid).
func (e *Env) binaryOnly(dir string, environ []string, cmd string, args []string) string {
	if e.Binary || os.Getenv("VENOM_TEST_BINARIES") == "1" {
		return "binaries asked for"
	}
	if grammars[cmd] == nil {
		return "no such command"
	}
	if toolsDiffer != "" {
		return "this process finds another " + toolsDiffer
	}
	if p := gitEnv(environ, "PATH"); gitExecPath+":"+p != worldPath {
		return "PATH " + p
	}
	// Git puts its exec path first on the command's PATH: the programs
	// it finds there are not this process's.
	if _, ok := lookupEnv(environ, "GIT_EXEC_PATH"); ok {
		return "variable GIT_EXEC_PATH"
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name == "VENOM_TEST_FAIL_AT" && commandPointsOnly(value) {
			continue
		}
		if strings.HasPrefix(name, "VENOM_TEST_") && !commandKnobs[name] || name == "CODEX_HOME" || flagEnv()[name] {
			return "variable " + name
		}
	}
	// Times are shown in the zone of the process (time.Local).
	worldTZ, worldHas := lookupEnv(environ, "TZ")
	if tz, has := os.LookupEnv("TZ"); tz != worldTZ || has != worldHas {
		return "variable TZ"
	}
	for name := range flagEnv() {
		if _, ok := os.LookupEnv(name); ok {
			return "variable " + name + " in this process"
		}
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == "hook" && i+1 < len(args) && (args[i+1] == "install" || args[i+1] == "uninstall") {
			continue
		}
		if a == "help" || a == "hook" || a == "--help" || a == "--version" || a == "--follow" ||
			strings.HasPrefix(a, "--follow=") || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && a != "-q" {
			return "binary-only argument " + a
		}
	}
	if _, err := os.Lstat(filepath.Join(e.Home, ".codex")); err == nil {
		return "codex home"
	}
	if b, err := os.ReadFile(filepath.Join(e.Dir, ".git", "config")); err == nil &&
		strings.Contains(strings.ToLower(string(b)), "sharedrepository") {
		return "core.sharedRepository"
	}
	return globalConfigPlain(environ)
}

// globalConfigPlain is "" where every global config file environ names
// is worldConfigPlain, else why not.
func globalConfigPlain(environ []string) string {
	home := gitEnv(environ, "HOME")
	for _, f := range []string{gitEnv(environ, "GIT_CONFIG_GLOBAL"), filepath.Join(home, ".gitconfig"),
		filepath.Join(gitEnv(environ, "XDG_CONFIG_HOME"), "git", "config")} {
		if f != "" && !worldConfigPlain(f) {
			return "global config " + f
		}
	}
	return ""
}

// gitEnv is the last value of name in environ.
func gitEnv(environ []string, name string) string {
	v, _ := lookupEnv(environ, name)
	return v
}

// lookupEnv is the last value of name in environ, and whether it is set.
func lookupEnv(environ []string, name string) (v string, set bool) {
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v, set = val, true
		}
	}
	return v, set
}

// plainSections are the config sections libgit2 does nothing with in a
// command: identity (checkpoints sign with their own), init, maintenance,
// and venom's own keys, which commands read themselves from the
// environment's files.
var plainSections = map[string]bool{"user": true, "init": true, "maintenance": true, "venom": true}

var sectionRE = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9.-]+)`)

// worldConfigPlain reports whether the config file f is absent or holds
// only plainSections, each header on a line of its own.
func worldConfigPlain(f string) bool {
	fh, err := os.Open(f)
	if err != nil {
		return os.IsNotExist(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "[") {
			continue
		}
		m := sectionRE.FindStringSubmatch(line)
		if m == nil || !plainSections[strings.ToLower(m[1])] || strings.Count(line, "]") != 1 ||
			!strings.HasSuffix(line, "]") {
			return false
		}
	}
	return sc.Err() == nil
}

// venom runs git venom-<cmd> args... in dir, in this process unless
// binaryOnly says otherwise.
func (e *Env) venom(dir string, extra []string, stdin string, cmd string, args ...string) Result {
	environ := append(e.Environ(), extra...)
	why := e.binaryOnly(dir, environ, cmd, args)
	if why == "" {
		e.mu.Lock()
		if e.busy {
			why = "busy"
		} else {
			e.busy = true
			e.here++
		}
		e.mu.Unlock()
	}
	whyBinary(e.t, cmd, args, why)
	if why != "" {
		return e.runBinary(dir, extra, environ, stdin, cmd, args)
	}
	r, ended := runInProcess(dir, environ, stdin, cmd, args)
	free := func() {
		e.mu.Lock()
		e.busy = false
		e.mu.Unlock()
	}
	select {
	case <-ended:
		free()
	default:
		// Its backstop ended the command, which may still be running:
		// until it returns, the world's commands run as binaries.
		go func() {
			<-ended
			free()
		}()
	}
	return r
}

// runBinary runs git-venom-<cmd> as git venom-<cmd> runs it, without
// git's process: found on git's exec path and then PATH, with that PATH
// and GIT_EXEC_PATH (git's setup_path), its name as argv[0]. Git runs it
// where its dispatch is part of what is run: --help (git help), a paused
// command (a signal's end is git's exit 128+n), a config or GIT_* variable
// git reads first, a Dispatch world or VENOM_TEST_BINARIES=1.
func (e *Env) runBinary(dir string, extra, environ []string, stdin, cmd string, args []string) Result {
	viaGit := func() Result {
		return e.runInput(dir, extra, stdin, "git", append([]string{"venom-" + cmd}, args...)...)
	}
	if e.Dispatch || os.Getenv("VENOM_TEST_BINARIES") == "1" || toolsDiffer != "" {
		return viaGit()
	}
	if globalConfigPlain(environ) != "" || !gitconfig.PlainEnvironment(environ) {
		return viaGit()
	}
	for _, a := range args {
		if a == "--help" || a == "-h" || a == "help" || a == "--version" {
			return viaGit()
		}
	}
	if _, paused := lookupEnv(environ, "VENOM_TEST_PAUSE_AT"); paused {
		return viaGit()
	}
	// git's exec path: GIT_EXEC_PATH's when set, as git's setup_path.
	execPath := gitExecPath
	if p, ok := lookupEnv(environ, "GIT_EXEC_PATH"); ok && p != "" {
		execPath = p
	}
	path := execPath + ":" + gitEnv(environ, "PATH")
	bin := ""
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, "git-venom-"+cmd)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			bin = p
			break
		}
	}
	if bin == "" {
		return viaGit()
	}
	env := make([]string, 0, len(environ)+2)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "GIT_EXEC_PATH=") {
			env = append(env, kv)
		}
	}
	c := exec.Command(bin, args...)
	c.Args[0] = "git-venom-" + cmd
	c.Dir, c.Env = dir, append(env, "PATH="+path, "GIT_EXEC_PATH="+execPath)
	return runCmd(c, stdin, append([]string{"venom-" + cmd}, args...))
}

// runInProcess is the binary's main with what git gives the binary: its
// exec path first on PATH, the folder it was started in (the physical
// one, as the binary's os.Getwd reads it) and the environment. A backstop
// that fires ends the command as it would end the binary's process: its
// exit code, its output until then, its locks dropped (lock.Own); the
// command's goroutine, stuck where the backstop found it, is left behind,
// and ended is closed if it ever returns.
func runInProcess(dir string, environ []string, stdin string, cmd string, args []string) (_ Result, ended <-chan struct{}) {
	full := append([]string{"venom-" + cmd}, args...)
	done := make(chan struct{})
	wd, err := filepath.Abs(dir)
	if err == nil {
		wd, err = filepath.EvalSymlinks(wd)
	}
	if err != nil {
		close(done)
		return Result{Args: full, Stderr: err.Error(), Code: -1}, done
	}
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + gitExecPath + ":" + v
		}
		env = append(env, kv)
	}
	streams, _, _ := ui.Test()
	out, errb := &syncBuffer{}, &syncBuffer{}
	streams.In, streams.Out, streams.Err = strings.NewReader(stdin), out, errb
	ctx, endLocks := lock.Own(context.Background())
	exited := make(chan int, 1)
	cenv := &cli.Env{Ctx: ctx, UI: streams, Environ: env, Dir: wd, Name: "git-venom-" + cmd,
		JSON: cli.WantsJSON(args), Exit: func(code int) {
			endLocks()
			exited <- code
		}}
	returned := make(chan int, 1)
	go func() {
		code := cli.Run(cenv, grammars[cmd](), args)
		close(done)
		returned <- code
	}()
	var code int
	select {
	case code = <-returned:
	case code = <-exited:
	}
	return Result{Args: full, Stdout: out.String(), Stderr: errb.String(), Code: code}, done
}

// syncBuffer is a buffer a command and its backstop may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// flagEnv are the variables the grammars' flags take a default from (kong's
// env tag, as --agent from VENOM_AGENT): kong reads them from the process.
var flagEnv = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			for _, n := range strings.Split(f.Tag.Get("env"), ",") {
				if n != "" {
					names[n] = true
				}
			}
			walk(f.Type)
		}
	}
	for _, g := range grammars {
		walk(reflect.TypeOf(g()))
	}
	return names
})
