package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/explain"
	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/treepath"
	"github.com/git-venom/git-venom/lib/ui"
)

// A revert's classes and left reason (docs/rollback.md#revert).
const (
	Reverted = "reverted" // taken back cleanly
	Conflict = "conflict" // a later change meets the turn's: markers written
	// LeftAlready is a path whose change by the turn is taken back
	// already: as the turn found it, or merging to the file as it is.
	LeftAlready = "already_reverted"
	// LeftConflict is a conflict no marker can show (a binary file, a
	// mode, a deletion, a link): with --conflicts=markers it is left as it
	// is, and said so.
	LeftConflict = "conflict"
)

// Who made the later change a revert conflicts with.
const (
	ByTurn   = "later_turn" // a turn of the agent's after the reverted one
	ByPerson = "person"     // outside the agent's turns
)

// Revert is what a revert takes back (docs/rollback.md#revert): the
// changes from From to To (Input.Target), merged into the current files
// as git revert merges a commit's.
type Revert struct {
	// Name is the revert as given and resolved: t<n>, or k<a>..k<b>.
	Name string
	// Turn is the turn reverted, "" for a pair of checkpoints.
	Turn string
	From *agents.Checkpoint
	// Conflicts is refuse or markers.
	Conflicts string
	// Write stores the merged files' blobs (the real call); the dry run
	// only hashes them.
	Write bool
}

// Range is the pair the revert's plan id names: k<a>..k<b>.
func (r *Revert) Range(to *agents.Checkpoint) string {
	return r.From.Checkpoint + ".." + to.Checkpoint
}

// Lines is a run of lines of a file, first and last, counted from 1.
type Lines struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

func (l Lines) String() string {
	if l.Start == l.End {
		return fmt.Sprintf("line %d", l.Start)
	}
	return fmt.Sprintf("lines %d-%d", l.Start, l.End)
}

// RevertInfo is what a revert says of a path beyond its change: a
// conflict's lines and who made the later change.
type RevertInfo struct {
	// Lines are the current file's lines that meet the turn's change.
	Lines []Lines
	// Markers are the lines of the written file between its conflict
	// markers, <<<<<<< to >>>>>>> (--conflicts=markers).
	Markers []Lines
	By      string // ByTurn or ByPerson
	// Turns are the later turns whose change the revert meets: those
	// that last wrote the conflicting lines (blame by turn), or for a
	// whole-file conflict those that changed the file. A person's edit
	// made during a turn is counted the turn's.
	Turns []string
	// Why says what kind of conflict a whole-file one is.
	Why string
}

// side is one of a merge's three entries of a path: mode 0 when absent.
type side struct {
	mode uint32
	id   git.Oid
}

func (s side) same(o side) bool { return s.mode == o.mode && (s.mode == 0 || s.id == o.id) }

