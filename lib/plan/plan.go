// Package plan is a rollback's dry run (docs/rollback.md#the-plan, docs/rollback.md#classes): from the current
// state S and the target T, the change set, each path's class, what is left
// alone and why, what happens to HEAD and the conversation, and the plan id
// the real call must quote. It writes nothing.
package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treepath"
	"github.com/git-venom/git-venom/lib/ui"
)

// Options are the caller's choices.
type Options struct {
	Checkpoint string
	Restore    string // "all" or "files"
	Outside    string // "", refuse, keep or overwrite
	KeepHead   bool
	// Paths scopes the rollback to the paths it matches (docs/rollback.md#some-paths);
	// empty, the whole tree.
	Paths pathspec.Set
	// Revert takes back a turn instead of going back to a checkpoint
	// (docs/rollback.md#revert): t<n> or k<a>..k<b> as given, the pair
	// k<a>..k<b> once resolved; Checkpoint is then the pair's end.
	Revert string
	// Conflicts is a revert's choice where later changes meet the
	// turn's: refuse or markers.
	Conflicts string
	// Merged names each file a revert's line merge wrote and the blob it
	// made, "<blob> <path>", sorted: the merge's settings
	// (merge.conflictStyle, the merge and conflict-marker-size
	// attributes) are not in S's tree, and a plan must say what the real
	// call writes.
	Merged []string
}

// Copy names a fetched copy's checkpoint a rollback restores files from
// (docs/rollback.md#fetched-copies): the copy's id and the commit its ref
// held when it was checked.
type Copy struct {
	ID     string `json:"id"`
	Commit string `json:"commit"`
	// History is the copy's own windows from its checkpoint to its
	// newest capture, each checked against the copy's refs; nil when
	// the copy's log cannot vouch for them (classify).
	History []agents.Window `json:"-"`
	// Edits are the paths each of the copy's turns recorded editing.
	Edits map[string][]string `json:"-"`
}

// ID is the plan id: p1- and the first 16 hex digits of the SHA-256 of the
// docs/rollback.md#the-plan JSON, with docs/rollback.md#the-plan's members.
// A plan of a fetched copy also hashes the copy and its checkpoint's
// commit, so that it cannot be quoted for another copy, nor once a later
// fetch has replaced the checkpoint.
func ID(o Options, tree string, head *string, copy *Copy) string {
	type repoJSON struct {
		Repo string  `json:"repo"`
		Tree string  `json:"tree"`
		Head *string `json:"head"`
	}
	var outside *string
	if o.Outside != "" {
		outside = &o.Outside
	}
	b, _ := json.Marshal(struct {
		Checkpoint string     `json:"checkpoint"`
		Restore    string     `json:"restore"`
		Outside    *string    `json:"outside"`
		KeepHead   bool       `json:"keep_head"`
		Repos      []repoJSON `json:"repos"`
		// A path-scoped plan names its paths, so that it cannot be
		// quoted for others; absent otherwise, so a whole-tree plan's id
		// is docs/rollback.md#the-plan's.
		Paths []string `json:"paths,omitempty"`
		Copy  *Copy    `json:"copy,omitempty"`
		// A revert's pair and its choice for conflicts; absent for a
		// rollback, whose id stays docs/rollback.md#the-plan's.
		Revert    string   `json:"revert,omitempty"`
		Conflicts string   `json:"conflicts,omitempty"`
		Merged    []string `json:"merged,omitempty"`
	}{o.Checkpoint, o.Restore, outside, o.KeepHead, []repoJSON{{".", tree, head}}, o.Paths.Strings(), copy,
		o.Revert, o.Conflicts, o.Merged})
	sum := sha256.Sum256(b)
	return "p1-" + hex.EncodeToString(sum[:])[:16]
}

