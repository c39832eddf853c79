package harness

import (
	"encoding/json"

	"github.com/git-venom/git-venom/lib/pathspec"
)

// EditedPaths returns the files an edit tool call of any harness names,
// as given (each harness's Kind.Edits says how it names them).
func EditedPaths(tool string, input json.RawMessage) []string {
	for _, k := range Kinds {
		if k.Edits != nil {
			if p := k.Edits(tool, input); len(p) > 0 {
				return p
			}
		}
	}
	return nil
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