// buildRevert is Build for a revert: a three-way merge per path of the
// paths the turn changed, with the current files as ours, the turn's end
// as the base and its start as theirs. It writes nothing unless
// Revert.Write: then the merged files' blobs, which the real call places.
func buildRevert(ctx context.Context, in Input) (*Plan, error) {
	rv := in.Revert
	p := &Plan{Input: in, STree: in.Snapshot.Tree.String(), Outside: "overwrite"}
	end, start := in.Target.Repos[0], rv.From.Repos[0]
	idOpts := in.Options
	cp, err := canonicalPaths(in.Repo, in.Paths, p.STree, end.Commit, start.Commit)
	if err != nil {
		return nil, gitErr(err)
	}
	idOpts.Paths = cp
	idOpts.Revert = rv.Range(in.Target)
	p.ID = ID(idOpts, p.STree, in.Snapshot.HeadString(), nil)
	p.idOpts, p.idHead = idOpts, in.Snapshot.HeadString()
	p.Own = in.Agent.PersonsOwn() && len(in.State.Sharers(in.Agent)) == 0
	for _, o := range in.State.Sharers(in.Agent) {
		p.SharedWith = append(p.SharedWith, o.ID)
	}
	for _, c := range in.State.Descendants(in.Agent) {
		p.Children = append(p.Children, c.ID)
	}
	// Files only: the conversation stays where it is.
	p.Conversation = Conversation{Drops: []string{}, None: !in.Agent.HasConversation()}
	if t := in.Agent.LastEndedTurn(); t != nil {
		id := t.ID
		p.Conversation.ThroughTurn = &id
	}
	// What the turn changed: its start against its end, theirs and base.
	turn, err := diffTrees(ctx, in.Repo, start.Commit, end.Commit)
	var dup *treepath.Error
	if errors.As(err, &dup) {
		return nil, unsafeError(in.Target.Checkpoint, dup)
	}
	if err != nil {
		return nil, gitErr(err)
	}
	turn = chosen(turn, in.Paths)
	style, err := conflictStyle(ctx, in.Repo)
	if err != nil {
		return nil, err
	}
	m, err := newMerger(in, rv)
	if err != nil {
		return nil, gitErr(err)
	}
	defer m.free()
	m.style = style
	// S's entry of each path first: the paths whose lines may merge
	// (changed since on both sides, files on every side) have their merge
	// attribute read in one git check-attr, not one a path.
	ours := make([]side, len(turn))
	var both []string
	for i, t := range turn {
		if ours[i], err = m.ours(t.Path); err != nil {
			return nil, gitErr(err)
		}
		base, theirs := side{t.TMode, t.TOid}, side{t.SMode, t.SOid}
		if !ours[i].same(base) && !ours[i].same(theirs) && regular(ours[i].mode) && regular(base.mode) &&
			regular(theirs.mode) {
			both = append(both, t.Path)
		}
	}
	if m.attrs, err = mergeAttrs(ctx, in.Repo, both); err != nil {
		return nil, gitErr(err)
	}
	changes := make([]Change, 0, len(turn))
	for i, t := range turn {
		c, err := m.path(t.Path, ours[i], side{t.TMode, t.TOid}, side{t.SMode, t.SOid})
		if err != nil {
			return nil, gitErr(err)
		}
		changes = append(changes, alreadyReverted(c))
	}
	if err := unsafePath(in.Target.Checkpoint, changes); err != nil {
		return nil, err
	}
	// The writes go the way a rollback's do: a path S or either end
	// skipped, an excluded path, a gitlink, or one a path that stays
	// blocks (a conflict left as it is, a file already as the turn found
	// it) is left, the blocked one naming what blocks it.
	hooks, err := hookSettings(in.Repo, in.HookFiles, changes)
	if err != nil {
		return nil, gitErr(err)
	}
	decideLeft(in.Repo.Top, changes, "overwrite", ignore.NewExcluder(in.Exclude), hooks, in.Snapshot.Skipped,
		append(append([]journal.Skipped{}, end.Skipped...), start.Skipped...))
	if err := m.attribute(ctx, changes); err != nil {
		return nil, gitErr(err)
	}
	if err := m.storeMerged(); err != nil {
		return nil, gitErr(err)
	}
	// The id names what the line merges wrote, so that a plan quoted
	// after their settings changed is stale, as after the tree changed.
	if len(m.wrote) > 0 {
		sort.Strings(m.wrote)
		idOpts.Merged = m.wrote
		p.ID = ID(idOpts, p.STree, in.Snapshot.HeadString(), nil)
		p.idOpts = idOpts
	}
	// A file either end's capture skipped (too large, unreadable) is not
	// in its tree: what the turn did to it cannot be known, and it is
	// left, named, as a rollback names what S or T skipped.
	changes = addSkipped(changes, in.Paths, start.Skipped, end.Skipped)
	p.Changes = changes
	p.Bytes = m.bytes(changes)
	// Ignored files the turn's edit calls changed: no capture holds them,
	// so the revert cannot take them back.
	p.IgnoredEdits = in.State.IgnoredEditsBetween(in.Agent.ID, rv.From.Seq, in.Target.Seq)
	if rv.Conflicts != "markers" {
		if err := refuseConflicts(rv, in.Agent.ID, in.Target, changes); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// merger merges one path at a time, the blobs read from the repository.
type merger struct {
	in    Input
	rv    *Revert
	lib   *git.Repository
	odb   *git.Odb
	sTree *git.Tree
	// endTree is the turn's end's tree: a folder S holds where the turn
	// deleted a file is the turn's own when the end holds it alike.
	endTree *git.Tree
	sizes   map[git.Oid]int64
	// merged are the merged files' blobs the real call writes, in one
	// held pack once every path is merged (storeMerged).
	merged []store.Object
	labels [3]string // ours, base, theirs
	// attrs are the merge attributes of the paths whose lines may merge.
	attrs map[string]mergeAttr
	style git.MergeFileFlags
	// wrote names each file whose lines merged and the blob the merge
	// made of it, "<blob> <path>": what the plan id hashes of the merge.
	wrote []string
}

// mergeFileStyleZdiff3 is libgit2's GIT_MERGE_FILE_STYLE_ZDIFF3 (1.3 and
// later), which git2go names no constant for.
const mergeFileStyleZdiff3 git.MergeFileFlags = 1 << 8

// conflictStyle is the style of the conflict markers git's own merges
// write, as git reads merge.conflictStyle (xdiff-interface.c:
// git_xmerge_config): merge, the default, has no base section; diff3
// adds the base's lines; zdiff3 too, with the lines both sides share
// moved out of the conflict. Git refuses any other value, before it
// merges, and so does a revert.
func conflictStyle(ctx context.Context, r *repo.Repo) (git.MergeFileFlags, error) {
	const key = "merge.conflictstyle"
	entries, err := r.ConfigLast(ctx, key)
	if err != nil {
		return 0, errcode.Newf(errcode.InvalidParamsConfig, nil, "cannot read git config").Wrap(err)
	}
	e, ok := entries[key]
	if !ok {
		return git.MergeFileStyleMerge, nil
	}
	switch {
	case e.HasValue && e.Value == "merge":
		return git.MergeFileStyleMerge, nil
	case e.HasValue && e.Value == "diff3":
		return git.MergeFileStyleDiff, nil
	case e.HasValue && e.Value == "zdiff3":
		return mergeFileStyleZdiff3, nil
	}
	return 0, errcode.Newf(errcode.InvalidParamsConfig, map[string]string{"key": "merge.conflictStyle", "value": e.Value},
		"git config merge.conflictStyle: unknown style %s; git takes merge, diff3 or zdiff3", quote.Always(e.Value))
}

func newMerger(in Input, rv *Revert) (*merger, error) {
	lib, err := in.Repo.Lib()
	if err != nil {
		return nil, err
	}
	odb, err := lib.Odb()
	if err != nil {
		return nil, err
	}
	sTree, err := lookupTree(lib, in.Snapshot.Tree.String())
	if err != nil {
		odb.Free()
		return nil, err
	}
	endTree, err := lookupTree(lib, in.Target.Repos[0].Commit)
	if err != nil {
		sTree.Free()
		odb.Free()
		return nil, err
	}
	what := "the turn"
	if rv.Turn != "" {
		what = rv.Turn
	}
	return &merger{in: in, rv: rv, lib: lib, odb: odb, sTree: sTree, endTree: endTree, sizes: map[git.Oid]int64{},
		labels: [3]string{"current",
			fmt.Sprintf("%s/%s (after %s)", in.Agent.ID, in.Target.Checkpoint, what),
			fmt.Sprintf("%s/%s (before %s)", in.Agent.ID, rv.From.Checkpoint, what)}}, nil
}

func (m *merger) free() {
	m.sTree.Free()
	m.endTree.Free()
	m.odb.Free()
}

// ours is S's entry at path: absent, a file, a link, a gitlink, or a
// folder (which no turn's file merges with). A folder the turn made
// where it deleted a file, unchanged since (the same tree at the turn's
// end), is absent to the file's merge: its files are the turn's, taken
// back with it, and the file comes back in its place.
func (m *merger) ours(path string) (side, error) {
	e, err := m.sTree.EntryByPath(path)
	if git.IsErrorCode(err, git.ErrorCodeNotFound) {
		return side{}, nil
	}
	if err != nil {
		return side{}, err
	}
	if e.Filemode == git.FilemodeTree {
		end, err := m.endTree.EntryByPath(path)
		if err == nil && end.Filemode == git.FilemodeTree && *end.Id == *e.Id {
			return side{}, nil
		}
	}
	return side{uint32(e.Filemode), *e.Id}, nil
}

// path merges one path: ours (S), base (the turn's end), theirs (its
// start). As git revert: what only the turn changed is taken back; what
// only later changes touched stays; where both did, the file's lines are
// merged, and what still meets is a conflict.
func (m *merger) path(path string, ours, base, theirs side) (Change, error) {
	c := Change{Path: path, SMode: ours.mode, SOid: ours.id}
	result := func(r side) Change {
		c.TMode, c.TOid = r.mode, r.id
		switch {
		case c.SMode == 0:
			c.Change = "create"
		case c.TMode == 0:
			c.Change = "delete"
		default:
			c.Change = "modify"
		}
		return c
	}
	switch {
	case ours.same(theirs):
		c.Change, c.TMode, c.TOid, c.Left = "modify", ours.mode, ours.id, LeftAlready
		if ours.mode == 0 {
			c.Change = "delete"
		}
		return c, nil
	case ours.same(base):
		c = result(theirs)
		c.Class = Reverted
		return c, nil
	}
	whole := func(why string) (Change, error) {
		c = result(ours)
		c.Class, c.Left = Conflict, LeftConflict
		c.Rev = &RevertInfo{Why: why}
		return c, nil
	}
	switch {
	case ours.mode == 0:
		return whole("deleted since the turn")
	case base.mode == 0:
		return whole("the turn deleted it, and it was made again since")
	case theirs.mode == 0:
		return whole("the turn created it, and it changed since")
	case !regular(ours.mode) || !regular(base.mode) || !regular(theirs.mode):
		return whole("not a regular file on every side (a link, a folder or a submodule)")
	}
	// Three regular files: the mode and the lines merge apart.
	mode := ours.mode
	if ours.mode == base.mode {
		mode = theirs.mode
	}
	switch {
	case ours.id == base.id:
		return revertedTo(result(side{mode, theirs.id})), nil
	case theirs.id == base.id || ours.id == theirs.id:
		return revertedTo(result(side{mode, ours.id})), nil
	}
	objs := make([]*git.Blob, 3)
	blobs := make([][]byte, 3)
	for i, id := range []git.Oid{ours.id, base.id, theirs.id} {
		b, err := m.lib.LookupBlob(&id)
		if err != nil {
			return Change{}, err
		}
		defer b.Free()
		objs[i], blobs[i] = b, b.Contents()
	}
	if binary(blobs[0]) || binary(blobs[1]) || binary(blobs[2]) {
		return whole("a binary file")
	}
	favor := git.MergeFileFavorNormal
	attrs := m.attrs[path]
	switch attr := attrs.merge; {
	case attr == "unset" || attr == "binary":
		return whole("a binary file to git's merge (its merge attribute)")
	case attr == "union":
		favor = git.MergeFileFavorUnion
	case attr != "" && attr != "unspecified" && attr != "set" && attr != "text":
		return whole(fmt.Sprintf("its merge driver %s is not one a revert runs", quote.C(attr)))
	}
	// libgit2 takes a marker size up to 65535; a clean merge writes no
	// marker, and a conflict in markers longer than that is left whole.
	size := uint16(min(attrs.markers, 1<<16-1))
	res, err := git.MergeFile(
		git.MergeFileInput{Path: path, Mode: uint(base.mode), Contents: blobs[1]},
		git.MergeFileInput{Path: path, Mode: uint(ours.mode), Contents: blobs[0]},
		git.MergeFileInput{Path: path, Mode: uint(theirs.mode), Contents: blobs[2]},
		&git.MergeFileOptions{AncestorLabel: m.labels[1], OurLabel: m.labels[0], TheirLabel: m.labels[2],
			Favor: favor, Flags: m.style, MarkerSize: size})
	if err != nil {
		return Change{}, err
	}
	merged := res.Contents
	res.Free()
	if !res.Automergeable && attrs.markers > 1<<16-1 {
		return whole(fmt.Sprintf("its conflict-marker-size %d is longer than a revert writes", attrs.markers))
	}
	id, err := m.store(merged)
	if err != nil {
		return Change{}, err
	}
	m.wrote = append(m.wrote, id.String()+" "+path)
	c = result(side{mode, *id})
	if res.Automergeable {
		c.Class = Reverted
		return c, nil
	}
	c.Class = Conflict
	lines, err := conflictLines(objs[1], objs[0], objs[2])
	if err != nil {
		return Change{}, err
	}
	c.Rev = &RevertInfo{Lines: lines, Markers: markerLines(merged, attrs.markers)}
	return c, nil
}

// mergeAttr is what gitattributes(5) say of a path to git's own merge
// (ll_merge): its merge attribute, "unspecified", "set", "unset" or a
// driver's name, and the length of its conflict markers.
type mergeAttr struct {
	merge   string
	markers int
}

// mergeAttrs are the attributes git's own merge reads for each path, in
// one git check-attr for them all.
func mergeAttrs(ctx context.Context, r *repo.Repo, paths []string) (map[string]mergeAttr, error) {
	out := map[string]mergeAttr{}
	if len(paths) == 0 {
		return out, nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	b, err := r.Git.RunInput(ctx, in.Bytes(), "check-attr", "--stdin", "-z", "merge", "conflict-marker-size")
	if err != nil {
		return nil, err
	}
	// <path> NUL <attribute> NUL <value> NUL, an attribute at a time.
	f := bytes.Split(b, []byte{0})
	for i := 0; i+2 < len(f); i += 3 {
		a, ok := out[string(f[i])]
		if !ok {
			a.markers = defaultMarkerSize
		}
		switch value := string(f[i+2]); string(f[i+1]) {
		case "merge":
			a.merge = value
		case "conflict-marker-size":
			a.markers = markerSize(value)
		}
		out[string(f[i])] = a
	}
	return out, nil
}

// defaultMarkerSize is git's DEFAULT_CONFLICT_MARKER_SIZE.
const defaultMarkerSize = 7

// markerSize is the conflict markers' length a conflict-marker-size
// value gives, as git's ll_merge reads it: atoi of the value (so "set"
// and "unset" are 0), and the default for 0 or less.
func markerSize(value string) int {
	s := strings.TrimLeft(value, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	n := 0
	for ; s != "" && s[0] >= '0' && s[0] <= '9' && n <= 1<<30; s = s[1:] {
		n = n*10 + int(s[0]-'0')
	}
	if neg || n <= 0 {
		return defaultMarkerSize
	}
	return n
}

// alreadyReverted is c left as already_reverted when its merge comes to
// the file S holds, mode and bytes: as git revert's "nothing to commit",
// a file the merge would write unchanged has the turn's change taken
// back already (by a revert or by hand), not a write; later changes may
// stay in it, so it is not said to be as the turn found it.
func alreadyReverted(c Change) Change {
	if c.Left != "" || c.Class == Conflict || c.SMode == 0 || c.SMode != c.TMode || c.SOid != c.TOid {
		return c
	}
	c.Change, c.Class, c.Left, c.Rev = "modify", "", LeftAlready, nil
	return c
}

func revertedTo(c Change) Change {
	c.Class = Reverted
	return c
}

// store is a merged file's blob id, hashed; for the real call the blob
// is kept to be written with the others (storeMerged).
func (m *merger) store(data []byte) (*git.Oid, error) {
	id, err := m.odb.Hash(data, git.ObjectBlob)
	if err != nil {
		return nil, err
	}
	if _, seen := m.sizes[*id]; !seen && m.rv.Write {
		m.merged = append(m.merged, store.Object{ID: *id, Type: packfile.Blob, Data: data})
	}
	m.sizes[*id] = int64(len(data))
	return id, nil
}

// storeMerged writes the merged files' blobs as one pack held until the
// command's refs are made (store.WritePack, docs/checkpoints.md#objects-a-command-relies-on):
// no ref reaches them before the revert's own checkpoint, and a loose
// blob would be gone after a person's git gc --prune=now run before the
// revert places it.
func (m *merger) storeMerged() error {
	return store.WritePack(m.in.Repo, m.merged)
}

// bytes is what the files the revert writes come to.
func (m *merger) bytes(changes []Change) int64 {
	var sum int64
	for i := range changes {
		c := &changes[i]
		if c.Left != "" || !c.Writes() || c.TMode == Gitlink {
			continue
		}
		if n, ok := m.sizes[c.TOid]; ok {
			sum += n
			continue
		}
		if size, _, err := m.odb.ReadHeader(&c.TOid); err == nil {
			sum += int64(size)
		}
	}
	return sum
}

// attribute says who made each conflict's later change: a turn of the
// agent after the reverted one, or a person, from the windows between
// the turn's end and S as a rollback to that end classes them.
func (m *merger) attribute(ctx context.Context, changes []Change) error {
	var idx []int
	for i := range changes {
		if changes[i].Class == Conflict {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	sub := make([]Change, len(idx))
	for j, i := range idx {
		sub[j] = Change{Path: changes[i].Path}
	}
	if m.in.Agent.PersonsOwn() {
		for j := range sub {
			sub[j].Class = Outside
		}
	} else if err := classify(ctx, m.in.Repo, m.in.State, m.in.Agent, m.in.Target.Seq, m.in.Target.Repos[0].Commit,
		m.in.Snapshot.Tree.String(), sub, nil, ""); err != nil {
		return err
	}
	later, err := m.laterTurns(changes, idx)
	if err != nil {
		return err
	}
	for j, i := range idx {
		c := &changes[i]
		by := ByTurn
		if sub[j].Class == Outside {
			by = ByPerson
		}
		if c.Rev == nil {
			c.Rev = &RevertInfo{}
		}
		c.Rev.By, c.Rev.Turns = by, later[j]
		if len(c.Rev.Lines) == 0 {
			continue // a whole-file conflict: the turns that changed the file
		}
		// A conflict of lines: the turns that last wrote those lines, as
		// git venom-diff --blame finds them; a line no turn wrote is a
		// person's (or a commit's).
		turns, person, err := m.blame(c.Path, c.SOid, c.Rev.Lines)
		if err != nil {
			return err
		}
		if len(turns) > 0 || person {
			c.Rev.Turns, c.Rev.By = turns, ByTurn
			if person {
				c.Rev.By = ByPerson
			}
		}
	}
	return nil
}

// blame is who last wrote the current file's lines: the turns (t<n> for
// the agent's, <agent>/t<n> for another's on the tree), and whether a
// line no turn wrote is among them.
func (m *merger) blame(path string, id git.Oid, lines []Lines) ([]string, bool, error) {
	b, err := m.lib.LookupBlob(&id)
	if err != nil {
		return nil, false, err
	}
	current := append([]byte(nil), b.Contents()...)
	b.Free()
	bl, err := explain.BlameFile(explain.BlameRequest{Repo: m.lib, State: m.in.State, Tree: m.in.Agent.Tree,
		Path: path, Current: current, Getenv: func(string) string { return "" }})
	if err != nil {
		return nil, false, err
	}
	seen := map[string]bool{}
	var turns []string
	person := false
	for _, l := range lines {
		for n := l.Start; n <= l.End && n-1 < len(bl.Lines); n++ {
			owner := bl.Lines[n-1].Turn
			if owner == "" {
				person = true
				continue
			}
			agent, turn, _ := strings.Cut(owner, "/")
			turn, _, _ = strings.Cut(turn, ".") // a tool call's mark: its turn
			name := turn
			if agent != m.in.Agent.ID {
				name = agent + "/" + turn
			}
			if !seen[name] {
				seen[name] = true
				turns = append(turns, name)
			}
		}
	}
	return turns, person, nil
}

// laterTurns names, for each conflict idx lists, the agent's turns after
// the reverted end whose own start and end captures differ at its path:
// the turns whose change the revert meets. A turn a capture of is missing
// (pruned) is not named.
func (m *merger) laterTurns(changes []Change, idx []int) ([][]string, error) {
	out := make([][]string, len(idx))
	trees := map[string]*git.Tree{}
	defer func() {
		for _, t := range trees {
			t.Free()
		}
	}()
	entry := func(commit, path string) (side, error) {
		t, ok := trees[commit]
		if !ok {
			var err error
			if t, err = lookupTree(m.lib, commit); err != nil {
				return side{}, err
			}
			trees[commit] = t
		}
		e, err := t.EntryByPath(path)
		if git.IsErrorCode(err, git.ErrorCodeNotFound) {
			return side{}, nil
		}
		if err != nil {
			return side{}, err
		}
		return side{uint32(e.Filemode), *e.Id}, nil
	}
	a := m.in.Agent
	for _, t := range a.Turns {
		if !t.Ended || t.Dropped || t.EndSeq <= m.in.Target.Seq {
			continue
		}
		start, end := a.Checkpoint(t.StartCheckpoint), a.Checkpoint(t.EndCheckpoint)
		if start == nil || end == nil || !start.Live() || !end.Live() || len(start.Repos) == 0 || len(end.Repos) == 0 ||
			start.Repos[0].Commit == end.Repos[0].Commit {
			continue
		}
		for j, i := range idx {
			before, err := entry(start.Repos[0].Commit, changes[i].Path)
			if err != nil {
				return nil, err
			}
			after, err := entry(end.Repos[0].Commit, changes[i].Path)
			if err != nil {
				return nil, err
			}
			if !before.same(after) {
				out[j] = append(out[j], t.ID)
			}
		}
	}
	return out, nil
}

func regular(mode uint32) bool { return mode == 0o100644 || mode == 0o100755 }

// binary is git's test (buffer_is_binary): a NUL in the first 8000 bytes.
func binary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// hunk is a change of a diff with no context: old lines [os, os+ol),
// new lines [ns, ns+nl), counted from 1 (a run of no lines starts after
// the line before it, as diff says).
type hunk struct{ os, ol, ns, nl int }

// hunks diffs a against b, with no context lines.
func hunks(a, b *git.Blob) ([]hunk, error) {
	var out []hunk
	opts, err := git.DefaultDiffOptions()
	if err != nil {
		return nil, err
	}
	opts.ContextLines = 0
	opts.InterhunkLines = 0
	opts.Flags |= git.DiffForceText
	err = git.DiffBlobs(a, "a", b, "b", &opts, func(git.DiffDelta, float64) (git.DiffForEachHunkCallback, error) {
		return func(h git.DiffHunk) (git.DiffForEachLineCallback, error) {
			out = append(out, hunk{h.OldStart, h.OldLines, h.NewStart, h.NewLines})
			return nil, nil
		}, nil
	}, git.DiffDetailHunks)
	return out, err
}

// conflictLines are the current file's lines whose change since the
// turn's end meets the turn's own change: the ours hunks whose lines of
// the base overlap, or touch, a hunk of the turn (xdiff's merge treats
// adjacent changes as one conflict, as git does).
func conflictLines(base, ours, theirs *git.Blob) ([]Lines, error) {
	oh, err := hunks(base, ours)
	if err != nil {
		return nil, err
	}
	th, err := hunks(base, theirs)
	if err != nil {
		return nil, err
	}
	// A hunk's base run as xdiff's merge sees it: from the position
	// before its first line (for an insertion, the position it goes in)
	// to the position after its last. Two changes meet when those runs
	// share a position: the same lines, adjacent lines, or an insertion
	// and a line on either side of it.
	span := func(h hunk) (int, int) {
		if h.ol == 0 {
			return h.os, h.os // diff's -k,0 inserts after line k
		}
		return h.os - 1, h.os - 1 + h.ol
	}
	var out []Lines
	for _, o := range oh {
		olo, ohi := span(o)
		for _, t := range th {
			tlo, thi := span(t)
			if olo <= thi && tlo <= ohi {
				l := Lines{o.ns, o.ns + o.nl - 1}
				if o.nl == 0 { // ours deleted the lines: where they were
					l = Lines{o.ns, o.ns}
					if l.Start == 0 {
						l = Lines{1, 1}
					}
				}
				if n := len(out); n > 0 && out[n-1].End+1 >= l.Start {
					if l.End > out[n-1].End {
						out[n-1].End = l.End
					}
				} else {
					out = append(out, l)
				}
				break
			}
		}
	}
	return out, nil
}

// markerLines are the runs of a merged file from each <<<<<<< line to its
// >>>>>>> line, markers size long.
func markerLines(merged []byte, size int) []Lines {
	var out []Lines
	start := 0
	open, end := strings.Repeat("<", size)+" ", strings.Repeat(">", size)+" "
	for n, line := range strings.SplitAfter(string(merged), "\n") {
		switch {
		case strings.HasPrefix(line, open) && start == 0:
			start = n + 1
		case strings.HasPrefix(line, end) && start != 0:
			out = append(out, Lines{start, n + 1})
			start = 0
		}
	}
	return out
}

// RevertConflict is one member of conflict.revert_conflicts's
// data.conflicts (docs/errors.md).
type RevertConflict struct {
	Path    string   `json:"path"`
	PathB64 string   `json:"path_b64,omitempty"`
	By      string   `json:"by"`
	Turns   []string `json:"turns"`
	Lines   []Lines  `json:"lines"`
	Detail  *string  `json:"detail"`
}

// refuseConflicts is conflict.revert_conflicts when a revert meets later
// changes and --conflicts=markers was not given: its data names each path
// with its lines and who made the later change.
func refuseConflicts(rv *Revert, agent string, end *agents.Checkpoint, changes []Change) error {
	list, hints := conflictsOf(changes, func(c *Change) bool {
		return c.Class == Conflict && (c.Left == "" || c.Left == LeftConflict)
	})
	if len(list) == 0 {
		return nil
	}
	e := errcode.Newf(errcode.ConflictRevertConflicts,
		map[string]any{"revert": rv.Name, "conflicts": list},
		"reverting %s meets later changes in %s", rv.Name, countPaths(len(list)))
	for _, h := range hints {
		e.Hint("%s", h)
	}
	return e.Retry("to write git's conflict markers where they meet", "--conflicts=markers").
		Hint("to see what changed since the turn:").
		Hint("  git venom-diff --agent=%s --from=%s", agent, end.Checkpoint)
}

// NothingReverted answers the real call of a revert plan that writes no
// file: nil when every path is left for a reason that is no conflict (as
// the turn found it, excluded, too large), there being nothing to revert;
// else conflict.revert_conflicts naming the whole-file conflicts no
// marker can show, which stay conflicts, as after git revert's
// modify/delete. Either way nothing is written.
func (p *Plan) NothingReverted() error {
	if p.Revert == nil {
		return nil
	}
	blocked := false
	for i := range p.Changes {
		blocked = blocked || p.Changes[i].Left == LeftConflict
	}
	if !blocked {
		return nil
	}
	list, hints := conflictsOf(p.Changes, func(c *Change) bool { return c.Left == LeftConflict && c.Rev != nil })
	e := errcode.Newf(errcode.ConflictRevertConflicts,
		map[string]any{"revert": p.Revert.Name, "conflicts": list},
		"reverting %s meets later changes in %s that conflict markers cannot show; nothing was changed",
		p.Revert.Name, countPaths(len(list))).
		Shorter("nothing reverted: conflicts no marker can show").
		Hint("reverting %s meets later changes no conflict marker can show:", p.Revert.Name)
	for _, h := range hints {
		e.Hint("%s", h)
	}
	return e.Hint("the files are as they were; to see what changed since the turn:").
		Hint("  git venom-diff --agent=%s --from=%s", p.Agent.ID, p.Target.Checkpoint)
}

// conflictsOf lists the conflicts among changes that keep picks, by
// path, as data.conflicts and as hint lines.
func conflictsOf(changes []Change, keep func(*Change) bool) ([]RevertConflict, []string) {
	list := []RevertConflict{}
	var hints []string
	for i := range changes {
		c := &changes[i]
		if !keep(c) {
			continue
		}
		shown, b64 := quote.JSONPath(c.Path)
		cj := RevertConflict{Path: shown, PathB64: b64, By: c.Rev.By, Turns: c.Rev.Turns, Lines: c.Rev.Lines}
		if cj.Turns == nil {
			cj.Turns = []string{}
		}
		if cj.Lines == nil {
			cj.Lines = []Lines{}
		}
		if c.Rev.Why != "" {
			why := c.Rev.Why
			cj.Detail = &why
		}
		list = append(list, cj)
		// "hint: " and the path, then what it meets, each hint within 80
		// columns: a path and its sentence together pass them.
		hints = append(hints, "  "+quote.C(shown)+":")
		hints = append(hints, strings.Split(ui.Wrap("    "+c.Rev.Describe(), ui.Columns80-len("hint: "), ""), "\n")...)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	return list, hints
}

// Describe says, in a sentence's words, what a conflict meets: the
// lines and who changed them, or the whole file's reason.
func (r *RevertInfo) Describe() string {
	var names []string
	for _, t := range r.Turns {
		if agent, turn, ok := strings.Cut(t, "/"); ok {
			names = append(names, "agent "+agent+"'s turn "+turn)
		} else {
			names = append(names, "turn "+t)
		}
	}
	if r.By == ByPerson {
		names = append(names, "an edit outside the agent's turns")
	}
	who := "a later turn"
	switch n := len(names); {
	case n == 1:
		who = names[0]
	case n > 1:
		who = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	if r.Why != "" {
		return r.Why + "; changed by " + who
	}
	parts := make([]string, len(r.Lines))
	for i, l := range r.Lines {
		parts[i] = l.String()
	}
	if len(parts) == 0 {
		return "changed by " + who
	}
	return strings.Join(parts, ", ") + " changed by " + who
}
