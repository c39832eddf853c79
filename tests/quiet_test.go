package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// -q is quiet as git's (the summary line goes, warnings
// stay), and a folder venom.exclude leaves out is not news at every
// capture. Checked on a terminal, as a person sees it.
func TestQuiet_TakeAtATerminal(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Git("config", "--global", "--add", "venom.exclude", "/node_modules/")
	env.Git("config", "--global", "venom.maxFileBytes", "1k")
	env.Write("node_modules/pkg/index.js", "module.exports = 1\n") // untracked
	env.Take(t, "--agent=a1")

	screen, code := env.ptyRun(t, nil, "checkpoint", "--agent=a1", "-q")
	assert.Equal(t, 0, code, screen)
	assert.Empty(t, strings.TrimSpace(screen), "-q shows nothing when all went well")

	env.Write("a.txt", "changed\n")
	screen, code = env.ptyRun(t, nil, "checkpoint", "--agent=a1")
	assert.Equal(t, 0, code, screen)
	screen = ansiSeq.ReplaceAllString(screen, "")
	assert.Contains(t, screen, "Checkpoint a1/k", "without -q, the summary")
	assert.NotContains(t, screen, "node_modules", "an exclusion the person asked for is not repeated")
	assert.NotContains(t, screen, "index's version is kept")

	// A file left out for its size is a warning, shown even with -q.
	env.Write("big.bin", strings.Repeat("x", 4096))
	env.Write("a.txt", "changed again\n")
	screen, code = env.ptyRun(t, nil, "checkpoint", "--agent=a1", "-q")
	assert.Equal(t, 0, code, screen)
	screen = ansiSeq.ReplaceAllString(screen, "")
	assert.NotContains(t, screen, "Checkpoint a1/k")
	assert.Contains(t, screen, "warning: big.bin not captured (too_big, 4.00 KiB)")
	assert.Equal(t, 1, strings.Count(screen, "\n"), "one line: %q", screen)
}
