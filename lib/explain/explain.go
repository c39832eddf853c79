// Package explain says which agent turns made a commit (docs/json.md#explain):
// for each file the commit changed, the turns whose changes, from their
// turn_start checkpoint to their turn_end checkpoint, carried the commit's
// content for that file, whole or hunk by hunk. It reads the log's fold
// and the repository's objects; it writes nothing.
package explain

import (
	"sort"
	"strings"
	"unicode/utf8"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/treewalk"
)

// Result is what explain prints: one member per commit, oldest first.
type Result struct {
	Commits []Commit `json:"commits"`
	// Unavailable counts the turns that could not be looked at: a
	// checkpoint of theirs was pruned or removed, or its commit is gone,
	// or the turn never ended.
	Unavailable int `json:"turns_unavailable"`
}

// Commit is one commit explained.
type Commit struct {
	Commit  string  `json:"commit"`
	Parent  *string `json:"parent"`
	Subject string  `json:"subject"`
	Files   []File  `json:"files"`
	// Turns are the turns the files name, in the log's order.
	Turns []Turn `json:"turns"`
	// Note is the notes ref the result was stored under (--note), or null.
	Note *string `json:"note"`
}

// File is one path the commit changed, against its first parent.
type File struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Status  string `json:"status"` // added, modified, deleted, typechange
	Binary  bool   `json:"binary"`
	// Turns ended with the file exactly as the commit has it (or gone, for
	// a deletion) and did not start so: whole-file attribution.
	Turns []string `json:"turns"`
	Hunks []Hunk   `json:"hunks"`
}

// Hunk is one hunk of the commit's diff of the file, without context
// lines (git diff -U0), and the turns that carried some of its lines.
type Hunk struct {
	OldStart int      `json:"old_start"`
	OldLines int      `json:"old_lines"`
	NewStart int      `json:"new_start"`
	NewLines int      `json:"new_lines"`
	Turns    []string `json:"turns"`
	// Lines is the number of lines the hunk is judged by (those it adds,
	// or for a removal those it removes; not blank ones unless it has
	// nothing else); Unattributed, how many of them no turn carried.
	Lines        int `json:"lines"`
	Unattributed int `json:"unattributed"`
}

// Turn is one agent turn a file or hunk is attributed to.
type Turn struct {
	ID    string `json:"id"` // agent/turn, or <copy>/turn for a fetched copy's
	Agent string `json:"agent"`
	// Copy and Machine name a fetched copy's turn (<remote>/<machine>/<agent>,
	// lib/share); absent for this repository's own agents.
	Copy    string  `json:"copy,omitempty"`
	Machine string  `json:"machine,omitempty"`
	Turn    string  `json:"turn"`
	Harness string  `json:"harness"`
	Session *string `json:"session"`
	Started *string `json:"started"`
	Ended   *string `json:"ended"`
	// Start and End are the checkpoints whose trees were compared.
	Start string `json:"start"`
	End   string `json:"end"`
	// Prompt is the first line of the turn's prompt, from the harness's
	// transcript, or null.
	Prompt *string `json:"prompt"`
	// Tool is the tool call of the turn this part is (hook --per-tool,
	// docs/checkpoints.md#tool-calls); absent for the turn's changes no
	// marked call made.
	Tool *Tool `json:"tool,omitempty"`
}

// ToolLine is how a person reads a tool call: "t3 · Bash: sed -i …".
func ToolLine(t Turn) string {
	if t.Tool == nil {
		return t.Turn
	}
	line := t.Turn + " · " + t.Tool.Name
	if t.Tool.Command != "" {
		line += ": " + t.Tool.Command
	}
	return line
}

// Tool is a marked tool call: t<n>.<i>, the harness's tool name and its
// command (a shell command's first line, or the paths an edit tool named).
type Tool struct {
	Call    string `json:"call"`
	Name    string `json:"name"`
	Command string `json:"command"`
	At      string `json:"at"`
}

// Request is what to explain.
type Request struct {
	Repo  *git.Repository
	State *agents.State
	// Commits are full object ids, oldest first.
	Commits []string
	// Getenv is the command's environment, for finding transcripts.
	Getenv func(string) string
	// Agents, when not nil, are the only agents of State whose turns
	// count.
	Agents map[string]bool
	// Copies are fetched copies whose turns count too, after State's.
	Copies []Copy
}

// Copy is one fetched copy (lib/share): its fold holds one agent whose id
// is the copy id, and whose checkpoints failing the checks are already
// marked removed (share.Untrusted).
type Copy struct {
	ID, Machine, Agent string
	State              *agents.State
}

