package main

// The rollback mode: git venom-rollback of 10, 1,000 and 10,000 changed
// paths beside git status, checkout-index and git restore of the same
// paths, with the target ratios (tests/README.md, Benchmarks). Give an
// even -runs: the writers alternate their order (rollbackOnce).
//
//	go run ./tests/bench -rollback 10,1000,10000 -rollback-files 100000 -runs 5

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/tests/buildtags"
)

// The mode has its own flag set, read in init, so that it needs nothing
// from main.go (whose flags serve the capture benchmark).
var (
	rollbackCounts *string
	rollbackFiles  *int
	rollbackBin    *string
	rollbackRepo   *string
	rollbackProf   *string
	// rollbackSettled: the agent's after-turn capture comes between the
	// change and the dry run (false: the change is seen first by the dry
	// run, as this bench measured before).
	rollbackSettled *bool
	// rollbackSync: each writer starts after a sync, as after an agent's
	// edits older than the kernel's writeback delay (30 s).
	rollbackSync *bool
)

func init() {
	if !modeSelected("rollback") {
		return
	}
	fs := flag.NewFlagSet("bench -rollback", flag.ExitOnError)
	rollbackCounts = fs.String("rollback", "10,1000,10000", "comma-separated counts of changed paths to roll back")
	rollbackFiles = fs.Int("rollback-files", 100000, "size of the generated repository")
	rollbackBin = fs.String("rollback-bin", "", "folder with git-venom-checkpoint and git-venom-rollback (default: build them)")
	rollbackRepo = fs.String("rollback-repo", "", "measure a clone of this repository instead of a generated tree")
	rollbackProf = fs.String("rollback-profile", "", "folder for CPU profiles of each run's dry run and real call (dry-<n>.pprof, real-<n>.pprof)")
	rollbackSettled = fs.Bool("rollback-settled", true, "take the agent's after-turn capture, untimed, between the change and the dry run")
	rollbackSync = fs.Bool("rollback-sync", false, "sync before each timed writer: the changed files' data is on disk, as after edits older than the writeback delay")
	goTree := fs.Bool("rollback-go", false, "measure the Go source tree (GOROOT/src in a repository of one commit)")
	// Its own work folder: other modes run at the same time and rebuild
	// bin/ and run/ in theirs. A generated repository cached there is
	// borrowed by hard links (prepare only ever copies from a cache).
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench-rollback"), "directory for cached repositories and the working copy")
	runs := fs.Int("runs", 5, "timed runs per count")
	gitPath := fs.String("git", "git", "git binary")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	borrowCache(*work, filepath.Join(os.TempDir(), "git-venom-bench"), *rollbackFiles)
	if *goTree {
		dir, err := goSourceRepo(*work)
		if err != nil {
			fatal(err)
		}
		*rollbackRepo = dir
	}
	if err := runRollbackMode(&proc{git: *gitPath, env: baseEnv(), dir: *work}, *work, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

// borrowCache hard-links the shared cache of a generated repository into
// work, when work has none.
func borrowCache(work, shared string, n int) {
	name := fmt.Sprintf("gen-%d-%s", n, genVersion)
	if _, err := os.Stat(filepath.Join(work, name, ".git", "bench-complete")); err == nil {
		return
	}
	if _, err := os.Stat(filepath.Join(shared, name, ".git", "bench-complete")); err != nil {
		return
	}
	_ = os.RemoveAll(filepath.Join(work, name))
	p := &proc{dir: work, env: os.Environ()}
	if _, err := p.cmd(nil, "cp", "-al", filepath.Join(shared, name), filepath.Join(work, name)); err != nil {
		logf("borrowing %s: %v", name, err)
	}
}

type rbTimes struct {
	status, ref, restore, files, nochange, dry, real []time.Duration
	// CPU (user+sys, git children included) of restore, dry and real.
	restoreCPU, dryCPU, realCPU []time.Duration
}

// goSourceRepo makes (once) a repository of one commit holding a copy of
// GOROOT/src, and returns it.
func goSourceRepo(work string) (string, error) {
	dir := filepath.Join(work, "gosrc")
	if _, err := os.Stat(filepath.Join(dir, ".git", "bench-complete")); err == nil {
		return dir, nil
	}
	_ = os.RemoveAll(dir)
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", err
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	p := &proc{git: "git", env: baseEnv(), dir: work}
	if _, err := p.cmd(nil, "cp", "-a", src, dir); err != nil {
		return "", err
	}
	g := &proc{git: "git", env: baseEnv(), dir: dir}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "go src"}} {
		if _, err := g.run(nil, args...); err != nil {
			return "", err
		}
	}
	return dir, os.WriteFile(filepath.Join(dir, ".git", "bench-complete"), nil, 0o644)
}

