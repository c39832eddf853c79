package main

// The hook mode: a Claude Code UserPromptSubmit hook (a turn opened and
// its turn_start capture) against a bare capture on the same clean tree,
// interleaved; medians per size, target hook / capture <= 1.3. A Stop
// hook, untimed, closes each turn.
//
//	go run ./tests/bench -hook 10000 -runs 21

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

var hookSizes *string

func init() {
	if !modeSelected("hook") {
		return
	}
	fs := flag.NewFlagSet("bench -hook", flag.ExitOnError)
	hookSizes = fs.String("hook", "10000", "comma-separated sizes of generated repositories")
	bin := fs.String("hook-bin", "", "folder with git-venom-checkpoint (default: build it)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for cached repositories and the working copy")
	runs := fs.Int("runs", 21, "timed runs per size")
	gitPath := fs.String("git", "git", "git binary")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	if err := runHookMode(&proc{git: *gitPath, env: baseEnv(), dir: *work}, *work, *bin, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

func runHookMode(p *proc, work, bin string, runs int) error {
	bin, err := benchBinaries(work, bin, "./git-venom-checkpoint")
	if err != nil {
		return err
	}
	version, _ := p.line("version")
	fmt.Printf("%s, UserPromptSubmit hook vs bare capture on a clean tree, %d runs, medians\n", version, runs)
	fmt.Printf("%8s %9s %9s %9s   %s\n", "files", "status", "capture", "hook", "hook/capture (target <= 1.3)")
	for _, s := range strings.Split(*hookSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -hook entry %q", s)
		}
		status, bare, hook, err := hookOnce(p, work, bin, n, runs)
		if err != nil {
			return err
		}
		fmt.Printf("%8d %9s %9s %9s   %s\n", n, ms(status), ms(bare), ms(hook), ratio(hook, bare))
	}
	return nil
}

func hookOnce(p *proc, work, bin string, n, runs int) (status, bare, hook time.Duration, err error) {
	top, err := prepare(p, work, n, "")
	if err != nil {
		return 0, 0, 0, err
	}
	g := &proc{dir: top, git: p.git, env: p.env}
	exe := filepath.Join(bin, "git-venom-checkpoint")
	const session = "7ed25220-ebd9-4d8a-a85d-0225263a02da"
	payload := func(event, prompt string) []byte {
		return []byte(fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%q,"prompt_id":%q,"hook_event_name":%q,"prompt":"bench"}`,
			session, top, prompt, event))
	}
	hookRun := func(event, prompt string) (time.Duration, error) {
		start := time.Now()
		out, err := g.cmd(payload(event, prompt), exe, "hook", "claude-code", "--agent=b")
		d := time.Since(start)
		if err == nil && len(out) > 0 {
			err = fmt.Errorf("the %s hook printed %q", event, out)
		}
		return d, err
	}
	// Register, bind and take the first checkpoint, untimed.
	if _, err := hookRun("SessionStart", ""); err != nil {
		return 0, 0, 0, err
	}
	if _, err := g.cmd(nil, exe, "--agent=b", "--json"); err != nil {
		return 0, 0, 0, err
	}
	var ts, tb, th []time.Duration
	for run := 0; run < runs; run++ {
		logf("%d files, run %d", n, run+1)
		start := time.Now()
		if _, err := g.run(nil, "status", "--porcelain"); err != nil {
			return 0, 0, 0, err
		}
		ts = append(ts, time.Since(start))
		start = time.Now()
		if _, err := g.cmd(nil, exe, "--agent=b", "--json"); err != nil {
			return 0, 0, 0, err
		}
		tb = append(tb, time.Since(start))
		d, err := hookRun("UserPromptSubmit", fmt.Sprintf("p%d", run))
		if err != nil {
			return 0, 0, 0, err
		}
		th = append(th, d)
		if _, err := hookRun("Stop", fmt.Sprintf("p%d", run)); err != nil {
			return 0, 0, 0, err
		}
	}
	// Every hook must have opened and closed its turn.
	log, err := os.ReadFile(filepath.Join(top, ".git", "venom", "log.jsonl"))
	if err != nil {
		return 0, 0, 0, err
	}
	if got := strings.Count(string(log), `"type":"turn.ended"`); got != runs {
		return 0, 0, 0, fmt.Errorf("%d turns ended, want %d", got, runs)
	}
	return median(ts), median(tb), median(th), nil
}