// MadeWith tells a stale plan id apart: where id is this plan's with
// other choices (--outside, --restore, --keep-head, --conflicts) on the
// same tree and HEAD, it returns those choices. A plan id is a hash, so
// trying the few other choices is all that can be known of it; a tree or
// HEAD that changed leaves ok false.
func (p *Plan) MadeWith(id string) (o Options, ok bool) {
	for _, outside := range []string{"", "refuse", "keep", "overwrite"} {
		for _, restore := range []string{"all", "files"} {
			for _, keepHead := range []bool{false, true} {
				for _, conflicts := range []string{"", "refuse", "markers"} {
					o = p.idOpts
					o.Outside, o.Restore, o.KeepHead, o.Conflicts = outside, restore, keepHead, conflicts
					if o.Revert == "" && conflicts != "" {
						continue
					}
					if ID(o, p.STree, p.idHead, p.idCopy) == id {
						return o, true
					}
				}
			}
		}
	}
	return Options{}, false
}

// MergesLines reports whether the plan is a revert's, whose line merges
// follow settings S's tree does not hold: its id names what they wrote,
// and a setting changed since the dry run may have made or undone one.
func (p *Plan) MergesLines() bool { return p.idOpts.Revert != "" }

// WellFormedID reports whether id has the form ID gives: p1- and 16
// lower-case hex digits.
func WellFormedID(id string) bool {
	digits, ok := strings.CutPrefix(id, "p1-")
	return ok && len(digits) == 16 && strings.Trim(digits, "0123456789abcdef") == ""
}

// Input is what a plan is made from; preflight has passed up to HEAD.
type Input struct {
	Repo     *repo.Repo // the agent's tree
	State    *agents.State
	Agent    *agents.Agent
	Target   *agents.Checkpoint
	Snapshot *capture.Snapshot // S
	Options
	Guarded bool
	Head    Head
	// Exclude is venom.exclude's patterns: a rollback leaves what they
	// match alone (docs/checkpoints.md#what-a-capture-holds), whatever S or T holds there.
	Exclude []string
	// HookFiles are the files, by path, where `hook install` writes
	// git-venom's hooks: a rollback does not take the hooks away
	// (docs/rollback.md#hook-settings).
	HookFiles map[string]HookFile
	// Copy is set when Target is a fetched copy's checkpoint, not
	// Agent's: Agent is then the local agent that records the rollback,
	// and the windows that class each path are its tree's from Since
	// (docs/rollback.md#fetched-copies).
	Copy  *Copy
	Since int64
	// Revert is set for a revert (docs/rollback.md#revert): Target is
	// then the end of what it takes back.
	Revert *Revert
}

// since is where the window walk starts: the target's first capture, or
// for a fetched copy's target (which this tree's log never saw) Since.
func (in *Input) since() int64 {
	if in.Copy != nil {
		return in.Since
	}
	return in.Target.Seq
}

// within is the agent's turn the target lies inside, when it is the tree
// just before a marked tool call (agents.ToolCallReason); "" else.
func (in *Input) within() string {
	if in.Copy == nil && in.Target.Reason == agents.ToolCallReason && in.Target.Turn != nil {
		return *in.Target.Turn
	}
	return ""
}

// Plan is a computed rollback.
type Plan struct {
	Input
	ID      string
	Outside string // the effective choice
	// idOpts, idHead and idCopy are what ID hashed, for MadeWith.
	idOpts Options
	idHead *string
	idCopy *Copy
	// Own: the agent is the person's own (agents.Agent.PersonsOwn) and
	// shares its tree with no other agent, so every change is of its
	// turns and none is outside them.
	Own          bool
	Conversation Conversation
	SharedWith   []string
	Children     []string
	Changes      []Change // every difference, with class or left reason
	IgnoredEdits []string
	STree        string // S's tree id
	// Bytes is what the files the rollback writes come to: a checkpoint
	// may hold a gigabyte file that is a megabyte stored.
	Bytes int64
	// Kept is the caller's current folder (top-relative) when the plan
	// empties it: it stays, empty (docs/rollback.md#the-current-folder).
	Kept string
}

// Conversation is the result's conversation member (docs/json.md, docs/harness.md#hooks).
type Conversation struct {
	Rewinds        bool     `json:"rewinds"`
	ThroughTurn    *string  `json:"through_turn"`
	Drops          []string `json:"drops"`
	HarnessSession string   `json:"harness_session,omitempty"`
	Resume         []string `json:"resume,omitempty"`
	// None: the agent has no harness conversation (harness none); the
	// JSON keeps docs/json.md's shape, rewinds false, and people are told
	// nothing about a conversation.
	None bool `json:"-"`
}

