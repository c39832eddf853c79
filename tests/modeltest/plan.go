package main

import (
	"sort"
	"strings"
)

// prediction is what the model says a rollback of an agent to a
// checkpoint is, from docs/rollback.md's rules: the refusal, or the
// plan's paths with their change and class, what is left and why, where
// HEAD goes, and the tree afterwards.
type prediction struct {
	refuse  string
	ignEdit []string
	changes map[string]string // path -> create, modify, delete
	classes map[string]string
	left    map[string]string // path -> reason
	moves   bool
	headTo  string
	s       files // S: what the capture of the real call sees
	target  files // T's view
	after   files // the disk afterwards
}

func changeOf(s, t files, p string) string {
	_, ins := s[p]
	_, int := t[p]
	switch {
	case !ins:
		return "create"
	case !int:
		return "delete"
	}
	return "modify"
}

func differ(a, b files, p string) bool {
	x, okx := a[p]
	y, oky := b[p]
	return okx != oky || x.mode != y.mode || x.oid != y.oid
}

// predict applies the preflight, the classes, the outside rule and the
// left rules to the model's state.
// scope, when not empty, is a path-scoped rollback's one pathspec: a
// path, and everything under it when a folder.
func inScope(scope, p string) bool {
	return scope == "" || p == scope || strings.HasPrefix(p, scope+"/")
}

// busy is the refusal of a rollback or revert of a's tree for what runs
// in it, in docs/rollback.md's order: a's turn, another agent's turn in
// the same tree, a git operation; "" when none.
func (w *world) busy(a *agent) string {
	if a.turn != 0 {
		return "conflict.turn_running"
	}
	for _, b := range w.agents {
		if b != a && b.tree == a.tree && b.turn != 0 {
			return "conflict.tree_shared"
		}
	}
	if a.tree.merging {
		return "conflict.git_operation"
	}
	return ""
}

