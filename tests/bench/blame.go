package main

// The blame mode: git venom-diff --blame of a file with 100 turns of
// history, each turn also a commit, side by side with git blame of the
// same file, in one run (docs/benchmarks.md):
//
//	go run ./tests/bench -blame -blame-turns 100 -runs 11
//
// Target: --blame no more than 2x git blame.

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func init() {
	if !modeSelected("blame") {
		return
	}
	fs := flag.NewFlagSet("bench -blame", flag.ExitOnError)
	fs.Bool("blame", true, "time git venom-diff --blame against git blame")
	turns := fs.Int("blame-turns", 100, "turns (each also a commit) in the file's history")
	lines := fs.Int("blame-lines", 1000, "lines of the file")
	bin := fs.String("blame-bin", "", "folder with git-venom-checkpoint and git-venom-diff (default: build them)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench-blame"), "directory for the repository")
	runs := fs.Int("runs", 11, "timed runs of each")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := runBlame(*work, *bin, *turns, *lines, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

func runBlame(work, bin string, turns, lines, runs int) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	bin, err := benchBinaries(work, bin, "./git-venom-checkpoint", "./git-venom-diff")
	if err != nil {
		return err
	}
	top := filepath.Join(work, "repo")
	_ = os.RemoveAll(top)
	if err := os.MkdirAll(top, 0o755); err != nil {
		return err
	}
	g := &proc{dir: top, git: "git", env: baseEnv()}
	text := make([]string, lines)
	for i := range text {
		text[i] = fmt.Sprintf("line %d of the file, as first written", i)
	}
	write := func() error {
		return os.WriteFile(filepath.Join(top, "f.txt"), []byte(strings.Join(text, "\n")+"\n"), 0o644)
	}
	if err := write(); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "f.txt"}, {"commit", "-qm", "first"}} {
		if _, err := g.run(nil, args...); err != nil {
			return err
		}
	}
	venom := func(name string, args ...string) ([]byte, error) {
		return g.cmd(nil, filepath.Join(bin, "git-venom-"+name), args...)
	}
	rng := rand.New(rand.NewSource(1))
	logf("making %d turns", turns)
	for t := 0; t < turns; t++ {
		if _, err := venom("checkpoint", "--agent=a1", "--reason=turn_start", "-q"); err != nil {
			return err
		}
		for k := 0; k < 10; k++ {
			i := rng.Intn(len(text))
			if rng.Intn(3) == 0 {
				text = append(text[:i], append([]string{fmt.Sprintf("added by turn %d", t)}, text[i:]...)...)
			} else {
				text[i] = fmt.Sprintf("line changed by turn %d", t)
			}
		}
		if err := write(); err != nil {
			return err
		}
		if _, err := venom("checkpoint", "--agent=a1", "--reason=turn_end", "-q"); err != nil {
			return err
		}
		if _, err := g.run(nil, "commit", "-qam", fmt.Sprintf("turn %d", t)); err != nil {
			return err
		}
	}
	var ours, theirs []time.Duration
	for r := 0; r < runs; r++ {
		for _, mine := range []bool{r%2 == 0, r%2 != 0} {
			waitQuiet(idle, idleWait)
			start := time.Now()
			if mine {
				_, err = venom("diff", "--blame", "f.txt", "--json")
			} else {
				_, err = g.run(nil, "blame", "--porcelain", "f.txt")
			}
			if err != nil {
				return err
			}
			if mine {
				ours = append(ours, time.Since(start))
			} else {
				theirs = append(theirs, time.Since(start))
			}
		}
	}
	version, _ := g.line("version")
	fmt.Printf("%s, a %d-line file with %d turns (each a commit), %d runs, medians\n", version, len(text), turns, runs)
	fmt.Printf("git blame %s ms, git venom-diff --blame %s ms, ratio %s (target <= 2.0)\n",
		ms(median(theirs)), ms(median(ours)), ratio(median(ours), median(theirs)))
	return nil
}
