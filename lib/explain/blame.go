package explain

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
)

// BlameRequest is one file to blame by turn.
type BlameRequest struct {
	Repo  *git.Repository
	State *agents.State
	// Tree is the worktree whose agents' turns count.
	Tree string
	// Path is the file, top-relative; Current its content now.
	Path    string
	Current []byte
	Getenv  func(string) string
}

// BlameLine is one line of the file now and what last wrote it: a turn
// (Turn set), or nobody git-venom saw (Turn empty), whom the caller may
// ask git blame about.
type BlameLine struct {
	Text string
	Turn string // agent/turn
}

// Blame is the file's lines, each with the turn that last wrote it, and
// those turns described.
type Blame struct {
	Lines []BlameLine
	Turns map[string]Turn
}

// BlameFile walks the file's versions through the turns of Tree's agents
// in the order they ended: each turn's start and end, as its checkpoints
// hold them, and between two turns (and from the last one to now)
// whatever else changed the file, which is nobody's turn. A line a turn
// added or changed is that turn's until a later step changes it
// (keptLines). A turn running now owns the last step.
func BlameFile(req BlameRequest) (*Blame, error) {
	only := map[string]bool{}
	for _, id := range req.State.Order {
		if a := req.State.Agents[id]; a.Tree == req.Tree {
			only[id] = true
		}
	}
	spans, _ := spansOf(req.State, only, nil)
	// A running turn's marked calls are parts like an ended turn's; what
	// it changed since its last one is its own, up to the file now.
	now, isRunning := running(req.State, only)
	if isRunning {
		var parts []span
		parts, now.from, now.fromName = toolParts(now)
		spans = append(spans, parts...)
	}
	var unavailable int
	byPath, err := turnChanges(req.Repo, spans, map[string]bool{req.Path: true}, &unavailable)
	if err != nil {
		return nil, err
	}
	out := &Blame{Turns: map[string]Turn{}}
	var lines []string
	var owner []int // a span, or -1
	var prev *git.Oid
	step := func(next []string, by int) {
		kept := keptLines(lines, next)
		o := make([]int, len(next))
		for j, i := range kept {
			if i >= 0 {
				o[j] = owner[i]
			} else {
				o[j] = by
			}
		}
		lines, owner = next, o
	}
	changes := byPath[req.Path]
	for n, ch := range changes {
		before, err := blobLines(req.Repo, ch.old)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			lines, owner = before, make([]int, len(before))
			for i := range owner {
				owner[i] = -1
			}
		} else if !sameBlob(prev, ch.old) {
			step(before, -1)
		}
		after, err := blobLines(req.Repo, ch.new)
		if err != nil {
			return nil, err
		}
		step(after, ch.span)
		prev = ch.new
	}
	current := splitLines(req.Current)
	if len(changes) == 0 {
		lines, owner = current, make([]int, len(current))
		for i := range owner {
			owner[i] = -1
		}
	} else {
		by := -1
		if s, ok := now, isRunning; ok {
			// What changed before it started (or before its last marked
			// call) is nobody's turn.
			start, err := blobAt(req.Repo, s.fromCommit(), req.Path)
			if err != nil {
				return nil, err
			}
			if !sameBlob(prev, start) {
				before, err := blobLines(req.Repo, start)
				if err != nil {
					return nil, err
				}
				step(before, -1)
			}
			spans = append(spans, s)
			by = len(spans) - 1
		}
		step(current, by)
	}
	prompts := map[int]bool{}
	for i, l := range lines {
		bl := BlameLine{Text: l}
		if s := owner[i]; s >= 0 {
			bl.Turn = spans[s].id()
			if !prompts[s] {
				prompts[s] = true
				out.Turns[bl.Turn] = spans[s].describe(firstLine(conversation.Prompt(spans[s].agent, spans[s].turn, req.Getenv)))
			}
		}
		out.Lines = append(out.Lines, bl)
	}
	return out, nil
}

// running is the turn running now on the tree, as a span to the current
// file, when its start checkpoint is there to compare.
func running(st *agents.State, only map[string]bool) (span, bool) {
	ids := make([]string, 0, len(only))
	for id := range only {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := st.Agents[id]
		if a.State != agents.Running || len(a.Turns) == 0 {
			continue
		}
		t := a.Turns[len(a.Turns)-1]
		if t.Ended {
			continue
		}
		if start := startOf(a, t); usable(start) {
			return span{agent: a, turn: t, start: start, end: start, seq: start.Seq}, true
		}
	}
	return span{}, false
}

// blobAt is the blob at path in a commit's tree, nil when there is none.
func blobAt(r *git.Repository, commit, path string) (*git.Oid, error) {
	id := lookupTree(r, commit)
	if id == nil {
		return nil, failed(fmt.Errorf("commit %s is gone", commit))
	}
	t, err := r.LookupTree(id)
	if err != nil {
		return nil, failed(err)
	}
	defer t.Free()
	e, err := t.EntryByPath(path)
	if err != nil || e.Type != git.ObjectBlob {
		return nil, nil
	}
	b := *e.Id
	return &b, nil
}

// blobLines is a blob's lines, none for an absent path.
func blobLines(r *git.Repository, id *git.Oid) ([]string, error) {
	if id == nil {
		return nil, nil
	}
	b, err := r.LookupBlob(id)
	if err != nil {
		return nil, failed(err)
	}
	defer b.Free()
	return splitLines(b.Contents()), nil
}

// splitLines splits at "\n", as git blame counts lines: a last line
// without one is a line.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return strings.Split(string(b), "\n")
}
