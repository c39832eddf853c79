package journal

import (
	"github.com/git-venom/git-venom/lib/harnessproc"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/worktreeid"
)

// Record types (docs/checkpoints.md#the-log).
const (
	AgentRegistered   = "agent.registered"
	AgentArchived     = "agent.archived"
	AgentBinding      = "agent.binding"
	TurnStarted       = "turn.started"
	TurnEnded         = "turn.ended"
	EditRecorded      = "edit.recorded"
	ToolMarked        = "tool.marked"
	NoteDelivered     = "note.delivered"
	CheckpointTaken   = "checkpoint.taken"
	CheckpointReused  = "checkpoint.reused"
	CheckpointFailed  = "checkpoint.failed"
	CheckpointPruned  = "checkpoint.pruned"
	CheckpointRemoved = "checkpoint.removed"
	RollbackStarted   = "rollback.started"
	RollbackEnded     = "rollback.ended"
)

// Entry is any record, decoded into the union of every type's members.
// Writers use the typed payloads below; readers fold Entries.
type Entry struct {
	Seq  int64  `json:"seq"`
	Ts   string `json:"ts"`
	Type string `json:"type"`

	Agent string `json:"agent"`

	// agent.registered
	Tree      string  `json:"tree"`
	Isolation string  `json:"isolation"`
	Harness   string  `json:"harness"`
	Parent    *string `json:"parent"`
	// Worktree is the tree's identity (docs/rollback.md#stale-trees); nil
	// in a registration older than identities.
	Worktree *worktreeid.ID `json:"worktree"`

	// turns, edits, bindings
	Turn           *string  `json:"turn"`
	HarnessTurn    string   `json:"harness_turn"`
	HarnessEnd     string   `json:"harness_end"`
	HarnessVersion string   `json:"harness_version"`
	NoStart        bool     `json:"no_start"`
	NoEnd          bool     `json:"no_end"`
	Paths          []string `json:"paths"`
	Ignored        []string `json:"ignored"`
	HarnessSession *string  `json:"harness_session"`
	ForkSource     string   `json:"fork_source"`
	ForkAt         string   `json:"fork_at"`
	Dropped        []string `json:"dropped"`
	Process

	// checkpoint.*
	Checkpoint  string  `json:"checkpoint"`
	Reason      string  `json:"reason"`
	ThroughTurn *string `json:"through_turn"`
	At          string  `json:"at"`
	MidTurn     bool    `json:"mid_turn"`
	Overlap     bool    `json:"overlap"`
	Label       *string `json:"label"`
	// PreviousLabel: a reuse that set a label (a relabel) records the
	// label it replaced, so that the log and its event say so.
	PreviousLabel *string     `json:"previous_label"`
	Repos         []RepoState `json:"repos"`
	// ReposJSON is repos as the log has it, not yet decoded, when the scan
	// was asked to (ScanOptions.LazyRepos); Repos is then nil.
	ReposJSON   string   `json:"-"`
	Code        string   `json:"code"`
	Repo        string   `json:"repo"`
	Checkpoints []string `json:"checkpoints"`
	Source      string   `json:"source"`
	Removed     int      `json:"removed"`
	Kept        int      `json:"kept"`

	// rollback.*
	Safety  string   `json:"safety"`
	Restore string   `json:"restore"`
	OK      *bool    `json:"ok"`
	After   string   `json:"after"`
	Drops   []string `json:"drops"`
	Unseen  []string `json:"unseen"`
	Plan    string   `json:"plan"`
	// Copy: a rollback of a fetched copy's checkpoint (RollbackStart).
	Copy string `json:"copy"`
	// Revert: what a revert took back, t<n> or k<a>..k<b> (RollbackStart).
	Revert string `json:"revert"`

	// tool.marked (Marked)
	Mark      string `json:"mark"`
	Tool      string `json:"tool"`
	Command   string `json:"command"`
	ToolUseID string `json:"tool_use_id"`
}

// RepoState is one member of a checkpoint's repos[] (docs/checkpoints.md#the-log).
type RepoState struct {
	Repo       string      `json:"repo"`
	Path       string      `json:"path"`
	Commit     string      `json:"commit"`
	Head       *string     `json:"head"`
	Branch     string      `json:"branch,omitempty"`
	Skipped    []Skipped   `json:"skipped"`
	Submodules []Submodule `json:"submodules"`
}

// Skipped is a path a capture left at the index's version.
type Skipped struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Bytes   int64  `json:"bytes"`
	Reason  string `json:"reason"`
}

// Submodule is a gitlink of a captured tree.
type Submodule struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Commit  string `json:"commit"`
	Dirty   bool   `json:"dirty"`
}

// Shown is s with its path as JSON shows it (quote.JSONPath): path_b64
// filled for a path that is not UTF-8.
func (s Skipped) Shown() Skipped {
	s.Path, s.PathB64 = quote.JSONPath(s.Path)
	return s
}

// Shown is s with its path as JSON shows it (quote.JSONPath).
func (s Submodule) Shown() Submodule {
	s.Path, s.PathB64 = quote.JSONPath(s.Path)
	return s
}

