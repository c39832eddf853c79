// Package errcode is the registry of docs/errors.md#codes error codes and the suite's own,
// each with the class that fixes its exit code (docs/errors.md#exit-codes).
package errcode

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Class is the part of a code before the first dot; it fixes the exit code.
type Class string

const (
	Failed        Class = "failed"
	InvalidParams Class = "invalid_params"
	NotFound      Class = "not_found"
	Denied        Class = "denied"
	Conflict      Class = "conflict"
	Timeout       Class = "timeout"
	Unsupported   Class = "unsupported"
)

// Exit returns the process exit code of a class (docs/errors.md#exit-codes).
func (c Class) Exit() int {
	switch c {
	case Failed:
		return 1
	case InvalidParams:
		return 2
	case NotFound:
		return 3
	case Denied:
		return 4
	case Conflict:
		return 5
	case Timeout:
		return 7
	case Unsupported:
		return 10
	}
	return 1
}

// Code is one registered error code, like "conflict.outside_edits".
type Code string

// Class returns the code's class.
func (c Code) Class() Class {
	s := string(c)
	if i := strings.IndexByte(s, '.'); i > 0 {
		return Class(s[:i])
	}
	return Failed
}

// The registry: docs/errors.md#codes first, then the suite's own codes.
const (
	NotFoundCheckpoint     Code = "not_found.checkpoint"
	NotFoundAgent          Code = "not_found.agent"
	NotFoundTurn           Code = "not_found.turn"
	NotFoundHarnessSession Code = "not_found.harness_session"
	NotFoundCommit         Code = "not_found.commit"

	InvalidParamsPlan       Code = "invalid_params.plan"
	InvalidParamsAgent      Code = "invalid_params.agent"
	InvalidParamsTurn       Code = "invalid_params.turn"
	InvalidParamsReason     Code = "invalid_params.reason"
	InvalidParamsIsolation  Code = "invalid_params.isolation"
	InvalidParamsParent     Code = "invalid_params.parent"
	InvalidParamsCheckpoint Code = "invalid_params.checkpoint"
	InvalidParamsPath       Code = "invalid_params.path"
	InvalidParamsUsage      Code = "invalid_params.usage"
	InvalidParamsConfig     Code = "invalid_params.config"
	InvalidParamsHarness    Code = "invalid_params.harness"
	InvalidParamsHookInput  Code = "invalid_params.hook_payload"
	InvalidParamsFilter     Code = "invalid_params.filter"
	InvalidParamsRemote     Code = "invalid_params.remote"
	InvalidParamsInto       Code = "invalid_params.into"

	DeniedAgentCaller Code = "denied.agent_caller"

	ConflictTurnRunning         Code = "conflict.turn_running"
	ConflictHandedOver          Code = "conflict.handed_over"
	ConflictInvalidTransition   Code = "conflict.invalid_transition"
	ConflictRollbackRunning     Code = "conflict.rollback_running"
	ConflictCheckpointPending   Code = "conflict.checkpoint_pending"
	ConflictStaleRequests       Code = "conflict.stale_requests"
	ConflictLiveChildren        Code = "conflict.live_children"
	ConflictTreeShared          Code = "conflict.tree_shared"
	ConflictTreeStale           Code = "conflict.tree_stale"
	ConflictGitOperation        Code = "conflict.git_operation"
	ConflictCheckpointFilesOnly Code = "conflict.checkpoint_files_only"
	ConflictHeadMoved           Code = "conflict.head_moved"
	ConflictCommitsPushed       Code = "conflict.commits_pushed"
	ConflictOutsideEdits        Code = "conflict.outside_edits"
	ConflictRollbackStale       Code = "conflict.rollback_stale"
	ConflictHarnessForkRefused  Code = "conflict.harness_fork_refused"
	ConflictLocked              Code = "conflict.locked"
	ConflictHookInstalled       Code = "conflict.hook_installed"
	ConflictRevertConflicts     Code = "conflict.revert_conflicts"

	UnsupportedHarnessCapability Code = "unsupported.harness_capability"
	UnsupportedCheckpointNoRepo  Code = "unsupported.checkpoint_no_repo"
	UnsupportedObjectFormat      Code = "unsupported.object_format"
	UnsupportedNotYet            Code = "unsupported.not_yet"
	UnsupportedEnvironment       Code = "unsupported.environment"
	UnsupportedRootInOthers      Code = "unsupported.root_in_others"

	FailedCheckpointGit       Code = "failed.checkpoint_git"
	FailedCheckpointTooLarge  Code = "failed.checkpoint_too_large"
	FailedCheckpointUnsafe    Code = "failed.checkpoint_unsafe_path"
	FailedRollbackUndone      Code = "failed.rollback_undone"
	FailedRollbackPartial     Code = "failed.rollback_partial"
	FailedRollbackInterrupted Code = "failed.rollback_interrupted"
	FailedInterrupted         Code = "failed.interrupted"
	FailedState               Code = "failed.state"
	FailedInternal            Code = "failed.internal"
	FailedNote                Code = "failed.note"
	FailedRemote              Code = "failed.remote"
	FailedCopyChecks          Code = "failed.copy_checks"
	FailedCopyBudget          Code = "failed.copy_budget"

	TimeoutCheckpoint     Code = "timeout.checkpoint"
	TimeoutHarnessRequest Code = "timeout.harness_request"
	TimeoutLock           Code = "timeout.lock"
)

