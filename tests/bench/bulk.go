package main

// The bulk mode: the first capture of a lot of new
// content, held to what git itself pays to store it, git add -A into a
// temporary index, timed side by side in one run, run by run in turns.
//
//	go run ./tests/bench -bulk 300 -bulk-file-kb 50 -runs 3
//
// Target: the capture within 1.2x git add -A, in wall and in CPU time.

import (
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func init() {
	if !modeSelected("bulk") {
		return
	}
	fs := flag.NewFlagSet("bench -bulk", flag.ExitOnError)
	mib := fs.Int("bulk", 300, "MiB of new files")
	kb := fs.Int("bulk-file-kb", 50, "size of each new file, KB (random bytes)")
	bin := fs.String("bulk-bin", "", "folder with git-venom-checkpoint (default: build it)")
	profile := fs.String("bulk-profile", "", "folder to write each capture's Go CPU profile to (VENOM_TEST_CPUPROFILE)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench-bulk"), "directory for the repository and binaries")
	runs := fs.Int("runs", 3, "timed runs per side")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := bulkBench(*work, *bin, *profile, *mib, *kb, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

func bulkBench(work, bin, profile string, mib, kb, runs int) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	bin, err := benchBinaries(work, bin, "./git-venom-checkpoint")
	if err != nil {
		return err
	}
	cfg := filepath.Join(work, "bulk.gitconfig")
	// Limits out of the way: the bench measures the cost, not the limits.
	if err := os.WriteFile(cfg, []byte("[venom]\n\tmaxTotalBytes = 100g\n\ttimeout = 1h\n"), 0o644); err != nil {
		return err
	}
	p := &proc{git: "git", dir: work, isolate: true,
		env: append(baseEnv(), "GIT_CONFIG_GLOBAL="+cfg, "PATH="+bin+":"+os.Getenv("PATH"))}
	top := filepath.Join(work, "repo")
	n, err := bulkTree(p, top, mib, kb)
	if err != nil {
		return err
	}
	g := &proc{git: p.git, dir: top, env: p.env, isolate: true}
	version, _ := g.line("version")
	fmt.Printf("%s; %d new files of %d KB (%d MiB), %d runs per side in turns, medians\n", version, n, kb, n*kb*1000>>20, runs)
	index, err := g.line("rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return err
	}
	scratch := filepath.Join(work, "scratch.index")
	var add, capture timed
	for run := 0; run < runs; run++ {
		sides := []func() error{
			func() error { return bulkAdd(g, index, scratch, &add) },
			func() error { return bulkCapture(g, profile, run, &capture) },
		}
		if run%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			if err := side(); err != nil {
				return err
			}
			if err := resetVenom(g); err != nil {
				return err
			}
		}
		logf("run %d: add %v, capture %v", run, add.wall[len(add.wall)-1], capture.wall[len(capture.wall)-1])
	}
	fmt.Printf("%-28s %9s %9s %9s %7s %7s\n", "side", "wall ms", "cpu ms", "rss MiB", "wall x", "cpu x")
	aw, ac := median(add.wall), median(add.cpu)
	cw, cc := median(capture.wall), median(capture.cpu)
	fmt.Printf("%-28s %9s %9s %9.1f\n", "git add -A (tmp index)", ms(aw), ms(ac), float64(add.rss)/1024)
	fmt.Printf("%-28s %9s %9s %9.1f %7s %7s\n", "git venom-checkpoint", ms(cw), ms(cc), float64(capture.rss)/1024,
		ratio(cw, aw), ratio(cc, ac))
	return nil
}

// bulkTree makes (once) a repository of one commit with mib MiB of new
// random files of kb KB beside it, 100 a folder; it returns their number.
func bulkTree(p *proc, top string, mib, kb int) (int, error) {
	n := mib << 20 / (kb * 1000)
	done := filepath.Join(top, ".git", fmt.Sprintf("bench-bulk-%d-%d", n, kb))
	if _, err := os.Stat(done); err == nil {
		return n, nil
	}
	if err := os.RemoveAll(top); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(top, 0o755); err != nil {
		return 0, err
	}
	g := &proc{git: p.git, dir: top, env: p.env}
	if _, err := g.run(nil, "init", "-q"); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(top, "README"), []byte("bench\n"), 0o644); err != nil {
		return 0, err
	}
	if _, err := g.run(nil, "add", "README"); err != nil {
		return 0, err
	}
	if _, err := g.run(nil, "commit", "-qm", "base"); err != nil {
		return 0, err
	}
	buf := make([]byte, kb*1000)
	for i := 0; i < n; i++ {
		dir := filepath.Join(top, "bulk", fmt.Sprintf("d%04d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return 0, err
			}
		}
		rand.Read(buf)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.bin", i%100)), buf, 0o644); err != nil {
			return 0, err
		}
	}
	logf("made %d files in %s", n, top)
	return n, os.WriteFile(done, nil, 0o644)
}

// bulkAdd times git add -A into a temporary index that starts as the
// user's.
func bulkAdd(g *proc, index, scratch string, t *timed) error {
	data, err := os.ReadFile(index)
	if err != nil {
		return err
	}
	if err := os.WriteFile(scratch, data, 0o644); err != nil {
		return err
	}
	defer os.Remove(scratch)
	a := g.with("GIT_INDEX_FILE=" + scratch)
	start := time.Now()
	if _, err := a.run(nil, "add", "-A"); err != nil {
		return err
	}
	t.add(a, time.Since(start))
	return nil
}

// bulkCapture times the first capture of the tree.
func bulkCapture(g *proc, profile string, run int, t *timed) error {
	p := g.with()
	if profile != "" {
		if err := os.MkdirAll(profile, 0o755); err != nil {
			return err
		}
		p = g.with("VENOM_TEST_CPUPROFILE=" + filepath.Join(profile, fmt.Sprintf("capture-%d.cpu", run)))
	}
	start := time.Now()
	if _, err := p.run(nil, "venom-checkpoint", "--agent=b", "--json"); err != nil {
		return err
	}
	t.add(p, time.Since(start))
	return nil
}
