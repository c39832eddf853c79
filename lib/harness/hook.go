package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/testhook"
)

// Hook is one run of `git venom-checkpoint hook claude-code|codex`.
type Hook struct {
	Harness   string // a Kind's name (registry.go)
	Agent     string
	Isolation string
	Parent    string
	// Dir is the folder the hook runs in; relative paths in payloads
	// resolve against the payload's cwd, else this.
	Dir string
	// Process is the harness process the hook runs under
	// (harnessproc.Harness), recorded with turns and bindings.
	Process journal.Process
	// PerTool: a tool call that changed the tree leaves a mark
	// (checkpoints.MarkTool; hook --per-tool).
	PerTool bool
	// Note, when set, is told what the hook could not read and did without
	// (a transcript that is a FIFO or too large): the event is still
	// recorded, so it is a note, not a failure.
	Note func(error)
}

// DefaultAgent is the hook's agent when neither --agent nor VENOM_AGENT
// names one: one agent per harness session (docs/harness.md#hook-agents).
// The agent already bound to the session keeps it; else the harness's
// name while no other live session holds it, else the name and the
// session id's last 8 characters. A session the hook's own process ran
// (Claude Code's /clear) is this one's predecessor, not another live one.
func DefaultAgent(st *agents.State, harness, session string, proc journal.Process) string {
	name := "agent"
	if k := Lookup(harness); k != nil {
		name = k.Agent
	}
	if st == nil || session == "" {
		return name
	}
	// An agent of another worktree is never this session's: its captures
	// and rollbacks are that worktree's files (docs/checkpoints.md#worktrees).
	here := func(a *agents.Agent) bool { return st.Here == "" || st.OfHere(a) }
	for _, a := range st.Agents {
		if a.Harness == harness && a.Binding.Session == session && a.State != agents.Archived && here(a) {
			return a.ID
		}
	}
	a := st.Agent(name)
	if a == nil || a.State == agents.Archived || (here(a) && (a.Binding.Session == "" || a.Binding.Process == proc ||
		!a.Binding.Process.Alive())) {
		return name
	}
	// The session id comes in a payload: only its letters and digits make
	// the name (a UUID's hex digits), never a "/" or "..".
	var tail []byte
	for i := len(session) - 1; i >= 0 && len(tail) < 8; i-- {
		switch c := session[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z':
			tail = append(tail, c)
		case c >= 'A' && c <= 'Z':
			tail = append(tail, c-'A'+'a')
		}
	}
	slices.Reverse(tail)
	id := name + "-" + string(tail)
	// That name taken in another worktree (a session resumed in this
	// one): the next free number after it.
	for n := 2; ; n++ {
		if o := st.Agent(id); o == nil || o.State == agents.Archived || here(o) {
			return id
		}
		id = fmt.Sprintf("%s-%s-%d", name, tail, n)
	}
}

// Handle applies one event to the journal, under the lock, and returns what
// the hook prints on stdout (nil for nothing). ctx carries the hook's
// deadline (venom.timeout from its start, docs/harness.md#hooks): the wait for the
// lock, every git command and the transcript's reading end with it. A
// failed capture has already been logged as checkpoint.failed by the time
// Handle returns its error; the turn records are written all the same,
// since a failed capture never stops a turn.
func (h Hook) Handle(ctx context.Context, s *state.Store, p *Payload) ([]byte, error) {
	k := Lookup(h.Harness)
	if k == nil {
		return nil, Unknown(h.Harness)
	}
	p.Canonical(k)
	defaulted := h.Agent == ""
	if defaulted {
		// A first guess for the pending mark, made again under the lock.
		st, _ := s.ReadStubs()
		h.Agent = DefaultAgent(st, h.Harness, p.SessionID, h.Process)
	}
	// The id names the pending mark before registration checks it.
	if err := checkpoints.CheckAgent(h.Agent); err != nil {
		return nil, err
	}
	if captures(p.Event) {
		// list's pending (docs/checkpoints.md#agents-turns-and-states) while this waits for the lock.
		if mark, err := lock.Begin(s.PendingDir(), h.Agent); err == nil {
			defer mark.End()
		}
	}
	// The fold holds this agent whole and the others as stubs: a hook
	// costs its own agent's history, whatever the other agents hold.
	tx, err := s.BeginFor(ctx, lock.Holder{Op: "hook " + p.Event, Agent: h.Agent}, errcode.TimeoutCheckpoint, h.Agent)
	if err != nil {
		return nil, err
	}
	defer tx.End()
	if defaulted {
		h.Agent = DefaultAgent(tx.State, h.Harness, p.SessionID, h.Process)
		if err := checkpoints.CheckAgent(h.Agent); err != nil {
			return nil, err
		}
		if err := tx.State.Load(h.Agent); err != nil {
			return nil, state.Failed("read", s.Repo.Log, err)
		}
	}
	if err := testhook.PointIn(ctx, "hook-locked"); err != nil {
		h.logFailed(tx, p, err)
		return nil, err
	}
	a, err := checkpoints.Register(tx, checkpoints.Registration{Agent: h.Agent, Isolation: h.Isolation,
		Parent: h.Parent, Harness: h.Harness})
	if err != nil {
		h.logFailed(tx, p, err)
		return nil, err
	}
	// A session's agent works in the session's worktree: one of another
	// worktree (--agent, VENOM_AGENT) records nothing for this session.
	if err := checkpoints.InThisWorktree(ctx, s, a); err != nil {
		h.logFailed(tx, p, err)
		return nil, err
	}
	r := &run{Hook: h, kind: k, ctx: ctx, tx: tx, a: a, p: p}
	out, err := r.event()
	if err != nil && !r.logged {
		h.logFailed(tx, p, err)
	}
	return out, err
}

