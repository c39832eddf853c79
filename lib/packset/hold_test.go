package packset

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// otherHolder is another live command's lock on the hold at p: flock(2)
// locks belong to an open file, so a second open stands for a second
// process.
func otherHolder(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_SH))
	t.Cleanup(func() { f.Close() })
	return f
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestHold_OnlyItsLastHolderRemovesIt: a command's hold goes when it lets
// go; one another live command holds
// too (the same pack, written by both) stays when this one lets go, and
// goes with the last holder.
func TestHold_OnlyItsLastHolderRemovesIt(t *testing.T) {
	dir := t.TempDir()
	name := "pack-" + strings.Repeat("a", 40)
	p := filepath.Join(dir, name+".keep")
	require.NoError(t, Hold(dir, name))
	require.Equal(t, holdNote, readFile(t, p))
	Release()
	require.False(t, exists(p), "a hold no one else held stays")

	require.NoError(t, Hold(dir, name))
	other := otherHolder(t, p)
	Release()
	require.True(t, exists(p), "released while another command held it")

	// The other ends: this command's next hold of the pack is its own,
	// and goes with it.
	other.Close()
	require.NoError(t, Hold(dir, name))
	Release()
	require.False(t, exists(p), "the last holder left the hold")
}

// TestHold_JoinsAHoldAnotherCommandWrote: a command writing a pack whose
// hold another command wrote holds it too: the writer's release leaves it.
func TestHold_JoinsAHoldAnotherCommandWrote(t *testing.T) {
	dir := t.TempDir()
	name := "pack-" + strings.Repeat("b", 40)
	p := filepath.Join(dir, name+".keep")
	require.NoError(t, os.WriteFile(p, []byte(holdNote), 0o444))
	writer := otherHolder(t, p)
	require.NoError(t, Hold(dir, name))
	// The writer lets go as Release does.
	if syscall.Flock(int(writer.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		require.NoError(t, os.Remove(p))
	}
	writer.Close()
	require.True(t, exists(p), "the writer's release took a hold this command held")
	Release()
	require.False(t, exists(p))
}

// TestReleaseStale_LeavesLiveHolds: Maintain lets go of the holds killed
// commands left (no lock on them), not those of live commands that hold
// no repository lock (a dry run, a diff), nor the user's .keep.
func TestReleaseStale_LeavesLiveHolds(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "pack-"+strings.Repeat("c", 40)+".keep")
	stale := filepath.Join(dir, "pack-"+strings.Repeat("d", 40)+".keep")
	user := filepath.Join(dir, "pack-"+strings.Repeat("e", 40)+".keep")
	for _, p := range []string{live, stale} {
		require.NoError(t, os.WriteFile(p, []byte(holdNote), 0o444))
	}
	require.NoError(t, os.WriteFile(user, []byte("mine\n"), 0o644))
	otherHolder(t, live)
	releaseStale(dir, nil)
	require.True(t, exists(live), "a live command's hold was let go")
	require.False(t, exists(stale), "a killed command's hold stays")
	require.True(t, exists(user), "the user's .keep was removed")
}

// TestHold_JoinsAHoldBeingWritten: a command writing a pack whose hold
// an older git-venom has made but not yet written its note in (it locked
// the new .keep, then wrote) holds it too, however long the writer takes:
// on a loaded machine that is longer than any wait. The writer's release
// then leaves the hold, and this command's removes it.
func TestHold_JoinsAHoldBeingWritten(t *testing.T) {
	dir := t.TempDir()
	name := "pack-" + strings.Repeat("f", 40)
	p := filepath.Join(dir, name+".keep")
	require.NoError(t, os.WriteFile(p, nil, 0o444))
	writer := otherHolder(t, p)
	require.NoError(t, Hold(dir, name))
	// The writer writes its note (after this command's wait), then lets
	// go as Release does.
	require.NoError(t, os.Chmod(p, 0o644))
	require.NoError(t, os.WriteFile(p, []byte(holdNote), 0o444))
	if syscall.Flock(int(writer.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		require.NoError(t, os.Remove(p))
	}
	writer.Close()
	require.True(t, exists(p), "the writer's release took a hold this command held")
	Release()
	require.False(t, exists(p), "the last holder left the hold")
}

// TestHold_LeavesTheUsersEmptyKeep: an empty .keep of the user's (touch)
// is held like one being written, and still never removed: only a file
// holding the note is a hold to remove.
func TestHold_LeavesTheUsersEmptyKeep(t *testing.T) {
	dir := t.TempDir()
	name := "pack-" + strings.Repeat("9", 40)
	p := filepath.Join(dir, name+".keep")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, Hold(dir, name))
	Release()
	releaseStale(dir, nil)
	require.True(t, exists(p), "the user's .keep was removed")
	require.Empty(t, readFile(t, p))
}

