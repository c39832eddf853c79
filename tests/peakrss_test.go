package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peakRSS is the peak resident set of one command run, as the command
// reads it when it ends (VENOM_TEST_PEAKRSS, VmHWM), not wait4's Maxrss:
// Go starts a child with vfork, and Linux takes the parent's high-water
// mark into the child's at the exec. A command run in this test binary
// reports the binary's peak when larger: 580 and 724 MiB for a list of
// 100 MiB in a whole run of the package.
type peakRSS struct {
	t    *testing.T
	file string
}

func newPeakRSS(t *testing.T) *peakRSS {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "peakrss-")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Remove(f.Name()))
	return &peakRSS{t: t, file: f.Name()}
}

// Env is the environment entry that asks the command for its peak.
func (p *peakRSS) Env() string { return "VENOM_TEST_PEAKRSS=" + p.file }

// Bytes is the peak the ended command wrote, in bytes; the file goes,
// for the next run.
func (p *peakRSS) Bytes() int64 {
	p.t.Helper()
	b, err := os.ReadFile(p.file)
	require.NoError(p.t, err, "the command wrote no peak (VENOM_TEST_PEAKRSS)")
	require.NoError(p.t, os.Remove(p.file))
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	require.NoError(p.t, err)
	require.Positive(p.t, n)
	return n
}

// TestPeakRSS_TheCommandsOwn: with this test binary grown by 256 MiB, a
// command it starts still measures only itself. The wait4 figure the
// memory tests took before counted the binary's 256 MiB: how a list of
// 100 MiB failed a 320 MiB limit only in the whole run of the package.
func TestPeakRSS_TheCommandsOwn(t *testing.T) {
	env := NewEnv(t)
	ballast := make([]byte, 256<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1
	}
	peak := newPeakRSS(t)
	cmd := exec.Command(filepath.Join(binDir, "git-venom-checkpoint"), "--version")
	cmd.Dir, cmd.Env = env.Dir, append(env.Environ(), peak.Env())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	runtime.KeepAlive(ballast)
	got := peak.Bytes()
	waited := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	t.Logf("peak %d MiB; wait4's Maxrss %d MiB", got>>20, waited>>20)
	assert.Less(t, got, int64(96<<20), "--version's own peak")
}
