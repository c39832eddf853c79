package main

// The fsmonitor mode: captures of a generated tree through a private
// watchman, beside git status with and without it, clean and after 10
// changed and 10 new files (targets: tests/README.md, Benchmarks).
//
//	go run ./tests/bench -fsmonitor 100000 -runs 7
//	go run ./tests/bench -fsmonitor 100000 -fsmonitor-base /tmp/before
//	go run ./tests/bench -fsmonitor 1000000 -fsmonitor-reuse -work /tmp/fsm1m

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func init() {
	if !modeSelected("fsmonitor") {
		return
	}
	fs := flag.NewFlagSet("bench -fsmonitor", flag.ExitOnError)
	sizes := fs.String("fsmonitor", "100000", "comma-separated sizes of the generated trees")
	bin := fs.String("fsmonitor-bin", "", "folder with git-venom-checkpoint (default: build it)")
	base := fs.String("fsmonitor-base", "", "folder with an earlier git-venom-checkpoint, timed beside the other without an fsmonitor")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench-fsmonitor"), "directory for the repositories, binaries and watchman")
	reuse := fs.Bool("fsmonitor-reuse", false, "keep one working copy of each size in -work, put back before each run, instead of copying the generated tree again")
	runs := fs.Int("runs", 7, "timed runs per row")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	b, err := benchBinaries(*work, *bin, "./git-venom-checkpoint")
	if err != nil {
		fatal(err)
	}
	f := &fsmBench{work: *work, bin: b, base: *base, runs: *runs, reuse: *reuse}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 2 {
			fatal(fmt.Errorf("bad -fsmonitor size %q", s))
		}
		if !*reuse {
			borrowCache(*work, filepath.Join(os.TempDir(), "git-venom-bench"), n)
		}
		if err := f.run(n); err != nil {
			fatal(err)
		}
	}
	os.Exit(0)
}

type fsmBench struct {
	work, bin, base string
	runs            int
	reuse           bool
}

// kept is the working copy -fsmonitor-reuse keeps for n files: made once
// by moving the generated tree into place (a copy of 1,000,000 files
// takes longer than the whole run), then put back at every run to the
// commit, with no untracked file left but ignored ones.
func (f *fsmBench) kept(p *proc, n int) (string, error) {
	top := filepath.Join(f.work, fmt.Sprintf("fsmonitor-%d", n))
	g := &proc{dir: top, git: p.git, env: p.env}
	if _, err := os.Stat(filepath.Join(top, ".git")); err == nil {
		logf("putting %s back to its commit", top)
		// A run cut short leaves core.fsmonitor set, naming a hook that
		// would reach the person's watchman from here.
		for _, args := range [][]string{{"reset", "-q", "--hard"}, {"clean", "-fdq"}} {
			if _, err := g.run(nil, append([]string{"-c", "core.fsmonitor=false"}, args...)...); err != nil {
				return "", err
			}
		}
		return top, settle(g)
	}
	cache := filepath.Join(f.work, fmt.Sprintf("gen-%d-%s", n, genVersion))
	if _, err := os.Stat(filepath.Join(cache, ".git", "bench-complete")); err != nil {
		if err := os.RemoveAll(cache); err != nil {
			return "", err
		}
		logf("generating %d files in %s", n, cache)
		if err := generate(p, cache, n); err != nil {
			return "", err
		}
	}
	if err := os.Rename(cache, top); err != nil {
		return "", err
	}
	return top, settle(g)
}

// watchman is the bench's private watchman: a wrapper that names its
// files, first on the children's PATH.
func (f *fsmBench) watchman() (env []string, stop func(), err error) {
	real, err := exec.LookPath("watchman")
	if err != nil {
		return nil, nil, fmt.Errorf("the fsmonitor mode needs watchman (apt-get install watchman): %v", err)
	}
	dir := filepath.Join(f.work, "wm")
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return nil, nil, err
	}
	sock, pidFile := filepath.Join(dir, "sock"), filepath.Join(dir, "pid")
	script := fmt.Sprintf("#!/bin/sh\nexec %s --sockname=%s --statefile=%s --logfile=%s --pidfile=%s \"$@\"\n",
		real, sock, filepath.Join(dir, "state"), filepath.Join(dir, "log"), pidFile)
	if err := os.WriteFile(filepath.Join(dir, "bin", "watchman"), []byte(script), 0o755); err != nil {
		return nil, nil, err
	}
	stop = func() {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	return []string{"PATH=" + filepath.Join(dir, "bin") + ":" + f.bin + ":" + os.Getenv("PATH"), "WATCHMAN_SOCK=" + sock}, stop, nil
}

// fsmTimed is one side of a row, with its name.
type fsmTimed struct {
	name string
	t    timed
}

