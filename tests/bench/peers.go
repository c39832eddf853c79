package main

// The peers mode: the same workloads through git-venom and through
// replicas of how other agent tools take a checkpoint
// (docs/benchmarks.md#the-systems): capture and restore times, storage
// after 100 turns, and fidelity checked with plain git.
//
//	go run ./tests/bench -peers -peers-go -peers-files 100000 -runs 5

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

var (
	peersFiles *string
	peersGo    *bool
	peersTurns *int
)

func init() {
	if !modeSelected("peers") {
		return
	}
	fsFlags := flag.NewFlagSet("bench -peers", flag.ExitOnError)
	fsFlags.Bool("peers", true, "compare checkpoint systems")
	peersFiles = fsFlags.String("peers-files", "100000", "comma-separated sizes of generated repositories (empty: none)")
	peersGo = fsFlags.Bool("peers-go", true, "also the Go source tree (GOROOT/src in a repository of one commit)")
	peersTurns = fsFlags.Int("peers-turns", 100, "turns of 10 edited files for the storage figure (Go tree only)")
	bin := fsFlags.String("peers-bin", "", "folder with git-venom-checkpoint and git-venom-rollback (default: build them)")
	work := fsFlags.String("work", filepath.Join(os.TempDir(), "git-venom-bench-peers"), "directory for cached repositories and the working copy")
	runs := fsFlags.Int("runs", 5, "timed runs per workload")
	verb := fsFlags.Bool("v", false, "log progress on stderr")
	_ = fsFlags.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	if err := runPeers(*work, *bin, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

// peerWorld is one repository measured, and the folders beside it where
// the tools keep what they keep.
type peerWorld struct {
	top, scratch, bin, cfg string
	g                      *proc
	n                      int // captures so far, to name them
}

// peer is one checkpoint system: how it captures (edited: the paths an
// edit tool is about to change, which only claude uses) and restores.
type peer struct {
	name    string
	capture func(w *peerWorld, edited []string) (string, error)
	restore func(w *peerWorld, id string) error
	storage func(w *peerWorld) (int64, error)
}

var peers = []peer{
	{"venom", venomCapture, venomRestore, func(w *peerWorld) (int64, error) {
		return duBytes(filepath.Join(w.top, ".git", "objects"), filepath.Join(w.top, ".git", "venom"))
	}},
	{"codex", codexCapture, codexRestore, objectsBytes},
	{"cline", clineCapture, clineRestore, objectsBytes},
	{"gemini", geminiCapture, geminiRestore, func(w *peerWorld) (int64, error) {
		return duBytes(filepath.Join(w.scratch, "gemini"))
	}},
	{"claude", claudeCapture, claudeRestore, func(w *peerWorld) (int64, error) {
		return duBytes(filepath.Join(w.scratch, "claude"))
	}},
}

func objectsBytes(w *peerWorld) (int64, error) {
	return duBytes(filepath.Join(w.top, ".git", "objects"))
}

func (w *peerWorld) venom(name string, args ...string) ([]byte, error) {
	v := w.g.with("GIT_CONFIG_GLOBAL=" + w.cfg)
	return v.cmd(nil, filepath.Join(w.bin, "git-venom-"+name), args...)
}

func venomCapture(w *peerWorld, _ []string) (string, error) {
	out, err := w.venom("checkpoint", "--agent=b", "--json")
	if err != nil {
		return "", err
	}
	var r struct {
		Checkpoint string `json:"checkpoint"`
	}
	return r.Checkpoint, json.Unmarshal(out, &r)
}

func venomRestore(w *peerWorld, id string) error {
	out, err := w.venom("rollback", "--agent=b", id, "--outside=keep", "--dry-run", "--json")
	if err != nil {
		return err
	}
	var dry struct {
		Plan string `json:"plan"`
	}
	if err := json.Unmarshal(out, &dry); err != nil {
		return err
	}
	_, err = w.venom("rollback", "--agent=b", id, "--outside=keep", "--plan="+dry.Plan, "--json")
	return err
}

func codexCapture(w *peerWorld, _ []string) (string, error) {
	idx := filepath.Join(w.scratch, "codex.index")
	_ = os.Remove(idx)
	gi := w.g.with("GIT_INDEX_FILE=" + idx)
	// The untracked files it finds are kept, to delete only later ones.
	out, err := w.g.run(nil, "status", "--porcelain=2", "-z", "--untracked-files=all")
	if err != nil {
		return "", err
	}
	var untracked []string
	for _, rec := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(rec, "? "); ok {
			untracked = append(untracked, p)
		}
	}
	for _, args := range [][]string{{"read-tree", "HEAD"}, {"add", "--all"}} {
		if _, err := gi.run(nil, args...); err != nil {
			return "", err
		}
	}
	tree, err := gi.line("write-tree")
	if err != nil {
		return "", err
	}
	commit, err := w.g.line("commit-tree", tree, "-p", "HEAD", "-m", "codex snapshot")
	if err != nil {
		return "", err
	}
	return commit, os.WriteFile(filepath.Join(w.scratch, "codex-"+commit), []byte(strings.Join(untracked, "\x00")), 0o644)
}

func codexRestore(w *peerWorld, id string) error {
	if _, err := w.g.run(nil, "restore", "--source", id, "--worktree", "--staged", "--", "."); err != nil {
		return err
	}
	kept, err := os.ReadFile(filepath.Join(w.scratch, "codex-"+id))
	if err != nil {
		return err
	}
	had := map[string]bool{}
	for _, p := range strings.Split(string(kept), "\x00") {
		had[p] = true
	}
	out, err := w.g.run(nil, "status", "--porcelain=2", "-z", "--untracked-files=all")
	if err != nil {
		return err
	}
	for _, rec := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(rec, "? "); ok && !had[p] {
			if err := os.Remove(filepath.Join(w.top, p)); err != nil {
				return err
			}
		}
	}
	return nil
}

