package plan

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/git-venom/git-venom/lib/repo"
)

// Change is one path that differs between S and T, with both entries.
type Change struct {
	Path   string
	Change string // create, modify or delete (T's view: what the rollback does)
	SMode  uint32 // 0 when S lacks the path
	SOid   string
	TMode  uint32 // 0 when T lacks the path
	TOid   string
	Class  string
	Left   string // the left reason, "" when the path is restored
	Detail *string
}

// Gitlink is a submodule's or nested repository's mode.
const Gitlink = 0o160000

// Writes reports whether the rollback writes T's entry at the path.
func (c *Change) Writes() bool { return c.TMode != 0 }

// diffTrees lists the differences between trees a and b, recursively, with
// no rename detection: the RFC 7.4 recipe's `git diff-tree -r -z
// --no-renames`, in its raw form so modes and object ids come along.
func diffTrees(ctx context.Context, r *repo.Repo, a, b string) ([]Change, error) {
	out, err := r.Git.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--raw", "--full-index", a, b)
	if err != nil {
		return nil, err
	}
	var list []Change
	for len(out) > 0 {
		// ":<mode> <mode> <oid> <oid> <status>\0<path>\0"
		i := bytes.IndexByte(out, 0)
		if i < 0 || len(out) == 0 || out[0] != ':' {
			return nil, fmt.Errorf("unexpected diff-tree output %q", out)
		}
		meta := bytes.Fields(out[1:i])
		out = out[i+1:]
		j := bytes.IndexByte(out, 0)
		if j < 0 || len(meta) < 5 {
			return nil, fmt.Errorf("unexpected diff-tree output")
		}
		path := string(out[:j])
		out = out[j+1:]
		sm, _ := strconv.ParseUint(string(meta[0]), 8, 32)
		tm, _ := strconv.ParseUint(string(meta[1]), 8, 32)
		c := Change{Path: path, SMode: uint32(sm), SOid: string(meta[2]), TMode: uint32(tm), TOid: string(meta[3])}
		switch {
		case c.SMode == 0:
			c.Change = "create"
		case c.TMode == 0:
			c.Change = "delete"
		default:
			c.Change = "modify"
		}
		list = append(list, c)
	}
	return list, nil
}

// changedPaths lists the paths that differ between two trees.
func changedPaths(ctx context.Context, r *repo.Repo, a, b string) (map[string]bool, error) {
	out, err := r.Git.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			set[string(p)] = true
		}
	}
	return set, nil
}
