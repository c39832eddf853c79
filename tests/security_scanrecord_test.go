package tests

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/capture/scan"
)

// TestSecurity_CaptureLongIndexNameNoHang: an index entry whose name is
// longer than PATH_MAX (git takes one: update-index --cacheinfo, a
// fetched tree) is among the paths a steady capture stats, with many
// untracked files. The kernel refuses that path: the capture must still
// stat the rest and finish (the io_uring stat path, since removed, waited
// for ever for completions of calls never submitted, deaf to SIGTERM).
func TestSecurity_CaptureLongIndexNameNoHang(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("base.txt", "base\n")
	env.Commit("base")
	for i := 0; i < 200; i++ {
		env.Write(fmt.Sprintf("f%03d.txt", i), fmt.Sprintf("untracked %d\n", i))
	}
	blob := env.Git("hash-object", "-w", "base.txt")
	long := "f100" + strings.Repeat("x", 5000)
	env.Git("update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
	env.Git("commit", "-q", "-m", "a name longer than PATH_MAX")
	extra, timings := carryEnv(env)
	for i := 0; i < 3; i++ {
		env.Write("f000.txt", fmt.Sprintf("edited %d\n", i))
		time.Sleep(60 * time.Millisecond)
		_ = os.Remove(timings)
		files := boundedCheckpoint(t, env, extra)
		for k := 0; k < 200; k++ {
			require.Contains(t, files, fmt.Sprintf("f%03d.txt", k), "capture %d", i+1)
		}
	}
	env.CheckObjects(t)
}

// boundedCheckpoint takes a checkpoint, failing the test (and killing
// the command's process group) if it is not done within 90 s, and returns
// the files of its tree.
func boundedCheckpoint(t *testing.T, env *Env, extra []string) string {
	t.Helper()
	cmd := env.Command(extra, "checkpoint", "--agent=a1", "--json")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	finished := make(chan error, 1)
	go func() { finished <- cmd.Wait() }()
	select {
	case err := <-finished:
		require.NoError(t, err, "stderr: %s", errb.String())
	case <-time.After(90 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-finished
		t.Fatalf("the capture still runs after 90 s (stderr: %s)", errb.String())
	}
	var res struct {
		Checkpoint string `json:"checkpoint"`
	}
	Result{Stdout: out.String()}.JSON(t, &res)
	return env.Git("ls-tree", "-r", "--name-only", "refs/venom/checkpoints/a1/"+res.Checkpoint[1:])
}

// TestSecurity_ScanRecordHugeCount: a scan record whose checksum is right
// but whose count of folders is as large as the file's bytes (512 MiB,
// sparse: nothing on disk) is damaged, not a list made for that count
// (80 bytes a folder: 40 GiB, "fatal error: runtime: out of memory" at
// every capture after it). The capture goes on and holds git's tree.
func TestSecurity_ScanRecordHugeCount(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Checkpoint("--agent=a1")
	env.Write("README.md", "changed\n")
	env.Checkpoint("--agent=a1")
	files := scanRecords(t, env)
	const size = 512 << 20
	head := []byte{'V', 'S', 'R', 3, 0, 0, 0, 0, 1}
	head = binary.AppendUvarint(head, size-64)
	crc := crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), head)
	zeros := make([]byte, 1<<20)
	for n := size - 4 - len(head); n > 0; n -= len(zeros) {
		crc = crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), zeros[:min(n, len(zeros))])
	}
	for _, f := range files {
		require.NoError(t, os.WriteFile(f, head, 0o644))
		require.NoError(t, os.Truncate(f, size-4))
		fh, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = fh.Write(binary.LittleEndian.AppendUint32(nil, crc))
		require.NoError(t, err)
		require.NoError(t, fh.Close())
	}
	env.Write("README.md", "changed again\n")
	// Memory is tested here, not time: the capture reads the 512 MiB
	// whole for its checksum, which on a loaded machine can pass the
	// default 30 s.
	env.SetGlobal("venom.timeout", "120s")
	r := env.Venom("checkpoint", "--agent=a1", "--json")
	require.NotContains(t, r.Stderr, "fatal error")
	r.OK(t)
	require.Equal(t, env.RecipeTree(), env.CheckpointTree("a1", 3))
}