// Registry lists every code with the sentence that describes it, for docs
// and for the man-page test that keeps EXIT STATUS honest.
var Registry = map[Code]string{
	NotFoundCheckpoint:     "the checkpoint never existed, was pruned, or its ref no longer holds the logged commit",
	NotFoundAgent:          "no agent of that id is registered in this repository",
	NotFoundTurn:           "no such turn, or it was dropped by a rewind",
	NotFoundHarnessSession: "the harness has no such session or thread",
	NotFoundCommit:         "the revision or range names no commit",

	InvalidParamsPlan:       "both or neither of --dry-run and --plan, or a plan id not of the form p1-<16 hex>",
	InvalidParamsAgent:      "an agent id must match [a-z0-9][a-z0-9_-]{0,63}, must be given when the worktree has several agents, and must work in this worktree",
	InvalidParamsTurn:       "a turn id is t<n>, and a turn_end names the open turn",
	InvalidParamsReason:     "a reason a caller may ask for: manual, turn_start, turn_end, takeover, takeback",
	InvalidParamsIsolation:  "isolation is in_place, worktree or copy, fixed at registration",
	InvalidParamsParent:     "the parent is fixed at registration",
	InvalidParamsCheckpoint: "a checkpoint id is k<n>",
	InvalidParamsPath:       "the path is not inside the repository",
	InvalidParamsUsage:      "the command line is not understood",
	InvalidParamsConfig:     "a venom.* value, or a git setting git-venom follows, is malformed",
	InvalidParamsHarness:    "the harness is not one git-venom knows (a hint names those it knows)",
	InvalidParamsHookInput:  "a hook payload that is not JSON or names no event (logged and ignored)",
	InvalidParamsFilter:     "an events filter is not a type (name or prefix.*) or a resource (agent:<id>)",
	InvalidParamsRemote:     "the remote name cannot name a namespace (a '/' or a character a ref name refuses), or names no configured remote",
	InvalidParamsInto:       "--into names the local agent that records a rollback of a fetched copy: it is given without a copy, names a copy, or no local agent can be inferred",

	DeniedAgentCaller: "an agent may not really roll back a guarded tree, nor anything but its own descendants' trees",

	ConflictTurnRunning:         "a turn of the agent is running",
	ConflictHandedOver:          "the agent is handed over to its harness",
	ConflictInvalidTransition:   "the agent is archived",
	ConflictRollbackRunning:     "a rollback owns the agent or its tree",
	ConflictCheckpointPending:   "a capture of this agent has not finished; retry",
	ConflictStaleRequests:       "stale inbox items",
	ConflictLiveChildren:        "a descendant is live",
	ConflictTreeShared:          "a sharer of the tree is live",
	ConflictTreeStale:           "the agent's worktree is gone; what is at its path is another",
	ConflictGitOperation:        "a merge, rebase, cherry-pick, revert or bisect is under way, or the index is locked",
	ConflictCheckpointFilesOnly: "restore=all on a checkpoint that cannot bring the conversation back",
	ConflictHeadMoved:           "HEAD left the checkpoint's branch or history",
	ConflictCommitsPushed:       "a commit that would be dropped is on a remote-tracking ref",
	ConflictOutsideEdits:        "paths changed outside the agent's turns; choose --outside",
	ConflictRollbackStale:       "the tree, HEAD or a choice differs from the plan",
	ConflictHarnessForkRefused:  "the harness refused to fork the conversation",
	ConflictLocked:              "another venom command holds the repository's lock",
	ConflictHookInstalled:       "the harness setting git-venom needs is already taken by another program",
	ConflictRevertConflicts:     "a revert meets later changes to the same lines or files; --conflicts=markers writes markers",

	UnsupportedHarnessCapability: "restore=all needs a harness that can rewind",
	UnsupportedCheckpointNoRepo:  "not in a git repository with a working tree",
	UnsupportedObjectFormat:      "the repository's object format is not supported",
	UnsupportedNotYet:            "this command is not available yet",
	UnsupportedEnvironment:       "git's environment variables make the repository ambiguous",
	UnsupportedRootInOthers:      "run as root in a repository another user owns",

	FailedCheckpointGit:       "a git command of the capture failed, or the tree is missing",
	FailedCheckpointTooLarge:  "the capture is past venom.maxTotalBytes",
	FailedCheckpointUnsafe:    "the checkpoint's tree holds a path git would refuse to check out (outside the tree, or into .git)",
	FailedRollbackUndone:      "the rollback failed and was undone",
	FailedRollbackPartial:     "the rollback failed and could not be undone; the safety checkpoint is whole",
	FailedRollbackInterrupted: "a rollback was interrupted",
	FailedInterrupted:         "a signal (Ctrl-C, SIGTERM, SIGHUP) stopped the command at a safe point; nothing half-done is recorded",
	FailedState:               "venom's state directory could not be read or written",
	FailedInternal:            "an unexpected failure",
	FailedNote:                "git could not store the note under refs/notes/venom",
	FailedRemote:              "git push, fetch or ls-remote of the remote failed, or git config reading its URL",
	FailedCopyChecks:          "a fetched copy's checkpoint no longer passes fetch's checks (its ref, its commit's trailers or its tree's paths)",
	FailedCopyBudget:          "a fetched copy's checkpoint comes to more paths, folders deep or bytes than a venom.copyMax* key allows",

	TimeoutCheckpoint:     "a capture passed venom.timeout",
	TimeoutHarnessRequest: "the harness did not answer within venom.timeout",
	TimeoutLock:           "the repository's lock was not free within venom.timeout",
}

