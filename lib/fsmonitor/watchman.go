package fsmonitor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/gitcli"
)

// Watchman's own JSON protocol, over its socket, answers the hook's query
// in a millisecond where the hook (perl, and a watchman client process)
// takes 40 to 70 ms, most of a steady capture. It is used only where
// watchman already watches the tree, as the hook would have it do; a
// watch is never added here (a capture does not make watchman watch a tree
// nobody asked it to): the hook is run instead, which adds it when it is
// watchman's. Its answer says outright when it is a fresh instance.

// ErrNoWatch says that watchman cannot be reached or does not watch the
// tree: the caller runs the hook.
var ErrNoWatch = errors.New("watchman does not watch the tree")

// Ask queries watchman since token, when it already watches top. The
// repository's core.fsmonitor command is never run: a capture runs from
// harness hooks after every turn, and a cloned repository's config would
// choose what it executes (tests/robust_features_test.go). Without a
// watch the caller scans the whole tree; a person's git status, which
// runs the hook, adds the watch.
func Ask(ctx context.Context, top string, env []string, hook, token string) (*Answer, error) {
	a, err := queryWatchman(ctx, top, env, token)
	if errors.Is(err, ErrNoWatch) {
		return nil, ErrNoAnswer
	}
	return a, err
}

// watchmanTimeout bounds a direct query, connection to answer.
const watchmanTimeout = 10 * time.Second

// sockname is watchman's socket: WATCHMAN_SOCK, as its own client takes
// it, else what the client says, without starting a server.
func sockname(ctx context.Context, env []string) string {
	if s := gitcli.Getenv(env, "WATCHMAN_SOCK"); s != "" {
		return s
	}
	cmd := exec.CommandContext(ctx, "watchman", "--no-spawn", "--no-pretty", "get-sockname")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	var r struct {
		Sockname string `json:"sockname"`
	}
	if json.Unmarshal(out, &r) != nil {
		return ""
	}
	return r.Sockname
}

// queryWatchman asks watchman's socket for what changed under top since
// token. ErrNoWatch: no watchman, or none watching top.
func queryWatchman(ctx context.Context, top string, env []string, token string) (*Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, watchmanTimeout)
	defer cancel()
	sock := sockname(ctx, env)
	if sock == "" {
		return nil, ErrNoWatch
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, ErrNoWatch
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	rd := bufio.NewReaderSize(conn, 64<<10)
	call := func(req []any, resp any) error {
		b, err := json.Marshal(req)
		if err != nil {
			return err
		}
		if _, err := conn.Write(append(b, '\n')); err != nil {
			return err
		}
		line, err := rd.ReadBytes('\n')
		if err != nil {
			return err
		}
		return json.Unmarshal(line, resp)
	}
	var list struct {
		Roots []string `json:"roots"`
		Error string   `json:"error"`
	}
	if err := call([]any{"watch-list"}, &list); err != nil || list.Error != "" {
		return nil, ErrNoWatch
	}
	root, rel := "", ""
	for _, r := range list.Roots {
		if r == top {
			root, rel = r, ""
			break
		}
		if x, err := filepath.Rel(r, top); err == nil && x != "." && !strings.HasPrefix(x, "..") && len(r) > len(root) {
			root, rel = r, filepath.ToSlash(x)
		}
	}
	if root == "" {
		return nil, ErrNoWatch
	}
	if _, ok := watchmanInstance(token); !ok {
		// Nothing to ask since: the clock alone, once watchman has seen
		// every change made before (sync), to start the chain.
		var c struct {
			Clock string `json:"clock"`
			Error string `json:"error"`
		}
		if err := call([]any{"clock", root, map[string]any{"sync_timeout": 10000}}, &c); err != nil || c.Error != "" || c.Clock == "" {
			return nil, ErrNoAnswer
		}
		return &Answer{Token: c.Clock}, ErrNoAnswer
	}
	q := map[string]any{
		"since":      token,
		"fields":     []string{"name"},
		"expression": []any{"not", []any{"dirname", ".git"}},
	}
	if rel != "" {
		q["relative_root"] = rel
	}
	var resp struct {
		Clock string   `json:"clock"`
		Fresh bool     `json:"is_fresh_instance"`
		Files []string `json:"files"`
		Error string   `json:"error"`
	}
	if err := call([]any{"query", root, q}, &resp); err != nil || resp.Error != "" || resp.Clock == "" {
		return nil, ErrNoAnswer
	}
	a := &Answer{Token: resp.Clock}
	if resp.Fresh || !sameInstance(token, a.Token) {
		// Every file that exists, not the ones deleted since.
		return a, ErrNoAnswer
	}
	for _, p := range resp.Files {
		if !clean(p) {
			return a, ErrNoAnswer
		}
		a.Paths = append(a.Paths, p)
	}
	return a, nil
}
