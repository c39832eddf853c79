package tests

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A reader that stops early (`| head -1`) ends a command
// quietly, as git's: no error line, exit 141 (git's, dying of SIGPIPE).
func TestClosedPipe_Quiet(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start").OK(t)
	var big strings.Builder
	for i := 0; i < 40000; i++ {
		big.WriteString("a line of the agent's big file\n")
	}
	env.Write("big.txt", big.String())
	long := strings.Repeat("l", 4000)
	for i := 0; i < 40; i++ {
		env.Write("n.txt", strings.Repeat("x", i))
		env.Venom("checkpoint", "--agent=a1", "--label="+long).OK(t)
	}
	for _, args := range [][]string{
		{"diff", "k1"},
		{"diff", "k1", "last"},
		// Not list nor events without --json: they cut labels to 80
		// columns, so here all of it fits a pipe's buffer and a closed
		// pipe never stops them.
		{"checkpoint", "events", "--json"},
	} {
		c := env.Command(nil, args[0], args[1:]...)
		out, err := c.StdoutPipe()
		require.NoError(t, err)
		var errb strings.Builder
		c.Stderr = &errb
		require.NoError(t, c.Start())
		first, err := bufio.NewReader(out).ReadString('\n')
		require.NoError(t, err, "%v", args)
		require.NotEmpty(t, first)
		out.Close()
		err = c.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v read to the end: the test needs more output", args)
		require.Equal(t, 141, ee.ExitCode(), "%v: %s", args, errb.String())
		require.Empty(t, errb.String(), "%v", args)
	}
}
