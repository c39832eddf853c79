package repo

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
