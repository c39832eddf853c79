package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeBig writes a text file of about size bytes, numbered lines.
func writeBig(t *testing.T, env *Env, rel string, size int) {
	t.Helper()
	f, err := os.Create(env.Path(rel))
	require.NoError(t, err)
	b := bufio.NewWriterSize(f, 1<<20)
	for n, i := 0, 0; n < size; i++ {
		k, err := fmt.Fprintf(b, "line %09d of a big file a capture stores through git\n", i)
		require.NoError(t, err)
		n += k
	}
	require.NoError(t, b.Flush())
	require.NoError(t, f.Close())
}

// TestObjects_BigFileStreamedIntoTheCommitPack: a capture of a 160 MiB
// file that git hash-object stored loose writes it again into the
// checkpoint's pack as it reads it: the command's own peak stays far
// under the file's size (it read the whole blob into memory, 160 MiB
// and more, before). The checkpoint holds the file byte for byte.
func TestObjects_BigFileStreamedIntoTheCommitPack(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.SetGlobal("venom.maxFileBytes", "1g")
	env.SetGlobal("venom.maxTotalBytes", "2g")
	env.Take(t, "--agent=a1")
	writeBig(t, env, "big.txt", 160<<20)

	peak := newPeakRSS(t)
	cmd := exec.Command(filepath.Join(binDir, "git-venom-checkpoint"), "--agent=a1", "--json")
	timings := filepath.Join(env.Root, "timings")
	cmd.Dir, cmd.Env = env.Dir, append(env.Environ(), peak.Env(), "VENOM_TEST_TIMINGS="+timings)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	hwm := peak.Bytes()
	// And it was libgit2's stream of the loose blob.
	counts, err := os.ReadFile(timings)
	require.NoError(t, err)
	assert.Contains(t, string(counts), "again-streamed-loose 1\n")
	t.Logf("peak %d MiB", hwm>>20)
	assert.Less(t, hwm, int64(128<<20), "the capture of a 160 MiB file grew to %d MiB", hwm>>20)

	fsckWhole(t, env)
	want := env.Git("hash-object", "big.txt")
	assert.Equal(t, want, env.Git("rev-parse", "refs/venom/checkpoints/a1/2:big.txt"))
	// In the checkpoint's own pack, not (only) loose.
	env.Git("prune", "--expire=now")
	fsckWhole(t, env)
}

// TestObjects_BigFileThresholdUnderGc: with core.bigFileThreshold low in
// the repository (git's default is 512 MiB), git hash-object writes a big
// file into a pack of its own, no .keep, that nothing holds: a capture
// streams it again from there into its commit's pack (git cat-file, as
// libgit2 streams only loose objects), and a person's gc --prune=now
// while the capture writes its commit deletes that pack: the capture is
// taken again, and its checkpoint is whole, its caches trusted or not.
func TestObjects_BigFileThresholdUnderGc(t *testing.T) {
	t.Parallel()
	for _, c := range statCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Git("config", "core.bigFileThreshold", "1m")
			env.Take(t, "--agent=a1")
			big := bigFile("threshold")
			env.Write("big.txt", big)
			pastRacy()

			// Without gc: the blob, packed by git, goes into k2's pack.
			timings := filepath.Join(env.Root, "timings")
			var res TakeResult
			env.VenomIn(env.Dir, append([]string{"VENOM_TEST_TIMINGS=" + timings}, c.extra...),
				"checkpoint", "--agent=a1", "--json").OK(t).JSON(t, &res)
			require.Equal(t, "k2", *res.Checkpoint)
			counts, err := os.ReadFile(timings)
			require.NoError(t, err)
			assert.Contains(t, string(counts), "again-streamed-git 1\n", "git cat-file streamed the packed blob")
			env.Git("-c", "gc.autoDetach=false", "gc", "--prune=now", "--quiet")
			fsckWhole(t, env)
			assert.Equal(t, big, env.GitRaw("show", "refs/venom/checkpoints/a1/2:big.txt").Stdout)

			// With gc at the commit: git's pack of the new content is gone.
			big = bigFile("threshold, again")
			env.Write("big.txt", big)
			pastRacy()
			p := env.pause("commit-write#1", append([]string{"VENOM_TEST_PAUSE_RESUME=1"}, c.extra...),
				"checkpoint", "--agent=a1", "--json")
			gcNow(env)
			p.resume(t).OK(t).JSON(t, &res)
			require.Equal(t, "k3", *res.Checkpoint)
			fsckWhole(t, env)
			assert.Equal(t, big, env.GitRaw("show", "refs/venom/checkpoints/a1/3:big.txt").Stdout)
		})
	}
}