func clineCapture(w *peerWorld, _ []string) (string, error) {
	// Nothing to stash prints nothing; git 2.39 can then exit 1 when the
	// index's stat data was stale (check_changes_tracked_files saw a
	// change that do_create_stash did not): the checkpoint is HEAD.
	id, err := w.g.line("stash", "create")
	if id == "" {
		if id, err = w.g.line("rev-parse", "HEAD"); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	w.n++
	_, err = w.g.run(nil, "update-ref", fmt.Sprintf("refs/cline/checkpoints/%d", w.n), id)
	return id, err
}

func clineRestore(w *peerWorld, id string) error {
	_, err := w.g.run(nil, "checkout", id, "--", ".")
	return err
}

func (w *peerWorld) shadow() *proc {
	dir := filepath.Join(w.scratch, "gemini")
	return w.g.with("GIT_DIR="+filepath.Join(dir, ".git"), "GIT_WORK_TREE="+w.top,
		"GIT_CONFIG_GLOBAL="+filepath.Join(dir, ".gitconfig"))
}

func geminiCapture(w *peerWorld, _ []string) (string, error) {
	dir := filepath.Join(w.scratch, "gemini")
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		cfg := "[user]\n  name = Gemini CLI\n  email = gemini-cli@google.com\n[commit]\n  gpgsign = false\n"
		if err := os.WriteFile(filepath.Join(dir, ".gitconfig"), []byte(cfg), 0o644); err != nil {
			return "", err
		}
		init := w.g.with("GIT_CONFIG_GLOBAL=" + filepath.Join(dir, ".gitconfig"))
		init.dir = dir
		if _, err := init.run(nil, "init", "-q", "--initial-branch", "main"); err != nil {
			return "", err
		}
		if _, err := init.run(nil, "commit", "-q", "--allow-empty", "-m", "Initial commit"); err != nil {
			return "", err
		}
	}
	sh := w.shadow()
	if _, err := sh.run(nil, "add", "."); err != nil {
		return "", err
	}
	if out, err := sh.run(nil, "status", "--porcelain"); err != nil {
		return "", err
	} else if len(out) > 0 {
		if _, err := sh.run(nil, "commit", "-q", "--no-verify", "-m", "snapshot"); err != nil {
			return "", err
		}
	}
	return sh.line("rev-parse", "HEAD")
}

func geminiRestore(w *peerWorld, id string) error {
	sh := w.shadow()
	if _, err := sh.run(nil, "restore", "--source", id, "."); err != nil {
		return err
	}
	_, err := sh.run(nil, "clean", "-f", "-d")
	return err
}

