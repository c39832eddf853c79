package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Codex runs a command hook only in a trusted project, and only when its
// definition's hash is trusted: [hooks.state."<key>"] trusted_hash in the
// user's config.toml, the key and hash being what `hooks/list` reports
// (as Codex 0.171.0 does). `codex exec` never asks; it silently runs
// no untrusted hook. Both are Codex's to compute: git-venom asks the
// program, never recomputes them.

// Hook is one hook as `hooks/list` reports it.
type Hook struct {
	Key         string `json:"key"`
	Event       string `json:"eventName"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"` // managed, untrusted, trusted, modified
}

// Trust statuses of hooks/list.
const (
	Trusted  = "trusted"
	Modified = "modified"
)

// ListHooks asks for the hooks Codex would run in dir.
func (c *Client) ListHooks(ctx context.Context, dir string) ([]Hook, error) {
	var res struct {
		Data []struct {
			Hooks  []Hook `json:"hooks"`
			Errors []struct {
				Message string `json:"message"`
				Path    string `json:"path"`
			} `json:"errors"`
		} `json:"data"`
	}
	if err := c.Call(ctx, "hooks/list", map[string]any{"cwds": []string{dir}}, &res); err != nil {
		return nil, err
	}
	var out []Hook
	for _, d := range res.Data {
		if len(d.Errors) > 0 {
			return nil, fmt.Errorf("codex cannot read %s: %s", d.Errors[0].Path, d.Errors[0].Message)
		}
		out = append(out, d.Hooks...)
	}
	return out, nil
}

// trustHooks records each hook's current hash as trusted in the user's
// config.toml, through Codex's own config writer. One edit a hook, at
// hooks.state."<key>" (a quoted segment, the key being a path with dots),
// as Untrust removes them: an upsert of the whole hooks.state table made
// the writer add a [hooks.state] header to a file that held the table
// only implicitly, or not at all, and that header stayed, empty, after
// uninstall took the entries back.
func (c *Client) trustHooks(ctx context.Context, hooks []Hook) error {
	var edits []any
	for _, h := range hooks {
		edits = append(edits, map[string]any{"keyPath": "hooks.state." + strconv.Quote(h.Key),
			"mergeStrategy": "upsert", "value": map[string]any{"trusted_hash": h.CurrentHash}})
	}
	return c.Call(ctx, "config/batchWrite", map[string]any{"edits": edits}, nil)
}

// trustedHashes reads the user's [hooks.state] table: key -> trusted_hash.
func (c *Client) trustedHashes(ctx context.Context, dir string) (map[string]string, error) {
	var res struct {
		Config struct {
			Hooks struct {
				State map[string]struct {
					TrustedHash string `json:"trusted_hash"`
				} `json:"state"`
			} `json:"hooks"`
		} `json:"config"`
	}
	if err := c.Call(ctx, "config/read", map[string]any{"cwd": dir}, &res); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range res.Config.Hooks.State {
		out[k] = v.TrustedHash
	}
	return out, nil
}

