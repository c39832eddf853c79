package main

// The shapes mode: captures of three tree shapes (skipped: one file over
// venom.maxFileBytes; many: 1,000 tracked files changed; untracked: the
// first and the steady-state captures of many new files), each timed run
// by run beside the git commands it is held to, medians of wall and CPU
// time and their ratios. Targets and floors: tests/README.md, Benchmarks.
//
//	go run ./tests/bench -shapes skipped,many,untracked -runs 5

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func init() {
	if !modeSelected("shapes") {
		return
	}
	fs := flag.NewFlagSet("bench -shapes", flag.ExitOnError)
	list := fs.String("shapes", "skipped,many,untracked", "comma-separated shapes: skipped, many, untracked")
	files := fs.Int("shapes-files", 100000, "size of the generated tree of the skipped and many shapes")
	untracked := fs.Int("shapes-untracked", 300000, "new files of the untracked shape")
	bin := fs.String("shapes-bin", "", "folder with git-venom-checkpoint (default: build it)")
	floors := fs.Bool("shapes-floors", true, "time the untracked shape's floors (git add -A + write-tree, hash-object -w): many minutes")
	first := fs.Bool("shapes-first", true, "time the untracked shape's first capture (false: its steady-state rows only)")
	base := fs.String("shapes-base", "", "folder with an earlier git-venom-checkpoint, timed beside the other in the untracked shape (before/after)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench-shapes"), "directory for the repositories and binaries")
	runs := fs.Int("runs", 5, "timed runs per shape")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	borrowCache(*work, filepath.Join(os.TempDir(), "git-venom-bench"), *files)
	s := &shapes{p: &proc{git: "git", env: baseEnv(), dir: *work, isolate: true}, work: *work, bin: *bin, files: *files,
		untracked: *untracked, runs: *runs, base: *base, floors: *floors, first: *first}
	if err := s.run(strings.Split(*list, ",")); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

type shapes struct {
	p                *proc
	work, bin        string
	files, untracked int
	runs             int
	base             string // folder of an earlier git-venom-checkpoint, or ""
	floors           bool   // time the untracked shape's floors
	first            bool   // time the untracked shape's first capture
}

// timed is one side of a shape: its runs' wall and CPU times and the
// largest resident set.
type timed struct {
	wall, cpu []time.Duration
	rss       int64
}

func (t *timed) add(p *proc, wall time.Duration) {
	t.wall = append(t.wall, wall)
	t.cpu = append(t.cpu, p.cpu)
	t.rss = max(t.rss, p.maxRSS)
}

func (t *timed) sum(o *timed) *timed {
	s := &timed{rss: max(t.rss, o.rss)}
	for i := range t.wall {
		s.wall = append(s.wall, t.wall[i]+o.wall[i])
		s.cpu = append(s.cpu, t.cpu[i]+o.cpu[i])
	}
	return s
}