// Shape is what a code's data holds: the JSON object's members, "name?"
// for one only some errors of the code carry. A code whose errors carry no
// data has the zero Shape (data is null); Nullable says some errors of a
// code with members carry none. The test in this package checks every
// New/Newf call in lib/ against its code's Shape, and docs/errors.md lists
// them, so a script can rely on one shape per code.
type Shape struct {
	Members  []string
	Nullable bool
}

// Members makes the Shape of a code whose errors always carry data.
func Members(names ...string) Shape { return Shape{Members: names} }

// OrNull is s for a code some of whose errors carry no data.
func (s Shape) OrNull() Shape { s.Nullable = true; return s }

// NoData is the Shape of a code whose errors carry no data.
var NoData = Shape{Nullable: true}

// String is the shape as docs/errors.md prints it: {a, b?}, or null.
func (s Shape) String() string {
	if len(s.Members) == 0 {
		return "null"
	}
	out := "{" + strings.Join(s.Members, ", ") + "}"
	if s.Nullable {
		out += " or null"
	}
	return out
}

// Data gives each code of the Registry the shape of its data, in the
// Registry's order.
var Data = map[Code]Shape{
	NotFoundCheckpoint:     Members("checkpoint?", "repo?", "agent?"),
	NotFoundAgent:          Members("agent"),
	NotFoundTurn:           Members("agent", "turn"),
	NotFoundHarnessSession: Members("agent", "harness_session?", "harness_turn?"),
	NotFoundCommit:         Members("commit"),

	InvalidParamsPlan:       NoData,
	InvalidParamsAgent:      Members("agent?", "agents?", "tree?", "elsewhere?"),
	InvalidParamsTurn:       Members("turn", "open?"),
	InvalidParamsReason:     Members("reason"),
	InvalidParamsIsolation:  Members("isolation", "agent?"),
	InvalidParamsParent:     Members("parent", "agent?"),
	InvalidParamsCheckpoint: Members("checkpoint").OrNull(),
	InvalidParamsPath:       Members("path"),
	InvalidParamsUsage:      Members("verb?", "verbs?", "args?", "harness?", "limit?", "scope?", "via?", "checkpoint?", "paths?", "revert?").OrNull(),
	InvalidParamsConfig:     Members("key?", "value?", "file?", "line?", "column?").OrNull(),
	InvalidParamsHarness:    Members("harness"),
	InvalidParamsHookInput:  NoData,
	InvalidParamsFilter:     Members("types?", "resources?", "known?"),
	InvalidParamsRemote:     Members("remote"),
	InvalidParamsInto:       Members("into?", "agents?"),

	DeniedAgentCaller: Members("agent"),

	ConflictTurnRunning:         Members("agent"),
	ConflictHandedOver:          Members("agent"),
	ConflictInvalidTransition:   Members("agent"),
	ConflictRollbackRunning:     Members("agent"),
	ConflictCheckpointPending:   Members("agent"),
	ConflictStaleRequests:       NoData,
	ConflictLiveChildren:        Members("children"),
	ConflictTreeShared:          Members("agents"),
	ConflictTreeStale:           Members("agent", "tree", "reason"),
	ConflictGitOperation:        Members("repo", "operation"),
	ConflictCheckpointFilesOnly: Members("why"),
	ConflictHeadMoved:           Members("repo", "expected", "actual", "branch?", "commits?"),
	ConflictCommitsPushed:       Members("repo", "commits", "refs"),
	ConflictOutsideEdits:        Members("repos"),
	ConflictRollbackStale:       Members("checkpoint"),
	ConflictHarnessForkRefused:  Members("agent", "harness_session", "fork_at?", "harness_turn?", "message?"),
	ConflictLocked:              Members("repo"),
	ConflictHookInstalled:       Members("file", "notify?"),
	ConflictRevertConflicts:     Members("revert", "conflicts"),

	UnsupportedHarnessCapability: Members("fix", "harness?", "reason?"),
	UnsupportedCheckpointNoRepo:  NoData,
	UnsupportedObjectFormat:      Members("object_format"),
	UnsupportedNotYet:            Members("verb"),
	UnsupportedEnvironment:       Members("variable"),
	UnsupportedRootInOthers:      Members("owner"),

	FailedCheckpointGit:       Members("repo", "reason"), // RepoReason
	FailedCheckpointTooLarge:  Members("repo", "bytes", "limit", "largest", "folders"),
	FailedCheckpointUnsafe:    Members("checkpoint", "path", "path_b64?", "rule"),
	FailedRollbackUndone:      Members("repo", "reason"), // RepoReason
	FailedRollbackPartial:     Members("repos", "safety"),
	FailedRollbackInterrupted: Members("safety"),
	FailedInterrupted:         Members("signal"),
	FailedState:               Members("file?", "refused?", "log?", "lines?", "agent?", "reason?").OrNull(),
	FailedInternal:            NoData,
	FailedNote:                Members("commit", "ref"),
	FailedRemote:              Members("remote", "step?"),
	FailedCopyChecks:          Members("agent", "checkpoint", "reason"),
	FailedCopyBudget:          Members("agent", "checkpoint", "key", "limit", "found"),

	TimeoutCheckpoint:     Members("repo"),
	TimeoutHarnessRequest: Members("agent", "harness_session", "harness_turn"),
	TimeoutLock:           Members("repo"),
}

