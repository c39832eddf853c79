package harness

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/git-venom/git-venom/lib/checkpoints"
)

// maxCommand bounds the command a tool call's mark records.
const maxCommand = 200

// toolCall marks the tool call that has just run when it changed the tree
// (hook --per-tool, docs/checkpoints.md#tool-calls).
func (r *run) toolCall() error {
	if r.a.OpenTurn == nil {
		return nil
	}
	cwd := r.p.Cwd
	if cwd == "" {
		cwd = r.Dir
	}
	_, err := checkpoints.MarkTool(r.ctx, r.tx, r.a, checkpoints.Tool{Name: r.p.ToolName,
		Command: ToolCommand(r.a.Tree, cwd, r.p.ToolName, r.p.ToolInput), UseID: r.p.ToolUseID})
	return err
}

// ToolCommand is what a tool call's mark says the call ran: the paths an
// edit tool named, relative to the tree, or else the first line of its
// command (Bash's, Codex's shell, Gemini CLI's run_shell_command), cut to
// maxCommand characters; "" when the input says neither.
func ToolCommand(tree, cwd, tool string, input json.RawMessage) string {
	var out string
	if named := EditedPaths(tool, input); len(named) > 0 {
		var rel []string
		for _, n := range named {
			if p, ok := InTree(tree, cwd, n); ok {
				rel = append(rel, p)
			} else {
				rel = append(rel, n)
			}
		}
		out = strings.Join(rel, " ")
	} else {
		var in struct {
			Command json.RawMessage `json:"command"`
		}
		if json.Unmarshal(input, &in) != nil {
			return ""
		}
		var s string
		var argv []string
		switch {
		case json.Unmarshal(in.Command, &s) == nil:
		case json.Unmarshal(in.Command, &argv) == nil:
			s = strings.Join(argv, " ") // Codex's shell takes an argument vector
		}
		s = strings.TrimSpace(s)
		out, _, _ = strings.Cut(s, "\n")
	}
	out = strings.ToValidUTF8(strings.TrimSpace(out), "\uFFFD")
	if utf8.RuneCountInString(out) > maxCommand {
		out = string([]rune(out)[:maxCommand-1]) + "…"
	}
	return out
}
