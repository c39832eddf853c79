package main

// The packs mode: N captures in a row on a 100-file tree (one tracked and
// one untracked file changed each), this working copy's binaries beside
// -packs-before's: packs and loose objects after, whether gc --auto then
// repacks, and median capture times near the 10th and the Nth.
//
//	go run ./tests/bench -packs 1000 -packs-before 35e0d23

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-venom/git-venom/tests/buildtags"
)

func init() {
	if !modeSelected("packs") {
		return
	}
	fs := flag.NewFlagSet("bench -packs", flag.ExitOnError)
	n := fs.Int("packs", 1000, "captures in a row")
	before := fs.String("packs-before", "", "also time the binaries of this git revision (git archive, built in -work)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for the repositories and binaries")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := runPacks(*work, *n, *before); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

type packsRun struct {
	name     string
	times    []time.Duration            // each capture's wall time
	steps    []map[string]time.Duration // each capture's timed steps (VENOM_TEST_TIMINGS)
	packs    string
	loose    string
	gcRepack bool
}

func runPacks(work string, n int, before string) error {
	if n < 20 {
		return fmt.Errorf("-packs %d: at least 20 captures", n)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	root, err := buildtags.ModuleRoot()
	if err != nil {
		return err
	}
	type build struct{ name, bin, src string }
	builds := []build{{"after", filepath.Join(work, "packs-bin-after"), root}}
	if before != "" {
		src := filepath.Join(work, "packs-src-before")
		if err := os.RemoveAll(src); err != nil {
			return err
		}
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		p := &proc{dir: root, env: os.Environ()}
		tar, err := p.cmd(nil, "git", "archive", "--format=tar", before)
		if err != nil {
			return err
		}
		if _, err := (&proc{dir: src, env: os.Environ()}).cmd(tar, "tar", "-x"); err != nil {
			return err
		}
		builds = append([]build{{"before " + before, filepath.Join(work, "packs-bin-before"), src}}, builds...)
	}
	for _, b := range builds {
		logf("building %s", b.name)
		if err := buildBinaries(b.src, b.bin); err != nil {
			return err
		}
	}
	var runs []*packsRun
	for _, b := range builds {
		r, err := packsCaptures(work, b.name, b.bin, n)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	version, _ := (&proc{git: "git", env: baseEnv(), dir: work}).line("version")
	fmt.Printf("%s, %d captures (one tracked and one untracked file changed each) on a 100-file tree\n", version, n)
	fmt.Printf("%-22s %6s %6s %12s %10s %10s %8s %10s\n", "binaries", "packs", "loose", "gc --auto", "ms at 10", fmt.Sprintf("ms at %d", n), "ratio", "total s")
	for _, r := range runs {
		early := median(r.times[5:15])
		late := median(r.times[n-10:])
		var total time.Duration
		for _, t := range r.times {
			total += t
		}
		gc := "nothing"
		if r.gcRepack {
			gc = "repacks"
		}
		fmt.Printf("%-22s %6s %6s %12s %10s %10s %8s %10.1f\n", r.name, r.packs, r.loose, gc, ms(early), ms(late),
			ratio(late, early), total.Seconds())
	}
	// Where a capture's time goes, for the binaries that time their steps.
	for _, r := range runs {
		for _, step := range []string{"capture", "record", "pack-maintain"} {
			var all []time.Duration
			for _, m := range r.steps {
				if d, ok := m[step]; ok {
					all = append(all, d)
				}
			}
			if len(all) != n {
				continue
			}
			late := append([]time.Duration(nil), all[n-10:]...)
			early := append([]time.Duration(nil), all[5:15]...)
			worst := time.Duration(0)
			for _, d := range all {
				worst = max(worst, d)
			}
			fmt.Printf("  %-20s step %-14s ms at 10 %7s, at %d %7s, ratio %5s, max %7s\n", r.name, step,
				ms(median(early)), n, ms(median(late)), ratio(median(late), median(early)), ms(worst))
		}
	}
	return nil
}

// readSteps reads and empties the VENOM_TEST_TIMINGS file.
func readSteps(path string) map[string]time.Duration {
	b, _ := os.ReadFile(path)
	_ = os.Remove(path)
	m := map[string]time.Duration{}
	for _, line := range strings.Split(string(b), "\n") {
		name, secs, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		var f float64
		if _, err := fmt.Sscan(secs, &f); err == nil {
			m[name] += time.Duration(f * float64(time.Second))
		}
	}
	return m
}

// packsCaptures makes a fresh repository and takes n captures in it.
func packsCaptures(work, name, bin string, n int) (*packsRun, error) {
	dir := filepath.Join(work, "packs-repo")
	timings := filepath.Join(work, "packs-timings")
	env := append(baseEnv(), "PATH="+bin+":"+os.Getenv("PATH"), "VENOM_TEST_TIMINGS="+timings)
	p, err := filesRepo(work, dir, env, 100)
	if err != nil {
		return nil, err
	}
	if _, err := p.run(nil, "repack", "-adq"); err != nil {
		return nil, err
	}
	r := &packsRun{name: name}
	for i := 1; i <= n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.txt", i%100)), []byte(fmt.Sprintf("%d changed at %d\n", i%100, i)), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "untracked.txt"), []byte(fmt.Sprintf("new at %d\n", i)), 0o644); err != nil {
			return nil, err
		}
		start := time.Now()
		if _, err := p.run(nil, "venom-checkpoint", "--agent=a1"); err != nil {
			return nil, err
		}
		r.times = append(r.times, time.Since(start))
		r.steps = append(r.steps, readSteps(timings))
		if i%100 == 0 {
			logf("%s: %d captures", name, i)
		}
	}
	counts, err := p.line("count-objects", "-v")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(counts, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "packs":
			r.packs = v
		case "count":
			r.loose = v
		}
	}
	before, _ := p.line("count-objects", "-v")
	if _, err := p.run(nil, "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"); err != nil {
		return nil, err
	}
	after, _ := p.line("count-objects", "-v")
	r.gcRepack = before != after
	return r, nil
}