func (w *world) predict(a *agent, target *checkpoint, undo bool, outside string, keepHead bool, scope string) prediction {
	t := a.tree
	pr := prediction{changes: map[string]string{}, classes: map[string]string{}, left: map[string]string{}}
	// Preflight, in docs/rollback.md's order (the ones the model drives).
	if target.pruned {
		pr.refuse = "not_found.checkpoint"
		return pr
	}
	if pr.refuse = w.busy(a); pr.refuse != "" {
		return pr
	}
	pr.headTo = t.head
	if !a.guarded() && !keepHead && scope == "" && target.head != t.head {
		switch {
		case target.head == "" || t.head == "" || target.branch != t.branch:
			pr.refuse = "conflict.head_moved"
			return pr
		case undo && w.isAncestor(t, t.head, target.head):
			// An undo moves the branch forward again, when that is a
			// fast-forward.
		case !w.isAncestor(t, target.head, t.head):
			pr.refuse = "conflict.head_moved"
			return pr
		}
		pr.moves, pr.headTo = true, target.head
	}
	s := t.view()
	pr.s, pr.target = s, target.view
	var paths []string
	for _, m := range []files{s, target.view} {
		for p := range m {
			if _, ok := pr.changes[p]; !ok && inScope(scope, p) && differ(s, target.view, p) {
				pr.changes[p] = changeOf(s, target.view, p)
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	seenIgn := map[string]bool{}
	for _, e := range a.ignEdit {
		if e.after > target.first && !seenIgn[e.path] {
			seenIgn[e.path] = true
			pr.ignEdit = append(pr.ignEdit, e.path)
		}
	}
	sort.Strings(pr.ignEdit)
	// Classes: walk the tree's captures from T's, as windows; a gap that
	// changed a path makes it outside; the last window (newest capture to
	// S) is a gap. With no edit records every other path is turn.
	outsideOf := map[string]bool{}
	turnsSeen := map[int]bool{} // turns with a turn window in the walk
	gap := func(from, to files) {
		for _, p := range paths {
			if differ(from, to, p) {
				outsideOf[p] = true
			}
		}
	}
	// A pruned checkpoint's capture is a barrier: the window across it
	// is a gap.
	spans := otherSpans(a, t.captures)
	var prev *capture
	prevIdx := -1
	broken := false
	for i := target.first; i < len(t.captures); i++ {
		c := &t.captures[i]
		if c.ck.pruned {
			broken = prev != nil || broken
			continue
		}
		if prev != nil {
			kind := w.windowKind(a, *prev, *c)
			for _, sp := range spans {
				if kind == "turn" && sp[0] < i && sp[1] > prevIdx {
					kind = "gap" // another agent's turn ran meanwhile
				}
			}
			switch {
			case broken || kind == "gap":
				gap(prev.view, c.view)
			case kind == "turn":
				turnsSeen[c.turn] = true
			}
		}
		prev, prevIdx, broken = c, i, false
	}
	gap(prev.view, s)
	anyOutside := false
	// docs/rollback.md, Your own checkpoints: an agent that never had a
	// turn and has no harness, alone in its tree, is the person's own:
	// every path is turn.
	own := a.turns == 0 && a.turn == 0 && !a.harness
	for _, b := range w.agents {
		if b != a && b.tree == t {
			own = false
		}
	}
	for _, p := range paths {
		pr.classes[p] = "turn"
		if own {
			continue
		}
		for n := range turnsSeen {
			if a.edits[n][p] {
				pr.classes[p] = "agent"
			}
		}
		if outsideOf[p] {
			pr.classes[p] = "outside"
			anyOutside = true
		}
	}
	mode := outside
	if mode == "" {
		mode = "overwrite"
		if a.guarded() {
			mode = "refuse"
		}
	}
	// Left: kept outside paths, writes a kept path blocks, and writes
	// something S does not hold is in the way of (an ignored file or a
	// folder holding one).
	kept := map[string]bool{}
	if mode == "keep" {
		for _, p := range paths {
			if pr.classes[p] == "outside" {
				kept[p] = true
				pr.left[p] = "outside"
			}
		}
	}
	// Blocked by a kept path: a write under a kept file, or a file write
	// where a kept path lies beneath.
	blocked := map[string]string{}
	for _, p := range paths {
		if _, writes := target.view[p]; !writes || pr.left[p] != "" {
			continue
		}
		for q := range kept {
			if _, inS := s[q]; inS && (strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/")) {
				blocked[p] = "outside"
			}
		}
	}
	for p, r := range blocked {
		pr.left[p] = r
	}
	// In the way: what a write would replace that is not going: a file
	// or link at one of its folders, a file at its path S does not hold
	// (an ignored one), or anything under its path that the rollback does
	// not delete (ignored files; in a path-scoped rollback, the paths not
	// chosen).
	w.inTheWay(t, &pr, paths, s, target.view)
	// The refusal names the outside paths the rollback would write: one
	// left (in the way of an ignored file, say) is not touched.
	if mode == "refuse" && anyOutside {
		for _, p := range paths {
			if pr.classes[p] == "outside" && pr.left[p] == "" {
				pr.refuse = "conflict.outside_edits"
				return pr
			}
		}
	}
	pr.after = afterWrites(t.files, paths, pr.left, target.view)
	return pr
}

// windowKind is docs/rollback.md's kind of the window between two
// consecutive captures of a's tree: rollback when the later is a
// rollback capture; turn when one turn of a (opened by a turn_start) ran
// at both ends and no other agent of the tree had a turn running; gap
// otherwise.
func (w *world) windowKind(a *agent, from, to capture) string {
	if to.reason == "rollback" {
		return "rollback"
	}
	// a's turn ran after from and until to: to is a's own turn_end or
	// mid-turn capture of that turn, or another agent's capture.
	turn := from.open[a]
	if turn == 0 {
		return "gap"
	}
	if to.agent == a && (to.turn != turn || to.reason == "turn_start") {
		return "gap"
	}
	return "turn"
}

// otherSpans lists when the turns of the tree's other agents ran, as
// [start, end) capture indices: a started turn from its turn_start to its
// turn_end (open: to the end); a turn with no start, from the agent's
// capture before its turn_end. A window any of them overlaps is a gap
// (shared with a's own turn or not: with no edit records of the sharers
// apart, every path a shared window changed is outside).
func otherSpans(a *agent, caps []capture) [][2]int {
	var out [][2]int
	open := map[*agent]int{}
	last := map[*agent]int{}
	for i, c := range caps {
		b := c.agent
		if b == a {
			continue
		}
		switch {
		case c.reason == "turn_start":
			open[b] = i
		case c.reason == "turn_end" && c.turn > 0:
			if s, ok := open[b]; ok {
				out = append(out, [2]int{s, i})
				delete(open, b)
			}
		case c.reason == "turn_end":
			s, ok := last[b]
			if !ok {
				s = -1
			}
			out = append(out, [2]int{s, i})
		}
		last[b] = i
	}
	for _, s := range open {
		out = append(out, [2]int{s, len(caps) + 1})
	}
	return out
}

func (w *world) isAncestor(t *tree, anc, desc string) bool {
	r := w.gitRaw(t.dir, "merge-base", "--is-ancestor", anc, desc)
	switch r.code {
	case 0:
		return true
	case 1:
		return false
	}
	w.failf("git merge-base: %s", r)
	return false
}
