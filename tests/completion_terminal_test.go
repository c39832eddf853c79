package tests

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed")
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
	c := exec.Command("script", "-qec", "bash --rcfile "+rc+" -i", "/dev/null")
	c.Dir = env.Dir
	c.Env = append(env.Environ(), "TERM=xterm", "COLUMNS=80", "LINES=24", "INPUTRC=/dev/null")
	stdin, err := c.StdinPipe()
	require.NoError(t, err)
	var mu sync.Mutex
	var screen bytes.Buffer
	c.Stdout = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return screen.Write(p)
	})
	c.Stderr = c.Stdout
	require.NoError(t, c.Start())
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-done
	})
	shown := func() string {
		mu.Lock()
		defer mu.Unlock()
		return screen.String()
	}
	// waitFor waits until the screen holds want after position from.
	waitFor := func(from int, want string) int {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			s := shown()
			if i := strings.Index(s[from:], want); i >= 0 {
				return from + i + len(want)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("the screen never showed %q; it showed:\n%s", want, shown())
		return 0
	}
	at := waitFor(0, "$ ")
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
		from := len(shown())
		_, err := io.WriteString(stdin, k.typed)
		require.NoError(t, err)
		at = waitFor(from, k.want)
		if strings.HasSuffix(k.typed, "\t\t") {
			list := shown()[from:]
			for _, id := range []string{"k1", "k2", "k3"} {
				assert.Contains(t, list, id, "the checkpoints offered")
			}
		}
	}
	_ = at
	_, _ = io.WriteString(stdin, "exit\n")
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("bash did not exit; the screen showed:\n%s", shown())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