// Error is a coded error (docs/errors.md): what the user sees, and the cause behind it.
type Error struct {
	Code    Code
	Message string
	Data    any
	Hints   []string
	cause   error
	short   string // Message as a person reads it, where Message passes 80 columns
	retries []retry
}

// retry is a hint that the same command goes on with some flags set
// (Retry): Hints[at] stands for it until the command writes it whole.
type retry struct {
	at    int
	why   string
	flags []string
}

// Shorter sets the sentence the human "error:" line shows in place of a
// message too long for 80 columns, whose rest the hints then say; --json
// keeps the message whole.
func (e *Error) Shorter(format string, args ...any) *Error {
	e.short = fmt.Sprintf(format, args...)
	return e
}

// New makes an error with the code's registry sentence as its message.
func New(code Code, data any) *Error {
	return &Error{Code: code, Message: Registry[code], Data: data}
}

// Newf makes an error with its own message.
func Newf(code Code, data any, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Data: data}
}

// Wrap keeps cause behind the error, for the "caused by" chain.
func (e *Error) Wrap(cause error) *Error {
	e.cause = cause
	return e
}

// Hint adds a "hint:" line for human output.
func (e *Error) Hint(format string, args ...any) *Error {
	e.Hints = append(e.Hints, fmt.Sprintf(format, args...))
	return e
}

