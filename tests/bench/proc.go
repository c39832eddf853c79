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
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var out, stderr bytes.Buffer
	c.Stdout = &out
	c.Stderr = &stderr
	err := c.Run()
	if c.ProcessState != nil {
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			p.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			p.maxRSS = max(p.maxRSS, ru.Maxrss)
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
