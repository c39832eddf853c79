package codex

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/harness/kind"
)

// name is Codex's name to git-venom: agent.registered's harness, the hook
// verb's.
const name = "codex"

// Kind is Codex to git-venom (harness.Kinds). Its notify program and its
// hook trust are install's own steps (install.go).
var Kind = kind.Kind{
	Name:   name,
	Title:  "Codex",
	Agent:  "codex",
	Help:   "Run as a Codex hook (JSON on stdin) or notify program (JSON as the last argument).",
	Notify: Notify,
	// The hook verb's argument, which Codex appends.
	NotifyHelp: "notify's agent-turn-complete JSON (Codex appends it).",
	// Codex sets CODEX_THREAD_ID in the commands it runs, and the sandbox
	// variables when it sandboxes them.
	Marks: [][]string{{"CODEX_THREAD_ID"}, {"CODEX_SANDBOX"}, {"CODEX_SANDBOX_NETWORK_DISABLED"}},
	Events: []kind.Event{{Name: "SessionStart"}, {Name: "UserPromptSubmit"},
		{Name: "PostToolUse", Matcher: "^apply_patch$"}, {Name: "Stop"}},
	PerToolMatcher: "^(apply_patch|Bash)$",
	PromptContext:  "UserPromptSubmit",
	Edits:          EditedPaths,
	Settings: func(s kind.Scope) (string, string) {
		if s.Name == "user" {
			return Home(s.Getenv), "hooks.json"
		}
		return s.Top, ".codex/hooks.json"
	},
	// Codex rewinds by turn id: a turn's end needs no entry, only the
	// version the rollout records.
	End: func(_ context.Context, rollout, _ string) (kind.End, error) {
		return kind.End{Version: RolloutVersion(rollout)}, nil
	},
	Rewind:   Adapter{},
	TurnOver: turnOver,
	Checks:   checks,
	Install:  installer{},
	Via:      []string{ViaAuto, ViaHooks, ViaNotify, ViaBoth},
	ViaHelp:  "hooks.json, config.toml's notify, or both; auto picks hooks when the installed Codex has them.",
	Tested:   "0.171.0",
}

// Home is the user's Codex folder: $CODEX_HOME, else ~/.codex.
func Home(getenv func(string) string) string {
	if d := getenv("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(getenv("HOME"), ".codex")
}

// EditedPaths returns the files an apply_patch call adds, updates, deletes
// or moves to, relative to the payload's cwd, or nil (docs/harness.md#hook-agents).
func EditedPaths(tool string, input json.RawMessage) []string {
	if tool != "apply_patch" {
		return nil
	}
	var in struct {
		Command any `json:"command"`
		Input   any `json:"input"`
	}
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	for _, v := range []any{in.Command, in.Input} {
		if p := PatchPaths(patchText(v)); len(p) > 0 {
			return p
		}
	}
	return nil
}

// patchText accepts the patch as a string, or as an argv whose last member
// is the patch (["apply_patch", "*** Begin Patch..."]).
func patchText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		if len(t) > 0 {
			s, _ := t[len(t)-1].(string)
			return s
		}
	}
	return ""
}

// PatchPaths lists the files an apply_patch body adds, updates, deletes or
// moves to, in order, each once.
func PatchPaths(patch string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, prefix := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if p, ok := strings.CutPrefix(line, prefix); ok {
				p = strings.TrimSpace(p)
				if p != "" && !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}