// span is one turn whose start and end trees can be compared, or one
// part of it: a marked tool call (tool), from the turn's previous
// capture to the call's, or what came after its last marked call.
type span struct {
	copy       *Copy // nil for this repository's own agents
	agent      *agents.Agent
	turn       *agents.Turn
	start, end *agents.Checkpoint
	seq        int64
	tool       *agents.ToolCall
	// from and to, when set, are the commits compared in place of the
	// checkpoints', and fromName and toName their names (k1, t3.2).
	from, to         string
	fromName, toName string
}

func (s span) fromCommit() string {
	if s.from != "" {
		return s.from
	}
	return rootOf(s.start.Repos).Commit
}

func (s span) toCommit() string {
	if s.to != "" {
		return s.to
	}
	return rootOf(s.end.Repos).Commit
}

// toolParts splits a turn's span at its marked tool calls: one span a
// call, from the turn's previous capture to the call's; and the point
// the rest of the turn starts from (the last call's capture, or the
// turn's start).
func toolParts(s span) (parts []span, from, fromName string) {
	from, fromName = s.fromCommit(), s.start.Checkpoint
	for i := range s.turn.Tools {
		tc := &s.turn.Tools[i]
		p := s
		p.tool, p.from, p.fromName, p.to, p.toName = tc, from, fromName, tc.Commit, tc.Mark
		parts = append(parts, p)
		from, fromName = tc.Commit, tc.Mark
	}
	return parts, from, fromName
}

// split is an ended turn's span as its tool calls' parts, and the rest
// of the turn when it changed the tree after its last marked call.
func split(s span) []span {
	if len(s.turn.Tools) == 0 || s.copy != nil {
		return []span{s}
	}
	parts, from, fromName := toolParts(s)
	if from != s.toCommit() {
		s.from, s.fromName = from, fromName
		parts = append(parts, s)
	}
	return parts
}

// change is what one turn did to one path: blob ids before and after,
// nil when the path was absent.
type change struct {
	span     int
	old, new *git.Oid
}

// Explain attributes each commit's changes to turns.
func Explain(req Request) (*Result, error) {
	res := &Result{Commits: []Commit{}}
	commits := make([]*git.Commit, 0, len(req.Commits))
	defer func() {
		for _, c := range commits {
			c.Free()
		}
	}()
	for _, id := range req.Commits {
		oid, err := git.NewOid(id)
		if err != nil {
			return nil, notFound(id, err)
		}
		c, err := req.Repo.LookupCommit(oid)
		if err != nil {
			return nil, notFound(id, err)
		}
		commits = append(commits, c)
	}
	diffs := make([]*commitDiff, len(commits))
	wanted := map[string]bool{}
	for i, c := range commits {
		d, err := diffCommit(req.Repo, c)
		if err != nil {
			return nil, err
		}
		diffs[i] = d
		for _, f := range d.files {
			wanted[f.path] = true
		}
	}
	spans, unavailable := spansOf(req.State, req.Agents, nil)
	res.Unavailable = unavailable
	for i := range req.Copies {
		more, n := spansOf(req.Copies[i].State, nil, &req.Copies[i])
		spans = append(spans, more...)
		res.Unavailable += n
	}
	byPath, err := turnChanges(req.Repo, spans, wanted, &res.Unavailable)
	if err != nil {
		return nil, err
	}
	odb, err := req.Repo.Odb()
	if err != nil {
		return nil, failed(err)
	}
	defer odb.Free()
	lines := &lineCache{repo: req.Repo, odb: odb, sets: map[git.Oid]map[string]bool{}}
	prompts := map[int]*string{}
	history := map[[2]git.Oid]bool{}
	for i, c := range commits {
		out := Commit{Commit: c.Id().String(), Subject: subject(c.Message()), Files: []File{}, Turns: []Turn{}}
		if p := c.Parent(0); p != nil {
			s := p.Id().String()
			out.Parent = &s
			p.Free()
		}
		named := map[int]bool{}
		could := couldWrite(req.Repo, c.Id(), spans, history)
		for _, f := range diffs[i].files {
			out.Files = append(out.Files, attribute(f, mayHave(byPath[f.path], could), spans, lines, named))
		}
		var order []int
		for s := range named {
			order = append(order, s)
		}
		sort.Ints(order)
		for _, s := range order {
			if _, ok := prompts[s]; !ok && spans[s].copy == nil {
				// A copy's transcript is on its own machine: a path its
				// log names is nothing to read here.
				prompts[s] = firstLine(conversation.Prompt(spans[s].agent, spans[s].turn, req.Getenv))
			}
			out.Turns = append(out.Turns, spans[s].describe(prompts[s]))
		}
		res.Commits = append(res.Commits, out)
	}
	return res, nil
}