// TestSecurity_ScanRecordHostileUntracked: a scan record (its checksum
// right) whose untracked files name paths no tree can hold (out of the
// tree, inside .git, absolute, empty parts) is damaged: a quick scan
// took them as untracked files in folders it did not read again.
// The capture holds git's tree, and nothing of the file outside.
func TestSecurity_ScanRecordHostileUntracked(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	require.NoError(t, os.WriteFile(filepath.Join(env.Root, "outside.txt"), []byte("secret outside the tree\n"), 0o644))
	env.Write("u/new.txt", "untracked\n")
	env.Checkpoint("--agent=a1")
	env.Write("README.md", "changed\n")
	env.Checkpoint("--agent=a1")
	rel, err := filepath.Rel(env.Dir, filepath.Join(env.Root, "outside.txt"))
	require.NoError(t, err)
	rewriteScanRecords(t, env, func(rec *scan.Record) {
		list := append(rec.Untracked.Strings(), rel, ".git/config", "/etc/hostname", "u//new.txt", "u/./new.txt")
		sort.Strings(list)
		var ok bool
		rec.Untracked, ok = scan.PathsOf(list)
		require.True(t, ok)
	})
	env.Write("README.md", "changed again\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	tree := env.CheckpointTree("a1", 3)
	names := env.Git("ls-tree", "-r", "--name-only", tree)
	require.NotContains(t, names, "outside")
	require.NotContains(t, names, "config")
	require.NotContains(t, names, "hostname")
	require.Equal(t, env.RecipeTree(), tree)
}

// TestSecurity_ScanRecordHostileFolder: a scan record (its checksum
// right) listing a folder outside the tree, its stat data made to have
// moved, is damaged: a quick scan read that folder again as one of the
// tree's, and listed its files as untracked. The capture holds git's
// tree, and nothing of the folder outside.
func TestSecurity_ScanRecordHostileFolder(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	require.NoError(t, os.MkdirAll(filepath.Join(env.Root, "out"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(env.Root, "out", "secret.txt"), []byte("secret outside the tree\n"), 0o644))
	env.Write("u/new.txt", "untracked\n")
	env.Checkpoint("--agent=a1")
	env.Write("README.md", "changed\n")
	env.Checkpoint("--agent=a1")
	rel, err := filepath.Rel(env.Dir, filepath.Join(env.Root, "out"))
	require.NoError(t, err)
	rewriteScanRecords(t, env, func(rec *scan.Record) {
		require.NotEmpty(t, rec.Dirs)
		d := rec.Dirs[len(rec.Dirs)-1]
		d.Path, d.Stat.Mtime = rel, 1
		rec.Dirs = append(rec.Dirs, d)
		sort.Slice(rec.Dirs, func(i, j int) bool { return rec.Dirs[i].Path < rec.Dirs[j].Path })
	})
	env.Write("README.md", "changed again\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	tree := env.CheckpointTree("a1", 3)
	require.NotContains(t, env.Git("ls-tree", "-r", "--name-only", tree), "secret")
	require.Equal(t, env.RecipeTree(), tree)
}

// scanRecords are the paths of the tree's scan records (at least one).
func scanRecords(t *testing.T, env *Env) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(stateDir(t, env), "index", "*.scan"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// rewriteScanRecords loads each scan record, has edit change it, and
// saves it with its checksum right, as a hostile writer of .git/venom
// would.
func rewriteScanRecords(t *testing.T, env *Env, edit func(*scan.Record)) {
	t.Helper()
	for _, f := range scanRecords(t, env) {
		q := scan.Quick{Record: f}
		rec := q.Load()
		require.NotNil(t, rec, "the record as written loads")
		edit(rec)
		q.Save(rec)
	}
}
