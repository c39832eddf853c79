package harness

import (
	"encoding/json"
	"strings"

	"github.com/git-venom/git-venom/lib/pathspec"
)

// EditedPaths returns the files an edit tool call names, as given (absolute
// for Claude Code, relative to cwd for Codex's apply_patch), or nil for a
// tool that edits nothing by name (CONTRACT 8.13).
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
	case "apply_patch":
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

// InTree makes path relative to the tree's top level, resolving it against
// cwd when relative, as git venom-diff and git venom-rollback resolve a
// person's path (lib/pathspec); ok is false for a path outside the tree,
// the top itself, or one git would refuse (treepath.Verify).
func InTree(top, cwd, path string) (string, bool) {
	rel, err := pathspec.Resolve(top, cwd, path)
	if err != nil || rel == "" {
		return "", false
	}
	return rel, true
}
