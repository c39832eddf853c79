package main

// The per-tool mode: what `hook install --per-tool` adds to each tool call
// (docs/checkpoints.md#tool-calls). Without it a Bash call runs no hook;
// with it, one PostToolUse hook (`hook claude-code --per-tool`), which
// captures the tree. Timed against git status of the same tree,
// interleaved run by run, for a call that changed one file (it leaves a
// mark) and for one that changed nothing (it records nothing):
//
//	go run ./tests/bench -pertool 10000 -runs 21
//
// Reported per size, medians: git status, the hook after a changing call,
// after a reading call, and each / git status (target <= 1.0).

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
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for cached repositories and the working copy")
	runs := fs.Int("runs", 21, "timed runs per size")
	gitPath := fs.String("git", "git", "git binary")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	if err := runPerToolMode(&proc{git: *gitPath, env: baseEnv(), dir: *work}, *work, *bin, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

func runPerToolMode(p *proc, work, bin string, runs int) error {
	bin, err := benchBinaries(work, bin, "./git-venom-checkpoint")
	if err != nil {
		return err
	}
	version, _ := p.line("version")
	fmt.Printf("%s, PostToolUse --per-tool hook vs git status, %d runs, medians in ms\n", version, runs)
	fmt.Printf("%8s %9s %9s %9s   %s\n", "files", "status", "changed", "unchanged", "changed/status, unchanged/status (target <= 1.0)")
	for _, s := range strings.Split(*perToolSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -pertool entry %q", s)
		}
		status, changed, unchanged, err := perToolOnce(p, work, bin, n, runs)
		if err != nil {
			return err
		}
		fmt.Printf("%8d %9s %9s %9s   %s, %s\n", n, ms(status), ms(changed), ms(unchanged),
			ratio(changed, status), ratio(unchanged, status))
	}
	return nil
}

func perToolOnce(p *proc, work, bin string, n, runs int) (status, changed, unchanged time.Duration, err error) {
	top, err := prepare(p, work, n, "")
	if err != nil {
		return 0, 0, 0, err
	}
	g := &proc{dir: top, git: p.git, env: p.env}
	exe := filepath.Join(bin, "git-venom-checkpoint")
	const session = "7ed25220-ebd9-4d8a-a85d-0225263a02da"
	payload := func(event, command string) []byte {
		return []byte(fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%q,"prompt_id":"p1","hook_event_name":%q,"prompt":"bench","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":"toolu_bench"}`,
			session, top, event, command))
	}
	hookRun := func(event, command string) (time.Duration, error) {
		start := time.Now()
		out, err := g.cmd(payload(event, command), exe, "hook", "claude-code", "--agent=b", "--per-tool")
		d := time.Since(start)
		if err == nil && len(out) > 0 {
			err = fmt.Errorf("the %s hook printed %q", event, out)
		}
		return d, err
	}
	// Register and open the turn, untimed.
	for _, ev := range []string{"SessionStart", "UserPromptSubmit"} {
		if _, err := hookRun(ev, ""); err != nil {
			return 0, 0, 0, err
		}
	}
	edited := filepath.Join(top, "pertool-bench.txt")
	var ts, tc, tu []time.Duration
	for run := 0; run < runs; run++ {
		logf("%d files, run %d", n, run+1)
		start := time.Now()
		if _, err := g.run(nil, "status", "--porcelain"); err != nil {
			return 0, 0, 0, err
		}
		ts = append(ts, time.Since(start))
		if err := os.WriteFile(edited, []byte(fmt.Sprintf("run %d\n", run)), 0o644); err != nil {
			return 0, 0, 0, err
		}
		d, err := hookRun("PostToolUse", fmt.Sprintf("echo run %d > pertool-bench.txt", run))
		if err != nil {
			return 0, 0, 0, err
		}
		tc = append(tc, d)
		if d, err = hookRun("PostToolUse", "cat pertool-bench.txt"); err != nil {
			return 0, 0, 0, err
		}
		tu = append(tu, d)
	}
	if _, err := hookRun("Stop", ""); err != nil {
		return 0, 0, 0, err
	}
	// Every changing call, and no reading one, left a mark.
	log, err := os.ReadFile(filepath.Join(top, ".git", "venom", "log.jsonl"))
	if err != nil {
		return 0, 0, 0, err
	}
	if got := strings.Count(string(log), `"type":"tool.marked"`); got != runs {
		return 0, 0, 0, fmt.Errorf("%d tool calls marked, want %d", got, runs)
	}
	_ = os.Remove(edited)
	return median(ts), median(tc), median(tu), nil
}