// Build computes the plan, or conflict.outside_edits when outside paths
// meet --outside=refuse (docs/rollback.md#classes).
func Build(ctx context.Context, in Input) (*Plan, error) {
	if in.Revert != nil {
		return buildRevert(ctx, in)
	}
	p := &Plan{Input: in, STree: in.Snapshot.Tree.String()}
	// "-- ." in folder d and "-- d" at the top are one set, so one plan
	// id; the paths are shown and logged as given.
	idOpts := in.Options
	paths, err := canonicalPaths(in.Repo, in.Paths, p.STree, in.Target.Repos[0].Commit)
	if err != nil {
		return nil, gitErr(err)
	}
	idOpts.Paths = paths
	p.ID = ID(idOpts, p.STree, in.Snapshot.HeadString(), in.Copy)
	p.idOpts, p.idHead, p.idCopy = idOpts, in.Snapshot.HeadString(), in.Copy
	p.Own = in.Copy == nil && in.Agent.PersonsOwn() && len(in.State.Sharers(in.Agent)) == 0
	p.Outside = in.Options.Outside
	if p.Outside == "" {
		p.Outside = "overwrite"
		if in.Guarded {
			p.Outside = "refuse"
		}
	}
	for _, o := range in.State.Sharers(in.Agent) {
		p.SharedWith = append(p.SharedWith, o.ID)
	}
	for _, c := range in.State.Descendants(in.Agent) {
		p.Children = append(p.Children, c.ID)
	}
	p.Conversation = conversationOf(in.Agent, in.Target, in.Restore)
	if in.Copy != nil {
		// The conversation is the local agent's, and stays where it is.
		p.Conversation = Conversation{Drops: []string{}, None: !in.Agent.HasConversation()}
		if t := in.Agent.LastEndedTurn(); t != nil {
			id := t.ID
			p.Conversation.ThroughTurn = &id
		}
	}
	t := in.Target.Repos[0]
	t0 := time.Now()
	changes, err := diffTrees(ctx, in.Repo, p.STree, t.Commit)
	var dup *treepath.Error
	if errors.As(err, &dup) {
		return nil, unsafeError(in.Target.Checkpoint, dup)
	}
	if err != nil {
		return nil, gitErr(err)
	}
	testhook.Timed("plan-diff", t0)
	if err := unsafePath(in.Target.Checkpoint, changes); err != nil {
		return nil, err
	}
	changes = chosen(changes, in.Paths)
	t0 = time.Now()
	if p.Own {
		// A person's own checkpoints: what changed since is theirs, with
		// no one else's work to protect from them.
		for i := range changes {
			changes[i].Class = Turn
		}
	} else if err := classify(ctx, in.Repo, in.State, in.Agent, in.since(), t.Commit, p.STree, changes, in.Copy,
		in.within()); err != nil {
		return nil, gitErr(err)
	}
	testhook.Timed("plan-classify", t0)
	t0 = time.Now()
	hooks, err := hookSettings(in.Repo, in.HookFiles, changes)
	if err != nil {
		return nil, gitErr(err)
	}
	decideLeft(in.Repo.Top, changes, p.Outside, ignore.NewExcluder(in.Exclude), hooks, in.Snapshot.Skipped, t.Skipped)
	testhook.Timed("plan-left", t0)
	changes = addSkipped(changes, in.Paths, in.Snapshot.Skipped, t.Skipped)
	p.Changes = changes
	if p.Bytes, err = written(in.Repo, changes); err != nil {
		return nil, gitErr(err)
	}
	p.IgnoredEdits = in.State.IgnoredEditsAfter(in.Agent.ID, in.since())
	if p.Outside == "refuse" {
		if err := refuseOutside(changes); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// written sums the sizes of the files and links the changes write (a
// header read each; gitlinks write no file).
func written(r *repo.Repo, changes []Change) (int64, error) {
	lib, err := r.Lib()
	if err != nil {
		return 0, err
	}
	odb, err := lib.Odb()
	if err != nil {
		return 0, err
	}
	defer odb.Free()
	var sum int64
	for i := range changes {
		c := &changes[i]
		if c.Left != "" || !c.Writes() || c.TMode == Gitlink {
			continue
		}
		size, _, err := odb.ReadHeader(&c.TOid)
		if err != nil {
			return 0, err
		}
		sum += int64(size)
	}
	return sum, nil
}

// chosen keeps the changes a path-scoped rollback covers: those its paths
// match. The rest of the tree is not part of the plan at all.
func chosen(changes []Change, set pathspec.Set) []Change {
	if set.Empty() {
		return changes
	}
	var out []Change
	for _, c := range changes {
		if set.Match(c.Path) {
			out = append(out, c)
		}
	}
	return out
}

// refuseOutside is conflict.outside_edits (docs/rollback.md#classes) when outside paths are
// to be restored: its data names them, and also each path whose restore
// would replace one of them (the file side of a file<->folder swap: a
// file the target has where the tree now has an outside folder, or the
// reverse), since --outside=keep leaves those too (docs/rollback.md#outside-edits). The
// human hints name every path, as git names the files a checkout would
// overwrite.
func refuseOutside(changes []Change) error {
	outside := map[string]bool{}     // outside paths S holds
	outsideDirs := map[string]bool{} // and their parent folders
	n := 0
	for _, c := range changes {
		if c.Class == Outside && c.Left == "" {
			n++
			if c.SMode != 0 {
				outside[c.Path] = true
				for d := path.Dir(c.Path); d != "." && d != "/"; d = path.Dir(d) {
					outsideDirs[d] = true
				}
			}
		}
	}
	if n == 0 {
		return nil
	}
	var shown, hints []string
	bound := 0
	for _, c := range changes {
		if c.Left != "" {
			continue
		}
		why := ""
		switch {
		case c.Class == Outside:
			why = "changed outside the agent's turns"
		case c.Writes() && outsideDirs[c.Path]:
			why = "restoring it replaces a folder changed outside the agent's turns"
		case c.Writes():
			for d := path.Dir(c.Path); d != "." && d != "/"; d = path.Dir(d) {
				if outside[d] {
					why = "restoring it replaces " + quote.C(d) + ", changed outside the agent's turns"
					break
				}
			}
		}
		if why == "" {
			continue
		}
		if c.Class != Outside {
			bound++
		}
		d, _ := quote.JSONPath(c.Path)
		shown = append(shown, d)
		// A hint fits 80 columns with its "hint: " prefix; a long path
		// takes the line for itself and its reason goes below it.
		if line := fmt.Sprintf("  %s: %s", quote.C(d), why); ui.Width(line) <= ui.Columns80-len("hint: ") {
			hints = append(hints, line)
		} else {
			hints = append(hints, "  "+quote.C(d)+":", "    "+why)
		}
	}
	e := errcode.Newf(errcode.ConflictOutsideEdits,
		map[string]any{"repos": []errcode.RepoPaths{{Repo: ".", Paths: shown}}},
		"%s changed outside the agent's turns", countPaths(n))
	if bound > 0 {
		// Apart from the message, which fits one 80-column line so.
		e.Hint("and %d more whose restore would replace them:", bound)
	}
	for _, h := range hints {
		e.Hint("%s", h)
	}
	return e.Retry("to leave them as they are", "--outside=keep").
		Retry("to restore them (the safety checkpoint keeps them)", "--outside=overwrite")
}

// unsafePath refuses a target whose tree holds a path git would never
// check out (treepath.Verify: a ".." or ".git" component, an NTFS or HFS+
// alias of .git): such a tree came from somewhere other than a capture,
// and restoring it would write outside the tree or inside .git. It runs
// before the plan is used, so the dry run and the real call (before its
// safety checkpoint) refuse alike. The change set holds every path the
// rollback touches; S's are checked too, as a deletion goes through them.
func unsafePath(checkpoint string, changes []Change) error {
	for _, c := range changes {
		var bad *treepath.Error
		if errors.As(treepath.VerifyMode(c.Path, c.TMode), &bad) {
			return unsafeError(checkpoint, bad)
		}
	}
	return nil
}

// unsafeError is failed.checkpoint_unsafe_path for the path bad names.
func unsafeError(checkpoint string, bad *treepath.Error) error {
	shown, b64 := quote.JSONPath(bad.Path)
	return errcode.Newf(errcode.FailedCheckpointUnsafe, unsafeData{checkpoint, shown, b64, string(bad.Rule)},
		"checkpoint %s holds the path %q, which git would refuse to check out (%s); nothing was changed",
		checkpoint, shown, bad.Rule).
		Hint("it was not made by a capture: git venom-checkpoint doctor lists the refs that hold such trees")
}

// unsafeData is failed.checkpoint_unsafe_path's data.
type unsafeData struct {
	Checkpoint string `json:"checkpoint"`
	Path       string `json:"path"`
	PathB64    string `json:"path_b64,omitempty"`
	Rule       string `json:"rule"`
}

func gitErr(err error) error {
	if _, ok := errcode.As(err); ok {
		return err
	}
	return errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "diff"},
		"comparing the trees failed").Wrap(err)
}