// couldWrite tells, for each span, whether its turn can have written
// commit at all, by the HEAD each capture recorded (man
// git-venom-checkpoint, explain, "How it decides"): a commit already in the
// history of the HEAD of the span's first capture existed before the turn
// began. A turn with no turn_start runs from the agent's previous capture:
// a commit made after that one may be its or a person's, so it is looked
// at, and its Started is null to say so. history caches the answers.
func couldWrite(r *git.Repository, commit *git.Oid, spans []span, history map[[2]git.Oid]bool) []bool {
	out := make([]bool, len(spans))
	for i, s := range spans {
		out[i] = !inHistory(r, commit, s.start, history)
	}
	return out
}

// inHistory reports commit is the HEAD checkpoint c recorded or one of its
// ancestors. A HEAD this repository does not have (a fetched copy's) or an
// unborn one proves nothing: false.
func inHistory(r *git.Repository, commit *git.Oid, c *agents.Checkpoint, history map[[2]git.Oid]bool) bool {
	root := rootOf(c.Repos)
	if root == nil || root.Head == nil {
		return false
	}
	head, err := git.NewOid(*root.Head)
	if err != nil {
		return false
	}
	if head.Equal(commit) {
		return true
	}
	key := [2]git.Oid{*head, *commit}
	if v, ok := history[key]; ok {
		return v
	}
	v, err := r.DescendantOf(head, commit)
	v = v && err == nil
	history[key] = v
	return v
}

// mayHave keeps the changes of the spans that could have written the
// commit.
func mayHave(changes []change, could []bool) []change {
	var out []change
	for _, ch := range changes {
		if could[ch.span] {
			out = append(out, ch)
		}
	}
	return out
}

func notFound(id string, err error) error {
	return errcode.Newf(errcode.NotFoundCommit, map[string]string{"commit": id}, "no commit %s", id).Wrap(err)
}

