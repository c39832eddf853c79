package plan

import (
	"context"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/repo"
)

// Classes (RFC 7.3).
const (
	Outside = "outside"
	Agent   = "agent"
	Turn    = "turn"
)

// classify sets each change's class from the windows between the target's
// first capture and S (RFC 7.3): outside when a gap changed it, agent when
// an edit record of a turn window names it, turn otherwise.
func classify(ctx context.Context, r *repo.Repo, st *agents.State, a *agents.Agent, target *agents.Checkpoint,
	sTree string, changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	wanted := map[string]*Change{}
	for i := range changes {
		wanted[changes[i].Path] = &changes[i]
	}
	gap := map[string]bool{}
	edited := map[string]bool{}
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
	compared := map[[2]string]map[string]bool{}
	mark := func(from, to string, kind string) error {
		var err error
		if from, err = treeOf(from); err != nil {
			return err
		}
		if to, err = treeOf(to); err != nil {
			return err
		}
		if from == to {
			return nil
		}
		changed, ok := compared[[2]string{from, to}]
		if !ok {
			if changed, err = changedPaths(ctx, r, from, to); err != nil {
				return err
			}
			compared[[2]string{from, to}] = changed
		}
		for p := range changed {
			if wanted[p] == nil {
				continue
			}
			if kind == agents.GapWindow {
				gap[p] = true
			}
		}
		return nil
	}
	windows := st.Windows(a, target.Seq)
	for _, w := range windows {
		if w.Kind == agents.TurnWindow {
			if t := a.Turn(w.Turn); t != nil {
				for _, p := range t.Edits {
					if wanted[p] != nil {
						edited[p] = true
					}
				}
			}
		}
		if err := mark(w.From.Commit, w.To.Commit, w.Kind); err != nil {
			return err
		}
	}
	// The last window, from the newest capture to S, is always a gap; so is
	// everything when no usable capture follows the target's.
	last := st.LastCapture(a, target.Seq)
	from := target.Repos[0].Commit
	if last != nil {
		from = last.Commit
	}
	if err := mark(from, sTree, agents.GapWindow); err != nil {
		return err
	}
	for i := range changes {
		c := &changes[i]
		switch {
		case gap[c.Path]:
			c.Class = Outside
		case edited[c.Path]:
			c.Class = Agent
		default:
			c.Class = Turn
		}
	}
	return nil
}
