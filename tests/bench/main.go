// Command bench measures ways of capturing a working tree as a git tree
// (docs/checkpoints.md#how-a-capture-runs) against git status, interleaved
// run by run: median wall and child CPU time, ratios to git status.
//
//	go run ./tests/bench -files 1000,10000,100000 -runs 11
//	go run ./tests/bench -repo ~/src/linux -venom ./git-venom-checkpoint
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	verbose  bool
	idle     float64
	idleWait time.Duration
)

func logf(format string, args ...any) {
	if verbose {
		fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	}
}

func main() {
	var (
		files   = flag.String("files", "1000,10000", "comma-separated sizes of generated repositories")
		work    = flag.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for cached repositories and the working copy")
		src     = flag.String("repo", "", "measure a clone of this repository instead of generated ones (never modified)")
		runs    = flag.Int("runs", 11, "timed runs per strategy and scenario")
		only    = flag.String("strategies", "", "comma-separated strategy names to run (default all)")
		scens   = flag.String("scenarios", "", "comma-separated scenario names to run (default all)")
		full    = flag.String("full", "d-uall", "persistent variant that the full strategy (e) extends with commit-tree and update-ref")
		venom   = flag.String("venom", "", "path to a git-venom-checkpoint binary to time as strategy venom")
		gitPath = flag.String("git", "git", "git binary")
		verb    = flag.Bool("v", false, "log progress on stderr")
	)
	flag.Float64Var(&idle, "idle", 0.8, "before each timed run wait until the CPUs are this idle (0: don't wait)")
	flag.DurationVar(&idleWait, "idle-wait", 10*time.Second, "longest wait for -idle; a run timed after it counts as busy")
	flag.Parse()
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	strategies, err := pick(*only, *full, *venom)
	if err != nil {
		fatal(err)
	}
	var sc []scenario
	for _, s := range scenarios {
		if *scens == "" || contains(*scens, s.name) {
			sc = append(sc, s)
		}
	}
	sizes := []int{0}
	if *src == "" {
		sizes = nil
		for _, f := range strings.Split(*files, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2 {
				fatal(fmt.Errorf("bad -files entry %q", f))
			}
			sizes = append(sizes, n)
		}
	}
	p := &proc{git: *gitPath, env: baseEnv(), dir: *work}
	version, _ := p.line("version")
	fmt.Printf("%s, %d runs per cell, median of each\n", version, *runs)
	for _, n := range sizes {
		b := &bench{p: p, runs: *runs, strategies: strategies, scenarios: sc}
		if err := b.measure(*work, n, *src); err != nil {
			fatal(err)
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

// modeSelected says whether the command line names the mode's flag
// (-name or --name, with or without =value): each mode reads its own flags.
func modeSelected(name string) bool {
	for _, a := range os.Args[1:] {
		a, _, _ = strings.Cut(a, "=")
		if a == "-"+name || a == "--"+name {
			return true
		}
	}
	return false
}

func contains(list, name string) bool {
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == name {
			return true
		}
	}
	return false
}

func pick(only, full, venom string) ([]strategy, error) {
	all := []strategy{statusStrategy(), recipeStrategy(), hashStrategy(), singleStrategy()}
	var fullV *variant
	for _, v := range variants() {
		all = append(all, persistentStrategy(v))
		if v.name == full {
			v := v
			fullV = &v
		}
	}
	if fullV == nil {
		return nil, fmt.Errorf("-full %q is not a persistent variant", full)
	}
	fullV.commit = true
	fullV.name = "full"
	all = append(all, persistentStrategy(*fullV))
	if venom != "" {
		abs, err := filepath.Abs(venom)
		if err != nil {
			return nil, err
		}
		all = append(all, venomStrategy(abs))
	}
	var out []strategy
	for _, s := range all {
		// The baseline, the reference tree and the hashing floor always run.
		if only == "" || s.name == "status" || s.name == "recipe" || s.name == "hash" || contains(only, s.name) {
			out = append(out, s)
		}
	}
	return out, nil
}

// sample is one timed run.
type sample struct {
	wall, cpu time.Duration
	objects   int
	busy      bool // the machine was not quiet before the run
}

// cell is one strategy in one scenario.
type cell struct {
	samples  []sample
	mismatch int
	checked  int
	err      error
}

type bench struct {
	p          *proc
	runs       int
	strategies []strategy
	scenarios  []scenario
	repo       *repo
	git        *proc
	base       map[string]struct{} // loose objects before the scenario's runs
	reference  string              // the recipe's tree for the scenario
	epoch      int                 // last epoch given to a keepObjects run
}

func (b *bench) measure(work string, n int, src string) error {
	top, err := prepare(b.p, work, n, src)
	if err != nil {
		return err
	}
	g := &proc{dir: top, git: b.p.git, env: b.p.env}
	b.git = g
	r := &repo{top: top, private: filepath.Join(work, "private"), tmp: filepath.Join(work, "tmp")}
	b.repo = r
	for _, d := range []string{r.private, r.tmp} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if r.index, err = g.line("rev-parse", "--path-format=absolute", "--git-path", "index"); err != nil {
		return err
	}
	if r.objects, err = g.line("rev-parse", "--path-format=absolute", "--git-path", "objects"); err != nil {
		return err
	}
	out, err := g.run(nil, "ls-files", "-z")
	if err != nil {
		return err
	}
	tracked := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	st, _ := os.Stat(r.index)
	fmt.Printf("\n== %s: %d tracked files, index %d KiB\n", top, len(tracked), st.Size()/1024)

	cells := map[string]*cell{}
	for _, s := range b.strategies {
		if s.seed != nil {
			if err := s.seed(r, g.with()); err != nil {
				return fmt.Errorf("seed %s: %w", s.name, err)
			}
		}
	}
	for _, sc := range b.scenarios {
		m, err := sc.bind(top, tracked)
		if err != nil {
			return err
		}
		logf("%d files, scenario %s", len(tracked), sc.name)
		r.changed = append(append([]string(nil), m.chg...), m.added...)
		if err := b.scenario(sc, m, cells); err != nil {
			return err
		}
	}
	b.report(cells)
	return nil
}

func (b *bench) scenario(sc scenario, m *mutation, cells map[string]*cell) error {
	var inter, last []strategy
	for _, s := range b.strategies {
		if s.keepObjects {
			last = append(last, s)
		} else {
			inter = append(inter, s)
		}
		cells[sc.name+"/"+s.name] = &cell{}
	}
	// Warm the persistent strategies on the committed tree.
	for _, s := range inter {
		if s.persistent {
			b.warm(s)
			b.warm(s)
		}
	}
	if err := m.apply(); err != nil {
		return err
	}
	var err error
	if b.base, err = loose(b.repo.objects); err != nil {
		return err
	}
	// The reference tree, from the recipe of docs/checkpoints.md#how-a-capture-runs.
	ref, err := recipeStrategy().run(b.repo, b.git.with())
	if err != nil {
		return err
	}
	b.reference = ref.tree
	if err := b.dropObjects(); err != nil {
		return err
	}
	for i := 0; i < b.runs; i++ {
		for j := range inter {
			s := inter[(i+j)%len(inter)]
			if err := b.once(sc, m, s, cells[sc.name+"/"+s.name]); err != nil {
				return err
			}
		}
	}
	for _, s := range last {
		b.warm(s)
		b.warm(s)
		for i := 0; i < b.runs; i++ {
			if err := b.once(sc, m, s, cells[sc.name+"/"+s.name]); err != nil {
				return err
			}
		}
	}
	if err := m.undo(); err != nil {
		return err
	}
	return settle(b.git)
}

// warm runs a strategy untimed and drops what it wrote.
func (b *bench) warm(s strategy) {
	if _, err := s.run(b.repo, b.git.with()); err != nil {
		logf("warm %s: %v", s.name, err)
	}
	if s.cleanup != nil {
		s.cleanup(b.repo, b.git.with())
	}
	if !s.keepObjects {
		b.dropObjects()
		return
	}
	// What a keepObjects warm-up wrote is not the timed run's growth.
	if now, err := loose(b.repo.objects); err == nil {
		for id := range now {
			b.base[id] = struct{}{}
		}
	}
}

func (b *bench) once(sc scenario, m *mutation, s strategy, c *cell) error {
	if c.err != nil {
		return nil
	}
	reference := b.reference
	if s.persistent && sc.mutates() {
		// Steady state of a capture loop: the last capture saw the
		// committed tree, then the files changed.
		if err := m.undo(); err != nil {
			return err
		}
		b.warm(s)
		if s.keepObjects {
			// A new epoch every run (b.epoch is never reset), so the
			// content was never written before, even by this strategy's
			// own earlier runs, whose objects stay.
			b.epoch++
			m.epoch = b.epoch
			defer func() { m.epoch = 0 }()
		}
		if err := m.apply(); err != nil {
			return err
		}
		if s.keepObjects {
			// The reference tree for this epoch's content, untimed.
			r, err := recipeStrategy().run(b.repo, b.git.with())
			if err != nil {
				return err
			}
			reference = r.tree
			if err := b.dropObjects(); err != nil {
				return err
			}
		}
	}
	quiet := waitQuiet(idle, idleWait)
	p := b.git.with()
	start := time.Now()
	res, err := s.run(b.repo, p)
	wall := time.Since(start)
	if err != nil {
		c.err = err
		fmt.Fprintf(os.Stderr, "bench: %s/%s: %v\n", sc.name, s.name, err)
		return nil
	}
	if s.cleanup != nil {
		if err := s.cleanup(b.repo, b.git.with()); err != nil {
			return err
		}
	}
	if res.tree == "" && res.commit != "" {
		res.tree, _ = b.git.line("rev-parse", res.commit+"^{tree}")
	}
	if res.tree != "" {
		c.checked++
		if res.tree != reference {
			c.mismatch++
			logf("%s/%s: tree %s, recipe %s", sc.name, s.name, res.tree, reference)
		}
	}
	now, err := loose(b.repo.objects)
	if err != nil {
		return err
	}
	added := 0
	for id := range now {
		if _, ok := b.base[id]; !ok {
			added++
			if s.keepObjects {
				b.base[id] = struct{}{}
			}
		}
	}
	if !s.keepObjects {
		if err := b.dropObjects(); err != nil {
			return err
		}
	}
	c.samples = append(c.samples, sample{wall: wall, cpu: p.cpu, objects: added, busy: !quiet})
	return nil
}

// loose lists the objects in an object directory: loose ones by id, and
// each pack as "pack-<name>" once per object it holds.
func loose(dir string) (map[string]struct{}, error) {
	set := map[string]struct{}{}
	packs, err := filepath.Glob(filepath.Join(dir, "pack", "*.idx"))
	if err != nil {
		return nil, err
	}
	for _, idx := range packs {
		n, err := packObjects(idx)
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			set[fmt.Sprintf("%s#%d", filepath.Base(idx), i)] = struct{}{}
		}
	}
	for i := 0; i < 256; i++ {
		sub := fmt.Sprintf("%02x", i)
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if n := e.Name(); len(n) == 38 || len(n) == 62 {
				set[sub+n] = struct{}{}
			}
		}
	}
	return set, nil
}

