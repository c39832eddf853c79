// Package events maps journal records to the published event stream
// (docs/json.md#events): {seq, ts, source, type, data}, one a line. Beside
// the four types there, the suite's own tell what a client following the
// stream would otherwise miss: turns, reuses, prunes, removals, archiving.
// Edits, bindings, notes and registrations stay internal.
package events

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/statefile"
)

// Published types, from the record each comes from.
var published = map[string]string{
	journal.CheckpointTaken:  "agent.checkpoint",
	journal.CheckpointFailed: "agent.checkpoint_failed",
	journal.RollbackStarted:  "agent.rollback_started",
	journal.RollbackEnded:    "agent.rollback_ended",
	// The suite's own, beyond docs/json.md#events (which keeps them internal in a
	// daemon whose own events carry turns and clean).
	journal.TurnStarted:       "agent.turn_started",
	journal.TurnEnded:         "agent.turn_ended",
	journal.CheckpointReused:  "agent.checkpoint_reused",
	journal.CheckpointPruned:  "agent.checkpoints_pruned",
	journal.CheckpointRemoved: "agent.checkpoints_removed",
	journal.AgentArchived:     "agent.archived",
}

// eventTypes lists the published event types, sorted.
func eventTypes() []string {
	var out []string
	for _, t := range published {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// names reports whether some published type is t, or starts with t when
// prefix is set.
func names(t string, prefix bool) bool {
	for _, e := range published {
		if e == t || prefix && strings.HasPrefix(e, t) {
			return true
		}
	}
	return false
}

// Published reports whether a record type becomes an event.
func Published(recordType string) bool { return published[recordType] != "" }

// Event is one line of the stream.
type Event struct {
	Seq    int64  `json:"seq"`
	Ts     string `json:"ts"`
	Source string `json:"source"`
	Type   string `json:"type"`
	Data   any    `json:"data"`
	agent  string
}

// Agent is the agent the event's resource names.
func (e *Event) Agent() string { return e.agent }

// RepoCommit is {repo, commit} of agent.checkpoint's repos.
type RepoCommit struct {
	Repo   string `json:"repo"`
	Commit string `json:"commit"`
}

// Checkpoint is agent.checkpoint's data.
type Checkpoint struct {
	Agent       string       `json:"agent"`
	Checkpoint  string       `json:"checkpoint"`
	Reason      string       `json:"reason"`
	Turn        *string      `json:"turn,omitempty"`
	ThroughTurn *string      `json:"through_turn"`
	Label       *string      `json:"label,omitempty"`
	Repos       []RepoCommit `json:"repos"`
}

// CheckpointFailed is agent.checkpoint_failed's data.
type CheckpointFailed struct {
	Agent  string  `json:"agent"`
	Reason string  `json:"reason"`
	Code   string  `json:"code"`
	Turn   *string `json:"turn,omitempty"`
	Repo   string  `json:"repo,omitempty"`
}

// RollbackStarted is agent.rollback_started's data.
type RollbackStarted struct {
	Agent      string `json:"agent"`
	Checkpoint string `json:"checkpoint"`
	Safety     string `json:"safety"`
	Restore    string `json:"restore"`
	// Paths: a path-scoped rollback's pathspecs, from the top.
	Paths []string `json:"paths,omitempty"`
	// Copy: the fetched copy whose checkpoint the files came from.
	Copy string `json:"copy,omitempty"`
	// Revert: what a revert takes back, t<n> or k<a>..k<b>.
	Revert string `json:"revert,omitempty"`
}

// RollbackEnded is agent.rollback_ended's data: the record's members are
// exactly docs/json.md#events's.
type RollbackEnded = journal.RollbackEnd

// TurnStarted is agent.turn_started's data.
type TurnStarted struct {
	Agent string `json:"agent"`
	Turn  string `json:"turn"`
}

// TurnEnded is agent.turn_ended's data; no_start: the turn had no
// turn_start (a harness-started turn, docs/checkpoints.md#reasons).
// no_end: it never reported its end, and the next turn_start closed it
// with no turn_end checkpoint.
type TurnEnded struct {
	Agent   string `json:"agent"`
	Turn    string `json:"turn"`
	NoStart bool   `json:"no_start"`
	NoEnd   bool   `json:"no_end"`
}

// CheckpointReused is agent.checkpoint_reused's data: a capture found the
// tree as the checkpoint has it (docs/checkpoints.md#reuse). relabeled: the capture was asked
// for a label, which the checkpoint now has; previous_label is the one it
// replaced. Both labels are null when there is none.
type CheckpointReused struct {
	Agent         string  `json:"agent"`
	Checkpoint    string  `json:"checkpoint"`
	Reason        string  `json:"reason"`
	Turn          *string `json:"turn"`
	Relabeled     bool    `json:"relabeled"`
	Label         *string `json:"label"`
	PreviousLabel *string `json:"previous_label"`
}

// CheckpointsPruned is agent.checkpoints_pruned's data: the record
// {agent, checkpoints} (docs/checkpoints.md#retention-and-clean).
type CheckpointsPruned = journal.PrunedRecord

// CheckpointsRemoved is agent.checkpoints_removed's data, the record's
// {agent, repo, removed, kept} (docs/checkpoints.md#retention-and-clean), counting refs.
type CheckpointsRemoved struct {
	Agent   string `json:"agent"`
	Repo    string `json:"repo"`
	Removed int    `json:"removed"`
	Kept    int    `json:"kept"`
}

// Archived is agent.archived's data, the record: clean archived the agent.
type Archived = journal.Archived

// FromRecord maps a record to its event; ok is false for internal records.
func FromRecord(e *journal.Entry, source string) (ev Event, ok bool) {
	typ := published[e.Type]
	if typ == "" {
		return ev, false
	}
	ev = Event{Seq: e.Seq, Ts: e.Ts, Source: source, Type: typ, agent: e.Agent}
	switch e.Type {
	case journal.CheckpointTaken:
		repos := make([]RepoCommit, 0, len(e.Repos))
		for _, r := range e.Repos {
			repos = append(repos, RepoCommit{Repo: r.Repo, Commit: r.Commit})
		}
		ev.Data = Checkpoint{Agent: e.Agent, Checkpoint: e.Checkpoint, Reason: e.Reason, Turn: e.Turn,
			ThroughTurn: e.ThroughTurn, Label: e.Label, Repos: repos}
	case journal.CheckpointFailed:
		ev.Data = CheckpointFailed{Agent: e.Agent, Reason: e.Reason, Code: e.Code, Turn: e.Turn, Repo: e.Repo}
	case journal.RollbackStarted:
		ev.Data = RollbackStarted{Agent: e.Agent, Checkpoint: e.Checkpoint, Safety: e.Safety, Restore: e.Restore,
			Paths: e.Paths, Copy: e.Copy, Revert: e.Revert}
	case journal.RollbackEnded:
		d := RollbackEnded{Agent: e.Agent, Checkpoint: e.Checkpoint, Safety: e.Safety, Restore: e.Restore,
			OK: e.OK != nil && *e.OK, After: e.After}
		if !d.OK {
			d.Code = e.Code
		}
		if len(e.Drops) > 0 {
			d.Drops = e.Drops
		}
		d.Paths = e.Paths // a path-scoped rollback's, else none
		d.Copy = e.Copy
		d.Revert = e.Revert
		ev.Data = d
	case journal.TurnStarted:
		ev.Data = TurnStarted{Agent: e.Agent, Turn: deref(e.Turn)}
	case journal.TurnEnded:
		ev.Data = TurnEnded{Agent: e.Agent, Turn: deref(e.Turn), NoStart: e.NoStart, NoEnd: e.NoEnd}
	case journal.CheckpointReused:
		d := CheckpointReused{Agent: e.Agent, Checkpoint: e.Checkpoint, Reason: e.Reason, Turn: e.Turn,
			Label: e.Label, Relabeled: e.Label != nil}
		if d.Relabeled {
			d.PreviousLabel = e.PreviousLabel
		}
		ev.Data = d
	case journal.CheckpointPruned:
		ev.Data = CheckpointsPruned{Agent: e.Agent, Checkpoints: nonNil(e.Checkpoints)}
	case journal.CheckpointRemoved:
		ev.Data = CheckpointsRemoved{Agent: e.Agent, Repo: e.Repo, Removed: e.Removed, Kept: e.Kept}
	case journal.AgentArchived:
		ev.Data = Archived{Agent: e.Agent}
	}
	return ev, true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Filter selects events by type and resource (docs/json.md#conventions).
type Filter struct {
	types     []string // exact names, or prefixes ending in "."
	resources map[string]bool
}

// ParseFilter reads --types and --resources: a JSON array or a comma list.
// Types are exact names or prefix.*; resources are agent:<id>.
func ParseFilter(types, resources string) (*Filter, error) {
	f := &Filter{}
	ts, err := list("types", types)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t == "*" {
			f.types = append(f.types, "")
			continue
		}
		if strings.Contains(strings.TrimSuffix(t, ".*"), "*") {
			return nil, errcode.Newf(errcode.InvalidParamsFilter, map[string]string{"types": t},
				"%q: a type is an exact name or prefix.*, like agent.*", t)
		}
		p, prefix := strings.CutSuffix(t, "*")
		if !names(p, prefix) {
			// A typo would otherwise match nothing, and --follow wait forever.
			return nil, errcode.Newf(errcode.InvalidParamsFilter, map[string]any{"types": t, "known": eventTypes()},
				"%q names no event type; the types are %s", t, strings.Join(eventTypes(), ", "))
		}
		if prefix {
			f.types = append(f.types, p)
		} else {
			f.types = append(f.types, t+"\x00") // exact
		}
	}
	rs, err := list("resources", resources)
	if err != nil {
		return nil, err
	}
	if len(rs) > 0 {
		f.resources = map[string]bool{}
	}
	for _, r := range rs {
		id, ok := strings.CutPrefix(r, "agent:")
		if !ok || id == "" {
			return nil, errcode.Newf(errcode.InvalidParamsFilter, map[string]string{"resources": r},
				"%q: a resource is agent:<id>", r)
		}
		f.resources[id] = true
	}
	return f, nil
}

func list(name, s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []string
	if strings.HasPrefix(s, "[") {
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			return nil, errcode.Newf(errcode.InvalidParamsFilter, map[string]string{name: s},
				"--%s is a JSON array of strings or a comma list", name)
		}
	} else {
		for _, x := range strings.Split(s, ",") {
			out = append(out, strings.TrimSpace(x))
		}
	}
	var clean []string
	for _, x := range out {
		if x != "" {
			clean = append(clean, x)
		}
	}
	return clean, nil
}

// Match reports whether the filter lets the event through.
func (f *Filter) Match(ev *Event) bool {
	if f.resources != nil && !f.resources[ev.agent] {
		return false
	}
	if f.types == nil {
		return true
	}
	for _, t := range f.types {
		if exact, ok := strings.CutSuffix(t, "\x00"); ok {
			if ev.Type == exact {
				return true
			}
		} else if strings.HasPrefix(ev.Type, t) {
			return true
		}
	}
	return false
}

// Source returns venom/<uuid>, the repository's event source id, kept in
// the state directory and made the first time it is asked for. Two
// processes making it at once agree: the file is linked into place, never
// overwritten.
func Source(stateDir string) (string, error) {
	path := filepath.Join(stateDir, "source")
	if b, err := statefile.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) == 36 {
		return "venom/" + strings.TrimSpace(string(b)), nil
	}
	tmp, err := statefile.CreateTemp(stateDir, "source-*")
	if err != nil {
		return "", err
	}
	defer statefile.Remove(tmp.Name())
	_, err = fmt.Fprintln(tmp, newUUID())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := statefile.Link(tmp.Name(), path); err != nil && !os.IsExist(err) {
		return "", err
	}
	b, err := statefile.ReadFile(path)
	if err != nil {
		return "", err
	}
	return "venom/" + strings.TrimSpace(string(b)), nil
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
