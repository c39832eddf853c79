package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counted sums the "name n" lines of a VENOM_TEST_TIMINGS file.
func counted(t *testing.T, file, name string) int {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	defer f.Close()
	sum := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == name {
			n, err := strconv.Atoi(v)
			require.NoError(t, err)
			sum += n
		}
	}
	return sum
}

// TestSecurity_CopyReversedTurnsFoldOnce: a log copy whose turns come in
// descending order made every fold of the copy quadratic (the turns were
// sorted again at each turn out of order): 60,000 turns cost 17 s per
// list and per explain --remotes, and the 64 MiB cap allows 40 minutes.
// The fold sorts them once, at its end, whatever their order: counted,
// not timed.
func TestSecurity_CopyReversedTurnsFoldOnce(t *testing.T) {
	t.Parallel()
	c := newSharedCopy(t, 1)
	const n = 400
	// Insert n turn.started records, turns t<n+1>..t2, after the
	// registration, then renumber seq.
	a := c.a
	var out strings.Builder
	seq := 0
	for _, line := range strings.Split(a.Git("--git-dir="+c.remote, "show", c.logRef("a1")+":log.jsonl"), "\n") {
		seq++
		out.WriteString(renumber(line, seq) + "\n")
		if strings.Contains(line, `"type":"agent.registered"`) {
			for k := n + 1; k >= 2; k-- {
				seq++
				fmt.Fprintf(&out, `{"seq":%d,"ts":"2026-01-01T00:00:00.000Z","type":"turn.started","agent":"a1","turn":"t%d"}`+"\n", seq, k+1)
			}
		}
	}
	blob := a.GitInput(out.String(), "--git-dir="+c.remote, "hash-object", "-w", "--stdin")
	tree := a.GitInput("100644 blob "+blob+"\tlog.jsonl\n", "--git-dir="+c.remote, "mktree")
	a.Git("--git-dir="+c.remote, "update-ref", c.logRef("a1"), a.Git("--git-dir="+c.remote, "commit-tree", tree, "-m", "venom log a1"))

	b, cp := c.fetcher(t)
	timings := filepath.Join(b.Root, "timings")
	var l ListResult
	b.VenomIn(b.Dir, []string{"VENOM_TEST_TIMINGS=" + timings}, "checkpoint", "list", "--agent="+cp, "--json").OK(t).JSON(t, &l)
	assert.Len(t, l.Checkpoints, 2)
	assert.Equal(t, 1, counted(t, timings, "fold-turn-sorts"), "one sort of the copy's turns, not one a turn")
	require.NoError(t, os.Remove(timings))
	b.VenomIn(b.Dir, []string{"VENOM_TEST_TIMINGS=" + timings}, "checkpoint", "explain", "HEAD", "--remotes", "--json").OK(t)
	assert.Equal(t, 1, counted(t, timings, "fold-turn-sorts"), "explain --remotes")
}

// renumber sets a log line's seq.
func renumber(line string, seq int) string {
	i := strings.Index(line, `"seq":`)
	j := strings.Index(line, `,"ts"`)
	if i < 0 || j < i {
		return line
	}
	return line[:i] + `"seq":` + strconv.Itoa(seq) + line[j:]
}