// spansOf lists every ended turn of every agent (of only, when not nil)
// whose start and end checkpoints still count, in the log's order; it
// counts the turns it must leave out. cp is the copy st folds, or nil.
func spansOf(st *agents.State, only map[string]bool, cp *Copy) ([]span, int) {
	var out []span
	missing := 0
	for _, id := range st.Order {
		if only != nil && !only[id] {
			continue
		}
		a := st.Agents[id]
		for _, t := range a.Turns {
			if !t.Ended || t.EndCheckpoint == "" {
				missing++
				continue
			}
			end := a.Checkpoint(t.EndCheckpoint)
			start := startOf(a, t)
			if !usable(end) || !usable(start) {
				missing++
				continue
			}
			if start == end && len(t.Tools) == 0 {
				continue // the turn changed nothing
			}
			out = append(out, split(span{copy: cp, agent: a, turn: t, start: start, end: end, seq: t.EndSeq})...)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out, missing
}

// startOf is the checkpoint a turn started from: its turn_start's, or, for
// a turn a harness started with no turn_start (docs/checkpoints.md#reasons), the agent's last
// checkpoint logged before the turn ended.
func startOf(a *agents.Agent, t *agents.Turn) *agents.Checkpoint {
	if t.StartCheckpoint != "" {
		return a.Checkpoint(t.StartCheckpoint)
	}
	var prev *agents.Checkpoint
	for _, c := range a.Checkpoints {
		if c.Seq >= t.EndSeq {
			break
		}
		prev = c
	}
	return prev
}

func usable(c *agents.Checkpoint) bool { return c != nil && c.Live() && rootOf(c.Repos) != nil }

// rootOf is the repository's own member of a checkpoint's repos (not a
// submodule's).
func rootOf(repos []journal.RepoState) *journal.RepoState {
	for i := range repos {
		if repos[i].Repo == "." {
			return &repos[i]
		}
	}
	if len(repos) > 0 {
		return &repos[0]
	}
	return nil
}

func (s span) describe(prompt *string) Turn {
	t := Turn{ID: s.id(), Agent: s.agent.ID, Turn: s.turn.ID, Harness: s.agent.Harness,
		Start: s.start.Checkpoint, End: s.end.Checkpoint, Prompt: prompt}
	if s.fromName != "" {
		t.Start = s.fromName
	}
	if s.toName != "" {
		t.End = s.toName
	}
	if s.tool != nil {
		t.Tool = &Tool{Call: s.tool.Mark, Name: s.tool.Tool, Command: s.tool.Command, At: s.tool.At}
	}
	if s.copy != nil {
		t.Agent, t.Copy, t.Machine = s.copy.Agent, s.copy.ID, s.copy.Machine
	}
	if t.Harness == "" {
		t.Harness = "none"
	}
	t.Session = orNull(s.turn.Session)
	t.Started = orNull(s.turn.StartTs)
	t.Ended = orNull(s.turn.EndTs)
	return t
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// turnChanges diffs each span's start tree against its end tree and keeps,
// by path, the changes to paths some commit changed: only the folders
// that hold such paths are read. A span whose commits are gone from the
// object store is counted unavailable and left out.
func turnChanges(r *git.Repository, spans []span, wanted map[string]bool, unavailable *int) (map[string][]change, error) {
	out := map[string][]change{}
	odb, err := r.Odb()
	if err != nil {
		return nil, failed(err)
	}
	defer odb.Free()
	dirs := map[string]bool{}
	for p := range wanted {
		for i := 0; i < len(p); i++ {
			if p[i] == '/' {
				dirs[p[:i+1]] = true
			}
		}
	}
	descend := func(dir string) bool { return dirs[dir] }
	walker := treewalk.NewWalker(odb)
	trees := map[string]*git.Oid{}
	treeOf := func(commit string) *git.Oid {
		if t, ok := trees[commit]; ok {
			return t
		}
		t := lookupTree(r, commit)
		trees[commit] = t
		return t
	}
	for i, s := range spans {
		a, b := treeOf(s.fromCommit()), treeOf(s.toCommit())
		if a == nil || b == nil {
			*unavailable++
			continue
		}
		err := walker.DiffUnder(a, b, descend, func(p string, x, y treewalk.Side) {
			if wanted[p] && x.Mode != gitlink && y.Mode != gitlink {
				out[p] = append(out[p], change{span: i, old: blob(x), new: blob(y)})
			}
		})
		if err != nil {
			return nil, failed(err)
		}
	}
	return out, nil
}

// gitlink is a submodule's mode: explain leaves submodules out, as the
// commit's diff does.
const gitlink = 0o160000

// blob is a side's object id, nil when the path is absent there.
func blob(s treewalk.Side) *git.Oid {
	if s.Mode == 0 {
		return nil
	}
	id := s.ID
	return &id
}

// lookupTree is a commit's tree id, or nil when the commit is gone.
func lookupTree(r *git.Repository, commit string) *git.Oid {
	id, err := git.NewOid(commit)
	if err != nil {
		return nil
	}
	c, err := r.LookupCommit(id)
	if err != nil {
		return nil
	}
	defer c.Free()
	return c.TreeId()
}

// present is a diff side's blob id, nil when the path is absent there.
func present(f git.DiffFile) *git.Oid {
	if f.Oid == nil || f.Oid.IsZero() {
		return nil
	}
	id := *f.Oid
	return &id
}

func failed(err error) error {
	return errcode.Newf(errcode.FailedInternal, nil, "reading the checkpoints' trees: %v", err).Wrap(err)
}

// attribute decides one file: whole-file turns first, then each hunk's.
func attribute(f fileDiff, changes []change, spans []span, lines *lineCache, named map[int]bool) File {
	out := File{Status: f.status, Binary: f.binary, Turns: []string{}, Hunks: []Hunk{}}
	out.Path, out.PathB64 = quote.JSONPath(f.path)
	for _, ch := range changes {
		if sameBlob(ch.new, f.new) {
			out.Turns = append(out.Turns, spans[ch.span].id())
			named[ch.span] = true
		}
	}
	for _, h := range f.hunks {
		hunk := Hunk{OldStart: h.OldStart, OldLines: h.OldLines, NewStart: h.NewStart, NewLines: h.NewLines, Turns: []string{}}
		want, removal := h.lines()
		covered := make([]bool, len(want))
		for _, ch := range changes {
			some := false
			for i, ok := range lines.carried(want, removal, ch) {
				if ok {
					some, covered[i] = true, true
				}
			}
			if some {
				hunk.Turns = append(hunk.Turns, spans[ch.span].id())
				named[ch.span] = true
			}
		}
		for _, ok := range covered {
			if !ok {
				hunk.Unattributed++
			}
		}
		hunk.Lines = len(want)
		out.Hunks = append(out.Hunks, hunk)
	}
	return out
}

// id is agent/turn, or agent/t<n>.<i> for a marked tool call's part.
func (s span) id() string {
	if s.tool != nil {
		return s.agent.ID + "/" + s.tool.Mark
	}
	return s.agent.ID + "/" + s.turn.ID
}

func sameBlob(a, b *git.Oid) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(b)
}

// subject is a commit message's first line.
func subject(msg string) string {
	s, _, _ := strings.Cut(msg, "\n")
	return strings.TrimSpace(s)
}

// maxPrompt bounds the prompt line explain repeats.
const maxPrompt = 200

// firstLine is the first non-blank line of a prompt, cut to maxPrompt
// characters; nil for none.
func firstLine(prompt string) *string {
	for _, l := range strings.Split(prompt, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if utf8.RuneCountInString(l) > maxPrompt {
			l = string([]rune(l)[:maxPrompt-1]) + "…"
		}
		return &l
	}
	return nil
}