func runRollbackMode(p *proc, work string, runs int) error {
	bin, err := benchBinaries(work, *rollbackBin, "./git-venom-checkpoint", "./git-venom-rollback")
	if err != nil {
		return err
	}
	var counts []int
	for _, s := range strings.Split(*rollbackCounts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -rollback entry %q", s)
		}
		counts = append(counts, n)
	}
	version, _ := p.line("version")
	what := fmt.Sprintf("a %d-file tree", *rollbackFiles)
	if *rollbackRepo != "" {
		what = "a clone of " + *rollbackRepo
	}
	fmt.Printf("%s, rollback of changed paths in %s, %d runs, medians\n", version, what, runs)
	fmt.Printf("%8s %9s %9s %9s %9s %9s %9s %9s   %s   %s   %s   %s\n", "paths", "status", "co-index", "restore", "files", "capture0",
		"dry-run", "real", "files/co-index", "real/(co-index+2*capture0)", "real/restore", "(dry+real)/restore")
	for _, n := range counts {
		t, err := rollbackOnce(p, work, bin, n, runs)
		if err != nil {
			return err
		}
		ref, files, noch, real := median(t.ref), median(t.files), median(t.nochange), median(t.real)
		restore, dry := median(t.restore), median(t.dry)
		fmt.Printf("%8d %9s %9s %9s %9s %9s %9s %9s   %14s   %26s   %12s   %s\n", n, ms(median(t.status)), ms(ref), ms(restore),
			ms(files), ms(noch), ms(dry), ms(real), ratio(files, ref), ratio(real, ref+2*noch), ratio(real, restore),
			ratio(dry+real, restore))
		rc, dc, ec := median(t.restoreCPU), median(t.dryCPU), median(t.realCPU)
		fmt.Printf("%8s cpu: restore %s, dry-run %s, real %s   real/restore %s   (dry+real)/restore %s\n", "", ms(rc), ms(dc),
			ms(ec), ratio(ec, rc), ratio(dc+ec, rc))
	}
	return nil
}