// TestHold_LeavesNoFileButItsKeep: a hold is written in a temporary file
// linked to its .keep name, and the temporary name is gone once held.
func TestHold_LeavesNoFileButItsKeep(t *testing.T) {
	dir := t.TempDir()
	name := "pack-" + strings.Repeat("8", 40)
	require.NoError(t, Hold(dir, name))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	require.Equal(t, name+".keep", ents[0].Name())
	fi, err := os.Stat(filepath.Join(dir, name+".keep"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o444)&^umask(), fi.Mode().Perm())
	Release()
	require.False(t, exists(filepath.Join(dir, name+".keep")))
}

func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

// TestReleaseStale_RemovesKilledTemps: the temporary file of a hold a
// killed command was writing goes with the next sweep; one a live command
// locks stays, and so do git's own tmp_ files.
func TestReleaseStale_RemovesKilledTemps(t *testing.T) {
	dir := t.TempDir()
	killed := filepath.Join(dir, keepTemp+"0123456789abcdef")
	live := filepath.Join(dir, keepTemp+"fedcba9876543210")
	gits := []string{filepath.Join(dir, "tmp_pack_XyZ123"), filepath.Join(dir, "tmp_idx_XyZ123"), filepath.Join(dir, "tmp_keep_XyZ")}
	for _, p := range append([]string{killed, live}, gits...) {
		require.NoError(t, os.WriteFile(p, []byte(holdNote), 0o444))
	}
	otherHolder(t, live)
	releaseStale(dir, nil)
	require.False(t, exists(killed), "a killed command's temporary hold stays")
	require.True(t, exists(live), "a live command's temporary hold was removed")
	for _, p := range gits {
		require.True(t, exists(p), "git's %s was removed", p)
	}
}

// TestReleaseStale_RemovesOldOrphans: an empty read-only .keep an older
// git-venom left (killed between making its hold and writing its note)
// goes, on a pack of git-venom's or on none; git's own empty .keep
// (index-pack --keep, 0600), a touch's, one on the user's pack, a new one
// (being written) and a locked one stay.
func TestReleaseStale_RemovesOldOrphans(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * orphanAge)
	keep := func(c byte, mode os.FileMode, when time.Time, pack bool) string {
		name := "pack-" + strings.Repeat(string(c), 40)
		p := filepath.Join(dir, name+".keep")
		require.NoError(t, os.WriteFile(p, nil, 0o600))
		require.NoError(t, os.Chmod(p, mode))
		require.NoError(t, os.Chtimes(p, when, when))
		if pack {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name+".pack"), []byte("PACK"), 0o444))
		}
		return p
	}
	nopack := keep('1', 0o444, old, false)
	ours := keep('2', 0o444, old, true)
	users := keep('3', 0o444, old, true)
	gits := keep('4', 0o600, old, false)
	touched := keep('5', 0o644, old, true)
	fresh := keep('6', 0o444, time.Now(), false)
	locked := keep('7', 0o444, old, false)
	otherHolder(t, locked)
	releaseStale(dir, []string{"pack-" + strings.Repeat("2", 40), "pack-" + strings.Repeat("5", 40)})
	require.False(t, exists(nopack), "an orphan on no pack stays")
	require.False(t, exists(ours), "an orphan on git-venom's pack stays")
	for _, p := range []string{users, gits, touched, fresh, locked} {
		require.True(t, exists(p), "%s was removed", filepath.Base(p))
	}
}
