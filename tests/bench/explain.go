package main

// The explain mode: `git venom-checkpoint explain` on a commit touching
// many files of a history of many agent turns, beside `git show --stat`
// of the same commit, interleaved run by run: median wall and CPU, their
// ratio, and explain --json's size.
//
//	go run ./tests/bench -explain 1000 -explain-turns 100 -runs 11

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func init() {
	if !modeSelected("explain") {
		return
	}
	fs := flag.NewFlagSet("bench -explain", flag.ExitOnError)
	files := fs.Int("explain", 1000, "files the explained commit changes")
	turns := fs.Int("explain-turns", 100, "agent turns in the history")
	tree := fs.Int("explain-tree", 10000, "files in the repository")
	runs := fs.Int("runs", 11, "timed runs per command")
	bin := fs.String("explain-bin", "", "folder with the git-venom-* binaries (default: build them)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench-explain"), "directory for the repository and binaries")
	reuse := fs.Bool("explain-reuse", false, "time the repository an earlier run left in -work instead of making it again")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := runExplain(*work, *bin, *files, *turns, *tree, *runs, *reuse); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

func runExplain(work, bin string, files, turns, tree, runs int, reuse bool) error {
	if files > tree || turns < 1 {
		return fmt.Errorf("-explain %d must be at most -explain-tree %d, with at least one turn", files, tree)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	bin, err := benchBinaries(work, bin)
	if err != nil {
		return err
	}
	dir := filepath.Join(work, "repo")
	env := append(baseEnv(), "PATH="+bin+":"+os.Getenv("PATH"))
	p := &proc{git: "git", env: env, dir: dir}
	if !reuse {
		if err := makeExplainRepo(p, files, turns, tree); err != nil {
			return err
		}
	}
	return timeExplain(p, bin, tree, turns, runs)
}

// makeExplainRepo writes the repository, its turns and the commit.
func makeExplainRepo(p *proc, files, turns, tree int) error {
	dir := p.dir
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := p.run(nil, "init", "-q"); err != nil {
		return err
	}
	path := func(i int) string { return filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.go", i)) }
	body := func(i int, mark string) []byte {
		return []byte(fmt.Sprintf("package d\n\n// file %d\nfunc F%d() int {\n\treturn %d // %s\n}\n", i, i, i, mark))
	}
	write := func(i int, b []byte) error {
		if err := os.MkdirAll(filepath.Dir(path(i)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path(i), b, 0o644)
	}
	logf("writing %d files", tree)
	for i := 0; i < tree; i++ {
		if err := write(i, body(i, "base")); err != nil {
			return err
		}
	}
	if _, err := p.run(nil, "add", "-A"); err != nil {
		return err
	}
	if _, err := p.run(nil, "commit", "-q", "-m", "base"); err != nil {
		return err
	}
	// The commit's files are 0..files-1, shared out among the turns; each
	// turn also edits one file outside the commit and back.
	logf("taking %d turns", turns)
	for t := 0; t < turns; t++ {
		if _, err := p.run(nil, "venom-checkpoint", "--agent=a1", "--reason=turn_start"); err != nil {
			return err
		}
		for i := t; i < files; i += turns {
			b := body(i, fmt.Sprintf("turn %d", t))
			if i%2 == 1 { // a one-line edit, kept among other lines
				b = append(b, fmt.Sprintf("\n// added by turn %d\n", t)...)
			}
			if err := write(i, b); err != nil {
				return err
			}
		}
		if files < tree {
			o := files + t%(tree-files)
			if err := write(o, body(o, fmt.Sprintf("scratch %d", t))); err != nil {
				return err
			}
		}
		if _, err := p.run(nil, "venom-checkpoint", "--agent=a1", "--reason=turn_end"); err != nil {
			return err
		}
	}
	// The person's own touch on a tenth of the files before committing.
	for i := 0; i < files; i += 10 {
		b, err := os.ReadFile(path(i))
		if err != nil {
			return err
		}
		if err := write(i, append([]byte("// reviewed\n"), b...)); err != nil {
			return err
		}
	}
	if files < tree {
		// Outside files go back to base: the commit changes exactly -explain files.
		for i := files; i < tree; i++ {
			if err := write(i, body(i, "base")); err != nil {
				return err
			}
		}
	}
	if _, err := p.run(nil, "add", "-A"); err != nil {
		return err
	}
	_, err := p.run(nil, "commit", "-q", "-m", "the work")
	return err
}

// timeExplain times explain and git show --stat of HEAD, run by run.
func timeExplain(p *proc, bin string, tree, turns, runs int) error {
	dir := p.dir
	changed, err := p.line("rev-list", "--count", "HEAD") // sanity: two commits
	if err != nil || changed != "2" {
		return fmt.Errorf("expected two commits, got %q (%v)", changed, err)
	}
	n, err := p.run(nil, "diff", "--name-only", "HEAD^", "HEAD")
	if err != nil {
		return err
	}
	out, err := p.run(nil, "venom-checkpoint", "explain", "HEAD", "--json")
	if err != nil {
		return err
	}
	version, _ := p.line("version")
	fmt.Printf("%s, %d runs, medians; a commit changing %d files of %d, %d turns; explain --json is %d KB\n",
		version, runs, lines(n), tree, turns, len(out)>>10)
	cmds := []struct {
		name string
		argv []string
	}{
		{"git show --stat HEAD", []string{"git", "show", "--stat", "HEAD"}},
		{"explain HEAD --json", []string{filepath.Join(bin, "git-venom-checkpoint"), "explain", "HEAD", "--json"}},
		{"explain HEAD", []string{filepath.Join(bin, "git-venom-checkpoint"), "explain", "HEAD"}},
		{"checkpoint --version", []string{filepath.Join(bin, "git-venom-checkpoint"), "--version"}},
	}
	wall := make([][]time.Duration, len(cmds))
	cpu := make([][]time.Duration, len(cmds))
	for r := 0; r < runs; r++ {
		for i, c := range cmds {
			w, u, err := timeRun(dir, c.argv)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			wall[i] = append(wall[i], w)
			cpu[i] = append(cpu[i], u)
		}
	}
	fmt.Printf("%-24s %9s %9s %14s %13s\n", "command", "wall ms", "cpu ms", "wall x show", "cpu x show")
	for i, c := range cmds {
		fmt.Printf("%-24s %9s %9s %14s %13s\n", c.name, ms(median(wall[i])), ms(median(cpu[i])),
			ratio(median(wall[i]), median(wall[0])), ratio(median(cpu[i]), median(cpu[0])))
	}
	return nil
}

func lines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}