// conversationOf says what happens to the conversation (docs/rollback.md#conversation): with
// restore=all the turns after the target's through_turn are dropped.
func conversationOf(a *agents.Agent, target *agents.Checkpoint, restore string) Conversation {
	c := Conversation{ThroughTurn: target.ThroughTurn, Drops: []string{}, None: !a.HasConversation()}
	if restore != "all" || c.None {
		return c
	}
	after := 0
	if target.ThroughTurn != nil {
		if t := a.Turn(*target.ThroughTurn); t != nil {
			after = t.N
		}
	}
	for _, t := range a.Turns {
		if t.N > after && t.Ended && !t.Dropped {
			c.Drops = append(c.Drops, t.ID)
		}
	}
	c.Rewinds = len(c.Drops) > 0
	return c
}

// Files are the paths the rollback restores; Left the ones it leaves.
func (p *Plan) Files() []Change { return p.filter(func(c *Change) bool { return c.Left == "" }) }

// Empty reports a plan with nothing to do: no file to write or delete,
// HEAD staying, and no conversation to rewind.
func (p *Plan) Empty() bool {
	return len(p.Files()) == 0 && !p.Head.Moves && !(p.Conversation.Rewinds && p.Restore != "files")
}

// Left are the paths the rollback does not touch.
func (p *Plan) Left() []Change { return p.filter(func(c *Change) bool { return c.Left != "" }) }

