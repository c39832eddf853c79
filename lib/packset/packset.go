// Package packset records the packs git-venom wrote and merges them
// geometrically, so captures never leave enough packs to trigger git's
// gc --auto nor slow every look-up. The record is a folder of empty files,
// $COMMON/venom/packs/pack-<hex>: only those packs are merged or removed,
// as `git repack --geometric=2 -d` would (docs/checkpoints.md#pack-merges).
// A pack a command wrote is held (hold.go) until its refs name its objects.
package packset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

const (
	// Threshold is how many of its packs git-venom lets pile up before it
	// looks for a merge: below it, a capture costs one stat of a folder.
	Threshold = 8
	// Budget bounds the bytes of packs one merge reads (and so writes),
	// whatever the progression asks for: a capture's wait stays short. A
	// pack past it is left as it is.
	Budget = 128 << 20
	// factor is the progression's, git repack --geometric=2's.
	factor = 2
	// tmpPrefix starts a merge's temporary files in objects/pack.
	tmpPrefix = "tmp_pack_venom_"
)

// Dir is the record's folder in the state folder.
func Dir(stateDir string) string { return filepath.Join(stateDir, "packs") }

func intentPath(stateDir string) string { return filepath.Join(Dir(stateDir), "merge") }

// validName: pack-<40 hex>.
func validName(name string) bool {
	hex, ok := strings.CutPrefix(name, "pack-")
	if !ok || len(hex) != 40 {
		return false
	}
	for _, c := range hex {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Mark records the pack name (pack-<hex>), installed in objects/pack, as
// git-venom's. It needs no lock.
func Mark(stateDir, name string) error {
	if !validName(name) {
		return fmt.Errorf("%q is not a pack name", name)
	}
	f, err := statefile.Open(filepath.Join(Dir(stateDir), name), os.O_CREATE|os.O_WRONLY, 0o666)
	if err != nil {
		return err
	}
	return f.Close()
}

// Recorded lists the names in the record.
func Recorded(stateDir string) ([]string, error) {
	names, err := statefile.ReadDirNames(Dir(stateDir))
	if err != nil {
		return nil, err
	}
	out := names[:0]
	for _, n := range names {
		if validName(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Options tune Maintain; zero values take the defaults.
type Options struct {
	Threshold int
	Budget    int64
}

// Report says what Maintain found and did.
type Report struct {
	Packs     int      // git-venom's packs after it, merged and kept ones included
	Dropped   []string // recorded packs that were gone
	Merged    []string // packs merged (and removed)
	New       string   // the merged pack
	Objects   int      // objects in it
	Recovered bool     // an interrupted merge was finished or undone
}

type pack struct {
	name string
	size int64
}

// Maintain merges git-venom's packs when more than Threshold of them are
// in the objects/pack folder packDir: at most one merge, of at most Budget
// bytes. Its caller holds the repository's lock.
func Maintain(stateDir, packDir string, opt Options) (Report, error) {
	if opt.Threshold <= 0 {
		opt.Threshold = Threshold
	}
	if opt.Budget <= 0 {
		opt.Budget = Budget
	}
	var rep Report
	var err error
	if rep.Recovered, err = recoverMerge(stateDir, packDir); err != nil {
		return rep, err
	}
	names, err := Recorded(stateDir)
	if err != nil {
		return rep, err
	}
	releaseStale(packDir, names)
	if gcRunning(stateDir) {
		// No merge starts while the person's gc runs: it would end by
		// removing packs the gc's repack may have listed.
		return rep, nil
	}
	var cands []pack
	for _, name := range names {
		base := filepath.Join(packDir, name)
		fi, err := os.Lstat(base + ".pack")
		_, ierr := os.Lstat(base + ".idx")
		if errors.Is(err, os.ErrNotExist) || errors.Is(ierr, os.ErrNotExist) {
			// Repacked by the user's gc, or never installed: not ours now.
			if err := statefile.Remove(filepath.Join(Dir(stateDir), name)); err != nil {
				return rep, err
			}
			rep.Dropped = append(rep.Dropped, name)
			continue
		}
		if err != nil || ierr != nil || !fi.Mode().IsRegular() {
			continue
		}
		rep.Packs++
		if exists(base+".keep") || exists(base+".promisor") {
			continue
		}
		cands = append(cands, pack{name, fi.Size()})
	}
	if len(cands) <= opt.Threshold {
		return rep, nil
	}
	merge := split(cands, opt.Budget)
	if len(merge) < 2 {
		return rep, nil
	}
	var old []string
	for _, p := range merge {
		old = append(old, p.name)
	}
	name, n, err := mergePacks(stateDir, packDir, old)
	var notOurs *packfile.SourceError
	if errors.As(err, &notOurs) && validName(notOurs.Name) {
		// A pack no Writer wrote (a name written into the record by hand:
		// deltas, an index that is not a file) or a damaged one: it leaves
		// the record, untouched, so that it does not stop every later merge.
		rep.Dropped = append(rep.Dropped, notOurs.Name)
		return rep, errors.Join(err, statefile.Remove(filepath.Join(Dir(stateDir), notOurs.Name)))
	}
	if err != nil {
		return rep, err
	}
	rep.Merged, rep.New, rep.Objects = old, name, n
	rep.Packs -= len(old)
	if !contains(old, name) {
		rep.Packs++
	}
	return rep, nil
}

// split returns the packs a geometric repack (factor 2) merges, smallest
// first, cut to at most budget bytes: sorted by size, the progression
// holds from the largest down while each pack is at least twice the next
// smaller; the ones below where it breaks are merged, and so is each
// larger pack that is not at least twice the merged pack's size.
func split(packs []pack, budget int64) []pack {
	sort.Slice(packs, func(i, j int) bool {
		if packs[i].size != packs[j].size {
			return packs[i].size < packs[j].size
		}
		return packs[i].name < packs[j].name
	})
	i := len(packs) - 1
	for ; i > 0; i-- {
		if packs[i].size < factor*packs[i-1].size {
			break
		}
	}
	cut := i
	if cut > 0 {
		cut++
	}
	var total int64
	for _, p := range packs[:cut] {
		total += p.size
	}
	for cut < len(packs) && packs[cut].size < factor*total {
		total += packs[cut].size
		cut++
	}
	// The budget: the smallest ones that fit.
	var sum int64
	n := 0
	for n < cut && sum+packs[n].size <= budget {
		sum += packs[n].size
		n++
	}
	return packs[:n]
}

// intent is written before a merged pack is installed.
type intent struct {
	New string   `json:"new"`
	Old []string `json:"old"`
}

// mergePacks merges the packs old into one, crash-safely, and returns it.
func mergePacks(stateDir, packDir string, old []string) (string, int, error) {
	removeTemps(packDir)
	w, n, err := packfile.Merge(packDir, old, packfile.Options{Prefix: tmpPrefix, Sync: true,
		InstallPoint: "pack-merge-install"})
	if err != nil {
		return "", 0, err
	}
	name := w.Name()
	if err := testhook.Point("pack-merge-sealed"); err != nil {
		w.Discard()
		return "", 0, err
	}
	in, _ := json.Marshal(intent{New: name, Old: old})
	if err := statefile.WriteDurable(intentPath(stateDir), in, 0o666); err != nil {
		w.Discard()
		return "", 0, err
	}
	if err := testhook.Point("pack-merge-intent"); err != nil {
		w.Discard()
		return "", 0, errors.Join(err, undo(stateDir, packDir, name))
	}
	if err := w.Install(); err != nil {
		return "", 0, errors.Join(err, undo(stateDir, packDir, name))
	}
	if err := testhook.Point("pack-merge-installed"); err != nil {
		return "", 0, err // the next Maintain finishes it
	}
	return name, n, finish(stateDir, packDir, intent{New: name, Old: old})
}

// finish ends a merge whose pack is installed: it joins the record, and the
// packs it replaces go, each index before its pack (a reader that has the
// index but cannot open the pack looks again, as after git repack -d). A
// pack goes only when the new pack holds every object its index lists: an
// intent that names another pack (written by hand, or one the user's gc
// made since under a name a merge had used) removes nothing.
func finish(stateDir, packDir string, in intent) error {
	newEnts, _, err := packfile.ReadIndex(filepath.Join(packDir, in.New+".idx"))
	if err != nil {
		// Not a pack a merge wrote: nothing is removed, and the intent goes
		// so that it does not stop every later merge.
		return errors.Join(err, statefile.Remove(intentPath(stateDir)))
	}
	if err := Mark(stateDir, in.New); err != nil {
		return err
	}
	if gcRunning(stateDir) {
		// The person's gc started meanwhile: the old packs stay (the new
		// one holds their objects too), and the intent with them, so that
		// the next Maintain removes them once the gc has ended.
		return nil
	}
	for _, name := range in.Old {
		if name == in.New || !validName(name) {
			continue // a merge that gave one of its own packs back
		}
		if !covered(filepath.Join(packDir, name+".idx"), newEnts) {
			continue
		}
		if err := testhook.Point("pack-merge-remove"); err != nil {
			return err
		}
		base := filepath.Join(packDir, name)
		if exists(base+".keep") || exists(base+".promisor") {
			// Kept since the merge chose it: it stays, no longer ours.
			_ = statefile.Remove(filepath.Join(Dir(stateDir), name))
			continue
		}
		for _, ext := range []string{".idx", ".pack", ".rev", ".bitmap", ".mtimes"} {
			if err := os.Remove(base + ext); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		if err := statefile.Remove(filepath.Join(Dir(stateDir), name)); err != nil {
			return err
		}
	}
	if err := packfile.SyncDir(packDir); err != nil {
		return err
	}
	return statefile.Remove(intentPath(stateDir))
}

// gcStale is how old a gc.pid git itself stops believing is (builtin/gc.c:
// a gc.pid older than 12 hours is from a gc that died).
const gcStale = 12 * time.Hour

// gcRunning reports whether the person's git gc is running in the
// repository whose state folder is stateDir: git gc keeps gc.pid (through
// gc.pid.lock) in the git folder while it runs. A git repack that listed a
// pack and then cannot find it fails ("unable to add recent objects"), and
// the gc with it, so git-venom removes no pack meanwhile.
func gcRunning(stateDir string) bool {
	common := filepath.Dir(stateDir)
	for _, name := range []string{"gc.pid", "gc.pid.lock"} {
		if fi, err := os.Stat(filepath.Join(common, name)); err == nil && time.Since(fi.ModTime()) < gcStale {
			return true
		}
	}
	return false
}

// undo removes a merged pack that was never wholly installed (its index
// missing: no git reader can have used it) and the intent.
func undo(stateDir, packDir, name string) error {
	base := filepath.Join(packDir, name)
	if !exists(base + ".idx") {
		if err := os.Remove(base + ".pack"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	removeTemps(packDir)
	return statefile.Remove(intentPath(stateDir))
}

// recoverMerge finishes or undoes a merge a crash interrupted.
func recoverMerge(stateDir, packDir string) (bool, error) {
	b, err := statefile.ReadFile(intentPath(stateDir))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var in intent
	if json.Unmarshal(b, &in) != nil || !validName(in.New) {
		// Torn before its rename could not happen (it is renamed in);
		// anything else is not ours to act on.
		return true, statefile.Remove(intentPath(stateDir))
	}
	base := filepath.Join(packDir, in.New)
	if exists(base+".pack") && exists(base+".idx") {
		removeTemps(packDir)
		return true, finish(stateDir, packDir, in)
	}
	return true, undo(stateDir, packDir, in.New)
}

// removeTemps removes what an interrupted merge left in objects/pack: its
// temporary files only, whose names no one else uses.
func removeTemps(packDir string) {
	ents, err := os.ReadDir(packDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, tmpPrefix) || strings.HasPrefix(n, "tmp_idx_venom_") {
			_ = os.Remove(filepath.Join(packDir, n))
		}
	}
}

// covered says whether every object the index at idx lists is in ents
// (an index's entries, in id order). An index that is gone is covered: its
// pack, if still there, is one a crash left half removed, which no git
// reader can use.
func covered(idx string, ents []packfile.IndexEntry) bool {
	old, _, err := packfile.ReadIndex(idx)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	for _, e := range old {
		i := sort.Search(len(ents), func(i int) bool { return bytes.Compare(ents[i].ID[:], e.ID[:]) >= 0 })
		if i == len(ents) || ents[i].ID != e.ID {
			return false
		}
	}
	return true
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
