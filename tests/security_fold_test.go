package tests

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A planted fold snapshot (.git/venom/fold.json, lib/state/snapshot.go) is
// passed over as any unusable one is: every command answers from the whole
// log, and nothing is read through it or allocated for its claimed size.
func TestSecurity_FoldSnapshotPlanted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, snap, outside string)
	}{
		// A sparse file of a terabyte: read into one buffer of its size,
		// it killed every command with "fatal error: runtime: out of
		// memory" until a person removed it.
		{"sparse_terabyte", func(t *testing.T, snap, _ string) {
			require.NoError(t, os.Truncate(snap, 1<<40))
		}},
		// Guards (they held before): a FIFO must not block a command, and
		// a link must not be followed nor written through.
		{"fifo", func(t *testing.T, snap, _ string) {
			require.NoError(t, os.Remove(snap))
			require.NoError(t, syscall.Mkfifo(snap, 0o644))
		}},
		{"link", func(t *testing.T, snap, outside string) {
			data, err := os.ReadFile(snap)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(outside, data, 0o644))
			require.NoError(t, os.Remove(snap))
			require.NoError(t, os.Symlink(outside, snap))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t).With("VENOM_TEST_FOLD_EVERY=1")
			env.Write("f.txt", "one\n")
			env.Take(t, "--agent=a1")
			env.Write("f.txt", "two\n")
			env.Take(t, "--agent=a1")
			env.Write("g.txt", "three\n")
			env.Take(t, "--agent=a1")
			snap := filepath.Join(env.StateDir(), "fold.json")
			fi, err := os.Lstat(snap)
			require.NoError(t, err, "the takes wrote a fold snapshot")
			require.True(t, fi.Mode().IsRegular())
			want := env.Venom("checkpoint", "list", "--agent=a1", "--json")
			require.Equal(t, 0, want.Code, want.Stderr)

			outside := filepath.Join(env.Outside(nil), "fold.json")
			tc.plant(t, snap, outside)
			var before []byte
			if tc.name == "link" {
				before, err = os.ReadFile(outside)
				require.NoError(t, err)
			}

			got := env.Venom("checkpoint", "list", "--agent=a1", "--json")
			assert.Equal(t, 0, got.Code, got.Stderr)
			assert.Equal(t, want.Stdout, got.Stdout)
			dry := env.Venom("rollback", "--agent=a1", "--checkpoint=k1", "--outside=overwrite", "--dry-run", "--json")
			assert.Equal(t, 0, dry.Code, dry.Stderr)
			env.Write("h.txt", "four\n")
			take := env.Venom("checkpoint", "--agent=a1", "--json")
			assert.Equal(t, 0, take.Code, take.Stderr)
			assert.Len(t, env.List(t, "--agent=a1").Checkpoints, 4)
			if tc.name == "link" {
				after, err := os.ReadFile(outside)
				require.NoError(t, err)
				assert.Equal(t, before, after, "the link's target is untouched")
			}
		})
	}
}