func (f *fsmBench) run(n int) error {
	p := &proc{git: "git", env: baseEnv(), dir: f.work, isolate: true}
	var top string
	var err error
	if f.reuse {
		top, err = f.kept(p, n)
	} else {
		top, err = prepare(p, f.work, n, "")
	}
	if err != nil {
		return err
	}
	wmEnv, stop, err := f.watchman()
	if err != nil {
		return err
	}
	defer stop()
	cfg := filepath.Join(f.work, "fsmonitor.gitconfig")
	if err := os.WriteFile(cfg, []byte("[venom]\n\ttimeout = 1h\n"), 0o644); err != nil {
		return err
	}
	env := append(append(append([]string(nil), p.env...), "GIT_CONFIG_GLOBAL="+cfg), wmEnv...)
	g := &proc{dir: top, git: "git", env: env, isolate: true}
	hook, err := os.ReadFile("/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample")
	if err != nil {
		return err
	}
	hookPath := filepath.Join(top, ".git", "hooks", "query-watchman")
	if err := os.MkdirAll(filepath.Dir(hookPath), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(hookPath, hook, 0o755); err != nil {
		return err
	}
	out, err := g.run(nil, "ls-files", "-z")
	if err != nil {
		return err
	}
	tracked := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	m, err := scenario{name: "fsmonitor", changed: 10, added: 10}.bind(top, tracked)
	if err != nil {
		return err
	}
	version, _ := g.line("version")
	wv, _ := exec.Command("watchman", "--version").Output()
	fmt.Printf("%s, watchman %s, %d files, %d runs per row; medians, min-max; ratio = capture / side\n",
		version, strings.TrimSpace(string(wv)), n, f.runs)
	fmt.Printf("%-24s %-28s %9s %15s %9s %9s %7s %7s\n", "row", "side", "wall ms", "min-max", "cpu ms", "rss MiB", "wall x", "cpu x")

	// With the fsmonitor and the untracked cache.
	for _, kv := range [][2]string{{"core.fsmonitor", hookPath}, {"core.untrackedCache", "true"}} {
		if _, err := g.run(nil, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	plain := []string{"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"}
	sides := func(fsm bool) [][]string {
		s := [][]string{append(append([]string(nil), plain...), "status", "--porcelain")}
		if fsm {
			s = append([][]string{{"status", "--porcelain"}}, s...)
		}
		return s
	}
	names := func(fsm bool) []string {
		if fsm {
			return []string{"git status (fsmonitor+uc)", "git status (plain)"}
		}
		return []string{"git status (plain)"}
	}
	for _, fsm := range []bool{true, false} {
		if !fsm {
			for _, k := range []string{"core.fsmonitor", "core.untrackedCache"} {
				if _, err := g.run(nil, "config", "--unset", k); err != nil {
					return err
				}
			}
		}
		// Warm: watchman watching, git's token and untracked cache, the
		// private index, the scan record, the memo, the capture's token.
		for i := 0; i < 3; i++ {
			if _, err := g.run(nil, "status", "--porcelain"); err != nil {
				return err
			}
			if _, err := g.run(nil, "venom-checkpoint", "--agent=b", "--json"); err != nil {
				return err
			}
			if f.base != "" && !fsm {
				if _, err := g.cmd(nil, filepath.Join(f.base, "git-venom-checkpoint"), "--agent=c", "--json"); err != nil {
					return err
				}
			}
		}
		for _, row := range []string{"clean", "10chg+10new"} {
			var side []*fsmTimed
			for _, nm := range names(fsm) {
				side = append(side, &fsmTimed{name: nm})
			}
			capture := &fsmTimed{name: "capture"}
			base := &fsmTimed{name: "capture (base)"}
			for i := 0; i < f.runs; i++ {
				logf("%s fsmonitor=%v run %d", row, fsm, i+1)
				if row != "clean" {
					m.epoch = i + 1
					if !fsm {
						m.epoch += f.runs
					}
					if err := m.apply(); err != nil {
						return err
					}
					time.Sleep(racySleep)
				}
				// Turns: the capture first on odd runs.
				steps := []func() error{}
				for k, args := range sides(fsm) {
					k, args := k, args
					steps = append(steps, func() error {
						// GIT_OPTIONAL_LOCKS=0: a plain status must not
						// write the index, dropping git's fsmonitor token.
						q := g.with("GIT_OPTIONAL_LOCKS=0")
						start := time.Now()
						if _, err := q.run(nil, args...); err != nil {
							return err
						}
						side[k].t.add(q, time.Since(start))
						return nil
					})
				}
				steps = append(steps, func() error {
					q := g.with()
					start := time.Now()
					if _, err := q.run(nil, "venom-checkpoint", "--agent=b", "--json"); err != nil {
						return err
					}
					capture.t.add(q, time.Since(start))
					return nil
				})
				if f.base != "" && !fsm {
					steps = append(steps, func() error {
						q := g.with()
						start := time.Now()
						if _, err := q.cmd(nil, filepath.Join(f.base, "git-venom-checkpoint"), "--agent=c", "--json"); err != nil {
							return err
						}
						base.t.add(q, time.Since(start))
						return nil
					})
				}
				if i%2 == 1 {
					for l, r := 0, len(steps)-1; l < r; l, r = l+1, r-1 {
						steps[l], steps[r] = steps[r], steps[l]
					}
				}
				for _, s := range steps {
					if err := s(); err != nil {
						return err
					}
				}
			}
			label := row
			if !fsm {
				label += ", no fsmonitor"
			}
			all := append([]*fsmTimed{}, side...)
			if f.base != "" && !fsm {
				all = append(all, base)
			}
			for _, s := range all {
				fsmRow(label, s, nil)
			}
			for _, s := range all {
				fsmRow(label, capture, s)
			}
		}
	}
	return nil
}

// fsmRow prints one side, or the capture against side vs.
func fsmRow(row string, s, vs *fsmTimed) {
	w, c := median(s.t.wall), median(s.t.cpu)
	lo, hi := s.t.wall[0], s.t.wall[0]
	for _, d := range s.t.wall {
		lo, hi = min(lo, d), max(hi, d)
	}
	name, wx, cx := s.name, "", ""
	if vs != nil {
		name = "capture vs " + vs.name
		wx, cx = ratio(w, median(vs.t.wall)), ratio(c, median(vs.t.cpu))
		wx += fmt.Sprintf(" rss %.2fx", float64(s.t.rss)/float64(max(vs.t.rss, 1)))
	}
	fmt.Printf("%-24s %-28s %9s %15s %9s %9.1f %7s %7s\n", row, name, ms(w), ms(lo)+"-"+ms(hi), ms(c),
		float64(s.t.rss)/1024, wx, cx)
}
