package main

// The journal benchmark: how list, events and a rollback dry run grow with
// the number of log records, nearly all of one long-lived agent, timed as
// medians with the ratio to the smallest size (target: under 50 ms at
// 10,000 records, linear at most). -baseline DIR pairs each run with
// binaries built from another revision, a ratio load disturbs less.
//
//	go run ./tests/bench -journal 1000,5000,10000 -runs 11

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

var journalSizes = new(string)

// The mode has its own flag set, read in init, so that it needs nothing
// from main.go (whose flags serve the capture benchmark), as -rollback.
func init() {
	if !modeSelected("journal") {
		return
	}
	fs := flag.NewFlagSet("bench -journal", flag.ExitOnError)
	fs.StringVar(journalSizes, "journal", "1000,5000,10000", "comma-separated log sizes")
	runs := fs.Int("runs", 11, "timed runs per command and size")
	// Its own folder: other modes rebuild bin/ in theirs at the same time.
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench-journal"), "directory for the generated repositories and binaries")
	baseline := fs.String("baseline", "", "directory of git-venom-checkpoint and git-venom-rollback to compare with, run by run")
	idle := fs.Float64("idle", 0.8, "before each timed run wait until the CPUs are this idle (0: don't wait)")
	_ = fs.Parse(os.Args[1:])
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	runJournal(*work, *runs, *baseline, *idle)
	os.Exit(0)
}

func runJournal(work string, runs int, baseline string, idle float64) {
	bin, err := benchBinaries(work, "", "./git-venom-checkpoint", "./git-venom-rollback")
	if err != nil {
		fatal(err)
	}
	var rows []journalRow
	names := []string{"startup", "list", "list a0", "events", "capture (clean)", "rollback dry run"}
	for _, f := range strings.Split(*journalSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			fatal(fmt.Errorf("bad -journal entry %q", f))
		}
		dir, target, err := journalRepo(work, n)
		if err != nil {
			fatal(err)
		}
		cmdsOf := func(bin string) map[string][]string {
			return map[string][]string{
				"startup":          {filepath.Join(bin, "git-venom-checkpoint"), "--version"},
				"list":             {filepath.Join(bin, "git-venom-checkpoint"), "list", "--agent=a1", "--json"},
				"list a0":          {filepath.Join(bin, "git-venom-checkpoint"), "list", "--agent=a0", "--json"},
				"events":           {filepath.Join(bin, "git-venom-checkpoint"), "events", "--json"},
				"capture (clean)":  {filepath.Join(bin, "git-venom-checkpoint"), "--agent=a1", "--json"},
				"rollback dry run": {filepath.Join(bin, "git-venom-rollback"), "--agent=a1", "--checkpoint=" + target, "--restore=files", "--dry-run", "--json"},
			}
		}
		cmds, base := cmdsOf(bin), cmdsOf(baseline)
		// A prune and a capture first, untimed: holding the lock, the
		// prune writes the fold snapshot (lib/state) that the timed
		// commands start from, as any writer of a long log leaves one
		// (the capture could time out folding the whole log first); the
		// capture builds the private index.
		for _, name := range []string{"prune", "capture (clean)"} {
			argv := cmds["capture (clean)"]
			if name == "prune" {
				argv = []string{argv[0], "prune", "--agent=a1", "--json"}
			}
			if _, _, err := timeRun(dir, argv); err != nil {
				fatal(fmt.Errorf("first %s at %d records: %w", name, n, err))
			}
		}
		logSize, turns := logStats(dir)
		snapSize := int64(0)
		if fi, err := os.Stat(filepath.Join(dir, ".git", "venom", "fold.json")); err == nil {
			snapSize = fi.Size()
		}
		fmt.Printf("%d records: log.jsonl %d bytes, %d turns of a1, %.0f bytes a turn; fold.json %d bytes\n",
			n, logSize, turns, float64(logSize)/float64(max(turns, 1)), snapSize)
		r := journalRow{n: n, times: map[string]time.Duration{}, cpu: map[string]time.Duration{}, ratio: map[string]float64{}}
		for _, name := range names {
			var ds, cs []time.Duration
			var ratios []float64
			for i := 0; i < runs+1; i++ {
				waitQuiet(idle, 3*time.Second)
				d, c, err := timeRun(dir, cmds[name])
				if err != nil {
					fatal(fmt.Errorf("%s at %d records: %w", name, n, err))
				}
				if baseline != "" {
					bd, _, err := timeRun(dir, base[name])
					if err != nil {
						fatal(fmt.Errorf("baseline %s at %d records: %w", name, n, err))
					}
					if i > 0 {
						ratios = append(ratios, float64(d)/float64(bd))
					}
				}
				if i > 0 { // the first run warms the page cache
					ds, cs = append(ds, d), append(cs, c)
				}
			}
			r.times[name], r.cpu[name] = median(ds), median(cs)
			if len(ratios) > 0 {
				sort.Float64s(ratios)
				r.ratio[name] = ratios[len(ratios)/2]
			}
		}
		rows = append(rows, r)
	}
	for _, kind := range []string{"wall", "cpu (user+sys, git children included)"} {
		times := func(r journalRow) map[string]time.Duration { return r.times }
		if kind != "wall" {
			times = func(r journalRow) map[string]time.Duration { return r.cpu }
		}
		fmt.Printf("journal benchmark, %s time of one process, median of %d runs (ms; ratio to %d records)\n", kind, runs, rows[0].n)
		table(rows, names, func(r journalRow, name string) string {
			t, t0 := times(r)[name], times(rows[0])[name]
			if r.n == rows[0].n {
				return ms(t)
			}
			return ms(t) + fmt.Sprintf(" (%.2fx)", float64(t)/float64(t0))
		})
	}
	if baseline == "" {
		return
	}
	fmt.Printf("ours/baseline (%s), median of %d paired runs\n", baseline, runs)
	table(rows, names, func(r journalRow, name string) string { return fmt.Sprintf("%.2f", r.ratio[name]) })
}

