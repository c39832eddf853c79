package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/harness/kind"
)

// Kind is Claude Code to git-venom (harness.Kinds).
var Kind = kind.Kind{
	Name:   "claude-code",
	Title:  "Claude Code",
	Agent:  "claude",
	Help:   "Run as a Claude Code hook: the event's JSON on stdin.",
	PIDVar: "CLAUDE_PID",
	// Claude Code sets CLAUDECODE=1 in the commands it runs.
	Marks: [][]string{{"CLAUDECODE=1"}},
	Events: []kind.Event{{Name: "SessionStart"}, {Name: "UserPromptSubmit"},
		{Name: "PostToolUse", Matcher: "Write|Edit|MultiEdit|NotebookEdit"}, {Name: "Stop"}, {Name: "StopFailure"}},
	PerToolMatcher: "Bash|Write|Edit|MultiEdit|NotebookEdit",
	PromptContext:  "UserPromptSubmit",
	Edits:          EditedPaths,
	Settings:       settings,
	End:            LastEntry,
	Transcript: func(getenv func(string) string, tree, session string) (string, error) {
		return Locate(ConfigDir(getenv), tree, session)
	},
	Rewind: Adapter{},
	Checks: checks,
	Tested: TestedVersion,
}

// settings is the scope's settings file: the repository's
// .claude/settings.local.json (local) or .claude/settings.json (project),
// or the user's $CLAUDE_CONFIG_DIR/settings.json (~/.claude).
func settings(s kind.Scope) (string, string) {
	switch s.Name {
	case "user":
		dir := s.Getenv("CLAUDE_CONFIG_DIR")
		if dir == "" {
			dir = filepath.Join(s.Getenv("HOME"), ".claude")
		}
		return dir, "settings.json"
	case "project":
		return s.Top, ".claude/settings.json"
	}
	return s.Top, ".claude/settings.local.json"
}

// EditedPaths returns the file a Write, Edit, MultiEdit or NotebookEdit
// call names (an absolute path), or nil (docs/harness.md#hook-agents).
func EditedPaths(tool string, input json.RawMessage) []string {
	switch tool {
	case "Write", "Edit", "MultiEdit":
		var in struct {
			FilePath string `json:"file_path"`
		}
		if json.Unmarshal(input, &in) == nil && in.FilePath != "" {
			return []string{in.FilePath}
		}
	case "NotebookEdit":
		var in struct {
			NotebookPath string `json:"notebook_path"`
		}
		if json.Unmarshal(input, &in) == nil && in.NotebookPath != "" {
			return []string{in.NotebookPath}
		}
	}
	return nil
}

// checks warns when rewind is withheld because an agent's Claude Code is
// newer than the version whose rewind was tested (docs/harness.md#rewind), from the
// version the hooks record on each turn, and checks the hooks in the
// settings files.
func checks(_ context.Context, in kind.Doctor) []kind.Finding {
	return []kind.Finding{rewindCheck(in), kind.CheckSettingsHooks(in, HooksCheckID)}
}

// HooksCheckID is doctor's check of git-venom's hooks in Claude Code's
// settings files (kind.CheckSettingsHooks).
const HooksCheckID = "harness.claude-code.hooks"

func rewindCheck(in kind.Doctor) kind.Finding {
	const id = "harness.claude-code.rewind"
	var seen, newer []string
	for _, a := range in.State.Active() {
		if a.Harness != "claude-code" {
			continue
		}
		v := ""
		for i := len(a.Turns) - 1; i >= 0 && v == ""; i-- {
			v = a.Turns[i].Version
		}
		seen = append(seen, a.ID)
		if v != "" && Newer(v, TestedVersion) {
			newer = append(newer, fmt.Sprintf("%s runs %s", a.ID, v))
		}
	}
	switch {
	case len(seen) == 0:
		return kind.Finding{ID: id, Status: "ok", Message: "no claude-code agent"}
	case len(newer) == 0:
		return kind.Finding{ID: id, Status: "ok", Message: fmt.Sprintf("rewind declared for %s (tested up to %s)",
			strings.Join(seen, ", "), TestedVersion)}
	}
	return kind.Finding{ID: id, Status: "warn",
		Message: fmt.Sprintf("rewind is withheld: %s, newer than the tested %s", strings.Join(newer, ", "), TestedVersion),
		Fix:     "update git-venom, whose newer release may have tested this version; meanwhile roll back with --restore=files"}
}