// Registered is agent.registered.
type Registered struct {
	Agent     string         `json:"agent"`
	Tree      string         `json:"tree"`
	Isolation string         `json:"isolation"`
	Harness   string         `json:"harness"`
	Parent    *string        `json:"parent"`
	Worktree  *worktreeid.ID `json:"worktree,omitempty"`
}

// Taken is checkpoint.taken, exactly the docs/checkpoints.md#the-log record plus label.
type Taken struct {
	Agent       string      `json:"agent"`
	Checkpoint  string      `json:"checkpoint"`
	Reason      string      `json:"reason"`
	Turn        *string     `json:"turn"`
	ThroughTurn *string     `json:"through_turn"`
	At          string      `json:"at"`
	MidTurn     bool        `json:"mid_turn"`
	Overlap     bool        `json:"overlap"`
	Label       *string     `json:"label,omitempty"`
	Source      string      `json:"source,omitempty"`
	Repos       []RepoState `json:"repos"`
	// ReposJSON is repos as the log has it, not yet decoded, when the scan
	// was asked to (ScanOptions.LazyRepos); Repos is then nil.
	ReposJSON string `json:"-"`
}

// Reused is checkpoint.reused (docs/checkpoints.md#reuse).
type Reused struct {
	Agent      string  `json:"agent"`
	Checkpoint string  `json:"checkpoint"`
	Reason     string  `json:"reason"`
	Turn       *string `json:"turn"`
	At         string  `json:"at"`
	// Label is set by agent.checkpoint with a label on an unchanged tree:
	// the reused checkpoint takes it (docs/checkpoints.md#reuse), an explicit relabel that
	// records PreviousLabel, the label it replaced (null: none).
	Label         *string `json:"label,omitempty"`
	PreviousLabel *string `json:"previous_label,omitempty"`
}

// Failed is checkpoint.failed.
type Failed struct {
	Agent  string  `json:"agent"`
	Reason string  `json:"reason"`
	Code   string  `json:"code"`
	Turn   *string `json:"turn,omitempty"`
	Repo   string  `json:"repo,omitempty"`
	At     string  `json:"at"`
}

// TurnStart is turn.started.
type TurnStart struct {
	Agent       string `json:"agent"`
	Turn        string `json:"turn"`
	HarnessTurn string `json:"harness_turn,omitempty"`
	// HarnessSession is the session or thread the turn ran in, from hooks.
	HarnessSession string `json:"harness_session,omitempty"`
	Process
}

// Process is the harness process a hook ran under (turn.started,
// agent.binding): its pid and start time (harnessproc.ID), so that a later
// command can tell that it has exited.
type Process struct {
	PID   int64 `json:"harness_pid,omitempty"`
	Start int64 `json:"harness_start,omitempty"`
}

// ProcessOf is id as the log records it.
func ProcessOf(id harnessproc.ID) Process { return Process{PID: int64(id.PID), Start: int64(id.Start)} }

// Alive reports whether the recorded process still runs; nothing recorded
// is not alive.
func (p Process) Alive() bool { return harnessproc.ID{PID: int(p.PID), Start: uint64(p.Start)}.Alive() }

// TurnEnd is turn.ended.
type TurnEnd struct {
	Agent   string `json:"agent"`
	Turn    string `json:"turn"`
	NoStart bool   `json:"no_start,omitempty"`
	// NoEnd: the turn never reported its end; the next turn_start
	// closed it, with no turn_end checkpoint.
	NoEnd          bool   `json:"no_end,omitempty"`
	HarnessTurn    string `json:"harness_turn,omitempty"`
	HarnessSession string `json:"harness_session,omitempty"`
	HarnessEnd     string `json:"harness_end,omitempty"`
	HarnessVersion string `json:"harness_version,omitempty"`
}

// Edit is edit.recorded: the paths an edit tool call of a turn named,
// relative to the tree, and those of them that are ignored (docs/rollback.md#classes, docs/checkpoints.md#what-a-capture-holds).
type Edit struct {
	Agent   string   `json:"agent"`
	Turn    string   `json:"turn"`
	Paths   []string `json:"paths"`
	Ignored []string `json:"ignored"`
}

// Marked is tool.marked: one tool call of a turn changed the tree, and
// its capture is mark (t3.2: turn t3's second marked call), held by the
// ref refs/venom/tools/<agent>/<turn n>/<i> (docs/checkpoints.md#tool-calls).
// Command is a shell command's first line, or the paths an edit tool named.
type Marked struct {
	Agent     string      `json:"agent"`
	Turn      string      `json:"turn"`
	Mark      string      `json:"mark"`
	Tool      string      `json:"tool"`
	Command   string      `json:"command"`
	ToolUseID string      `json:"tool_use_id,omitempty"`
	At        string      `json:"at"`
	Repos     []RepoState `json:"repos"`
}

// Note is note.delivered: the rollback note went to the agent with its next
// prompt (docs/rollback.md#the-rollback-note). Rollback is the seq of the rollback.ended record.
type Note struct {
	Agent      string `json:"agent"`
	Rollback   int64  `json:"rollback"`
	From       string `json:"from"`
	Checkpoint string `json:"checkpoint"`
}