// journalRow is one log size's medians.
type journalRow struct {
	n     int
	times map[string]time.Duration
	cpu   map[string]time.Duration
	ratio map[string]float64 // median of ours/baseline, run by run
}

// table prints a line of log sizes, then a line a command with cell's text
// for each size.
func table(rows []journalRow, names []string, cell func(r journalRow, name string) string) {
	fmt.Printf("%-18s", "records")
	for _, r := range rows {
		fmt.Printf("%16d", r.n)
	}
	fmt.Println()
	for _, name := range names {
		fmt.Printf("%-18s", name)
		for _, r := range rows {
			fmt.Printf("%16s", cell(r, name))
		}
		fmt.Println()
	}
}

// timeRun runs argv once and returns its wall time and its CPU time (user
// and system, with the git processes it waited for): on a shared machine
// the CPU time is the steadier figure.
func timeRun(dir string, argv []string) (time.Duration, time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, baseEnv()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// smallAgentTurns is the length of agent a0's history in every log.
const smallAgentTurns = 10

// journalRepo makes (or reuses) a repository with an n-record log and
// returns it with a live checkpoint to roll back to. Agent a0 has
// 1 + 3 x smallAgentTurns of the records, a1 all the others.
func journalRepo(work string, n int) (string, string, error) {
	dir := filepath.Join(work, fmt.Sprintf("journal-%d", n))
	if err := os.RemoveAll(dir); err != nil {
		return "", "", err
	}
	p := &proc{git: "git", env: baseEnv(), dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	steps := [][]string{{"init", "-q"}, {"config", "user.name", "b"}, {"config", "user.email", "b@b"}}
	for _, s := range steps {
		if _, err := p.run(nil, s...); err != nil {
			return "", "", err
		}
	}
	for i := 0; i < 50; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			return "", "", err
		}
	}
	if _, err := p.run(nil, "add", "-A"); err != nil {
		return "", "", err
	}
	if _, err := p.run(nil, "commit", "-qm", "base"); err != nil {
		return "", "", err
	}
	head, err := p.line("rev-parse", "HEAD")
	if err != nil {
		return "", "", err
	}
	tree, err := p.line("rev-parse", "HEAD^{tree}")
	if err != nil {
		return "", "", err
	}
	commit, err := p.line("commit-tree", "-p", head, "-m", "venom checkpoint", tree)
	if err != nil {
		return "", "", err
	}
	top, _ := filepath.EvalSymlinks(dir)
	var log bytes.Buffer
	seq := 0
	rec := func(typ, members string) {
		seq++
		fmt.Fprintf(&log, `{"seq":%d,"ts":"2026-11-30T12:00:00.000Z","type":%q,%s}`+"\n", seq, typ, members)
	}
	// a0 comes first with a short history of its own: listing it shows what
	// the log's other records cost a command about one agent.
	rec("agent.registered", fmt.Sprintf(`"agent":"a0","tree":%q,"isolation":"in_place","harness":"none","parent":null`, top))
	for k0 := 1; k0 <= smallAgentTurns; k0++ {
		t := fmt.Sprintf("t%d", k0)
		rec("turn.started", fmt.Sprintf(`"agent":"a0","turn":%q`, t))
		rec("turn.ended", fmt.Sprintf(`"agent":"a0","turn":%q`, t))
		rec("checkpoint.taken", fmt.Sprintf(`"agent":"a0","checkpoint":"k%d","reason":"turn_end","turn":%q,"through_turn":%q,"at":"2026-11-30T12:00:00.000Z","mid_turn":false,"overlap":false,"repos":[{"repo":".","path":%q,"commit":%q,"head":%q,"branch":"main","skipped":[],"submodules":[]}]`,
			k0, t, t, top, commit, head))
	}
	rec("agent.registered", fmt.Sprintf(`"agent":"a1","tree":%q,"isolation":"worktree","harness":"none","parent":null`, top))
	var live []int
	var pending []int
	k := 0
	for turn := 1; seq < n; turn++ {
		t := fmt.Sprintf("t%d", turn)
		rec("turn.started", fmt.Sprintf(`"agent":"a1","turn":%q`, t))
		if k > 0 {
			rec("checkpoint.reused", fmt.Sprintf(`"agent":"a1","checkpoint":"k%d","reason":"turn_start","turn":%q,"at":"2026-11-30T12:00:00.000Z"`, k, t))
		}
		rec("edit.recorded", fmt.Sprintf(`"agent":"a1","turn":%q,"paths":["f%02d.txt"]`, t, turn%50))
		rec("turn.ended", fmt.Sprintf(`"agent":"a1","turn":%q`, t))
		k++
		rec("checkpoint.taken", fmt.Sprintf(`"agent":"a1","checkpoint":"k%d","reason":"turn_end","turn":%q,"through_turn":%q,"at":"2026-11-30T12:00:00.000Z","mid_turn":false,"overlap":false,"repos":[{"repo":".","path":%q,"commit":%q,"head":%q,"branch":"main","skipped":[],"submodules":[]}]`,
			k, t, t, top, commit, head))
		live = append(live, k)
		if len(live) > 100 {
			pending = append(pending, live[0])
			live = live[1:]
		}
		if turn%10 == 0 && len(pending) > 0 {
			ids := make([]string, len(pending))
			for i, p := range pending {
				ids[i] = fmt.Sprintf(`"k%d"`, p)
			}
			rec("checkpoint.pruned", fmt.Sprintf(`"agent":"a1","checkpoints":[%s]`, strings.Join(ids, ",")))
			pending = nil
		}
	}
	// Refs for every checkpoint the log still counts.
	var refs bytes.Buffer
	for _, x := range append(pending, live...) {
		fmt.Fprintf(&refs, "create refs/venom/checkpoints/a1/%d %s\n", x, commit)
	}
	for k0 := 1; k0 <= smallAgentTurns; k0++ {
		fmt.Fprintf(&refs, "create refs/venom/checkpoints/a0/%d %s\n", k0, commit)
	}
	if _, err := p.run(refs.Bytes(), "update-ref", "--stdin"); err != nil {
		return "", "", err
	}
	common := filepath.Join(dir, ".git", "venom")
	if err := os.MkdirAll(common, 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(common, "log.jsonl"), log.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	return dir, fmt.Sprintf("k%d", live[len(live)/2]), nil
}

// logStats is the size of dir's log and the number of turns it records.
func logStats(dir string) (int64, int) {
	data, err := os.ReadFile(filepath.Join(dir, ".git", "venom", "log.jsonl"))
	if err != nil {
		return 0, 0
	}
	return int64(len(data)), bytes.Count(data, []byte(`"type":"turn.started"`))
}