// dropObjects removes loose objects written since the scenario began.
func (b *bench) dropObjects() error {
	now, err := loose(b.repo.objects)
	if err != nil {
		return err
	}
	for id := range now {
		if _, ok := b.base[id]; !ok {
			if idx, _, ok := strings.Cut(id, "#"); ok {
				// A pack's objects go with the pack.
				pack := filepath.Join(b.repo.objects, "pack", strings.TrimSuffix(idx, ".idx"))
				for _, ext := range []string{".idx", ".pack", ".rev"} {
					if err := os.Remove(pack + ext); err != nil && !os.IsNotExist(err) {
						return err
					}
				}
				continue
			}
			if err := os.Remove(filepath.Join(b.repo.objects, id[:2], id[2:])); err != nil {
				return err
			}
		}
	}
	return nil
}

// packObjects reads the object count of a version 2 pack index: the last
// entry of its fan-out table.
func packObjects(idx string) (int, error) {
	f, err := os.Open(idx)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [4]byte
	if _, err := f.ReadAt(b[:], 8+255*4); err != nil {
		return 0, err
	}
	return int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3]), nil
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func (b *bench) report(cells map[string]*cell) {
	fmt.Printf("%-12s %-12s %9s %9s %9s %7s %7s %6s %4s %s\n",
		"scenario", "strategy", "wall ms", "min ms", "cpu ms", "wall x", "cpu x", "objs", "busy", "tree")
	for _, sc := range b.scenarios {
		var baseWall, baseCPU, hashWall, hashCPU, venomWall, venomCPU time.Duration
		for _, s := range b.strategies {
			c := cells[sc.name+"/"+s.name]
			if c.err != nil {
				fmt.Printf("%-12s %-12s ERROR %v\n", sc.name, s.name, c.err)
				continue
			}
			var walls, cpus []time.Duration
			var objs []int
			busy := 0
			for _, x := range c.samples {
				if x.busy {
					busy++
				}
				walls = append(walls, x.wall)
				cpus = append(cpus, x.cpu)
				objs = append(objs, x.objects)
			}
			wall, cpu := median(walls), median(cpus)
			if s.name == "status" {
				baseWall, baseCPU = wall, cpu
			}
			sort.Ints(objs)
			minWall := wall
			for _, w := range walls {
				if w < minWall {
					minWall = w
				}
			}
			tree := "-"
			if c.checked > 0 {
				tree = "ok"
				if c.mismatch > 0 {
					tree = fmt.Sprintf("MISMATCH %d/%d", c.mismatch, c.checked)
				}
			}
			obj := "-"
			if len(objs) > 0 {
				obj = fmt.Sprint(objs[len(objs)/2])
				if s.keepObjects {
					obj = fmt.Sprint(c.samples[0].objects)
				}
			}
			fmt.Printf("%-12s %-12s %9s %9s %9s %7s %7s %6s %4d %s\n", sc.name, s.name,
				ms(wall), ms(minWall), ms(cpu), ratio(wall, baseWall), ratio(cpu, baseCPU), obj, busy, tree)
			if s.name == "hash" {
				hashWall, hashCPU = wall, cpu
			}
			if s.name == "venom" && sc.changed+sc.added > 0 {
				venomWall, venomCPU = wall, cpu
			}
		}
		if venomWall > 0 && hashWall > 0 {
			fmt.Printf("%-12s venom / (status + hash): wall %s, cpu %s\n", sc.name,
				ratio(venomWall, baseWall+hashWall), ratio(venomCPU, baseCPU+hashCPU))
		}
	}
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}
