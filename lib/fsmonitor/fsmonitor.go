// Package fsmonitor asks a core.fsmonitor hook what changed in a tree
// since a token, as git does (fsmonitor.c, protocol version 2): run in the
// top with "2" and the token, it prints a new token, a NUL, then changed
// paths ("/": it knows nothing). docs/checkpoints.md#the-file-system-monitor
// says how a capture uses it. Anything not read exactly as git would is
// no answer: the caller scans.
package fsmonitor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/git-venom/git-venom/lib/gitconfig"
	"github.com/git-venom/git-venom/lib/gitfiles"
)

// Hook is the command core.fsmonitor names for r, "" when it names none
// this package runs: unset, a boolean (true is git's own daemon, which
// git 2.39 has no Linux backend for), core.fsmonitorHookVersion other
// than 2, or settings it cannot read as git does (git -c, included files,
// a worktree's config).
func Hook(r gitfiles.Repo) string {
	// The variables that selected the repository are r's folders now;
	// git-venom's runner sets them, and GIT_OPTIONAL_LOCKS, for every git
	// call. Any other git variable is doubt.
	env := make([]string, 0, len(r.Env))
	for _, kv := range r.Env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OPTIONAL_LOCKS":
		default:
			env = append(env, kv)
		}
	}
	r.Env = env
	files, exact := gitfiles.List(r)
	if !exact {
		return ""
	}
	hook, version := "", ""
	for _, f := range files {
		if f.Kind != gitfiles.Config {
			continue
		}
		if !f.Read {
			if f.Scope == gitfiles.Worktree {
				if _, err := os.Lstat(f.Path); err == nil {
					return "" // read under extensions.worktreeConfig
				}
			}
			continue
		}
		entries, err := gitconfig.ReadFile(f.Path)
		if err != nil {
			return ""
		}
		for _, e := range entries {
			switch {
			case e.Name == "include.path" || strings.HasPrefix(e.Name, "includeif."):
				return ""
			case e.Name == "core.fsmonitor":
				if _, known := e.Bool(); known || !e.HasValue {
					hook = ""
				} else {
					hook = e.Value
				}
			case e.Name == "core.fsmonitorhookversion":
				version = e.Value
			}
		}
	}
	if version != "" && version != "2" {
		return ""
	}
	return hook
}

// Answer is what the monitor said.
type Answer struct {
	// Token is the one to ask with next time.
	Token string
	// Paths are the changed paths, relative to the top; a folder's end
	// in "/".
	Paths []string
}

// ErrNoAnswer is a hook that failed, or an answer that says nothing
// certain: the caller scans the whole tree.
var ErrNoAnswer = errors.New("the file system monitor gave no usable answer")

// hookTimeout bounds one query: the monitor is there to be fast.
const hookTimeout = 30 * time.Second

// Query runs hook in top, with env, for what changed since token. The
// first query of a tree (token "") gets a token and ErrNoAnswer.
func Query(ctx context.Context, top string, env []string, hook, token string) (*Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	if token == "" {
		// git passes the index's token; with none it asks nothing. The
		// watchman sample takes a token that is not a clock as "from
		// the start", which is a fresh instance.
		token = "venom:none"
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", hook+` "$@"`, hook, "2", token)
	cmd.Dir, cmd.Env = top, env
	cmd.Stdin = nil
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return nil, ErrNoAnswer
	}
	return parse(out.Bytes(), token)
}

// parse reads a version 2 answer to a query since token.
func parse(b []byte, since string) (*Answer, error) {
	tok, rest, ok := bytes.Cut(b, []byte{0})
	if !ok || len(tok) == 0 {
		return nil, ErrNoAnswer
	}
	a := &Answer{Token: string(tok)}
	if !sameInstance(since, a.Token) {
		// A monitor restarted since the token lists the files that exist,
		// not the ones deleted meanwhile: no answer.
		return a, ErrNoAnswer
	}
	for len(rest) > 0 {
		var p []byte
		p, rest, _ = bytes.Cut(rest, []byte{0})
		if len(p) == 0 {
			continue
		}
		if !clean(string(p)) {
			// "/" is the trivial answer; any other path git would not
			// take as relative to the top is doubt.
			return a, ErrNoAnswer
		}
		a.Paths = append(a.Paths, string(p))
	}
	return a, nil
}

// clean says whether p is a path relative to the top, as git's index
// holds it (a folder's may end in "/").
func clean(p string) bool {
	q := strings.TrimSuffix(p, "/")
	return q != "" && !strings.HasPrefix(q, "/") && filepath.Clean(q) == q && q != ".." &&
		!strings.HasPrefix(q, "../") && !strings.Contains(q, "\x00")
}

// sameInstance says whether token now comes from the monitor that gave
// since. A watchman clock, "c:<start>:<pid>:<root number>:<tick>", names
// its instance and its watch of the root: watchman answers a clock of
// another with every file that exists (a fresh instance), which git's
// sample hook passes on as if they were the changes, deletions missing.
// A token of another form is the hook's own, taken on its word as git
// takes it; a first query (since not a clock) has nothing to compare.
func sameInstance(since, now string) bool {
	s, sok := watchmanInstance(since)
	n, nok := watchmanInstance(now)
	switch {
	case !sok && !nok:
		return !strings.HasPrefix(since, "venom:")
	case sok && nok:
		return s == n
	}
	return false
}

// watchmanInstance is a watchman clock without its tick.
func watchmanInstance(tok string) (string, bool) {
	f := strings.Split(tok, ":")
	if len(f) != 5 || f[0] != "c" {
		return "", false
	}
	for _, x := range f[1:] {
		if x == "" || strings.Trim(x, "0123456789") != "" {
			return "", false
		}
	}
	return strings.Join(f[:4], ":"), true
}
