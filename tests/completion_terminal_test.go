package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompletion_TabAtATerminal types into an interactive bash on a
// pseudo-terminal, as a person does, and reads what the screen shows after
// <TAB><TAB>: the agent's live checkpoints (in number order, k2 before
// k10) and turns where a rollback or diff takes one, its turns after
// --revert=, and the checkpoint completed in place when only one fits;
// never the folder's files where no path goes (--plan=, a checkpoint).
func TestCompletion_TabAtATerminal(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(gitBashCompletion); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: git's bash completion comes with Debian's git package", gitBashCompletion)
		}
		t.Skipf("%s is missing (Debian's git package has it)", gitBashCompletion)
	}
	env := NewEnv(t)
	for i := 1; i <= 5; i++ {
		env.Turn("b2", func() { env.Write(fmt.Sprintf("file-%d.txt", i), "x\n") })
	}
	for i := 6; i <= 10; i++ {
		env.Write(fmt.Sprintf("file-%d.txt", i), "y\n")
		env.Take(t, "--agent=b2")
	}
	// One match a line, in the order given, so that the screen's order
	// is the order offered.
	rc := filepath.Join(t.TempDir(), "rc")
	require.NoError(t, os.WriteFile(rc, []byte("PS1='$ '\nsource "+gitBashCompletion+"\nsource "+
		filepath.Join(repoRoot(), "completion", "git-venom.bash")+"\nbind 'set bell-style none'\n"+
		"bind 'set completion-display-width 0'\nbind 'set completion-query-items 0'\nbind 'set page-completions off'\n"), 0o644))
	sc := env.startScreen(t, "bash --rcfile "+rc+" -i", "COLUMNS=80", "LINES=24", "INPUTRC=/dev/null")
	sc.WaitFor(0, "$ ")
	checkpoints := []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11",
		"t1", "t2", "t3", "t4", "t5", "last"}
	turns := []string{"t1", "t2", "t3", "t4", "t5"}
	type keys struct {
		typed, want string
		offered     []string // in this order, one a line
	}
	for _, k := range []keys{
		// Many candidates: the first TAB completes what they share, the
		// second lists them below the line.
		{"git venom-rollback --agent=b2 \t\t", "last", checkpoints},
		{"\x03", "$ ", nil},
		{"git venom-diff --agent=b2 k3 \t\t", "last", checkpoints},
		{"\x03", "$ ", nil},
		{"git venom-rollback --agent=b2 --revert=t\t\t", "t5", turns},
		{"\x03", "$ ", nil},
		{"git venom-checkpoint list --agent=b2 --turn=t\t\t", "t5", turns},
		{"\x03", "$ ", nil},
		// One candidate: completed on the line itself.
		{"git venom-checkpoint list --agent=b\t", "--agent=b2 ", nil},
		{"\x03", "$ ", nil},
		// Where no file goes, none is offered: the line stays as typed.
		{"git venom-rollback --agent=b2 --plan=\t\t\x05 END\n", "END", nil},
		{"git venom-rollback --agent=b2 k1 \t\t\x05 END\n", "END", nil},
		// After --, files.
		{"git venom-diff --agent=b2 k1 -- file-5\t", "file-5.txt", nil},
		{"\x03", "$ ", nil},
	} {
		from := len(sc.Shown())
		sc.Type(k.typed)
		end := sc.WaitFor(from, k.want)
		if k.offered != nil {
			var lines []string
			for _, l := range strings.Split(ansiEscape.ReplaceAllString(sc.Shown()[from:end], ""), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "$") && !strings.HasPrefix(l, "git ") {
					lines = append(lines, l)
				}
			}
			assert.Equal(t, k.offered, lines, "%q offered", k.typed)
		}
		if strings.HasSuffix(k.typed, " END\n") {
			assert.NotContains(t, sc.Shown()[from:end], "file-", "%q offered files", k.typed)
			sc.WaitFor(end, "$ ") // the line ran; bash reads the next
		}
	}
	sc.Type("exit\n")
	sc.Wait()
}
