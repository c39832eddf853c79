package plan

import (
	"context"
	"sort"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/repo"
)

// Classes (docs/rollback.md#classes).
const (
	Outside = "outside"
	Agent   = "agent"
	Turn    = "turn"
)

// classify sets each change's class from the windows between the capture
// at seq since (the target's first) and S (docs/rollback.md#classes): outside when a gap
// changed it, agent when an edit record of a turn window names it, turn
// otherwise. start is the target's commit: when no usable capture follows
// since, everything from it to S is one gap. changes are in path order
// (diffTrees): a path is found in them by binary search, and a window's
// changed paths, in path order too, by one merge.
func classify(ctx context.Context, r *repo.Repo, st *agents.State, a *agents.Agent, since int64, start string,
	sTree string, changes []Change, copy *Copy, within string) error {
	if len(changes) == 0 {
		return nil
	}
	gap := make([]bool, len(changes))
	edited := make([]bool, len(changes))
	// Windows often repeat a pair of trees (a tree rolled back and forth,
	// captures with nothing new): each pair is compared once, by tree.
	trees := map[string]string{}
	treeOf := func(id string) (string, error) {
		if t, ok := trees[id]; ok {
			return t, nil
		}
		lib, err := r.Lib()
		if err != nil {
			return "", err
		}
		t, err := lookupTree(lib, id)
		if err != nil {
			return "", err
		}
		defer t.Free()
		trees[id] = t.Id().String()
		return trees[id], nil
	}
	tTree, err := treeOf(start)
	if err != nil {
		return err
	}
	compared := map[[2]string][]string{}
	// mark records a gap window's changed paths as outside, unless a
	// shared window's own edit records name a path and none of the other
	// turns' do. A turn window's changes are classed by its edit records
	// alone.
	mark := func(from, to string, kind string, own, others map[int]bool) error {
		var err error
		if from, err = treeOf(from); err != nil {
			return err
		}
		if to, err = treeOf(to); err != nil {
			return err
		}
		if from == to || kind != agents.GapWindow {
			return nil
		}
		set := func(i int) {
			if own[i] && !others[i] {
				edited[i] = true
			} else {
				gap[i] = true
			}
		}
		// A window between S's and T's trees, either way (a gap from the
		// target to the last capture, when S is that capture's tree)
		// changed every path of the plan: no need to compare them again.
		if [2]string{from, to} == [2]string{sTree, tTree} || [2]string{to, from} == [2]string{sTree, tTree} {
			for i := range changes {
				set(i)
			}
			return nil
		}
		changed, ok := compared[[2]string{from, to}]
		if !ok {
			if changed, err = ChangedPaths(ctx, r, from, to); err != nil {
				return err
			}
			compared[[2]string{from, to}] = changed
		}
		eachCommon(changed, changes, set)
		return nil
	}
	editsOf := func(a *agents.Agent, turn string) map[int]bool {
		out := map[int]bool{}
		if t := a.Turn(turn); t != nil {
			for _, p := range t.Edits {
				if i := indexOf(changes, p); i >= 0 {
					out[i] = true
				}
			}
		}
		return out
	}
	// From start to the walk's first capture is a gap too. A fetched copy's
	// target was never this tree's: what the tree held when the local agent
	// came is a gap, but what the copy's own windows changed, classed as its
	// turns' or gaps, so a tree holding the copy's commit is no outside edit.
	if copy != nil && len(copy.History) > 0 {
		for _, w := range copy.History {
			if w.Kind == agents.TurnWindow {
				for _, p := range copy.Edits[w.Turn] {
					if i := indexOf(changes, p); i >= 0 {
						edited[i] = true
					}
				}
			}
			if err := mark(w.From.Commit, w.To.Commit, w.Kind, nil, nil); err != nil {
				return err
			}
		}
		start = copy.History[len(copy.History)-1].To.Commit
	}
	if first := st.FirstCapture(a, since); first != nil {
		// A target just before a tool call lies inside the agent's turn
		// within: up to that turn's own end (or a mid-turn capture of
		// it), what changed is the turn's, as in a turn window.
		kind := agents.GapWindow
		if within != "" && first.Agent == a.ID && first.Turn == within &&
			(first.Reason == "turn_end" || first.Reason == "manual") {
			kind = agents.TurnWindow
			for i := range editsOf(a, within) {
				edited[i] = true
			}
		}
		if err := mark(start, first.Commit, kind, nil, nil); err != nil {
			return err
		}
	}
	windows := st.Windows(a, since)
	for _, w := range windows {
		var own, others map[int]bool
		switch {
		case w.Kind == agents.TurnWindow:
			for i := range editsOf(a, w.Turn) {
				edited[i] = true
			}
		case w.Shared != nil:
			own, others = editsOf(a, w.Turn), map[int]bool{}
			for _, o := range w.Shared {
				if b := st.Agent(o.Agent); b != nil {
					for i := range editsOf(b, o.Turn) {
						others[i] = true
					}
				}
			}
		}
		if err := mark(w.From.Commit, w.To.Commit, w.Kind, own, others); err != nil {
			return err
		}
	}
	// The last window, from the newest capture to S, is a gap; so is
	// everything when no usable capture follows the target's. Except that
	// a turn whose harness has exited, and which took that newest capture,
	// is the real call's to end first (checkpoints.EndExited): its window runs
	// to S, as it will then.
	last := st.LastCapture(a, since)
	from := start
	if last != nil {
		from = last.Commit
	}
	kind := agents.GapWindow
	if t := a.ExitedTurn(); t != nil && last != nil && last.Agent == a.ID && last.Turn == t.ID {
		kind = agents.TurnWindow
		for i := range editsOf(a, t.ID) {
			edited[i] = true
		}
	}
	if err := mark(from, sTree, kind, nil, nil); err != nil {
		return err
	}
	for i := range changes {
		c := &changes[i]
		switch {
		case gap[i]:
			c.Class = Outside
		case edited[i]:
			c.Class = Agent
		default:
			c.Class = Turn
		}
	}
	return nil
}

// indexOf is the index of path p in changes (in path order), or -1.
func indexOf(changes []Change, p string) int {
	i := sort.Search(len(changes), func(i int) bool { return changes[i].Path >= p })
	if i < len(changes) && changes[i].Path == p {
		return i
	}
	return -1
}

// eachCommon calls f with the index in changes of each path of sorted
// that changes holds, both in path order: one merge, or a binary search
// a path when sorted is far the shorter.
func eachCommon(sorted []string, changes []Change, f func(i int)) {
	if len(sorted) < len(changes)/32 {
		for _, p := range sorted {
			if i := indexOf(changes, p); i >= 0 {
				f(i)
			}
		}
		return
	}
	for i, j := 0, 0; i < len(sorted) && j < len(changes); {
		switch c := strings.Compare(sorted[i], changes[j].Path); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			f(j)
			i, j = i+1, j+1
		}
	}
}
