package packset

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/git-venom/git-venom/lib/statefile"
)

// holdNote is the content of the .keep file a pack git-venom writes has
// until the command that wrote it ends. A pack's objects are unreachable
// until the ref that names its commit is made, and `git repack -a -d` (or
// git gc --prune=now) run in that window drops unreachable objects and
// removes every pack not kept; git's own fetch and receive-pack keep their
// packs the same way until their refs are in. git leaves a kept pack
// alone; so does Maintain until the hold is released.
const holdNote = "git-venom: held until the checkpoint naming its objects has its ref\n"

// held lists the .keep files this process wrote: one command's packs,
// released together when it ends (Release).
var held struct {
	sync.Mutex
	paths map[string]bool
}

// Hold writes name's .keep file in packDir before the pack is installed.
// A .keep already there (the user's, or a hold a crash left) is left as
// it is: it keeps the pack too, and is not this process's to remove.
func Hold(packDir, name string) error {
	if !validName(name) {
		return errors.New(name + " is not a pack name")
	}
	p := filepath.Join(packDir, name+".keep")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o444)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, holdNote)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return err
	}
	held.Lock()
	defer held.Unlock()
	if held.paths == nil {
		held.paths = map[string]bool{}
	}
	held.paths[p] = true
	return nil
}

// Release removes the .keep files this process's Hold wrote. A command
// calls it once the refs naming its packs' objects are made (the state
// transaction's end), or when it makes none.
func Release() {
	held.Lock()
	defer held.Unlock()
	for p := range held.paths {
		if isHold(p) {
			_ = os.Remove(p)
		}
	}
	held.paths = nil
}

func holding(p string) bool {
	held.Lock()
	defer held.Unlock()
	return held.paths[p]
}

// isHold says whether the file at p is a regular file holding exactly
// holdNote: a hold, not the user's .keep (never followed through a link).
func isHold(p string) bool {
	f, err := statefile.OpenRegular(p, os.O_RDONLY, 0, true)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(holdNote)+1)
	n, _ := io.ReadFull(f, b)
	return string(b[:n]) == holdNote
}

// releaseStale removes the holds a killed command left: Maintain runs
// under the lock every pack writer holds until its ref, so another
// process's hold waits for nothing. Every hold in packDir goes, recorded
// pack or not, as gc never repacks a kept pack.
func releaseStale(packDir string) {
	keeps, _ := filepath.Glob(filepath.Join(packDir, "pack-*.keep"))
	for _, p := range keeps {
		if validName(strings.TrimSuffix(filepath.Base(p), ".keep")) && !holding(p) && isHold(p) {
			_ = os.Remove(p)
		}
	}
}
