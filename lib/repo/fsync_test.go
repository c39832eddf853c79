package repo

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFsyncComponentIn: core.fsync read as git 2.39's
// parse_fsync_components reads it (each value checked with git
// update-ref and git repack under strace).
func TestFsyncComponentIn(t *testing.T) {
	for value, want := range map[string][2]bool{ // reference, pack
		"":                {false, true},
		"reference":       {true, true},
		"ref":             {true, true},
		"commit":          {true, true},
		"objects, commit": {true, true},
		"-,reference":     {false, true},
		"reference ":      {false, true},
		"none":            {false, false},
		"none,reference":  {true, true},
		"reference,none":  {true, false},
		"-pack":           {false, false},
		"none,pack":       {false, true},
		"pack-metadata":   {false, true},
		"loose-object":    {false, true},
		"all":             {true, true},
		"a":               {true, true},
		"-all,reference":  {true, false},
		"reference,-ref":  {true, true},
	} {
		assert.Equal(t, want[0], FsyncReference.in(value), "reference under %q", value)
		assert.Equal(t, want[1], FsyncPack.in(value), "pack under %q", value)
	}
}

// A Repo reads core.fsync once, as git reads its config once a process:
// under a config git must read (an include, -c), the refs and packs of
// one command each asked git config. A change after the first read is
// the next command's.
func TestSyncs_ReadsOnce(t *testing.T) {
	env := plainEnv(t)
	dir := newRepo(t, env)
	runGit(t, dir, env, "config", "core.fsync", "reference")
	for name, environ := range map[string][]string{
		"in process": env,
		"from git":   append(env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=venom.x", "GIT_CONFIG_VALUE_0=1"),
	} {
		runGit(t, dir, env, "config", "core.fsync", "reference")
		r, err := Open(context.Background(), dir, environ)
		require.NoError(t, err)
		assert.True(t, r.Syncs(FsyncReference), name)
		runGit(t, dir, env, "config", "core.fsync", "none")
		assert.True(t, r.Syncs(FsyncReference), name)
		assert.True(t, r.Syncs(FsyncPack), name)
		r.Free()
	}
}
