package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// proc runs child processes in one directory and adds up the CPU time
// (user+sys, from wait4's rusage) that they used, and keeps the largest
// resident set any of them (or a child of theirs) reached.
type proc struct {
	dir    string
	git    string
	env    []string
	cpu    time.Duration
	maxRSS int64 // KiB
	faults int64 // minor page faults (not counted with isolate)
	// isolate runs each child under a fresh copy of the bench (rusageHelper),
	// so that its max RSS is its own: a child forked from the bench starts
	// with the bench's peak resident set as its own (Linux keeps the
	// parent's high-water mark across the exec), which hid everything under
	// the bench's 44 MiB holding a list of 300,000 files.
	isolate bool
}

// rusageEnv names the file a helper writes its child's rusage to.
const rusageEnv = "VENOM_TEST_BENCH_RUSAGE_FILE"

// rusageHelper is the bench run as the isolating helper: it runs its
// arguments as a command, passes its exit code on, and writes the
// command's CPU time (ns) and max RSS (KiB) to the file rusageEnv names.
func init() {
	out := os.Getenv(rusageEnv)
	if out == "" {
		return
	}
	os.Unsetenv(rusageEnv)
	c := exec.Command(os.Args[1], os.Args[2:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := c.Run()
	code := 0
	if err != nil {
		code = 1
		if c.ProcessState != nil && c.ProcessState.ExitCode() > 0 {
			code = c.ProcessState.ExitCode()
		}
	}
	if c.ProcessState != nil {
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			_ = os.WriteFile(out, []byte(fmt.Sprintf("%d %d\n", ru.Utime.Nano()+ru.Stime.Nano(), ru.Maxrss)), 0o644)
		}
	}
	os.Exit(code)
}

// baseEnv is the environment every child gets: the caller's, minus any GIT_
// variable that would redirect git, with the user's and the system's git
// config switched off so the numbers do not depend on who runs the bench.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "LC_ALL=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=venom", "GIT_AUTHOR_EMAIL=venom@localhost",
		"GIT_COMMITTER_NAME=venom", "GIT_COMMITTER_EMAIL=venom@localhost",
		"LC_ALL=C",
	)
}

// with returns a copy of p (sharing nothing) with extra environment.
func (p *proc) with(kv ...string) *proc {
	q := *p
	q.env = append(append([]string(nil), p.env...), kv...)
	q.cpu, q.maxRSS = 0, 0
	return &q
}

func (p *proc) cmd(stdin []byte, name string, args ...string) ([]byte, error) {
	c := exec.Command(name, args...)
	c.Dir = p.dir
	c.Env = p.env
	var usage string
	if p.isolate {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		f, err := os.CreateTemp("", "bench-rusage-")
		if err != nil {
			return nil, err
		}
		f.Close()
		usage = f.Name()
		defer os.Remove(usage)
		c = exec.Command(self, append([]string{name}, args...)...)
		c.Dir = p.dir
		c.Env = append(append([]string(nil), p.env...), rusageEnv+"="+usage)
	}
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var out, stderr bytes.Buffer
	c.Stdout = &out
	c.Stderr = &stderr
	err := c.Run()
	switch {
	case usage != "":
		var cpu, rss int64
		if b, rerr := os.ReadFile(usage); rerr == nil {
			if _, serr := fmt.Sscan(string(b), &cpu, &rss); serr == nil {
				p.cpu += time.Duration(cpu)
				p.maxRSS = max(p.maxRSS, rss)
			}
		}
	case c.ProcessState != nil:
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			p.maxRSS = max(p.maxRSS, ru.Maxrss)
			p.faults += ru.Minflt
		}
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return out.Bytes(), nil
}

func (p *proc) run(stdin []byte, args ...string) ([]byte, error) {
	return p.cmd(stdin, p.git, args...)
}

// line runs git and returns its output without the trailing newline.
func (p *proc) line(args ...string) (string, error) {
	out, err := p.run(nil, args...)
	return strings.TrimSpace(string(out)), err
}