// captures reports the events that may take a checkpoint.
func captures(event string) bool {
	switch event {
	case UserPromptSubmit, Stop, StopFailure, Interrupt, TurnComplete, SessionStart, SessionEnd:
		return true
	}
	return false
}

// LogBroken records a payload that cannot be read, and nothing else,
// within ctx's deadline.
func (h Hook) LogBroken(ctx context.Context, s *state.Store, cause error) error {
	if h.Agent == "" {
		h.Agent = DefaultAgent(nil, h.Harness, "", h.Process)
	}
	tx, err := s.BeginFor(ctx, lock.Holder{Op: "hook", Agent: h.Agent}, errcode.TimeoutCheckpoint, h.Agent)
	if err != nil {
		return err
	}
	defer tx.End()
	_, err = tx.Append(journal.CheckpointFailed, journal.Failed{Agent: h.Agent, Reason: "hook",
		Code: string(errcode.InvalidParamsHookInput), At: journal.Stamp(journal.Now())})
	return err
}

func (h Hook) logFailed(tx *state.Txn, p *Payload, err error) {
	e := errcode.From(err, errcode.FailedCheckpointGit)
	_, _ = tx.Append(journal.CheckpointFailed, journal.Failed{Agent: h.Agent, Reason: reasonOf(p.Event),
		Code: string(e.Code), At: journal.Stamp(journal.Now())})
}

func reasonOf(event string) string {
	switch event {
	case UserPromptSubmit:
		return checkpoints.TurnStart
	case Stop, StopFailure, Interrupt, TurnComplete, SessionEnd, SessionStart:
		return checkpoints.TurnEnd
	}
	return "hook"
}

// run is one event being applied inside the transaction.
type run struct {
	Hook
	kind   *kind.Kind
	ctx    context.Context
	tx     *state.Txn
	a      *agents.Agent
	p      *Payload
	logged bool // a capture failure was already logged by checkpoints
}

func (r *run) event() ([]byte, error) {
	p := r.p
	switch p.Event {
	case SessionStart:
		// A new session while a turn is open: that turn was interrupted.
		err := r.endOpenTurn("")
		if e := r.bind(p.SessionID); e != nil {
			return nil, e
		}
		return nil, err
	case UserPromptSubmit:
		return r.promptSubmitted()
	case PostToolUse:
		if err := r.edited(); err != nil || !r.PerTool {
			return nil, err
		}
		return nil, r.toolCall()
	case Stop, StopFailure, Interrupt, TurnComplete:
		if p.Event == TurnComplete {
			if err := r.bind(p.SessionID); err != nil {
				return nil, err
			}
		}
		return nil, r.turnEnded()
	case SessionEnd:
		return nil, r.endOpenTurn("")
	}
	return nil, nil
}

// bind logs agent.binding when the session differs from the binding's, or
// runs in another harness process (a resumed session: DefaultAgent tells
// live sessions by it), and clears a pending rewind fork once its session
// has started (docs/rollback.md#conversation).
func (r *run) bind(session string) error {
	b := r.a.Binding
	moved := r.Process.PID != 0 && r.Process != b.Process
	if session == "" || (b.Session == session && b.ForkAt == "" && b.ForkSource == "" && !moved) {
		return nil
	}
	_, err := r.tx.Append(journal.AgentBinding, journal.Binding{Agent: r.a.ID, HarnessSession: session,
		Process: r.Process})
	return err
}

