package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecurity_ExplainTranscriptOfTinyLines: explain read a Claude Code
// transcript whole, split it into lines and decoded every one: 80 million
// lines of "{}" (240 MB) took 133 s and 7.1 GB.
// Anything that can append to the transcript (the agent) can do that. It
// now streams the file and decodes only lines that can be a chain entry
// or a prompt, keeping only the prompts the agent's turns name: counted,
// and the largest resident set checked, not timed.
func TestSecurity_ExplainTranscriptOfTinyLines(t *testing.T) {
	t.Parallel()
	e := NewEnv(t)
	e.Hook("claude-code", e.Payload("claude/hooks/SessionStart.startup.json", nil))
	claudeTurn(t, e, "p2", t2End, func() { e.Write("hello.txt", "hello world\n") })
	e.Commit("hello")
	// The largest resident set of explain itself (peakRSS),
	// and how many transcript lines it decoded.
	timings := filepath.Join(e.Root, "timings")
	explain := func() (ExplainResult, int64) {
		t.Helper()
		_ = os.Remove(timings)
		peak := newPeakRSS(t)
		cmd := exec.Command(filepath.Join(binDir, "git-venom-checkpoint"), "explain", "HEAD", "--json")
		cmd.Dir, cmd.Env = e.Dir, append(e.Environ(), "VENOM_TEST_TIMINGS="+timings, peak.Env())
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		var res ExplainResult
		require.NoError(t, json.Unmarshal(out, &res))
		return res, peak.Bytes()
	}
	_, base := explain()
	path := filepath.Join(e.claudeProjectDir(), claudeSession+".jsonl")
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	chain := strings.Count(string(before), `"uuid"`)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	tiny := []byte(strings.Repeat("{}\n", 1<<20))
	const mib = 6 // 6 Mi lines, 18 MiB
	for i := 0; i < mib; i++ {
		_, err = f.Write(tiny)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())

	res, rss := explain()
	require.Len(t, res.Commits, 1)
	require.Len(t, res.Commits[0].Turns, 1)
	require.NotNil(t, res.Commits[0].Turns[0].Prompt, "the prompt is still found")
	assert.Equal(t, "Change hello to hello world. Remember BANANA.", *res.Commits[0].Turns[0].Prompt)
	decoded := counted(t, timings, "transcript-lines-decoded")
	assert.LessOrEqual(t, decoded, chain, "only the lines that name a uuid are decoded, not the %d Mi tiny ones", mib)
	assert.Positive(t, decoded)
	// Held whole, the lines' slices alone were 24 bytes a line: 144 MiB
	// more than with the transcript as it was (537 MiB in all on 8aa3cc2).
	assert.Less(t, rss, base+24<<20, "largest resident set of explain, against %d before the tiny lines", base)
}