func (s *shapes) run(list []string) error {
	bin, err := benchBinaries(s.work, s.bin, "./git-venom-checkpoint")
	if err != nil {
		return err
	}
	s.bin = bin
	cfg := filepath.Join(s.work, "shapes.gitconfig")
	if err := os.WriteFile(cfg, []byte("[venom]\n\tmaxFileBytes = 10m\n\ttimeout = 1h\n"), 0o644); err != nil {
		return err
	}
	s.p.env = append(s.p.env, "GIT_CONFIG_GLOBAL="+cfg, "PATH="+s.bin+":"+os.Getenv("PATH"))
	version, _ := s.p.line("version")
	fmt.Printf("%s, %d runs per shape, medians; ratio = capture / git side\n", version, s.runs)
	fmt.Printf("%-30s %-34s %9s %13s %9s %9s %7s %7s\n", "shape", "side", "wall ms", "min-max ms", "cpu ms", "rss MiB", "wall x", "cpu x")
	for _, name := range list {
		var err error
		switch strings.TrimSpace(name) {
		case "skipped":
			err = s.skipped()
		case "many":
			err = s.many()
		case "untracked":
			err = s.untrackedShape()
		default:
			err = fmt.Errorf("unknown shape %q", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *shapes) report(shape string, git *timed, gitName string, capture *timed) {
	s.reportSide(shape, git, gitName, capture, "capture")
}

// reportSide prints the git row, then side's row with its ratios to git's.
func (s *shapes) reportSide(shape string, git *timed, gitName string, side *timed, sideName string) {
	gw, gc := median(git.wall), median(git.cpu)
	cw, cc := median(side.wall), median(side.cpu)
	fmt.Printf("%-30s %-34s %9s %13s %9s %9.1f\n", shape, gitName, ms(gw), minMax(git.wall), ms(gc), float64(git.rss)/1024)
	fmt.Printf("%-30s %-34s %9s %13s %9s %9.1f %7s %7s\n", shape, sideName, ms(cw), minMax(side.wall), ms(cc), float64(side.rss)/1024,
		ratio(cw, gw), ratio(cc, gc))
}

// minMax is the fastest and the slowest of runs, in ms.
func minMax(runs []time.Duration) string {
	if len(runs) == 0 {
		return "-"
	}
	lo, hi := slices.Min(runs), slices.Max(runs)
	return ms(lo) + "-" + ms(hi)
}

// capture runs one timed capture in g's tree.
func (s *shapes) capture(g *proc, t *timed) error {
	p := g.with()
	start := time.Now()
	if _, err := p.run(nil, "venom-checkpoint", "--agent=b", "--json"); err != nil {
		return err
	}
	t.add(p, time.Since(start))
	return nil
}

// captureBase runs one timed capture in g's tree with the -shapes-base binary.
func (s *shapes) captureBase(g *proc, t *timed) error {
	// Through git, as the other runs: a capture run directly finds the
	// memo of one run through git no use, and stores everything again.
	p := g.with("PATH=" + s.base + ":" + os.Getenv("PATH"))
	start := time.Now()
	if _, err := p.run(nil, "venom-checkpoint", "--agent=b", "--json"); err != nil {
		return err
	}
	t.add(p, time.Since(start))
	return nil
}

// gitTimed runs one timed git command in g's tree.
func gitTimed(g *proc, t *timed, stdin []byte, args ...string) ([]byte, error) {
	p := g.with()
	start := time.Now()
	out, err := p.run(stdin, args...)
	if err == nil {
		t.add(p, time.Since(start))
	}
	return out, err
}

// tree makes a fresh copy of the generated tree and its tracked files.
func (s *shapes) tree() (*proc, []string, error) {
	top, err := prepare(s.p, s.work, s.files, "")
	if err != nil {
		return nil, nil, err
	}
	g := &proc{dir: top, git: s.p.git, env: s.p.env, isolate: true}
	out, err := g.run(nil, "ls-files", "-z")
	if err != nil {
		return nil, nil, err
	}
	return g, strings.Split(strings.TrimRight(string(out), "\x00"), "\x00"), nil
}

func (s *shapes) skipped() error {
	g, tracked, err := s.tree()
	if err != nil {
		return err
	}
	m, err := scenario{name: "skipped", changed: 10, added: 10}.bind(g.dir, tracked)
	if err != nil {
		return err
	}
	big := filepath.Join(g.dir, "venom-bench-big.bin")
	for _, withBig := range []bool{false, true} {
		if withBig {
			data := bytes.Repeat([]byte("0123456789abcdef"), 20<<20/16)
			if err := os.WriteFile(big, data, 0o644); err != nil {
				return err
			}
		}
		// Warm: the private index, its scan record, the cache.
		for i := 0; i < 2; i++ {
			if _, err := g.run(nil, "venom-checkpoint", "--agent=b", "--json"); err != nil {
				return err
			}
		}
		var status, capture timed
		for i := 0; i < s.runs; i++ {
			logf("skipped (big file %v): run %d", withBig, i+1)
			// Content never captured before, in both halves.
			m.epoch = i + 1
			if withBig {
				m.epoch += s.runs
			}
			if err := m.apply(); err != nil {
				return err
			}
			time.Sleep(racySleep)
			if i%2 == 0 {
				if _, err := gitTimed(g, &status, nil, "status", "--porcelain"); err != nil {
					return err
				}
			}
			if err := s.capture(g, &capture); err != nil {
				return err
			}
			if i%2 == 1 {
				if _, err := gitTimed(g, &status, nil, "status", "--porcelain"); err != nil {
					return err
				}
			}
		}
		name := "10chg+10new"
		if withBig {
			name += " +20MiB skipped"
		}
		s.report(name, &status, "git status", &capture)
	}
	return os.Remove(big)
}

// racySleep lets the clock pass the files just written, as the time
// between an agent's edits and its turn's end does: a file written in the
// same instant as a capture is hashed again by git and by us alike.
const racySleep = 1100 * time.Millisecond

// carryRacySleep lets the clock pass a capture's racy window
// (lib/capture's racyWindow, 2 s): stat data taken sooner after a file's
// change is not trusted by the next capture, which hashes the file again.
const carryRacySleep = 2100 * time.Millisecond

func (s *shapes) many() error {
	g, tracked, err := s.tree()
	if err != nil {
		return err
	}
	m, err := scenario{name: "many", changed: 1000}.bind(g.dir, tracked)
	if err != nil {
		return err
	}
	var list []byte
	for _, rel := range m.chg {
		list = append(append(list, rel...), '\n')
	}
	objects := filepath.Join(g.dir, ".git", "objects")
	for i := 0; i < 2; i++ {
		if _, err := g.run(nil, "venom-checkpoint", "--agent=b", "--json"); err != nil {
			return err
		}
	}
	var status, hash, capture timed
	for i := 0; i < s.runs; i++ {
		logf("many: run %d", i+1)
		for _, rel := range m.chg {
			f, err := os.OpenFile(filepath.Join(g.dir, rel), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(f, "appended by bench run %d\n", i)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
		time.Sleep(racySleep)
		if _, err := gitTimed(g, &status, nil, "status", "--porcelain"); err != nil {
			return err
		}
		out, err := gitTimed(g, &hash, list, "hash-object", "-w", "--stdin-paths")
		if err != nil {
			return err
		}
		// The capture stores these blobs too.
		for _, id := range strings.Fields(string(out)) {
			if err := os.Remove(filepath.Join(objects, id[:2], id[2:])); err != nil {
				return err
			}
		}
		if err := s.capture(g, &capture); err != nil {
			return err
		}
	}
	s.report("1000 appended", status.sum(&hash), "git status + hash-object -w", &capture)
	return nil
}

func (s *shapes) untrackedShape() error {
	cache := filepath.Join(s.work, fmt.Sprintf("untracked-%d", s.untracked))
	marker := filepath.Join(cache, ".git", "bench-complete")
	if _, err := os.Stat(marker); err != nil {
		logf("writing %d untracked files in %s", s.untracked, cache)
		if _, err := filesRepo(s.work, cache, s.p.env, 1); err != nil {
			return err
		}
		for i := 0; i < s.untracked; i++ {
			dir := filepath.Join(cache, "new", fmt.Sprintf("d%03d", i/3000), fmt.Sprintf("e%03d", i/30%100))
			if i%30 == 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i%30)), []byte(fmt.Sprintf("untracked file %d\n", i)), 0o644); err != nil {
				return err
			}
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return err
		}
	}
	g := &proc{dir: cache, git: s.p.git, env: s.p.env, isolate: true}
	// A run stopped half-way may have left the steady-state rows' files.
	if err := s.untrackedRestore(g); err != nil {
		return err
	}
	time.Sleep(racySleep)
	// The floors: what git itself pays to store every new file, as loose
	// objects (git add -A into a throwaway index, then write-tree; and
	// hash-object -w of the same files), beside git status, which only
	// reads folders.
	others, err := g.run(nil, "ls-files", "--others", "-z")
	if err != nil {
		return err
	}
	list := bytes.ReplaceAll(bytes.TrimRight(others, "\x00"), []byte{0}, []byte{'\n'})
	list = append(list, '\n')
	index := filepath.Join(cache, ".git", "index")
	scratch := filepath.Join(s.work, "untracked-scratch.index")
	var status, add, hash, capture, before timed
	name := fmt.Sprintf("%d untracked", s.untracked)
	if !s.first {
		return s.untrackedSteadyRows(g, name)
	}
	for i := 0; i < s.runs; i++ {
		logf("untracked: run %d", i+1)
		if err := resetVenom(g); err != nil {
			return err
		}
		if _, err := gitTimed(g, &status, nil, "status", "--porcelain", "-uall"); err != nil {
			return err
		}
		if err := s.untrackedFloors(g, index, scratch, list, &add, &hash); err != nil {
			return err
		}
		if err := s.capture(g, &capture); err != nil {
			return err
		}
		if s.base != "" {
			if err := resetVenom(g); err != nil {
				return err
			}
			if err := s.captureBase(g, &before); err != nil {
				return err
			}
		}
	}
	if err := resetVenom(g); err != nil {
		return err
	}
	os.Remove(scratch)
	s.report(name, &status, "git status -uall", &capture)
	if s.floors {
		s.report(name, &add, "git add -A + write-tree (tmp index)", &capture)
		s.report(name, &hash, "git hash-object -w --stdin-paths", &capture)
	}
	if s.base != "" {
		s.report(name, &before, "capture (-shapes-base)", &capture)
	}
	return s.untrackedSteadyRows(g, name)
}

// untrackedSteadyRows times the steady state, then leaves the tree and
// the repository as they were.
func (s *shapes) untrackedSteadyRows(g *proc, name string) error {
	err := s.untrackedSteady(g, name)
	if rerr := resetVenom(g); err == nil {
		err = rerr
	}
	if err == nil {
		err = s.untrackedRestore(g)
	}
	return err
}

// steadyDir holds the files the steady-state rows write into the
// untracked tree; untrackedRestore puts the tree back as generated.
const steadyDir = "new/steady"

// untrackedSteady times the steady state of the untracked shape: every
// capture after the first, with nothing changed, then with 10 files
// modified and 10 new, each beside git status -uall.
func (s *shapes) untrackedSteady(g *proc, name string) error {
	if err := resetVenom(g); err != nil {
		return err
	}
	if err := s.untrackedRestore(g); err != nil {
		return err
	}
	time.Sleep(racySleep)
	// The first capture, then one more: the scan record is made after the
	// first, and the second runs on it as every later one does.
	for i := 0; i < 2; i++ {
		logf("untracked steady: warm capture %d", i+1)
		if _, err := g.run(nil, "venom-checkpoint", "--agent=b", "--json"); err != nil {
			return err
		}
	}
	pair := func(status, capture *timed, i int) error {
		if i%2 == 0 {
			if _, err := gitTimed(g, status, nil, "status", "--porcelain", "-uall"); err != nil {
				return err
			}
		}
		if err := s.capture(g, capture); err != nil {
			return err
		}
		if i%2 == 1 {
			if _, err := gitTimed(g, status, nil, "status", "--porcelain", "-uall"); err != nil {
				return err
			}
		}
		return nil
	}
	// The floors of a capture that changed nothing, in the same turns: du
	// reads every folder and stats every file once, the least a capture
	// must do to see a file edited in place (which moves no folder); and
	// git status -uall with git's untracked cache, which stats each folder
	// and reads none whose stat data stayed. The cache lives in its own
	// copy of the index (written by the untimed first run), so that the
	// other rows' git status and captures read the index as it was.
	ucIndex := filepath.Join(s.work, "untracked-cache.index")
	if err := copyFile(filepath.Join(g.dir, ".git", "index"), ucIndex); err != nil {
		return err
	}
	defer os.Remove(ucIndex)
	uc := g.with("GIT_INDEX_FILE=" + ucIndex)
	ucArgs := []string{"-c", "core.untrackedCache=true", "-c", "status.showUntrackedFiles=all", "status", "--porcelain", "-uall"}
	if _, err := uc.run(nil, ucArgs...); err != nil {
		return err
	}
	if _, err := uc.run(nil, "update-index", "--test-untracked-cache"); err != nil {
		logf("untracked cache: git update-index --test-untracked-cache refused: %v", err)
	}
	var status, capture, before, du, cached timed
	for i := 0; i < s.runs; i++ {
		logf("untracked steady, nothing changed: run %d", i+1)
		if err := pair(&status, &capture, i); err != nil {
			return err
		}
		p := g.with()
		start := time.Now()
		if _, err := p.cmd(nil, "du", "-s", "new"); err != nil {
			return err
		}
		du.add(p, time.Since(start))
		if _, err := gitTimed(uc, &cached, nil, ucArgs...); err != nil {
			return err
		}
		// Nothing changed: the -shapes-base capture finds the same tree
		// and the same memo, in turn with the other.
		if s.base != "" {
			if err := s.captureBase(g, &before); err != nil {
				return err
			}
		}
	}
	s.report(name+", again", &status, "git status -uall", &capture)
	s.reportSide(name+", again", &status, "git status -uall", &du, "floor: du -s (a stat a file)")
	s.reportSide(name+", again", &status, "git status -uall", &cached, "git status -uall, untracked cache")
	s.reportSide(name+", again", &cached, "git status -uall, untracked cache", &capture, "capture")
	if s.base != "" {
		s.report(name+", again", &status, "git status -uall", &before)
		s.report(name+", again", &before, "capture (-shapes-base)", &capture)
	}
	status, capture = timed{}, timed{}
	for i := 0; i < s.runs; i++ {
		logf("untracked steady, 10 modified + 10 new: run %d", i+1)
		for k := 0; k < 10; k++ {
			// The generated files k*30,000/10 apart: one in every tenth of the tree.
			n := k * s.untracked / 10
			rel := filepath.Join("new", fmt.Sprintf("d%03d", n/3000), fmt.Sprintf("e%03d", n/30%100), fmt.Sprintf("f%02d.txt", n%30))
			if err := appendLine(filepath.Join(g.dir, rel), fmt.Sprintf("steady run %d\n", i)); err != nil {
				return err
			}
			dir := filepath.Join(g.dir, steadyDir, fmt.Sprintf("r%02d", i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%02d.txt", k)), []byte(fmt.Sprintf("new in run %d, %d\n", i, k)), 0o644); err != nil {
				return err
			}
		}
		time.Sleep(racySleep)
		if err := pair(&status, &capture, i); err != nil {
			return err
		}
	}
	s.report(name+", 10chg+10new", &status, "git status -uall", &capture)
	return nil
}

// untrackedRestore puts the untracked tree back as generated: the
// steady-state rows' new files go, the modified files get their content
// back.
func (s *shapes) untrackedRestore(g *proc) error {
	if err := os.RemoveAll(filepath.Join(g.dir, steadyDir)); err != nil {
		return err
	}
	for k := 0; k < 10; k++ {
		n := k * s.untracked / 10
		name := filepath.Join(g.dir, "new", fmt.Sprintf("d%03d", n/3000), fmt.Sprintf("e%03d", n/30%100), fmt.Sprintf("f%02d.txt", n%30))
		want := []byte(fmt.Sprintf("untracked file %d\n", n))
		if got, err := os.ReadFile(name); err == nil && bytes.Equal(got, want) {
			continue
		}
		if err := os.WriteFile(name, want, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func appendLine(name, line string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// untrackedFloors times the floors once, each on a repository without
// the objects of the others, and leaves none behind.
func (s *shapes) untrackedFloors(g *proc, index, scratch string, list []byte, add, hash *timed) error {
	if !s.floors {
		return nil
	}
	// A throwaway index that starts as the user's, as a capture's copy does.
	data, err := os.ReadFile(index)
	if err != nil {
		return err
	}
	if err := os.WriteFile(scratch, data, 0o644); err != nil {
		return err
	}
	a := g.with("GIT_INDEX_FILE=" + scratch)
	start := time.Now()
	if _, err := a.run(nil, "add", "-A"); err != nil {
		return err
	}
	if _, err := a.run(nil, "write-tree"); err != nil {
		return err
	}
	add.add(a, time.Since(start))
	// Every floor writes its objects afresh.
	if err := resetVenom(g); err != nil {
		return err
	}
	if _, err := gitTimed(g, hash, list, "hash-object", "-w", "--stdin-paths"); err != nil {
		return err
	}
	return resetVenom(g)
}

// resetVenom removes what captures left in g's repository (state, refs,
// packs, loose objects), so that the next capture is a first one again.
// The repository holds nothing else that is packed.
func resetVenom(g *proc) error {
	common, err := g.line("rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return err
	}
	refs, err := g.line("for-each-ref", "--format=%(refname)", "refs/venom/")
	if err != nil {
		return err
	}
	for _, ref := range strings.Fields(refs) {
		if _, err := g.run(nil, "update-ref", "-d", ref); err != nil {
			return err
		}
	}
	packs, _ := filepath.Glob(filepath.Join(common, "objects", "pack", "*"))
	for _, p := range packs {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	// Loose objects other than the commit's (a blob, a tree, a commit).
	keep := map[string]bool{}
	out, err := g.run(nil, "rev-list", "--objects", "HEAD")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			keep[f[0]] = true
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(common, "objects", "[0-9a-f][0-9a-f]"))
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if !keep[filepath.Base(d)+e.Name()] {
				if err := os.Remove(filepath.Join(d, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return os.RemoveAll(filepath.Join(common, "venom"))
}

// copyFile copies the file from to the file to, made or replaced.
func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
