package explain

import (
	"strings"

	git "github.com/libgit2/git2go/v34"
)

// commitDiff is a commit's changes against its first parent (an empty
// tree for a root commit), with their hunks' lines.
type commitDiff struct{ files []fileDiff }

type fileDiff struct {
	path     string
	status   string
	binary   bool
	old, new *git.Oid
	hunks    []hunk
}

// hunk is a -U0 hunk: only the lines it removes and adds.
type hunk struct {
	git.DiffHunk
	removed, added []string
}

func diffCommit(r *git.Repository, c *git.Commit) (*commitDiff, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, failed(err)
	}
	defer tree.Free()
	var parentTree *git.Tree
	if p := c.Parent(0); p != nil {
		parentTree, err = p.Tree()
		p.Free()
		if err != nil {
			return nil, failed(err)
		}
		defer parentTree.Free()
	}
	opts, err := git.DefaultDiffOptions()
	if err != nil {
		return nil, failed(err)
	}
	// No context: a hunk is exactly one run of changed lines, so that
	// attribution is not blurred by the lines around it.
	opts.ContextLines = 0
	opts.InterhunkLines = 0
	// git diff's default since git 2.14; libgit2's is off.
	opts.Flags |= git.DiffIgnoreSubmodules | git.DiffIndentHeuristic
	opts.MaxSize = maxTextBytes
	d, err := r.DiffTreeToTree(parentTree, tree, &opts)
	if err != nil {
		return nil, failed(err)
	}
	defer d.Free()
	out := &commitDiff{}
	err = d.ForEach(func(delta git.DiffDelta, _ float64) (git.DiffForEachHunkCallback, error) {
		f := fileDiff{path: delta.NewFile.Path, status: status(delta.Status), old: present(delta.OldFile), new: present(delta.NewFile),
			binary: delta.Flags&git.DiffFlagBinary != 0}
		if delta.Status == git.DeltaDeleted {
			f.path = delta.OldFile.Path
		}
		out.files = append(out.files, f)
		cur := &out.files[len(out.files)-1]
		return func(h git.DiffHunk) (git.DiffForEachLineCallback, error) {
			cur.hunks = append(cur.hunks, hunk{DiffHunk: h})
			hk := &cur.hunks[len(cur.hunks)-1]
			return func(l git.DiffLine) error {
				switch l.Origin {
				case git.DiffLineAddition:
					hk.added = append(hk.added, trimEOL(l.Content))
				case git.DiffLineDeletion:
					hk.removed = append(hk.removed, trimEOL(l.Content))
				}
				return nil
			}, nil
		}, nil
	}, git.DiffDetailLines)
	if err != nil {
		return nil, failed(err)
	}
	return out, nil
}

func status(s git.Delta) string {
	switch s {
	case git.DeltaAdded:
		return "added"
	case git.DeltaDeleted:
		return "deleted"
	case git.DeltaTypeChange:
		return "typechange"
	}
	return "modified"
}

func trimEOL(s string) string { return strings.TrimRight(s, "\r\n") }

// maxTextBytes bounds the files judged line by line: a larger file is
// treated as binary (no hunks), as git treats files past its limits.
const maxTextBytes = 16 << 20

// lineCache holds the set of lines of each blob read, once each.
type lineCache struct {
	repo *git.Repository
	odb  *git.Odb
	sets map[git.Oid]map[string]bool
}

// lines is the set of a blob's lines; empty for an absent path; nil for a
// blob too large to judge, or that cannot be read.
func (c *lineCache) lines(id *git.Oid) (map[string]bool, bool) {
	if id == nil {
		return map[string]bool{}, true
	}
	if s, ok := c.sets[*id]; ok {
		return s, s != nil
	}
	c.sets[*id] = nil
	if size, _, err := c.odb.ReadHeader(id); err != nil || size > maxTextBytes {
		return nil, false
	}
	b, err := c.repo.LookupBlob(id)
	if err != nil {
		return nil, false
	}
	defer b.Free()
	s := map[string]bool{}
	for _, l := range strings.Split(string(b.Contents()), "\n") {
		s[trimEOL(l)] = true
	}
	c.sets[*id] = s
	return s, true
}

// lines is what a hunk is judged by: the lines it adds, or for a hunk
// that only removes lines, those; blank lines only when there is nothing
// else.
func (h hunk) lines() (want []string, removal bool) {
	if len(h.added) == 0 {
		return significant(h.removed), true
	}
	return significant(h.added), false
}

// carried lists which of want (a hunk's lines) a turn's change carried:
// an added line its end has and its start lacked; for a removal, a line
// its start had and its end lacks.
func (c *lineCache) carried(want []string, removal bool, ch change) []bool {
	out := make([]bool, len(want))
	before, okBefore := c.lines(ch.old)
	after, okAfter := c.lines(ch.new)
	if !okBefore || !okAfter {
		return out // a side that cannot be read proves nothing
	}
	if removal {
		before, after = after, before
	}
	for i, l := range want {
		out[i] = after[l] && !before[l]
	}
	return out
}

// significant drops blank lines unless nothing else is left.
func significant(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return lines
	}
	return out
}