func rollbackOnce(p *proc, work, bin string, n, runs int) (*rbTimes, error) {
	top, err := prepare(p, work, *rollbackFiles, *rollbackRepo)
	if err != nil {
		return nil, err
	}
	g := &proc{dir: top, git: p.git, env: p.env}
	// venom.timeout bounds one capture; a loaded machine capturing 10,000
	// changed files needs more than the default 30 s.
	cfg := filepath.Join(work, "rollback.gitconfig")
	if err := os.WriteFile(cfg, []byte("[venom]\n\ttimeout = 1h\n"), 0o644); err != nil {
		return nil, err
	}
	var lastCPU time.Duration // of the last venom call
	venom := func(name string, extra []string, args ...string) ([]byte, time.Duration, error) {
		v := g.with(append([]string{"GIT_CONFIG_GLOBAL=" + cfg}, extra...)...)
		start := time.Now()
		out, err := v.cmd(nil, filepath.Join(bin, "git-venom-"+name), args...)
		lastCPU = v.cpu
		return out, time.Since(start), err
	}
	if _, _, err := venom("checkpoint", nil, "--agent=b", "--isolation=worktree", "--json"); err != nil {
		return nil, err
	}
	out, err := g.run(nil, "ls-files", "-z")
	if err != nil {
		return nil, err
	}
	tracked := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	m, err := scenario{name: fmt.Sprintf("rollback%d", n), changed: n}.bind(top, tracked)
	if err != nil {
		return nil, err
	}
	target, err := g.line("rev-parse", "refs/venom/checkpoints/b/1^{tree}")
	if err != nil {
		return nil, err
	}
	timings := filepath.Join(work, "timings")
	t := &rbTimes{}
	var list []byte
	for _, rel := range m.chg {
		list = append(append(list, rel...), 0)
	}
	// changed makes the change again (same bytes, new stat data) and runs
	// git status, so each timed step starts from the same warm index. With
	// -rollback-sync it also syncs, as edits older than the writeback delay
	// are: their unlinks then free written blocks, which with discard waits
	// on the disk file by file.
	changed := func() error {
		if err := m.apply(); err != nil {
			return err
		}
		if _, err := g.run(nil, "status", "--porcelain"); err != nil {
			return err
		}
		if *rollbackSync {
			syscall.Sync()
		}
		return nil
	}
	// The reference: the same paths written from a temporary index of T.
	reference := func() error {
		if err := changed(); err != nil {
			return err
		}
		idx := filepath.Join(work, "ref.index")
		_ = os.Remove(idx)
		gi := g.with("GIT_INDEX_FILE=" + idx)
		if _, err := gi.run(nil, "read-tree", target); err != nil {
			return err
		}
		start := time.Now()
		if _, err := gi.run(list, "checkout-index", "-f", "-z", "--stdin"); err != nil {
			return err
		}
		t.ref = append(t.ref, time.Since(start))
		return nil
	}
	// The bare restore of the same paths from the checkpoint, as a person
	// would without git-venom: the reference of the last two ratios.
	restore := func() error {
		if err := changed(); err != nil {
			return err
		}
		restore := g.with("GIT_LITERAL_PATHSPECS=1")
		start := time.Now()
		if _, err := restore.run(list, "restore", "--source=refs/venom/checkpoints/b/1", "--worktree", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil {
			return err
		}
		t.restore = append(t.restore, time.Since(start))
		t.restoreCPU = append(t.restoreCPU, restore.cpu)
		return nil
	}
	rollback := func(run int) error {
		if err := changed(); err != nil {
			return err
		}
		// A person reads the turn's diff before the dry run: the files
		// are older than a capture's racy window (lib/capture) by then.
		// Timed at once, the dry run and the real call would each hash
		// the 1,000 files again, which no rollback after a turn does.
		time.Sleep(carryRacySleep)
		if *rollbackSettled {
			// The change was made again: same bytes, new stat data. A capture
			// follows, as an agent's turn ends with one before any rollback; without
			// it the dry run hashes every changed file again. Taken after the sleep,
			// out of the edits' racy window; untimed.
			if _, _, err := venom("checkpoint", nil, "--agent=b", "--json"); err != nil {
				return err
			}
		}
		_ = os.Remove(timings)
		out, d, err := venom("rollback", profiled(fmt.Sprintf("dry-%d", run), "VENOM_TEST_TIMINGS="+timings), "--agent=b", "--checkpoint=k1",
			"--restore=files", "--dry-run", "--json")
		if err != nil {
			return err
		}
		t.dry = append(t.dry, d)
		t.dryCPU = append(t.dryCPU, lastCPU)
		var dry struct {
			Plan string `json:"plan"`
		}
		if err := json.Unmarshal(out, &dry); err != nil {
			return err
		}
		if _, d, err = venom("rollback", profiled(fmt.Sprintf("real-%d", run), "VENOM_TEST_TIMINGS="+timings), "--agent=b", "--checkpoint=k1",
			"--restore=files", "--plan="+dry.Plan, "--json"); err != nil {
			return err
		}
		t.real = append(t.real, d)
		t.realCPU = append(t.realCPU, lastCPU)
		f, err := readTiming(timings, "rollback-files")
		if err != nil {
			return err
		}
		t.files = append(t.files, f)
		if b, err := os.ReadFile(timings); err == nil {
			logf("steps (s): %s", strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", ", "))
		}
		// The rollback must have put T back.
		if st, err := g.line("status", "--porcelain"); err != nil || st != "" {
			return fmt.Errorf("after the rollback of %d paths the tree is not clean: %v %q", n, err, st)
		}
		return nil
	}
	for run := 0; run < runs; run++ {
		logf("%d paths, run %d", n, run+1)
		if err := m.apply(); err != nil {
			return nil, err
		}
		// Settle: the first capture after the change records it; the next
		// is a no-change capture.
		if _, _, err := venom("checkpoint", nil, "--agent=b", "--json"); err != nil {
			return nil, err
		}
		_, d, err := venom("checkpoint", nil, "--agent=b", "--json")
		if err != nil {
			return nil, err
		}
		t.nochange = append(t.nochange, d)
		start := time.Now()
		if _, err := g.run(nil, "status", "--porcelain"); err != nil {
			return nil, err
		}
		t.status = append(t.status, time.Since(start))
		// The order of the three writers alternates between runs: on ext4
		// without a journal a create skips inodes freed in the last minutes, so
		// each writer pays for those the writers before it freed, and a fixed
		// order skewed the ratios (1.24 to 1.86). Give an even -runs. Each starts
		// from the change made again and a git status.
		steps := []func() error{reference, restore, func() error { return rollback(run) }}
		if run%2 == 1 {
			steps[0], steps[2] = steps[2], steps[0]
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// profiled is env, with a CPU profile of the command written to
// -rollback-profile/name.pprof when that flag is set.
func profiled(name string, env ...string) []string {
	if *rollbackProf == "" {
		return env
	}
	return append(env, "VENOM_TEST_CPUPROFILE="+filepath.Join(*rollbackProf, name+".pprof"))
}

func readTiming(path, name string) (time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		if k == name {
			s, err := strconv.ParseFloat(v, 64)
			return time.Duration(s * float64(time.Second)), err
		}
	}
	return 0, fmt.Errorf("no %s timing in %s", name, path)
}

// allBinaries are the three commands a bench may build.
var allBinaries = []string{"./git-venom-checkpoint", "./git-venom-rollback", "./git-venom-diff"}

// buildBinaries builds the commands (allBinaries when none is named) of
// the module at src into the folder bin.
func buildBinaries(src, bin string, cmds ...string) error {
	if len(cmds) == 0 {
		cmds = allBinaries
	}
	// GOFLAGS' tags as well: the bench built with venomtest alone once
	// timed a binary unlike the one people run (libgit2 starting OpenSSL
	// and mbedTLS, GSSAPI loaded: about 100 page faults and 3-4 ms more a
	// call).
	tags := buildtags.With(os.Getenv("GOFLAGS"), "venomtest")
	_, err := (&proc{dir: src, env: os.Environ()}).cmd(nil, "go", append([]string{"build", "-tags", tags, "-o", bin + "/"}, cmds...)...)
	return err
}

// benchBinaries is the folder of the git-venom-* binaries a mode runs: bin
// when the caller gave one, else work/bin, where the commands are built
// from this module.
func benchBinaries(work, bin string, cmds ...string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	root, err := buildtags.ModuleRoot()
	if err != nil {
		return "", err
	}
	bin = filepath.Join(work, "bin")
	return bin, buildBinaries(root, bin, cmds...)
}
