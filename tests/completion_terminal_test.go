package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompletion_TabAtATerminal types into an interactive bash on a
// pseudo-terminal, as a person does, and reads what the screen shows after
// <TAB><TAB>: the agent's live checkpoints where a rollback or diff takes
// one, and the checkpoint completed in place when only one fits.
func TestCompletion_TabAtATerminal(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(gitBashCompletion); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: git's bash completion comes with Debian's git package", gitBashCompletion)
		}
		t.Skipf("%s is missing (Debian's git package has it)", gitBashCompletion)
	}
	env := NewEnv(t)
	env.Write("a.txt", "x\n")
	env.Take(t, "--agent=b2")
	env.Write("b.txt", "y\n")
	env.Take(t, "--agent=b2")
	env.Write("c.txt", "z\n")
	env.Take(t, "--agent=b2")
	rc := filepath.Join(t.TempDir(), "rc")
	require.NoError(t, os.WriteFile(rc, []byte("PS1='$ '\nsource "+gitBashCompletion+"\nsource "+
		filepath.Join(repoRoot(), "completion", "git-venom.bash")+"\nbind 'set bell-style none'\n"), 0o644))
	sc := env.startScreen(t, "bash --rcfile "+rc+" -i", "COLUMNS=80", "LINES=24", "INPUTRC=/dev/null")
	sc.WaitFor(0, "$ ")
	type keys struct{ typed, want string }
	for _, k := range []keys{
		// Two candidates: the first TAB completes nothing, the second
		// lists them below the line.
		{"git venom-rollback --agent=b2 k\t\t", "k3"},
		{"\x03", "$ "},
		{"git venom-diff --agent=b2 k3 \t\t", "last"},
		{"\x03", "$ "},
		// One candidate: completed on the line itself.
		{"git venom-checkpoint list --agent=b\t", "--agent=b2 "},
		{"\x03", "$ "},
	} {
		from := len(sc.Shown())
		sc.Type(k.typed)
		sc.WaitFor(from, k.want)
		if strings.HasSuffix(k.typed, "\t\t") {
			list := sc.Shown()[from:]
			for _, id := range []string{"k1", "k2", "k3"} {
				assert.Contains(t, list, id, "the checkpoints offered")
			}
		}
	}
	sc.Type("exit\n")
	sc.Wait()
}