func (r *run) promptSubmitted() ([]byte, error) {
	p := r.p
	if err := r.bind(p.SessionID); err != nil {
		return nil, err
	}
	key := p.TurnKey()
	var capErr error
	switch open := r.a.OpenTurn; {
	case open != nil && key != "" && open.HarnessTurn == key:
		// The same prompt reported twice: its turn is open already.
	case key != "" && r.seen(key):
		// A prompt whose turn has already ended: nothing to open.
	default:
		capErr = r.endOpenTurn(p.PromptID)
		_, err := checkpoints.TakeIn(r.ctx, r.tx, checkpoints.Request{
			Registration: r.registration(), Reason: checkpoints.TurnStart, HarnessTurn: key,
			HarnessSession: p.SessionID, Process: r.Process})
		if err != nil {
			capErr, r.logged = err, true
		}
	}
	out, err := r.deliverNote()
	if err != nil {
		return nil, err
	}
	return out, capErr
}

// seen reports a turn that carries this harness turn id.
func (r *run) seen(key string) bool {
	for _, t := range r.a.Turns {
		if t.HarnessTurn == key {
			return true
		}
	}
	return false
}

func (r *run) registration() checkpoints.Registration {
	return checkpoints.Registration{Agent: r.a.ID, Isolation: r.Isolation, Parent: r.Parent, Harness: r.Harness}
}

// turnEnded takes turn_end with the harness's ids of the turn. A turn
// whose harness id has already ended is a no-op: Codex's Stop hook and its
// notify program both report every turn (docs/harness.md#hook-agents).
func (r *run) turnEnded() error {
	key := r.p.TurnKey()
	if key != "" {
		for _, t := range r.a.Turns {
			if t.HarnessTurn == key && t.Ended {
				return nil
			}
		}
	}
	end := r.harnessEnd("")
	_, err := checkpoints.TakeIn(r.ctx, r.tx, checkpoints.Request{Registration: r.registration(),
		Reason: checkpoints.TurnEnd, HarnessTurn: key, HarnessSession: r.p.SessionID, HarnessEnd: end.UUID,
		HarnessVersion: end.Version})
	if err != nil {
		r.logged = true
	}
	return err
}

// endOpenTurn ends a turn the person interrupted, at the next event that
// shows it. before is the prompt that has just been submitted, if any: the
// interrupted turn's last entry is the one before it.
func (r *run) endOpenTurn(before string) error {
	open := r.a.OpenTurn
	if open == nil {
		return nil
	}
	var end kind.End
	if r.p.SessionID != "" && r.p.SessionID == r.a.Binding.Session {
		end = r.harnessEnd(before)
	}
	_, err := checkpoints.TakeIn(r.ctx, r.tx, checkpoints.Request{Registration: r.registration(),
		Reason: checkpoints.TurnEnd, HarnessTurn: open.HarnessTurn, HarnessEnd: end.UUID,
		HarnessVersion: end.Version})
	if err != nil {
		r.logged = true
	}
	return err
}

// harnessEnd reads the turn's last entry and the harness version from the
// transcript, as the harness's Kind.End does: Claude Code's last chain
// entry (docs/rollback.md#conversation harness_end), Codex's cli_version (Codex rewinds by turn
// id, so it needs no end entry); nothing for a harness without one.
func (r *run) harnessEnd(before string) kind.End {
	path := r.p.TranscriptPath
	if path == "" || r.kind.End == nil {
		return kind.End{}
	}
	end, err := r.kind.End(r.ctx, path, before)
	if err != nil {
		// A transcript not written yet, or without an entry, is ordinary; a
		// deadline fails the capture that follows. Anything else (a FIFO, a
		// file over the caps) is said, and the turn ends without an anchor.
		quiet := errors.Is(err, fs.ErrNotExist) || errors.Is(err, kind.ErrNoEntry) || r.ctx.Err() != nil
		if !quiet && r.Note != nil {
			r.Note(errcode.Newf(errcode.InvalidParamsHookInput, nil,
				"transcript_path: %v; the turn's end has no conversation anchor", err))
		}
		return kind.End{}
	}
	return end
}

// edited records the paths an edit tool call named for the open turn.
func (r *run) edited() error {
	open := r.a.OpenTurn
	if open == nil {
		return nil
	}
	if r.kind.Edits == nil {
		return nil
	}
	named := r.kind.Edits(r.p.ToolName, r.p.ToolInput)
	if len(named) == 0 {
		return nil
	}
	cwd := r.p.Cwd
	if cwd == "" {
		cwd = r.Dir
	}
	var paths []string
	for _, n := range named {
		if rel, ok := InTree(r.a.Tree, cwd, n); ok {
			paths = append(paths, rel)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	ignored, err := r.ignored(paths)
	if err != nil {
		return err
	}
	_, err = r.tx.Append(journal.EditRecorded, journal.Edit{Agent: r.a.ID, Turn: open.ID, Paths: paths,
		Ignored: ignored})
	return err
}

// ignored lists the paths git ignores (untracked and matched by an ignore
// rule): a capture leaves them out, so a rollback cannot restore them.
func (r *run) ignored(paths []string) ([]string, error) {
	g := &gitcli.Runner{Dir: r.a.Tree, Env: r.tx.Store.Repo.Git.Env}
	if r.a.Tree != r.tx.Store.Repo.Top {
		g = &gitcli.Runner{Dir: r.a.Tree, Env: gitcli.CleanEnv(r.tx.Store.Environ)}
	}
	in := []byte(strings.Join(paths, "\x00") + "\x00")
	out, err := g.RunInput(r.ctx, in, "check-ignore", "-z", "--stdin")
	if err != nil && gitcli.ExitCode(err) != 1 {
		return nil, errcode.Newf(errcode.FailedCheckpointGit, errcode.RepoReason{Repo: ".", Reason: "check_ignore"},
			"git check-ignore failed").Wrap(err)
	}
	ignored := []string{}
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			ignored = append(ignored, string(p))
		}
	}
	return ignored, nil
}