func (p *Plan) filter(keep func(*Change) bool) []Change {
	n := 0
	for i := range p.Changes {
		if keep(&p.Changes[i]) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]Change, 0, n)
	for i := range p.Changes {
		if keep(&p.Changes[i]) {
			out = append(out, p.Changes[i])
		}
	}
	return out
}

// Whole reports whether the plan restores every path where S and T
// differ: nothing left, no path scope. S with the plan's files made T's
// is then T's tree itself.
func (p *Plan) Whole() bool {
	if !p.Paths.Empty() || p.Revert != nil {
		return false
	}
	for i := range p.Changes {
		if p.Changes[i].Left != "" {
			return false
		}
	}
	return true
}

// FileJSON is repos[].files[].
type FileJSON struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Change  string `json:"change"`
	Class   string `json:"class"`
	// A revert's conflict: who made the later change, the current
	// file's lines it meets, the lines between markers once written,
	// and what a whole-file conflict is (docs/json.md#rollback).
	By      string   `json:"by,omitempty"`
	Turns   []string `json:"turns,omitempty"`
	Lines   []Lines  `json:"lines,omitempty"`
	Markers []Lines  `json:"markers,omitempty"`
	Detail  *string  `json:"detail,omitempty"`
}

// LeftJSON is repos[].left[].
type LeftJSON struct {
	Path    string  `json:"path"`
	PathB64 string  `json:"path_b64,omitempty"`
	Reason  string  `json:"reason"`
	Detail  *string `json:"detail,omitempty"`
}

// RepoJSON is repos[] of the result.
type RepoJSON struct {
	Repo         string     `json:"repo"`
	Path         string     `json:"path"`
	Head         Head       `json:"head"`
	Bytes        int64      `json:"bytes"` // what the files it writes come to
	Files        []FileJSON `json:"files"`
	Left         []LeftJSON `json:"left"`
	IgnoredEdits []string   `json:"ignored_edits"`
}

