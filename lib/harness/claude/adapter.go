package claude

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/conversation"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/state"
)

// TestedVersion is the newest Claude Code whose rewind git-venom has
// checked (docs/harness.md#rewind): rewind is declared for
// turns recorded by this version or older.
const TestedVersion = "2.1.332"

// Adapter is claude-code's rewind (docs/rollback.md#conversation): like its fork ("head"), the new
// session id is chosen at once, with no process, and the next start copies
// the source up to the turn's last entry.
type Adapter struct{}

// HasHarnessID: claude-code rewinds to a turn's harness_end.
func (Adapter) HasHarnessID(t *agents.Turn) bool { return t.HarnessEnd != "" }

// CanRewind declares rewind for turns with a harness_end recorded by a
// Claude Code no newer than TestedVersion (an unknown version counts as
// tested: the hooks record it from the transcript whenever there is one).
func (Adapter) CanRewind(a *agents.Agent, t *agents.Turn) bool {
	return t != nil && t.HarnessEnd != "" && !Newer(t.Version, TestedVersion)
}

// WhyNot says why turn t cannot be rewound to: its end was never found
// in the transcript (none was there when the Stop hook ran, or it held
// no assistant line), or a Claude Code newer than the tested one wrote it.
func (Adapter) WhyNot(a *agents.Agent, t *agents.Turn) string {
	switch {
	case t.HarnessEnd == "":
		return "its end is not in the Claude Code transcript"
	case Newer(t.Version, TestedVersion):
		return "Claude Code " + t.Version + " wrote it, newer than the tested " + TestedVersion
	}
	return ""
}

// Newer reports whether version v is newer than w (x.y.z).
func Newer(v, w string) bool {
	pv, pw := parts(v), parts(w)
	if pv == nil || pw == nil {
		return false
	}
	for i := 0; i < 3; i++ {
		if pv[i] != pw[i] {
			return pv[i] > pw[i]
		}
	}
	return false
}

func parts(v string) []int {
	f := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(f) != 3 {
		return nil
	}
	out := make([]int, 3)
	for i, s := range f {
		end := 0
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		n, err := strconv.Atoi(s[:end])
		if err != nil {
			return nil
		}
		out[i] = n
	}
	return out
}

// Rewind names a new session holding the conversation through turn t. By
// default nothing is written: the binding records fork_source and fork_at,
// and resume is the print-mode command that makes the copy at its first
// start. With Materialize the copy is written now, the SDK's way, and
// resume is a plain `claude --resume NEW`. The source is never modified.
func (Adapter) Rewind(ctx context.Context, s *state.Store, a *agents.Agent, t *agents.Turn, o conversation.Options) (*conversation.Rewound, error) {
	// The session the turn ran in holds its last entry. Before hooks said
	// which, the binding's: a rewind whose copy does not exist yet copies
	// from its source.
	src := t.Session
	if src == "" {
		src = a.Binding.ForkSource
	}
	if src == "" {
		src = a.Binding.Session
	}
	if src == "" {
		return nil, errcode.Newf(errcode.NotFoundHarnessSession, map[string]string{"agent": a.ID},
			"agent %s has no Claude Code session bound; its hooks bind one at SessionStart", a.ID)
	}
	getenv := gitcli.Getter(s.Environ)
	path, lerr := Locate(ConfigDir(getenv), a.Tree, src)
	anchor := t.HarnessEnd
	if lerr == nil {
		u, err := Resolve(path, anchor)
		if err != nil {
			return nil, refused(a.ID, src, anchor, err)
		}
		anchor = u
	}
	id := NewSessionID()
	if o.Materialize {
		if lerr != nil {
			return nil, errcode.Newf(errcode.NotFoundHarnessSession, map[string]string{"agent": a.ID, "harness_session": src},
				"Claude Code session %s has no transcript under %s", src, ConfigDir(getenv))
		}
		if _, err := Fork(path, anchor, id, time.Now()); err != nil {
			return nil, refused(a.ID, src, anchor, err)
		}
		return &conversation.Rewound{HarnessSession: id, Resume: []string{"claude", "--resume", id}}, nil
	}
	return &conversation.Rewound{HarnessSession: id, ForkSource: src, ForkAt: anchor,
		Resume: ResumeArgv(src, anchor, id)}, nil
}

// Fresh names the empty session a rollback to before the first turn
// rewinds to: Claude Code starts a session under an id given with
// --session-id, in print mode and interactively alike.
func (Adapter) Fresh(a *agents.Agent) *conversation.Rewound {
	id := NewSessionID()
	return &conversation.Rewound{HarnessSession: id, Resume: []string{"claude", "--session-id", id}}
}

// ResumeArgv continues a rewound conversation in print mode (docs/harness.md#hooks):
// Claude Code copies SRC through END into the session NEW at its start.
func ResumeArgv(src, end, id string) []string {
	return []string{"claude", "-p", "--resume", src, "--resume-session-at", end, "--fork-session", "--session-id", id}
}

func refused(agent, src, anchor string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return errcode.Newf(errcode.NotFoundHarnessSession, map[string]string{"agent": agent, "harness_session": src},
			"Claude Code session %s is gone", src).Wrap(err)
	}
	return errcode.Newf(errcode.ConflictHarnessForkRefused, map[string]string{"agent": agent, "harness_session": src, "fork_at": anchor},
		"Claude Code session %s cannot be copied through %s: %v", src, anchor, err).Wrap(err)
}
