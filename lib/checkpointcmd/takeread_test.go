package checkpointcmd

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// takesRead are takes, named or not, as the tests, scripts and people
// write them; takesLeft, what kong refuses, reads otherwise, or may read
// as a request for help.
var takesRead = [][]string{
	nil, {"take"},
	{"--agent=a1"}, {"--agent", "a1", "--reason=turn_start", "--turn=t3"},
	{"--agent=a1", "--reason", "turn_end", "--turn", "t3", "--label", "L", "--json", "-q", "--no-pager", "--color", "never"},
	{"take", "--agent=a1", "--isolation=worktree", "--parent", "p0", "--quiet"},
	{"--label", "list"}, {"--label", "take", "--agent", "hook"}, {"--label="}, {"--agent="}, {"--isolation="},
	{"--label=--json", "--turn=x"}, {"--color=auto"}, {"--color", "always", "--agent=a1"},
	{"--reason=takeover"}, {"--reason", "takeback"}, {"--isolation", "copy"}, {"--isolation=in_place"},
	{"--agent=Not Valid"}, {"--turn=t1", "--reason=turn_end", "--label", "a b"},
}

var takesLeft = [][]string{
	{"--reason=bogus"}, {"--reason", "Manual"}, {"--isolation=bogus"}, {"--color=sometimes"}, {"--color"},
	{"--color", "list"}, {"--bogus"}, {"-x"}, {"-"}, {"--"}, {"--", "x"}, {"list"}, {"take", "take"},
	{"--json", "take"}, {""}, {"--agent"}, {"--agent", "--json"}, {"--label", "-q"}, {"--agent", ""},
	{"--agent=a", "--agent=b"}, {"--json", "--json"}, {"-q", "--quiet"}, {"--json=true"}, {"--no-pager=1"},
	{"--version"}, {"-h"}, {"--help"}, {"help"}, {"-qh"}, {"--agent=a", "--help"}, {"--limit=5"},
}

// readTake reads a take to exactly what kong reads from it with the
// whole grammar, VENOM_AGENT unset, empty or set; what it does not read,
// kong reads (cli.Run), and the takes the tests and hooks write it reads.
func TestRead_TakeAsKongReadsIt(t *testing.T) {
	for _, env := range []string{"", "from-env", "unset"} {
		if env == "unset" {
			t.Setenv("VENOM_AGENT", "")
			require.NoError(t, os.Unsetenv("VENOM_AGENT")) // t.Setenv restores it
		} else {
			t.Setenv("VENOM_AGENT", env)
		}
		read := 0
		for _, args := range append(takesRead, takesLeft...) {
			run, globals, ok := New().Read(args)
			if !ok {
				continue
			}
			read++
			require.NotNil(t, run, "%q", args)
			wVerb, wTake, wGlobals, wErr := parseTake(t, New(), args)
			require.NoError(t, wErr, "%q: Read reads what kong refuses", args)
			assert.Equal(t, "take", wVerb, "%q", args)
			got, _, _ := readTake(args)
			assert.Equal(t, wTake, got, "%q, VENOM_AGENT %s", args, env)
			assert.Equal(t, wGlobals, *globals, "%q", args)
		}
		assert.Equal(t, len(takesRead), read, "VENOM_AGENT %s", env)
	}
}