// Result is agent.rollback's result (docs/json.md), member order as docs/json.md#rollback shows.
type Result struct {
	Agent string `json:"agent"`
	// Copy is the fetched copy whose checkpoint the files came from;
	// Agent is then the local agent that recorded the rollback.
	Copy         string       `json:"copy,omitempty"`
	Checkpoint   string       `json:"checkpoint"`
	Revert       *RevertJSON  `json:"revert,omitempty"`
	DryRun       bool         `json:"dry_run"`
	Plan         *string      `json:"plan,omitempty"`
	Restore      string       `json:"restore"`
	Paths        []string     `json:"paths,omitempty"` // a path-scoped rollback's, as a person reads them
	Guarded      *bool        `json:"guarded,omitempty"`
	Safety       *string      `json:"safety,omitempty"`
	After        *string      `json:"after,omitempty"`
	Exact        *bool        `json:"exact,omitempty"`
	Kept         *string      `json:"kept_folder,omitempty"`
	Conversation Conversation `json:"conversation"`
	SharedWith   []string     `json:"shared_with"`
	Children     []string     `json:"children"`
	Repos        []RepoJSON   `json:"repos"`
}

// Result renders the plan as a dry run's result.
func (p *Plan) Result() *Result {
	r := &Result{Agent: p.Agent.ID, Checkpoint: p.Target.Checkpoint, DryRun: true, Restore: p.Restore,
		Conversation: p.Conversation, SharedWith: nonNil(p.SharedWith), Children: nonNil(p.Children),
		Paths: p.Paths.Shown()}
	if p.Copy != nil {
		r.Copy = p.Copy.ID
	}
	id, g := p.ID, p.Guarded
	r.Plan, r.Guarded = &id, &g
	if p.Kept != "" {
		kept := p.Kept
		r.Kept = &kept
	}
	left := 0
	for i := range p.Changes {
		if p.Changes[i].Left != "" {
			left++
		}
	}
	rj := RepoJSON{Repo: ".", Path: p.Repo.Top, Head: p.Head, Bytes: p.Bytes, Files: make([]FileJSON, 0, len(p.Changes)-left),
		Left: make([]LeftJSON, 0, left), IgnoredEdits: p.IgnoredEdits}
	for _, c := range p.Changes {
		shown, b64 := quote.JSONPath(c.Path)
		if c.Left == "" {
			f := FileJSON{Path: shown, PathB64: b64, Change: c.Change, Class: c.Class}
			if c.Rev != nil {
				f.By, f.Turns, f.Lines, f.Markers = c.Rev.By, c.Rev.Turns, c.Rev.Lines, c.Rev.Markers
			}
			rj.Files = append(rj.Files, f)
		} else if c.Left == LeftConflict && c.Rev != nil {
			d := c.Rev.Describe()
			rj.Left = append(rj.Left, LeftJSON{Path: shown, PathB64: b64, Reason: c.Left, Detail: &d})
		} else {
			rj.Left = append(rj.Left, LeftJSON{Path: shown, PathB64: b64, Reason: c.Left, Detail: c.Detail})
		}
	}
	r.Repos = []RepoJSON{rj}
	if p.Revert != nil {
		r.Revert = &RevertJSON{Turn: nil, From: p.Revert.From.Checkpoint, To: p.Target.Checkpoint,
			Conflicts: p.Revert.Conflicts}
		if p.Revert.Turn != "" {
			t := p.Revert.Turn
			r.Revert.Turn = &t
		}
	}
	return r
}

// RevertJSON is a revert's member of the result: the turn (null for a
// pair of checkpoints), the pair, and the choice for conflicts.
type RevertJSON struct {
	Turn      *string `json:"turn"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Conflicts string  `json:"conflicts"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// When is the note's {when}: "after turn t3", or "before your first turn".
func When(through *string) string {
	if through == nil {
		return "before your first turn"
	}
	return fmt.Sprintf("after turn %s", *through)
}

// countPaths says "1 path" or "n paths", as the refusal's message in docs/rollback.md#outside-edits does.
func countPaths(n int) string { return ui.Plural(n, "path", "paths") }
