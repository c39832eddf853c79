package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecurity_RepackBetweenPackAndRef: a capture writes its objects as a
// pack and only then makes the ref that names its commit. A person's `git
// repack -a -d` run in that window packs what refs reach and removes the
// other packs, unreachable objects and all, as git documents; git's own
// fetch and receive-pack keep such a pack with a .keep file until their
// refs are in. The checkpoint must not come out naming a commit whose
// objects are gone.
func TestSecurity_RepackBetweenPackAndRef(t *testing.T) {
	t.Parallel()
	for _, cmd := range [][]string{{"repack", "-a", "-d", "-q"}, {"gc", "--quiet", "--prune=now"}} {
		t.Run(cmd[0], func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.Write("src/main.go", "package main\n")
			env.Commit("code")
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_start").OK(t)
			env.Tick()
			env.Write("src/main.go", "package main // the agent's edit\n")
			env.Write("notes/new.txt", "an untracked file only the checkpoint holds\n")

			p := env.pause("ref-create", []string{"VENOM_TEST_PAUSE_RESUME=1"},
				"checkpoint", "--agent=a1", "--reason=turn_end", "--json")
			env.Git(append([]string{"-c", "gc.autoDetach=false"}, cmd...)...)
			resumeEvery(t, p)
			require.NotContains(t, p.errb.String(), "panic:")
			require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), "%s%s", p.out, p.errb)

			for _, r := range env.VenomRefs() {
				name, _, _ := strings.Cut(r, "=")
				out := env.GitRaw("cat-file", "-e", name+"^{tree}")
				require.Equal(t, 0, out.Code, "%s names a commit whose objects %v removed", name, cmd)
			}
			env.Git("fsck", "--connectivity-only", "--no-dangling")
			env.Rollback("--agent=a1", "--checkpoint=k2", "--restore=files", "--outside=overwrite")
			require.Equal(t, "an untracked file only the checkpoint holds\n", env.Read("notes/new.txt"))
		})
	}
}

// TestSecurity_KilledCaptureLeavesNoHold: a capture killed between its
// pack and its ref leaves its pack's .keep (the hold that protects it from
// a concurrent repack); the next capture lets go of it, so the pack does not
// stay kept from git's own gc forever, and a person's .keep is never
// touched. A finished capture leaves no hold at all.
func TestSecurity_KilledCaptureLeavesNoHold(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t)
	userKeeps, _ := filepath.Glob(w.Path(".git/objects/pack/*.keep"))
	require.Len(t, userKeeps, 1)
	w.capture(t, 1)
	keeps, _ := filepath.Glob(w.Path(".git/objects/pack/*.keep"))
	require.Equal(t, userKeeps, keeps, "a finished capture left a hold")

	w.Write("work.txt", "killed\n")
	cmd := w.StartPaused("ref-create", nil, "checkpoint", "--agent=a1")
	keeps, _ = filepath.Glob(w.Path(".git/objects/pack/*.keep"))
	require.Len(t, keeps, 2, "the paused capture's pack is not held")
	Kill9(t, cmd)
	w.capture(t, 2)
	keeps, _ = filepath.Glob(w.Path(".git/objects/pack/*.keep"))
	require.Equal(t, userKeeps, keeps, "the killed capture's hold is left")
	w.check(t, 2, 8)
}

// TestSecurity_KilledCaptureBeforeItsRecordLeavesNoHold: a capture killed
// after its pack is installed and before the record names it leaves the
// pack's hold on a pack the record does not name. The next capture lets go
// of it too: a kept pack is never removed by git's gc, so the killed
// capture's unreachable objects would otherwise stay forever.
func TestSecurity_KilledCaptureBeforeItsRecordLeavesNoHold(t *testing.T) {
	t.Parallel()
	w := newPackWorld(t)
	userKeeps, _ := filepath.Glob(w.Path(".git/objects/pack/*.keep"))
	require.Len(t, userKeeps, 1)
	w.capture(t, 1)

	w.Write("work.txt", "killed before its record\n")
	cmd := w.StartPaused("capture-pack-installed", nil, "checkpoint", "--agent=a1")
	keeps, _ := filepath.Glob(w.Path(".git/objects/pack/*.keep"))
	require.Len(t, keeps, 2, "the paused capture's pack is not held")
	Kill9(t, cmd)
	w.capture(t, 2)
	keeps, _ = filepath.Glob(w.Path(".git/objects/pack/*.keep"))
	require.Equal(t, userKeeps, keeps, "the killed capture's hold is left")
	w.check(t, 2, 8)
}

// TestSecurity_KilledHoldLeavesNoEmptyKeep: a capture killed while it
// writes its pack's hold leaves no empty .keep, which no one would ever
// remove (it may be the user's) and which would keep its pack from every
// merge: at most the hold's temporary file, which the next capture
// removes, and its hold (with its note), let go as any killed one's. The
// same capture again makes its pack, merged later as any other.
func TestSecurity_KilledHoldLeavesNoEmptyKeep(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"pack-hold-written", "pack-hold-linked"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			w := newPackWorld(t, "VENOM_TEST_PACK_THRESHOLD=2")
			userKeeps, _ := filepath.Glob(w.Path(".git/objects/pack/*.keep"))
			w.capture(t, 1)
			w.Write("work.txt", "killed while its pack's hold is written\n")
			Kill9(t, w.StartPaused(point, nil, "checkpoint", "--agent=a1"))
			t.Logf("killed at %s: objects/pack %v, count-objects %v", point, w.packFiles(), w.CountObjects())
			w.Venom("checkpoint", "--agent=a1").OK(t)
			const captures = 8
			for i := 3; i <= captures; i++ {
				w.capture(t, i)
			}
			files := w.packFiles()
			keeps, _ := filepath.Glob(w.Path(".git/objects/pack/*.keep"))
			require.Equal(t, userKeeps, keeps, "a .keep is left: %v", files)
			for _, f := range files {
				require.False(t, strings.HasPrefix(f, "tmp_keep_venom_"), "a hold's temporary file is left: %v", files)
			}
			for _, name := range w.recorded() {
				require.NoFileExists(t, w.Path(".git/objects/pack/"+name+".keep"))
			}
			// The killed capture's unfinished pack is git's tmp_pack_*, as a
			// killed git index-pack's: git prune's.
			w.Git("prune", "--expire=now")
			w.check(t, captures, 2)
		})
	}
}

// packFiles lists objects/pack's file names.
func (e *Env) packFiles() []string {
	e.t.Helper()
	ents, err := os.ReadDir(e.Path(".git/objects/pack"))
	require.NoError(e.t, err)
	var out []string
	for _, de := range ents {
		out = append(out, de.Name())
	}
	return out
}
