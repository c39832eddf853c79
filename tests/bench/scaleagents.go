package main

// The scale-agents mode: many agents with many live checkpoints each
// against one agent with the same history. A command of one agent (a turn,
// list --agent), and agents, list and prune --dry-run, which read stubs,
// should cost what that agent holds (ratio near 1); doctor reads all. The
// log and packed-refs are written directly (docs/benchmarks.md#many-agents):
//
//	go run ./tests/bench -scale-agents 2000 -scale-turns 100 -runs 3

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/journal"
)

func init() {
	if !modeSelected("scale-agents") {
		return
	}
	fs := flag.NewFlagSet("bench -scale-agents", flag.ExitOnError)
	n := fs.Int("scale-agents", 200, "agents of the many-agents repository")
	turns := fs.Int("scale-turns", 100, "turns of each agent (two live checkpoints a turn)")
	bin := fs.String("scale-bin", "", "folder with the git-venom-* binaries (default: build them)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for the repositories")
	runs := fs.Int("runs", 3, "timed runs per command")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := runScaleAgents(*work, *bin, *n, *turns, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

func runScaleAgents(work, bin string, n, turns, runs int) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	bin, err := benchBinaries(work, bin)
	if err != nil {
		return err
	}
	cfg := filepath.Join(work, "scale-agents.gitconfig")
	env := append(baseEnv(), "PATH="+bin+":"+os.Getenv("PATH"), "GIT_CONFIG_GLOBAL="+cfg)
	if err := os.WriteFile(cfg, []byte("[venom]\n\tkeep = 1000000\n\ttimeout = 600s\n"), 0o644); err != nil {
		return err
	}
	var dirs [2]string
	var records [2]int
	for i, agents := range []int{1, n} {
		dirs[i] = filepath.Join(work, fmt.Sprintf("scale-agents-%d", agents))
		logf("building %s: %d agents of %d turns", dirs[i], agents, turns)
		if records[i], err = manyAgentsRepo(work, dirs[i], env, agents, turns); err != nil {
			return err
		}
	}
	version, _ := (&proc{git: "git", env: env, dir: work}).line("version")
	fmt.Printf("%s, %d runs, medians; one: 1 agent, %d records; many: %d agents, %d records; %d live checkpoints an agent\n",
		version, runs, records[0], n, records[1], 2*turns)
	fmt.Printf("%-34s %10s %10s %8s %12s %12s %9s\n", "command", "one ms", "many ms", "many/one",
		"one cpu ms", "many cpu ms", "many MiB")
	for _, c := range []struct {
		name string
		cmds [][]string
		edit bool
	}{
		{"turn: turn_start + turn_end", [][]string{
			{"venom-checkpoint", "--agent=a0000", "--reason=turn_start", "--json"},
			{"venom-checkpoint", "--agent=a0000", "--reason=turn_end", "--json"}}, true},
		{"checkpoint list --agent", [][]string{{"venom-checkpoint", "list", "--agent=a0000", "--json"}}, false},
		{"checkpoint agents", [][]string{{"venom-checkpoint", "agents", "--json"}}, false},
		{"checkpoint list (no --agent)", [][]string{{"venom-checkpoint", "list", "--json"}}, false},
		{"checkpoint prune --dry-run", [][]string{{"venom-checkpoint", "prune", "--dry-run", "--json"}}, false},
		{"checkpoint doctor", [][]string{{"venom-checkpoint", "doctor", "--json"}}, false},
	} {
		var ts, cpu [2][]time.Duration
		var rss [2]int64
		for r := 0; r < runs; r++ {
			for j, dir := range dirs {
				p := &proc{git: "git", env: env, dir: dir, isolate: true}
				var took time.Duration
				for i, args := range c.cmds {
					if c.edit {
						if err := os.WriteFile(filepath.Join(dir, "edited.txt"), []byte(fmt.Sprintf("%d %d %d\n", r, i, time.Now().UnixNano())), 0o644); err != nil {
							return err
						}
					}
					start := time.Now()
					// doctor exits 1 when a check fails, list without
					// --agent 2 among many agents; their times count all
					// the same.
					if _, err := p.run(nil, args...); err != nil && args[1] != "doctor" && args[1] != "list" {
						return fmt.Errorf("%s: %w", c.name, err)
					}
					took += time.Since(start)
				}
				ts[j] = append(ts[j], took)
				cpu[j] = append(cpu[j], p.cpu)
				rss[j] = max(rss[j], p.maxRSS)
			}
		}
		one, many := median(ts[0]), median(ts[1])
		fmt.Printf("%-34s %10s %10s %8s %12s %12s %9d\n", c.name, ms(one), ms(many), ratio(many, one),
			ms(median(cpu[0])), ms(median(cpu[1])), rss[1]/1024)
	}
	return nil
}

// manyAgentsRepo makes a repository at dir with agents agents (a0000,
// ...) of turns turns each, every turn a turn_start and a turn_end
// checkpoint still live, and a snapshot written by a lock holder. It
// returns the log's records.
func manyAgentsRepo(work, dir string, env []string, agents, turns int) (int, error) {
	p, err := filesRepo(work, dir, env, 20)
	if err != nil {
		return 0, err
	}
	if _, err := p.run(nil, "venom-checkpoint", "--agent=seed", "--json"); err != nil {
		return 0, err
	}
	commit, err := p.line("rev-parse", "refs/venom/checkpoints/seed/1")
	if err != nil {
		return 0, err
	}
	head, err := p.line("rev-parse", "HEAD")
	if err != nil {
		return 0, err
	}
	branch, _ := p.line("symbolic-ref", "--short", "HEAD")
	top, err := p.line("rev-parse", "--show-toplevel")
	if err != nil {
		return 0, err
	}
	common, err := p.line("rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return 0, err
	}
	logPath := filepath.Join(common, "venom", "log.jsonl")
	seq := 0
	if b, err := os.ReadFile(logPath); err == nil {
		seq = strings.Count(string(b), "\n")
	}
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	when := time.Now().UTC()
	add := func(typ string, payload any) {
		seq++
		body, _ := json.Marshal(payload)
		fmt.Fprintf(w, `{"seq":%d,"ts":%q,"type":%q,%s`+"\n", seq, journal.Stamp(when), typ, body[1:])
	}
	repos := []journal.RepoState{{Repo: ".", Path: top, Commit: commit, Head: &head, Branch: branch,
		Skipped: []journal.Skipped{}, Submodules: []journal.Submodule{}}}
	var refs []string
	for i := 0; i < agents; i++ {
		a := fmt.Sprintf("a%04d", i)
		add(journal.AgentRegistered, journal.Registered{Agent: a, Tree: top, Isolation: "worktree", Harness: "none"})
		k := 0
		var through *string
		for t := 1; t <= turns; t++ {
			tid := fmt.Sprintf("t%d", t)
			add(journal.TurnStarted, journal.TurnStart{Agent: a, Turn: tid})
			for _, reason := range []string{"turn_start", "turn_end"} {
				if reason == "turn_end" {
					add(journal.EditRecorded, journal.Edit{Agent: a, Turn: tid, Paths: []string{"file000.txt"}, Ignored: []string{}})
					add(journal.TurnEnded, journal.TurnEnd{Agent: a, Turn: tid})
					through = &tid
				}
				k++
				turn := tid
				add(journal.CheckpointTaken, journal.Taken{Agent: a, Checkpoint: fmt.Sprintf("k%d", k), Reason: reason,
					Turn: &turn, ThroughTurn: through, At: journal.Stamp(when), Repos: repos})
				refs = append(refs, fmt.Sprintf("%s refs/venom/checkpoints/%s/%d", commit, a, k))
			}
		}
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	// packed-refs, sorted by name as git writes it, with the seed's and
	// the branch's refs.
	if _, err := p.run(nil, "pack-refs", "--all"); err != nil {
		return 0, err
	}
	packed := filepath.Join(common, "packed-refs")
	old, err := os.ReadFile(packed)
	if err != nil {
		return 0, err
	}
	lines := refs
	for _, l := range strings.Split(string(old), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "^") {
			lines = append(lines, l)
		}
	}
	sort.Slice(lines, func(i, j int) bool {
		return strings.SplitN(lines[i], " ", 2)[1] < strings.SplitN(lines[j], " ", 2)[1]
	})
	text := "# pack-refs with: peeled fully-peeled sorted \n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(packed, []byte(text), 0o644); err != nil {
		return 0, err
	}
	// A lock holder of every agent writes the snapshot.
	if _, err := p.run(nil, "venom-checkpoint", "prune", "--json"); err != nil {
		return 0, err
	}
	return seq, nil
}
