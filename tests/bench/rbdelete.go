package main

// The rollback-delete mode: a rollback that deletes many untracked files,
// beside `git clean -fdq` of the same files on an identical copy (files
// hard-linked, .git copied; the agent's after-turn capture taken first,
// untimed, since a hard link moves every ctime). Targets: real / clean
// and (dry run + real) / clean within 1.5x.
//
//	go run ./tests/bench -rollback-delete 300000 -runs 1

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func init() {
	if !modeSelected("rollback-delete") {
		return
	}
	fs := flag.NewFlagSet("bench -rollback-delete", flag.ExitOnError)
	n := fs.Int("rollback-delete", 300000, "untracked files the rollback deletes")
	bin := fs.String("rollback-bin", "", "folder with git-venom-checkpoint and git-venom-rollback (default: build them)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench-rbdelete"), "directory for the cached tree, its copies and the binaries")
	runs := fs.Int("runs", 1, "timed runs")
	verb := fs.Bool("v", false, "log progress on stderr")
	profile := fs.String("rollback-profile", "", "folder for the timed calls' CPU and heap profiles (dry.cpu, dry.mem, real.cpu, real.mem; the last run's)")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	if err := runRollbackDelete(*work, *bin, *profile, *n, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

func runRollbackDelete(work, binDir, profile string, n, runs int) error {
	bin, err := benchBinaries(work, binDir, "./git-venom-checkpoint", "./git-venom-rollback")
	if err != nil {
		return err
	}
	cfg := filepath.Join(work, "rbdelete.gitconfig")
	if err := os.WriteFile(cfg, []byte("[venom]\n\ttimeout = 1h\n"), 0o644); err != nil {
		return err
	}
	env := append(baseEnv(), "GIT_CONFIG_GLOBAL="+cfg)
	cache := filepath.Join(work, fmt.Sprintf("delete-%d", n))
	run := filepath.Join(work, "run")     // where the tree was captured, and the rollback runs
	clean := filepath.Join(work, "clean") // where git clean runs
	var out []byte                        // of the last venom call
	// profiled is the environment of a timed call named name: its
	// profiles go to the -rollback-profile folder (lib/testhook).
	profiled := func(name string) []string {
		if profile == "" {
			return nil
		}
		return []string{"VENOM_TEST_CPUPROFILE=" + filepath.Join(profile, name+".cpu"),
			"VENOM_TEST_MEMPROFILE=" + filepath.Join(profile, name+".mem")}
	}
	var extra []string // the next venom call's own environment
	venom := func(dir string, name string, args ...string) (*proc, time.Duration, error) {
		p := &proc{dir: dir, env: append(append([]string(nil), env...), extra...), isolate: true}
		extra = nil
		start := time.Now()
		var err error
		out, err = p.cmd(nil, filepath.Join(bin, "git-venom-"+name), args...)
		return p, time.Since(start), err
	}
	if _, err := os.Stat(filepath.Join(cache, ".git", "bench-complete")); err != nil {
		logf("making %d untracked files in %s", n, run)
		if err := os.RemoveAll(cache); err != nil {
			return err
		}
		if _, err := filesRepo(work, run, env, 1); err != nil {
			return err
		}
		if _, _, err := venom(run, "checkpoint", "--agent=b", "--isolation=worktree", "--json"); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			dir := filepath.Join(run, "new", fmt.Sprintf("d%03d", i/3000), fmt.Sprintf("e%03d", i/30%100))
			if i%30 == 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i%30)), []byte(fmt.Sprintf("untracked file %d\n", i)), 0o644); err != nil {
				return err
			}
		}
		// The agent's turn ends: its capture holds them (and warms the
		// private index and the scan record, as the agent's hooks do).
		if _, _, err := venom(run, "checkpoint", "--agent=b", "--json"); err != nil {
			return err
		}
		if _, _, err := venom(run, "checkpoint", "--agent=b", "--json"); err != nil {
			return err
		}
		if err := os.Rename(run, cache); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(cache, ".git", "bench-complete"), nil, 0o644); err != nil {
			return err
		}
	}
	// copyTree makes dst a copy of the cache: .git whole, the files by hard links.
	copyTree := func(dst string) error {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		sh := &proc{dir: work, env: os.Environ()}
		if _, err := sh.cmd(nil, "cp", "-a", filepath.Join(cache, ".git"), dst); err != nil {
			return err
		}
		_, err := sh.cmd(nil, "sh", "-c", `cd "$1" && for f in * .[!.]*; do [ "$f" = .git ] || [ ! -e "$f" ] || cp -al "$f" "$2/"; done`, "sh", cache, dst)
		return err
	}
	var cleanW, cleanC, dryW, dryC, realW, realC []time.Duration
	var cleanRSS, dryRSS, realRSS int64 // KiB, the largest of the runs
	for i := 0; i < runs; i++ {
		logf("rollback-delete: run %d", i+1)
		if err := copyTree(clean); err != nil {
			return err
		}
		g := &proc{dir: clean, git: "git", env: env, isolate: true}
		start := time.Now()
		if _, err := g.run(nil, "clean", "-fdq"); err != nil {
			return err
		}
		cleanW, cleanC = append(cleanW, time.Since(start)), append(cleanC, g.cpu)
		cleanRSS = max(cleanRSS, g.maxRSS)
		if err := os.RemoveAll(clean); err != nil {
			return err
		}
		if err := copyTree(run); err != nil {
			return err
		}
		// The agent's after-turn capture, on these very inodes: untimed.
		// Twice: the copy's new folders send the first to git status, and
		// the memo it leaves is keyed by git status's output, which the
		// next capture's quick scan never matches (lib/capture); the
		// second leaves the memo an agent's tree has after its turn.
		for range 2 {
			if _, _, err := venom(run, "checkpoint", "--agent=b", "--json"); err != nil {
				return err
			}
		}
		time.Sleep(racySleep)
		extra = profiled("dry")
		p, d, err := venom(run, "rollback", "--agent=b", "--checkpoint=k1", "--restore=files", "--dry-run", "--json")
		if err != nil {
			return err
		}
		dryW, dryC = append(dryW, d), append(dryC, p.cpu)
		dryRSS = max(dryRSS, p.maxRSS)
		var dry struct {
			Plan string `json:"plan"`
		}
		if err := json.Unmarshal(out, &dry); err != nil {
			return err
		}
		extra = profiled("real")
		p, d, err = venom(run, "rollback", "--agent=b", "--checkpoint=k1", "--restore=files", "--plan="+dry.Plan, "--json")
		if err != nil {
			return err
		}
		realW, realC = append(realW, d), append(realC, p.cpu)
		realRSS = max(realRSS, p.maxRSS)
		if _, err := os.Lstat(filepath.Join(run, "new")); !os.IsNotExist(err) {
			return fmt.Errorf("the rollback left %s/new", run)
		}
		if err := os.RemoveAll(run); err != nil {
			return err
		}
	}
	cw, cc, dw, dc, rw, rc := median(cleanW), median(cleanC), median(dryW), median(dryC), median(realW), median(realC)
	fmt.Printf("rollback deleting %d untracked files, %d runs, medians (ms)\n", n, runs)
	fmt.Printf("%-6s %10s %10s %10s %14s %20s\n", "", "git clean", "dry run", "real", "real / clean", "(dry + real) / clean")
	fmt.Printf("%-6s %10s %10s %10s %14s %20s\n", "wall", ms(cw), ms(dw), ms(rw), ratio(rw, cw), ratio(dw+rw, cw))
	fmt.Printf("%-6s %10s %10s %10s %14s %20s\n", "cpu", ms(cc), ms(dc), ms(rc), ratio(rc, cc), ratio(dc+rc, cc))
	mib := func(kib int64) string { return fmt.Sprintf("%.1f", float64(kib)/1024) }
	fmt.Printf("%-6s %10s %10s %10s %14s\n", "rssMiB", mib(cleanRSS), mib(dryRSS), mib(realRSS),
		fmt.Sprintf("%.2f", float64(realRSS)/float64(max(cleanRSS, 1))))
	return nil
}
