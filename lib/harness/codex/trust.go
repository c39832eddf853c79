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
// (Codex 0.171.0, harness.md F2). `codex exec` never asks; it silently runs
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
// config.toml, through Codex's own config writer.
func (c *Client) trustHooks(ctx context.Context, hooks []Hook) error {
	state := map[string]any{}
	for _, h := range hooks {
		state[h.Key] = map[string]any{"trusted_hash": h.CurrentHash}
	}
	edit := map[string]any{"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state}
	return c.Call(ctx, "config/batchWrite", map[string]any{"edits": []any{edit}}, nil)
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
