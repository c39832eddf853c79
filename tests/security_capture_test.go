package tests

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A capture reads a folder's .gitignore and a nested repository's .git
// file. A FIFO put there (after the scan record saw a regular file) must
// not block the command while it holds the lock: files of the tree are
// opened non-blocking and without following links, and only regular ones
// are read.
func TestSecurity_CaptureFIFOInTheTree(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"sub/.gitignore", "nested/.git"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Write("sub/.gitignore", "*.o\n")
			env.Write("sub/a.txt", "a\n")
			env.Write("nested/.git", "gitdir: ../elsewhere\n")
			env.Git("add", "sub")
			env.Commit("sub")
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t)
			env.Remove(name)
			require.NoError(t, syscall.Mkfifo(env.Path(name), 0o644))

			r := venomWithin(t, env, 60*time.Second, "checkpoint", "--agent=a1", "--reason=turn_end", "--json")
			assert.NotEmpty(t, r.OK(t).Map(t)["checkpoint"], "the turn_end capture is taken (or reused)")
			// The lock is free again: the next command runs at once.
			venomWithin(t, env, 60*time.Second, "checkpoint", "list", "--json").OK(t)
		})
	}
}

// git allows ";", "$" and "#" in ref names, and a person (or a script with
// sh -c) runs doctor's fix as printed: every word of it is shell-quoted, so
// for `refs/venom/checkpoints/a1/9;touch${IFS}PWNED;#` it deletes that ref
// and does nothing else.
func TestSecurity_DoctorFixIsShellQuoted(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	pwned := filepath.Join(env.Root, "PWNED")
	ref := "refs/venom/checkpoints/a1/9;touch${IFS}" + pwned + ";#"
	env.Git("update-ref", ref, "HEAD")

	var report struct {
		Checks []struct {
			ID  string  `json:"id"`
			Fix *string `json:"fix"`
		} `json:"checks"`
	}
	env.Venom("checkpoint", "doctor", "--json").JSON(t, &report)
	var fix string
	for _, c := range report.Checks {
		if c.ID == "checkpoints.refs" && c.Fix != nil {
			fix = *c.Fix
		}
	}
	require.Contains(t, fix, "update-ref -d")
	r := env.runInput(env.Dir, nil, "", "sh", "-c", fix)
	require.Equal(t, 0, r.Code, r.Stdout+r.Stderr)
	assert.NoFileExists(t, pwned, "the fix ran a command hidden in a ref name")
	assert.Empty(t, env.GitRaw("for-each-ref", "--format=%(refname)", "refs/venom/checkpoints/a1/9*").Stdout,
		"the fix deletes the ref it names")
}

// Whether a nested repository of the tree is dirty is read with libgit2,
// never git status inside it: that would read the repository's own config
// and .gitattributes, which anyone who writes in the tree shapes, and run
// a clean filter named there on every capture. A real change still makes
// it dirty.
func TestSecurity_CaptureNestedRepositoryRunsNothing(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	marker := filepath.Join(env.Root, "pwned")
	env.Write("vendor/x/.gitattributes", "* filter=evil\n")
	env.Write("vendor/x/f.txt", "data\n")
	nested := env.Path("vendor/x")
	env.Git("-C", nested, "init", "-q")
	env.Git("-C", nested, "add", ".")
	env.Git("-C", nested, "commit", "-q", "-m", "nested")
	env.Git("-C", nested, "config", "filter.evil.clean", "sh -c 'touch "+marker+"; cat'")
	// The stat of a tracked file changes, its content does not: status
	// hashes it again, through the filter.
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(nested, "f.txt"), old, old))

	submodules := func() []any {
		t.Helper()
		taken := env.Records("checkpoint.taken")
		require.NotEmpty(t, taken)
		return taken[len(taken)-1]["repos"].([]any)[0].(map[string]any)["submodules"].([]any)
	}
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	assert.NoFileExists(t, marker, "a command of the nested repository's config ran")
	require.Len(t, submodules(), 1)
	assert.Equal(t, false, submodules()[0].(map[string]any)["dirty"])

	env.Write("vendor/x/f.txt", "changed\n")
	env.Write("README.md", "a new checkpoint\n")
	env.Venom("checkpoint", "--agent=a1", "--json").OK(t)
	assert.NoFileExists(t, marker, "a command of the nested repository's config ran")
	assert.Equal(t, true, submodules()[0].(map[string]any)["dirty"])
}