// session starts an app-server in dir with the environment and shakes hands.
func session(ctx context.Context, bin, dir string, env []string) (*Client, error) {
	c, err := Start(ctx, bin, dir, env)
	if err != nil {
		return nil, err
	}
	if err := c.Initialize(ctx, ClientVersion); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Hooks lists the hooks Codex would run in dir, with the user's own
// configuration (env's CODEX_HOME). A project Codex does not trust lists
// no project hook.
func Hooks(ctx context.Context, bin, dir string, env []string) ([]Hook, error) {
	c, err := session(ctx, bin, dir, env)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ListHooks(ctx, dir)
}

// Definitions lists the hooks of dir as Codex sees them in a trusted
// project, whatever the user's trust: an app-server with a scratch
// CODEX_HOME that trusts dir only computes their keys and hashes. The
// scratch home is removed; nothing of the user's is read or written.
func Definitions(ctx context.Context, bin, dir string, env []string) ([]Hook, error) {
	home, err := os.MkdirTemp("", "git-venom-codex-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	cfg := "[projects." + strconv.Quote(dir) + "]\ntrust_level = \"trusted\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	return Hooks(ctx, bin, dir, withEnv(env, "CODEX_HOME", home))
}

// TrustResult is what Trust did.
type TrustResult struct {
	Hooks   []Hook // the hooks ours selected, as Codex computes them
	Changed bool   // trust was recorded now (some were not trusted yet)
	// ProjectTrusted: Codex lists the hooks in dir with the user's own
	// configuration, so they run (user-scope hooks, or a trusted project).
	ProjectTrusted bool
}

// Trust records the user's trust in exactly the hooks that ours selects
// (the ones hook install wrote), with the keys and hashes Codex computes,
// and says whether Codex will run them in dir. Hooks of a project Codex
// does not trust yet are computed as if it did (Definitions): their trust
// takes effect once the person trusts the project, which stays theirs to
// decide.
func Trust(ctx context.Context, bin, dir string, env []string, ours func(Hook) bool) (*TrustResult, error) {
	c, err := session(ctx, bin, dir, env)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res, err := c.ours(ctx, bin, dir, env, ours)
	if err != nil {
		return nil, err
	}
	recorded, err := c.trustedHashes(ctx, dir)
	if err != nil {
		return nil, err
	}
	for _, h := range res.Hooks {
		if recorded[h.Key] != h.CurrentHash {
			res.Changed = true
		}
	}
	if res.Changed {
		if err := c.trustHooks(ctx, res.Hooks); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// ours lists the hooks ours selects in dir, with the user's configuration
// when Codex lists them (ProjectTrusted), else as if the project were
// trusted (Definitions).
func (c *Client) ours(ctx context.Context, bin, dir string, env []string, ours func(Hook) bool) (*TrustResult, error) {
	listed, err := c.ListHooks(ctx, dir)
	if err != nil {
		return nil, err
	}
	res := &TrustResult{Hooks: pick(listed, ours)}
	res.ProjectTrusted = len(res.Hooks) > 0
	if !res.ProjectTrusted {
		defs, err := Definitions(ctx, bin, dir, env)
		if err != nil {
			return nil, err
		}
		res.Hooks = pick(defs, ours)
	}
	return res, nil
}

// Ours lists the hooks ours selects in dir as Codex computes them (keys
// and hashes), before hook uninstall removes them: afterwards Codex no
// longer lists them, and Untrust needs their keys.
func Ours(ctx context.Context, bin, dir string, env []string, ours func(Hook) bool) ([]Hook, error) {
	c, err := session(ctx, bin, dir, env)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res, err := c.ours(ctx, bin, dir, env, ours)
	if err != nil {
		return nil, err
	}
	return res.Hooks, nil
}

// Untrust removes from the user's config.toml the trust Trust recorded for
// hooks: each [hooks.state."<key>"] entry whose trusted_hash is that hook's
// own, through Codex's config writer, which leaves everything else in the
// file as it was. An entry with another hash is not install's (the person
// trusted another definition at that place) and stays. It returns the keys
// removed.
func Untrust(ctx context.Context, bin, dir string, env []string, hooks []Hook) ([]string, error) {
	if len(hooks) == 0 {
		return nil, nil
	}
	c, err := session(ctx, bin, dir, env)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	recorded, err := c.trustedHashes(ctx, dir)
	if err != nil {
		return nil, err
	}
	var edits []any
	var removed []string
	for _, h := range hooks {
		if hash, ok := recorded[h.Key]; !ok || hash != h.CurrentHash {
			continue
		}
		// A quoted segment, since the key is a path with dots; the value
		// null with "replace" removes the key.
		edits = append(edits, map[string]any{"keyPath": "hooks.state." + strconv.Quote(h.Key),
			"mergeStrategy": "replace", "value": nil})
		removed = append(removed, h.Key)
	}
	if len(edits) == 0 {
		return nil, nil
	}
	if err := c.Call(ctx, "config/batchWrite", map[string]any{"edits": edits}, nil); err != nil {
		return nil, err
	}
	return removed, nil
}

func pick(hooks []Hook, ours func(Hook) bool) []Hook {
	var out []Hook
	for _, h := range hooks {
		if ours(h) {
			out = append(out, h)
		}
	}
	return out
}

// withEnv sets one variable of an environment list.
func withEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