// deliverNote returns the pending rollback note as UserPromptSubmit's
// additional context and logs note.delivered, once (docs/rollback.md#the-rollback-note).
func (r *run) deliverNote() ([]byte, error) {
	a := r.tx.State.Agent(r.a.ID)
	e := a.NotePending
	if e == nil {
		return nil, nil
	}
	text := NoteText(r.tx.Store.Config.RollbackNote, r.tx.State, a.ID, e)
	out, err := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": r.kind.PromptContext, "additionalContext": text}})
	if err != nil {
		return nil, err
	}
	if _, err := r.tx.Append(journal.NoteDelivered, journal.Note{Agent: a.ID, Rollback: e.Seq, From: e.Agent,
		Checkpoint: e.Checkpoint}); err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// NoteText fills venom.rollbackNote's {when} for the agent self, from the
// rollback.ended record e (docs/checkpoints.md#configuration): "after turn t3", "before your first
// turn"; for a sharer, whose tree another agent's rollback moved, the turn
// is named with its agent.
func NoteText(template string, st *agents.State, self string, e *journal.Entry) string {
	var through *string
	if src := st.Agent(e.Agent); src != nil && e.Copy == "" {
		if c := src.Checkpoint(e.Checkpoint); c != nil {
			through = c.ThroughTurn
		}
	}
	if e.Revert != "" {
		return revertNote(self, e)
	}
	var when string
	switch {
	case ids.IsToolCall(e.Checkpoint) && e.Agent == self:
		when = "just before your tool call " + e.Checkpoint + " (turn " + strings.Split(e.Checkpoint, ".")[0] + ")"
	case ids.IsToolCall(e.Checkpoint):
		when = "just before agent " + e.Agent + "'s tool call " + e.Checkpoint
	case e.Copy != "":
		// A fetched copy's checkpoint: its turns are another machine's.
		when = "of checkpoint " + e.Checkpoint + " of the fetched copy " + e.Copy + " (another machine's agent)"
	case e.Agent == self && through == nil:
		when = "before your first turn"
	case e.Agent == self:
		when = "after turn " + *through
	case through == nil:
		when = "before agent " + e.Agent + "'s first turn"
	default:
		when = "after agent " + e.Agent + "'s turn " + *through
	}
	text := strings.ReplaceAll(template, "{when}", when)
	// A path-scoped rollback moved those paths only: the note says so, or
	// the agent would distrust every file.
	if set, err := pathspec.ParseStored(e.Paths); err == nil && !set.Empty() {
		text += " Only these paths went back: " + strings.Join(set.Shown(), ", ") + "; every other file is as it was."
	}
	return text
}

// revertNote is the note of a revert (docs/rollback.md#revert): which
// turn's changes to the files were taken back, and that every later change
// stays. venom.rollbackNote's "rolled back to their state {when}" would
// say the later turns are gone, which they are not.
func revertNote(self string, e *journal.Entry) string {
	what := "the changes your turn " + e.Revert + " made"
	if _, _, pair := strings.Cut(e.Revert, ".."); pair {
		from, to, _ := strings.Cut(e.Revert, "..")
		what = "the changes made between your checkpoints " + from + " and " + to
		if e.Agent != self {
			what = "the changes made between agent " + e.Agent + "'s checkpoints " + from + " and " + to
		}
	} else if e.Agent != self {
		what = "the changes agent " + e.Agent + "'s turn " + e.Revert + " made"
	}
	text := "Note: " + what + " to the files were reverted (taken back by a three-way merge, as git revert does); " +
		"every change made after it is kept. The conversation still shows that turn: its edits are no longer in the files. " +
		"Read the files before you rely on them."
	if set, err := pathspec.ParseStored(e.Paths); err == nil && !set.Empty() {
		text += " Only these paths were reverted: " + strings.Join(set.Shown(), ", ") + "."
	}
	return text
}
