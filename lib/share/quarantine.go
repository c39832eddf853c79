package share

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// quarantinePrefix names the object folders a fetch receives into, in
// the repository's objects folder (git's receive-pack does the same with
// tmp_objdir-incoming-*).
const quarantinePrefix = "venom-incoming-"

// quarantine is a fetch's own object folder: git fetch writes into it
// (GIT_OBJECT_DIRECTORY, the repository's store as its alternate), so a
// fetch that fails (an object fsck refuses, a remote that hangs up, a
// signal) leaves nothing in the person's store, not even the tmp_pack_*
// git leaves behind when index-pack dies. What a fetch that succeeded
// received is moved into the store before any ref names it.
type quarantine struct {
	objects string // the repository's objects folder
	dir     string
}

// newQuarantine removes what a killed fetch left (the caller holds the
// lock, so no other fetch is using one) and makes a fresh folder.
func newQuarantine(objects string) (*quarantine, error) {
	old, _ := filepath.Glob(filepath.Join(objects, quarantinePrefix+"*"))
	for _, d := range old {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp(objects, quarantinePrefix)
	if err != nil {
		return nil, err
	}
	return &quarantine{objects: objects, dir: dir}, nil
}

// env is what a git call writing into the quarantine gets.
func (q *quarantine) env() []string {
	return []string{"GIT_OBJECT_DIRECTORY=" + q.dir, "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + q.objects}
}

// discard drops whatever the quarantine holds and starts it empty.
func (q *quarantine) discard() error {
	if err := os.RemoveAll(q.dir); err != nil {
		return err
	}
	return os.Mkdir(q.dir, 0o700) // as MkdirTemp made it
}

// remove drops the quarantine.
func (q *quarantine) remove() error { return os.RemoveAll(q.dir) }

// migrate moves the quarantine's loose objects and packs into the store,
// as git's tmp_objdir_migrate does: a pack's .pack before its .rev and
// .idx, so no index is found without its pack; an object already there
// stays; tmp_* files and a pack's .keep (fetch-pack's lock) are left.
func (q *quarantine) migrate() error {
	ents, err := os.ReadDir(q.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case name == "pack":
			err = moveFiles(filepath.Join(q.dir, name), filepath.Join(q.objects, name), func(f string) bool {
				return strings.HasPrefix(f, "pack-") && filepath.Ext(f) != ".keep"
			})
		case e.IsDir() && len(name) == 2: // a fan-out folder of loose objects
			err = moveFiles(filepath.Join(q.dir, name), filepath.Join(q.objects, name), func(f string) bool {
				return !strings.HasPrefix(f, "tmp_")
			})
		}
		if err != nil {
			return err
		}
	}
	return q.discard()
}

// moveFiles moves the files of src that move accepts into dst, made when
// needed, packs' files in git's order.
func moveFiles(src, dst string, move func(name string) bool) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && move(e.Name()) {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.SliceStable(names, func(i, j int) bool { return packOrder(names[i]) < packOrder(names[j]) })
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, n := range names {
		if err := finalize(filepath.Join(src, n), filepath.Join(dst, n)); err != nil {
			return err
		}
	}
	return nil
}

// packOrder is git's pack_copy_priority: .pack, .rev, .idx, then the rest.
func packOrder(name string) int {
	switch filepath.Ext(name) {
	case ".pack":
		return 2
	case ".rev":
		return 3
	case ".idx":
		return 4
	}
	return 5
}

// finalize puts src at dst as git's finalize_object_file does: a hard
// link, so that an object already there is never replaced, then src goes.
func finalize(src, dst string) error {
	err := os.Link(src, dst)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		err = os.Rename(src, dst) // a file system without hard links
		if err == nil {
			return nil
		}
		if _, statErr := os.Lstat(dst); statErr != nil {
			return err
		}
	}
	return os.Remove(src)
}
