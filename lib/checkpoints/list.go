package checkpoints

import (
	"slices"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/treewalk"
)

// Item is one checkpoint of agent.checkpoints: the docs/checkpoints.md#the-log record without
// type and agent, plus conversation and label (docs/json.md).
type Item struct {
	Checkpoint   string  `json:"checkpoint"`
	Reason       string  `json:"reason"`
	Turn         *string `json:"turn"`
	ThroughTurn  *string `json:"through_turn"`
	At           string  `json:"at"`
	MidTurn      bool    `json:"mid_turn"`
	Overlap      bool    `json:"overlap"`
	Conversation bool    `json:"conversation"`
	Label        *string `json:"label,omitempty"`
	// Labels is every label the checkpoint was given, oldest first, each
	// once; Label is the newest given (docs/checkpoints.md#labels).
	Labels []string `json:"labels"`
	// ReusedIn are the turns whose captures reused the checkpoint, a
	// turn's start that found nothing changed among them: those turns
	// have it too, and list --turn lists it for each.
	ReusedIn []string            `json:"reused_in"`
	Repos    []journal.RepoState `json:"repos"`
	// FilesChanged is how many paths differ from the agent's previous
	// live checkpoint, as list's FILES column (git diff-tree -r's count);
	// null for the first, or when a tree cannot be read. After docs/json.md#list's
	// members.
	FilesChanged *int `json:"files_changed"`
}

// ToolItem is one marked tool call of list --tools (docs/json.md#list).
type ToolItem struct {
	Call    string `json:"call"`
	Turn    string `json:"turn"`
	Tool    string `json:"tool"`
	Command string `json:"command"`
	At      string `json:"at"`
	Commit  string `json:"commit"`
}

// Listing is agent.checkpoints' result.
type Listing struct {
	Agent       string `json:"agent"`
	Pending     bool   `json:"pending"`
	Checkpoints []Item `json:"checkpoints"`
	// MoreCount is how many more live checkpoints the filter takes past
	// the limit, older than the last one listed.
	MoreCount int `json:"more_count"`
	// Unusable are the checkpoints left out because their ref is gone or
	// moved (docs/checkpoints.md#the-log): as git ignores a broken ref, with a warning.
	Unusable []string `json:"-"`
}

// Filter narrows a listing (docs/json.md, docs/checkpoints.md#turns-and-through_turn: before is exclusive).
type Filter struct {
	Turn   string
	Before string
	Limit  int
}

// List returns the agent's usable checkpoints in r, newest first. One
// whose ref is gone or moved can be neither diffed nor rolled back to, so
// it is left out and named in Unusable, as git warns of and ignores a
// broken ref instead of listing it.
func List(r *repo.Repo, a *agents.Agent, f Filter) (*Listing, error) {
	before := 0
	if f.Before != "" {
		id, err := Resolve(a, f.Before)
		if err != nil {
			return nil, err
		}
		// A checkpoint the agent never had bounds nothing: "older than k99"
		// would quietly list everything.
		if !a.Had(id) {
			return nil, errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": f.Before},
				"agent %s has no checkpoint %s", a.ID, id).Hint("git venom-checkpoint list shows the checkpoints")
		}
		before, _ = ids.ParseCheckpoint(id)
	}

	if f.Turn != "" {
		n, err := ids.ParseTurn(f.Turn)
		if err != nil {
			return nil, errcode.Newf(errcode.InvalidParamsTurn, map[string]string{"turn": f.Turn}, "%v", err)
		}
		// As git venom-diff t9 says: a turn the agent never had is no
		// empty listing.
		if a.Turn(ids.Turn(n)) == nil && !a.ForgotTurn(ids.Turn(n)) {
			return nil, errcode.Newf(errcode.NotFoundCheckpoint, map[string]string{"checkpoint": f.Turn},
				"agent %s has no turn %s", a.ID, f.Turn).Hint("git venom-checkpoint list shows the agent's turns")
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	out := &Listing{Agent: a.ID, Checkpoints: []Item{}}
	count, free := changeCounter(r)
	defer free()
	for i := len(a.Checkpoints) - 1; i >= 0; i-- {
		c := a.Checkpoints[i]
		if !c.Live() || (before > 0 && c.N >= before) {
			continue
		}
		if f.Turn != "" && (c.Turn == nil || *c.Turn != f.Turn) && !slices.Contains(c.ReusedIn, f.Turn) {
			continue
		}
		if len(out.Checkpoints) == limit {
			out.MoreCount++
			continue
		}
		if !Usable(r, a, c) {
			out.Unusable = append(out.Unusable, c.Checkpoint)
			continue
		}
		it := ItemOf(a, c)
		it.FilesChanged = count(previousLive(a, i), c)
		out.Checkpoints = append(out.Checkpoints, it)
	}
	return out, nil
}

// ItemOf renders one checkpoint.
func ItemOf(a *agents.Agent, c *agents.Checkpoint) Item {
	it := Item{Checkpoint: c.Checkpoint, Reason: c.Reason, Turn: c.Turn, ThroughTurn: c.ThroughTurn, At: c.At,
		MidTurn: c.MidTurn, Overlap: c.Overlap, Conversation: Conversation(a, c), Label: c.Label, Labels: c.Labels,
		ReusedIn: c.ReusedIn, Repos: c.Repos}
	if it.Labels == nil {
		it.Labels = []string{}
	}
	if it.ReusedIn == nil {
		it.ReusedIn = []string{}
	}
	return it
}

// previousLive is the agent's live checkpoint before its i-th, or nil.
func previousLive(a *agents.Agent, i int) *agents.Checkpoint {
	for j := i - 1; j >= 0; j-- {
		if a.Checkpoints[j].Live() {
			return a.Checkpoints[j]
		}
	}
	return nil
}

// changeCounter returns a function counting the paths that differ between
// two checkpoints' trees, as git diff-tree -r lists them (treewalk, one
// parse a folder over the whole listing); nil when one is missing or
// cannot be read. free releases the object database it reads, which would
// otherwise keep the repository's packs open after the repository is freed.
func changeCounter(r *repo.Repo) (count func(prev, c *agents.Checkpoint) *int, free func()) {
	none := func(_, _ *agents.Checkpoint) *int { return nil }
	lib, err := r.Lib()
	if err != nil {
		return none, func() {}
	}
	odb, err := lib.Odb()
	if err != nil {
		return none, func() {}
	}
	walker := treewalk.NewWalker(odb)
	treeOf := func(c *agents.Checkpoint) *git.Oid {
		if c == nil || len(c.Repos) == 0 {
			return nil
		}
		id, err := git.NewOid(c.Repos[0].Commit)
		if err != nil {
			return nil
		}
		commit, err := lib.LookupCommit(id)
		if err != nil {
			return nil
		}
		defer commit.Free()
		return commit.TreeId()
	}
	return func(prev, c *agents.Checkpoint) *int {
		a, b := treeOf(prev), treeOf(c)
		if a == nil || b == nil {
			return nil
		}
		n := 0
		if err := walker.DiffUnder(a, b, nil, func(string, treewalk.Side, treewalk.Side) { n++ }); err != nil {
			return nil
		}
		return &n
	}, odb.Free
}
