package share

import (
	"errors"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/state"
)

// Over is the budget a fetched copy's checkpoint is past: a few objects
// on the wire can stand for a million paths (a folder naming one subtree
// twice, twenty times over), a tree thirty thousand folders deep, or a
// gigabyte file of zeros that compresses to a megabyte. Each of them
// makes every command that reads the checkpoint slow, and a rollback
// write what no disk holds; the venom.copyMax* keys bound them.
type Over struct {
	Key   string `json:"key"`   // the venom.* key of the cap
	Limit int64  `json:"limit"` // its value
	// Found is what the tree comes to, at least (a walk stops one folder
	// past venom.copyMaxDepth).
	Found int64 `json:"found"`
}

// what names the measure for a message.
func (o *Over) what() string {
	switch o.Key {
	case "venom.copyMaxPaths":
		return "paths"
	case "venom.copyMaxDepth":
		return "folders deep"
	case "venom.copyMaxFileBytes":
		return "bytes in one file"
	}
	return "bytes of files"
}

// walk is the check of a copy's trees: names as UnsafePath checks them,
// sizes read, and no deeper than venom.copyMaxDepth.
func walk(c config.Config) *refs.Walk {
	return &refs.Walk{Sizes: true, MaxDepth: int(c.CopyMaxDepth)}
}

// budget checks tree against the venom.copyMax* caps (0: no cap): the
// refusal reason (RefusedPath, or RefusedBudget with the cap it is past)
// or "".
func budget(s *state.Store, w *refs.Walk, tree *git.Oid) (string, *Over) {
	t, err := w.Tree(s.Repo, tree)
	c := s.Config
	if errors.Is(err, refs.ErrTooDeep) {
		return RefusedBudget, &Over{Key: "venom.copyMaxDepth", Limit: c.CopyMaxDepth, Found: c.CopyMaxDepth + 1}
	}
	if err != nil {
		return RefusedPath, nil
	}
	for _, o := range []Over{
		{"venom.copyMaxPaths", c.CopyMaxPaths, t.Paths},
		{"venom.copyMaxFileBytes", c.CopyMaxFileBytes, t.Largest},
		{"venom.copyMaxTotalBytes", c.CopyMaxTotalBytes, t.Bytes},
	} {
		if o.Limit > 0 && o.Found > o.Limit {
			return RefusedBudget, &o
		}
	}
	return "", nil
}

// budgetError is failed.copy_budget for checkpoint cp of copy.
func budgetError(copy, cp string, o *Over) error {
	remote, _, _ := strings.Cut(copy, "/")
	return errcode.Newf(errcode.FailedCopyBudget, map[string]any{"agent": copy, "checkpoint": cp,
		"key": o.Key, "limit": o.Limit, "found": o.Found},
		"checkpoint %s of the fetched copy %s comes to %d %s, past %s (%d); nothing was changed",
		cp, copy, o.Found, o.what(), o.Key, o.Limit).
		Hint("git config --global %s <n>   raises the cap (0: none), if you trust %s", o.Key, remote)
}