// claudeCapture keeps each file about to be edited (or that it did not
// exist) under file-history/<n>/, as Claude Code's backups do.
func claudeCapture(w *peerWorld, edited []string) (string, error) {
	w.n++
	id := fmt.Sprint(w.n)
	dir := filepath.Join(w.scratch, "claude", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var absent []string
	for i, rel := range edited {
		b, err := os.ReadFile(filepath.Join(w.top, rel))
		if os.IsNotExist(err) {
			absent = append(absent, rel)
			continue
		} else if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), b, 0o644); err != nil {
			return "", err
		}
	}
	list := strings.Join(edited, "\x00") + "\n" + strings.Join(absent, "\x00")
	return id, os.WriteFile(filepath.Join(dir, "list"), []byte(list), 0o644)
}

func claudeRestore(w *peerWorld, id string) error {
	dir := filepath.Join(w.scratch, "claude", id)
	b, err := os.ReadFile(filepath.Join(dir, "list"))
	if err != nil {
		return err
	}
	edited, absentList, _ := strings.Cut(string(b), "\n")
	absent := map[string]bool{}
	for _, p := range strings.Split(absentList, "\x00") {
		absent[p] = true
	}
	for i, rel := range strings.Split(edited, "\x00") {
		if rel == "" {
			continue
		}
		p := filepath.Join(w.top, rel)
		if absent[rel] {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		c, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, c, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// duBytes adds up the sizes of the files under the folders.
func duBytes(dirs ...string) (int64, error) {
	var total int64
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if e.Type().IsRegular() {
				info, err := e.Info()
				if err != nil {
					return err
				}
				total += info.Size()
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return total, nil
}

type peerTimes struct {
	clean, small, many, restore []time.Duration
	err                         error
}

func runPeers(work, bin string, runs int) error {
	p := &proc{git: "git", env: baseEnv(), dir: work}
	bin, err := benchBinaries(work, bin, "./git-venom-checkpoint", "./git-venom-rollback")
	if err != nil {
		return err
	}
	cfg := filepath.Join(work, "peers.gitconfig")
	if err := os.WriteFile(cfg, []byte("[venom]\n\ttimeout = 1h\n"), 0o644); err != nil {
		return err
	}
	version, _ := p.line("version")
	host, _ := os.Hostname()
	fmt.Printf("%s, %d cores, %s, %s, %d runs, medians (min-max) in ms\n", version, runtime.NumCPU(), host,
		time.Now().UTC().Format("2006-01-02"), runs)

	type tree struct {
		name, src string
		n         int
	}
	var trees []tree
	if *peersGo {
		dir, err := goSourceRepo(work)
		if err != nil {
			return err
		}
		trees = append(trees, tree{name: "go-src", src: dir})
	}
	for _, f := range strings.Split(*peersFiles, ",") {
		var n int
		if strings.TrimSpace(f) == "" {
			continue
		}
		if _, err := fmt.Sscan(f, &n); err != nil || n < 2 {
			return fmt.Errorf("bad -peers-files entry %q", f)
		}
		trees = append(trees, tree{name: fmt.Sprintf("gen-%dk", n/1000), n: n})
	}
	fmt.Printf("\n%-10s %-8s %20s %20s %20s %20s\n", "tree", "system", "capture clean", "capture 10+10", "capture 1000", "restore 1000")
	for _, t := range trees {
		top, err := prepare(p, work, t.n, t.src)
		if err != nil {
			return err
		}
		files, err := (&proc{dir: top, git: "git", env: p.env}).run(nil, "ls-files")
		if err != nil {
			return err
		}
		fmt.Printf("%-10s (%d files)\n", t.name, strings.Count(string(files), "\n"))
		times, err := peerTimings(p, work, top, bin, cfg, runs)
		if err != nil {
			return err
		}
		for _, pe := range peers {
			r := times[pe.name]
			if r.err != nil {
				fmt.Printf("%-10s %-8s ERROR %v\n", "", pe.name, r.err)
				continue
			}
			fmt.Printf("%-10s %-8s %20s %20s %20s %20s\n", "", pe.name, spread(r.clean), spread(r.small), spread(r.many), spread(r.restore))
		}
		if t.src != "" && *peersTurns > 0 {
			if err := peerStorage(p, work, t.src, bin, cfg); err != nil {
				return err
			}
		}
	}
	return peerFidelity(work, bin, cfg)
}

// spread is "median (min-max)".
func spread(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("%s (%s-%s)", ms0(median(s)), ms0(s[0]), ms0(s[len(s)-1]))
}

func ms0(d time.Duration) string { return fmt.Sprintf("%d", d.Milliseconds()) }

// peerTimings runs every workload runs times for each system, the systems
// in an order that turns each run, on one working tree that each
// workload leaves as it found it.
func peerTimings(p *proc, work, top, bin, cfg string, runs int) (map[string]*peerTimes, error) {
	g := &proc{dir: top, git: p.git, env: p.env}
	out, err := g.run(nil, "ls-files", "-z")
	if err != nil {
		return nil, err
	}
	tracked := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	small, err := scenario{name: "10chg+10new", changed: 10, added: 10}.bind(top, tracked)
	if err != nil {
		return nil, err
	}
	many, err := scenario{name: "1000chg", changed: 1000}.bind(top, tracked)
	if err != nil {
		return nil, err
	}
	res := map[string]*peerTimes{}
	worlds := map[string]*peerWorld{}
	for _, pe := range peers {
		res[pe.name] = &peerTimes{}
		scratch := filepath.Join(work, "scratch-"+pe.name)
		_ = os.RemoveAll(scratch)
		if err := os.MkdirAll(scratch, 0o755); err != nil {
			return nil, err
		}
		worlds[pe.name] = &peerWorld{top: top, scratch: scratch, bin: bin, cfg: cfg, g: g}
	}
	timed := func(f func() error) (time.Duration, error) {
		waitQuiet(idle, idleWait)
		start := time.Now()
		err := f()
		return time.Since(start), err
	}
	epoch := 0
	for run := 0; run < runs; run++ {
		for i := range peers {
			pe := peers[(i+run)%len(peers)]
			w, r := worlds[pe.name], res[pe.name]
			if r.err != nil {
				continue
			}
			logf("run %d: %s", run, pe.name)
			r.err = func() error {
				base, err := pe.capture(w, nil) // warm, untimed
				if err != nil {
					return err
				}
				d, err := timed(func() error { _, err := pe.capture(w, nil); return err })
				if err != nil {
					return err
				}
				r.clean = append(r.clean, d)
				for _, m := range []*mutation{small, many} {
					epoch++
					m.epoch = epoch
					edited := append(append([]string(nil), m.chg...), m.added...)
					// claude copies before the edits, as its tools do; the
					// others look after them, as a turn's end does.
					var d time.Duration
					if pe.name == "claude" {
						d, err = timed(func() error { _, err := pe.capture(w, edited); return err })
						if err == nil {
							err = m.apply()
						}
					} else if err = m.apply(); err == nil {
						d, err = timed(func() error { _, err := pe.capture(w, edited); return err })
					}
					if err != nil {
						return err
					}
					if m == small {
						r.small = append(r.small, d)
					} else {
						r.many = append(r.many, d)
					}
					if m == small {
						if err := m.undo(); err != nil {
							return err
						}
					}
				}
				// Restore the 1,000 changed files to the tree before them.
				if pe.name == "claude" {
					if err := many.undo(); err != nil {
						return err
					}
					if base, err = pe.capture(w, many.chg); err != nil {
						return err
					}
					if err := many.apply(); err != nil {
						return err
					}
				}
				time.Sleep(carryRacySleep)
				if pe.name == "venom" {
					if _, err := pe.capture(w, nil); err != nil { // the turn's end
						return err
					}
				}
				d, err = timed(func() error { return pe.restore(w, base) })
				if err != nil {
					return err
				}
				r.restore = append(r.restore, d)
				for i, rel := range many.chg[:10] {
					if b, err := os.ReadFile(filepath.Join(top, rel)); err != nil || string(b) != string(many.base[i]) {
						return fmt.Errorf("%s did not restore %s", pe.name, rel)
					}
				}
				if err := many.undo(); err != nil {
					return err
				}
				return small.undo()
			}()
		}
	}
	return res, nil
}

// peerStorage is what each system keeps after turns of 10 edited files,
// each in a fresh copy of the tree.
func peerStorage(p *proc, work, src, bin, cfg string) error {
	fmt.Printf("\nstorage after %d turns of 10 edited files (%s), bytes kept\n", *peersTurns, filepath.Base(src))
	for _, pe := range peers {
		top, err := prepare(p, work, 0, src)
		if err != nil {
			return err
		}
		g := &proc{dir: top, git: p.git, env: p.env}
		out, err := g.run(nil, "ls-files", "-z")
		if err != nil {
			return err
		}
		tracked := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
		scratch := filepath.Join(work, "scratch-"+pe.name)
		_ = os.RemoveAll(scratch)
		if err := os.MkdirAll(scratch, 0o755); err != nil {
			return err
		}
		w := &peerWorld{top: top, scratch: scratch, bin: bin, cfg: cfg, g: g}
		before, err := pe.storage(w)
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewSource(1))
		start := time.Now()
		for turn := 0; turn < *peersTurns; turn++ {
			var edited []string
			for _, i := range rng.Perm(len(tracked))[:10] {
				edited = append(edited, tracked[i])
			}
			if pe.name == "claude" {
				if _, err := pe.capture(w, edited); err != nil {
					return err
				}
			}
			for _, rel := range edited {
				f, err := os.OpenFile(filepath.Join(top, rel), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					return err
				}
				fmt.Fprintf(f, "turn %d of %s\n", turn, pe.name)
				f.Close()
			}
			if pe.name != "claude" {
				if _, err := pe.capture(w, edited); err != nil {
					return fmt.Errorf("%s turn %d: %v", pe.name, turn, err)
				}
			}
		}
		after, err := pe.storage(w)
		if err != nil {
			return err
		}
		fmt.Printf("%-8s %12d bytes  (%s for %d captures)\n", pe.name, after-before, time.Since(start).Round(time.Millisecond), *peersTurns)
	}
	return nil
}

// The fidelity checks, each a yes or a no per system, in this order.
var fidelityChecks = []string{
	"sees a shell command's new file",
	"restores an edit tool's change",
	"restores a mode",
	"restores a symbolic link",
	"restores a file<->folder swap",
	"leaves ignored files alone",
	"keeps a person's edit made after the turn",
	"index, HEAD and branch untouched",
}

// peerFidelity plays one turn in a small repository per system: the
// checkpoint before it, an edit tool's change to a.txt, shell commands
// that add a file, flip a mode, retarget a link, swap a folder for a
// file and write ignored files, then a person's edit of p.txt; then the
// restore to the checkpoint, checked with plain git and the file system.
func peerFidelity(work, bin, cfg string) error {
	got := map[string][]bool{}
	for _, pe := range peers {
		top := filepath.Join(work, "fidelity-"+pe.name)
		scratch := filepath.Join(work, "scratch-fidelity-"+pe.name)
		for _, d := range []string{top, scratch} {
			_ = os.RemoveAll(d)
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		g := &proc{dir: top, git: "git", env: baseEnv()}
		w := &peerWorld{top: top, scratch: scratch, bin: bin, cfg: cfg, g: g}
		res, err := fidelityOf(pe, w)
		if err != nil {
			return fmt.Errorf("fidelity of %s: %v", pe.name, err)
		}
		got[pe.name] = res
	}
	fmt.Printf("\nfidelity (one turn in a small repository, then a restore to before it)\n%-44s", "")
	for _, pe := range peers {
		fmt.Printf(" %-7s", pe.name)
	}
	fmt.Println()
	for i, c := range fidelityChecks {
		fmt.Printf("%-44s", c)
		for _, pe := range peers {
			v := "no"
			if got[pe.name][i] {
				v = "yes"
			}
			fmt.Printf(" %-7s", v)
		}
		fmt.Println()
	}
	return nil
}

func fidelityOf(pe peer, w *peerWorld) ([]bool, error) {
	top, g := w.top, w.g
	write := func(rel, s string, mode os.FileMode) error {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(top, rel)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(top, rel), []byte(s), mode); err != nil {
			return err
		}
		return os.Chmod(filepath.Join(top, rel), mode)
	}
	if _, err := g.run(nil, "init", "-q", "-b", "main"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		rel, s string
		mode   os.FileMode
	}{{"a.txt", "a0\n", 0o644}, {"run.sh", "#!/bin/sh\n", 0o755}, {"sw/f.txt", "f0\n", 0o644},
		{"p.txt", "p0\n", 0o644}, {"staged.txt", "s0\n", 0o644}, {".gitignore", "*.log\n", 0o644}} {
		if err := write(f.rel, f.s, f.mode); err != nil {
			return nil, err
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(top, "link")); err != nil {
		return nil, err
	}
	if _, err := g.run(nil, "add", "-A"); err != nil {
		return nil, err
	}
	if _, err := g.run(nil, "commit", "-qm", "base"); err != nil {
		return nil, err
	}
	// A staged change and an ignored file, a person's, before the turn.
	if err := write("staged.txt", "s1\n", 0o644); err != nil {
		return nil, err
	}
	if _, err := g.run(nil, "add", "staged.txt"); err != nil {
		return nil, err
	}
	if err := write("build.log", "log0\n", 0o644); err != nil {
		return nil, err
	}
	state := func() string {
		var b strings.Builder
		for _, args := range [][]string{{"rev-parse", "HEAD"}, {"symbolic-ref", "HEAD"}, {"ls-files", "-s"}} {
			out, _ := g.run(nil, args...)
			b.Write(out)
		}
		return b.String()
	}
	before := state()
	time.Sleep(carryRacySleep)

	var id string
	var err error
	if pe.name == "venom" {
		id, err = venomTurnCapture(w, "turn_start")
	} else {
		id, err = pe.capture(w, []string{"a.txt"})
	}
	if err != nil {
		return nil, err
	}
	untouched := state() == before

	// The turn: an edit tool's change, then shell commands.
	if err := write("a.txt", "a1\n", 0o644); err != nil {
		return nil, err
	}
	if err := write("new.txt", "new\n", 0o644); err != nil {
		return nil, err
	}
	if err := os.Chmod(filepath.Join(top, "run.sh"), 0o644); err != nil {
		return nil, err
	}
	if err := os.Remove(filepath.Join(top, "link")); err != nil {
		return nil, err
	}
	if err := os.Symlink("run.sh", filepath.Join(top, "link")); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(filepath.Join(top, "sw")); err != nil {
		return nil, err
	}
	if err := write("sw", "swapped\n", 0o644); err != nil {
		return nil, err
	}
	if err := write("out.log", "out\n", 0o644); err != nil {
		return nil, err
	}
	if err := write("build.log", "log1\n", 0o644); err != nil {
		return nil, err
	}
	time.Sleep(carryRacySleep)
	if pe.name == "venom" {
		if _, err := venomTurnCapture(w, "turn_end"); err != nil {
			return nil, err
		}
	}
	// A person's edit after the turn.
	if err := write("p.txt", "p-person\n", 0o644); err != nil {
		return nil, err
	}
	time.Sleep(carryRacySleep)
	if err := pe.restore(w, id); err != nil {
		return nil, err
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(top, rel))
		if err != nil {
			return "<none>"
		}
		return string(b)
	}
	_, newErr := os.Lstat(filepath.Join(top, "new.txt"))
	sh, _ := os.Lstat(filepath.Join(top, "run.sh"))
	target, _ := os.Readlink(filepath.Join(top, "link"))
	sw, _ := os.Lstat(filepath.Join(top, "sw"))
	return []bool{
		os.IsNotExist(newErr),
		read("a.txt") == "a0\n",
		sh != nil && sh.Mode().Perm()&0o100 != 0,
		target == "a.txt",
		sw != nil && sw.IsDir() && read("sw/f.txt") == "f0\n",
		read("out.log") == "out\n" && read("build.log") == "log1\n",
		read("p.txt") == "p-person\n",
		untouched && state() == before,
	}, nil
}

func venomTurnCapture(w *peerWorld, reason string) (string, error) {
	out, err := w.venom("checkpoint", "--agent=b", "--reason="+reason, "--json")
	if err != nil {
		return "", err
	}
	var r struct {
		Checkpoint string `json:"checkpoint"`
	}
	return r.Checkpoint, json.Unmarshal(out, &r)
}
