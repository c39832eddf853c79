package main

// The per-tool mode: what `hook install --per-tool` adds to each tool call
// (docs/benchmarks.md#per-tool-call): the PostToolUse hook that captures
// the tree, after a call that changed one file and one that changed
// nothing, timed against git status of the same tree, interleaved run by
// run, medians of wall and CPU time (target <= 1.0 of git status).
// -pertool-base <folder> times an earlier git-venom-checkpoint beside it.
//
//	go run ./tests/bench -pertool 10000 -runs 21
//	go run ./tests/bench -pertool 1000,10000 -pertool-base /tmp/base-bin

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

var perToolSizes *string

func init() {
	if !modeSelected("pertool") {
		return
	}
	fs := flag.NewFlagSet("bench -pertool", flag.ExitOnError)
	perToolSizes = fs.String("pertool", "10000", "comma-separated sizes of generated repositories")
	bin := fs.String("pertool-bin", "", "folder with git-venom-checkpoint (default: build it)")
	base := fs.String("pertool-base", "", "folder with an earlier git-venom-checkpoint, timed beside the other (before/after)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for cached repositories and the working copy")
	runs := fs.Int("runs", 21, "timed runs per size")
	gitPath := fs.String("git", "git", "git binary")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	if err := runPerToolMode(&proc{git: *gitPath, env: baseEnv(), dir: *work}, *work, *bin, *base, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

// perToolSide is one binary's timings: after a changing call and after a
// reading one, wall and CPU.
type perToolSide struct {
	name, exe                string
	changed, unchanged       []time.Duration
	changedCPU, unchangedCPU []time.Duration
}

func runPerToolMode(p *proc, work, bin, base string, runs int) error {
	bin, err := benchBinaries(work, bin, "./git-venom-checkpoint")
	if err != nil {
		return err
	}
	version, _ := p.line("version")
	fmt.Printf("%s, PostToolUse --per-tool hook vs git status, %d runs, medians in ms (wall / CPU)\n", version, runs)
	fmt.Printf("%8s %-20s %15s %15s   %s\n", "files", "", "changed", "unchanged", "changed/status, unchanged/status: wall; CPU (target <= 1.0)")
	for _, s := range strings.Split(*perToolSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -pertool entry %q", s)
		}
		sides := []*perToolSide{{name: "hook", exe: filepath.Join(bin, "git-venom-checkpoint")}}
		if base != "" {
			sides = append(sides, &perToolSide{name: "hook (-pertool-base)", exe: filepath.Join(base, "git-venom-checkpoint")})
		}
		status, statusCPU, err := perToolOnce(p, work, sides, n, runs)
		if err != nil {
			return err
		}
		fmt.Printf("%8d %-20s %15s\n", n, "git status", ms(median(status))+" / "+ms(median(statusCPU)))
		for _, sd := range sides {
			fmt.Printf("%8s %-20s %15s %15s   %s, %s; %s, %s\n", "", sd.name,
				ms(median(sd.changed))+" / "+ms(median(sd.changedCPU)),
				ms(median(sd.unchanged))+" / "+ms(median(sd.unchangedCPU)),
				ratio(median(sd.changed), median(status)), ratio(median(sd.unchanged), median(status)),
				ratio(median(sd.changedCPU), median(statusCPU)), ratio(median(sd.unchangedCPU), median(statusCPU)))
		}
	}
	return nil
}

func perToolOnce(p *proc, work string, sides []*perToolSide, n, runs int) (status, statusCPU []time.Duration, err error) {
	top, err := prepare(p, work, n, "")
	if err != nil {
		return nil, nil, err
	}
	g := &proc{dir: top, git: p.git, env: p.env}
	const session = "7ed25220-ebd9-4d8a-a85d-0225263a02da"
	payload := func(event, command string) []byte {
		return []byte(fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%q,"prompt_id":"p1","hook_event_name":%q,"prompt":"bench","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":"toolu_bench"}`,
			session, top, event, command))
	}
	// timed runs one command in the tree: its wall time and its CPU time.
	timed := func(stdin []byte, name string, args ...string) (wall, cpu time.Duration, out []byte, err error) {
		g.cpu = 0
		start := time.Now()
		out, err = g.cmd(stdin, name, args...)
		return time.Since(start), g.cpu, out, err
	}
	hookRun := func(exe, event, command string) (time.Duration, time.Duration, error) {
		wall, cpu, out, err := timed(payload(event, command), exe, "hook", "claude-code", "--agent=b", "--per-tool")
		if err == nil && len(out) > 0 {
			err = fmt.Errorf("the %s hook printed %q", event, out)
		}
		return wall, cpu, err
	}
	// Register and open the turn, untimed.
	for _, ev := range []string{"SessionStart", "UserPromptSubmit"} {
		if _, _, err := hookRun(sides[0].exe, ev, ""); err != nil {
			return nil, nil, err
		}
	}
	edited := filepath.Join(top, "pertool-bench.txt")
	for run := 0; run < runs; run++ {
		logf("%d files, run %d", n, run+1)
		wall, cpu, _, err := timed(nil, g.git, "status", "--porcelain")
		if err != nil {
			return nil, nil, err
		}
		status, statusCPU = append(status, wall), append(statusCPU, cpu)
		for i := range sides {
			sd := sides[(run+i)%len(sides)]
			if err := os.WriteFile(edited, []byte(fmt.Sprintf("run %d, %s\n", run, sd.name)), 0o644); err != nil {
				return nil, nil, err
			}
			wall, cpu, err := hookRun(sd.exe, "PostToolUse", fmt.Sprintf("echo run %d > pertool-bench.txt", run))
			if err != nil {
				return nil, nil, err
			}
			sd.changed, sd.changedCPU = append(sd.changed, wall), append(sd.changedCPU, cpu)
			if wall, cpu, err = hookRun(sd.exe, "PostToolUse", "cat pertool-bench.txt"); err != nil {
				return nil, nil, err
			}
			sd.unchanged, sd.unchangedCPU = append(sd.unchanged, wall), append(sd.unchangedCPU, cpu)
		}
	}
	if _, _, err := hookRun(sides[0].exe, "Stop", ""); err != nil {
		return nil, nil, err
	}
	// Every changing call, and no reading one, left a mark.
	log, err := os.ReadFile(filepath.Join(top, ".git", "venom", "log.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	if got, want := strings.Count(string(log), `"type":"tool.marked"`), runs*len(sides); got != want {
		return nil, nil, fmt.Errorf("%d tool calls marked, want %d", got, want)
	}
	_ = os.Remove(edited)
	return status, statusCPU, nil
}
