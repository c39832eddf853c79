package checkpointcmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/harness"
)

// hookTails are what may follow `hook <harness>`: the words hook install
// writes, the global flags, values as the next word, and what kong refuses
// or reads otherwise.
var hookTails = [][]string{
	nil,
	{"--per-tool"},
	{"--agent=a1", "--isolation=worktree", "--per-tool"},
	{"--agent=a1", "--isolation=in_place"}, {"--isolation=copy"}, {"--isolation="}, {"--agent="},
	{"--agent", "a2", "--parent", "p0", "--isolation", "copy"},
	{"--json", "-q", "--no-pager", "--color=never"}, {"--quiet", "--color", "always"}, {"--color=auto"},
	{`{"type":"agent-turn-complete"}`}, {"--per-tool", `{"type":"agent-turn-complete"}`, "--agent=x"},
	{"--agent=Bad Name!"}, {"--parent=p 1"},
	// Left to kong: each is refused, read otherwise, or asks for help.
	{"--isolation=bogus"}, {"--isolation", "bogus"}, {"--color=sometimes"}, {"--color"}, {"--color", "never"},
	{"--bogus"}, {"-x"}, {"-"}, {"--"}, {"--", "x"}, {"one", "two"}, {""}, {"--agent"}, {"--agent", "--json"},
	{"--agent", ""}, {"--agent=a", "--agent=b"}, {"--json", "--json"}, {"-q", "--quiet"},
	{"--per-tool=true"}, {"--per-tool=false"}, {"--json=true"}, {"--no-pager=1"},
	{"--version"}, {"-h"}, {"--help"}, {"help"}, {"-qh"}, {"--agent=a", "--help"},
}

// Read reads a hook call to exactly what kong reads from it: the same
// harness, flags, payload and global flags, for every harness; what it
// does not read, kong reads (cli.Run), and the words hook install writes
// it always reads.
func TestRead_AsKongReadsIt(t *testing.T) {
	for _, k := range harness.Kinds {
		for _, tail := range hookTails {
			args := append([]string{"hook", k.Name}, tail...)
			run, globals, ok := New().Read(args)
			if !ok {
				continue
			}
			require.NotNil(t, run, "%q", args)
			wVerb, wRun, wGlobals, wErr := parseWith(t, New(), args)
			require.NoError(t, wErr, "%q: Read reads what kong refuses", args)
			assert.Equal(t, "hook "+k.Name, wVerb, "%q", args)
			got, _, _, _ := readHook(args)
			assert.Equal(t, *wRun, got, "%q", args)
			assert.Equal(t, wGlobals, *globals, "%q", args)
		}
		for _, tail := range [][]string{nil, {"--per-tool"}, {"--agent=a1", "--isolation=worktree", "--per-tool"},
			{"--agent=a1", `{"type":"agent-turn-complete"}`}} {
			args := append([]string{"hook", k.Name}, tail...)
			_, _, ok := New().Read(args)
			assert.True(t, ok, "%q, as hook install writes it, is read without kong", args)
		}
	}
	for _, args := range [][]string{{"hook"}, {"hook", "install", "claude-code"}, {"list"}, {"hook", "nosuch"},
		{"--json", "hook", "claude-code"}, {"hook", "--json", "claude-code"}} {
		_, _, ok := New().Read(args)
		_, _, take := readTake(args)
		assert.Equal(t, take, ok, "%q is not a hook call Read reads", args)
	}
}

var _ cli.Reader = (*CLI)(nil)