// Retry adds a hint that the command goes on with flags set: why says
// what that does ("to leave them as they are"), flags are --name=value
// (--name= leaves the flag out, --name=false a boolean one). Only the
// command's own layer knows what was typed, so it writes the whole
// command in the hint's place (Retries); until then the hint is the
// flags and why.
func (e *Error) Retry(why string, flags ...string) *Error {
	e.retries = append(e.retries, retry{at: len(e.Hints), why: why, flags: flags})
	e.Hints = append(e.Hints, strings.Join(flags, " ")+": "+why)
	return e
}

// Retries writes each Retry hint as two: its why, and below it the whole
// command that command(flags) makes of the flags, to copy and run.
func (e *Error) Retries(command func(flags []string) string) {
	e.rewrite(func(r retry) []string { return []string{r.why + ":", "  " + command(r.flags)} })
}

// HasRetry reports a Retry hint not yet written whole.
func (e *Error) HasRetry() bool { return len(e.retries) > 0 }

// DropRetries leaves the Retry hints out, where the command has already
// printed the commands they would be.
func (e *Error) DropRetries() {
	e.rewrite(func(retry) []string { return nil })
}

func (e *Error) rewrite(as func(retry) []string) {
	if len(e.retries) == 0 {
		return
	}
	var out []string
	next := 0
	for i, h := range e.Hints {
		if next < len(e.retries) && e.retries[next].at == i {
			out = append(out, as(e.retries[next])...)
			next++
			continue
		}
		out = append(out, h)
	}
	e.Hints, e.retries = out, nil
}

func (e *Error) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.cause }

// ExitCode lets kong and the exit switch find the class's exit code.
func (e *Error) ExitCode() int { return e.Code.Class().Exit() }

// Line is the error's human sentence: its message, then its cause after a
// colon as git's "fatal:" lines end with the system's reason, unless the
// message already says it (many messages are built around their cause).
func (e *Error) Line() string {
	if e.short != "" {
		return e.short
	}
	// Go's "context deadline exceeded" and "context canceled" say nothing
	// a person can act on: the message says what ran out or was stopped.
	if e.cause == nil || errors.Is(e.cause, context.DeadlineExceeded) || errors.Is(e.cause, context.Canceled) {
		return e.Message
	}
	why := e.cause.Error()
	if r, ok := e.cause.(interface{ Reason() string }); ok {
		why = r.Reason()
	}
	if why == "" || strings.Contains(e.Message, why) {
		return e.Message
	}
	return e.Message + ": " + why
}

// Cause returns the underlying error, if any.
func (e *Error) Cause() error { return e.cause }

// As returns err's *Error, if it holds one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool {
	e, ok := As(err)
	return ok && e.Code == code
}

// From turns any error into a coded one: an *Error passes through, anything
// else is a bug path reported under fallback with its cause kept.
func From(err error, fallback Code) *Error {
	if e, ok := As(err); ok {
		return e
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Newf(fallback, nil, "the command ran out of time (venom.timeout)").Wrap(err)
	case errors.Is(err, context.Canceled):
		return Newf(fallback, nil, "the command was stopped").Wrap(err)
	}
	return Newf(fallback, nil, "%v", err).Wrap(err)
}

// RepoReason is the data of failed.checkpoint_git and failed.rollback_undone:
// {repo, reason}, in docs/errors.md#codes's member order (a map would sort them).
type RepoReason struct {
	Repo   string `json:"repo"`
	Reason string `json:"reason"`
}

// RepoPaths is one member of conflict.outside_edits's repos: {repo, paths},
// in docs/errors.md#codes's member order.
type RepoPaths struct {
	Repo  string   `json:"repo"`
	Paths []string `json:"paths"`
}

// RepoFailure is one member of failed.rollback_partial's repos: {repo,
// state, reason}, in docs/errors.md#codes's member order.
type RepoFailure struct {
	Repo   string `json:"repo"`
	State  string `json:"state"`
	Reason string `json:"reason"`
}
