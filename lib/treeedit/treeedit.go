// Package treeedit builds a tree from a base tree and a list of path edits,
// rebuilding only the folders on the edited paths.
package treeedit

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	git "github.com/libgit2/git2go/v34"
)

// Edit sets one path of a tree.
type Edit struct {
	Path string
	Mode uint32 // 0: the path is removed
	Oid  string
	// ID is the object when Oid is "": a large capture's ids need not be
	// written out in hex and read back.
	ID git.Oid
}

// Apply returns base (nil: the empty tree) with each path set to its edit,
// or removed when the edit's mode is 0. Only the folders on the edited paths
// are rebuilt, in process: a 100,000-file tree costs what its edits cost,
// not a read-tree of it. Trees are written to repo's object database.
func Apply(repo *git.Repository, base *git.Oid, edits []Edit) (*git.Oid, error) {
	return ApplyNoting(repo, repo, base, edits, func(*git.Oid) {})
}

// ApplyNoting is Apply reading the base trees from read and writing the
// new ones to write, telling written the id of every tree it writes.
func ApplyNoting(read, write *git.Repository, base *git.Oid, edits []Edit, written func(*git.Oid)) (*git.Oid, error) {
	odb, err := write.Odb()
	if err != nil {
		return nil, err
	}
	defer odb.Free()
	return Build(read, base, edits, func(id git.Oid, data []byte) error {
		got, err := odb.Write(data, git.ObjectTree)
		if err != nil {
			return err
		}
		if *got != id {
			return fmt.Errorf("tree %s written as %s", id, got)
		}
		written(got)
		return nil
	})
}

// Build is Apply with the new trees' bytes handed to store (with their
// ids) instead of written to a repository: the caller decides where they
// go, and data is valid only during the call. The trees are made here, in
// git's format, as libgit2's tree builder made them: modes written as the
// numbers they are, entries in git's order, a folder left empty dropped
// (and never handed to store: only the root's tree is, empty or not).
func Build(read *git.Repository, base *git.Oid, edits []Edit, store func(id git.Oid, data []byte) error) (*git.Oid, error) {
	odb, err := read.Odb()
	if err != nil {
		return nil, err
	}
	defer odb.Free()
	b := &builder{odb: odb, store: store}
	id, _, err := b.level(base, inPathOrder(edits), 0)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// inPathOrder is edits with one edit a path, the last one given, in path
// order: a folder's edits are then one run of the list. Edits already in
// strict path order (a capture's removals, a plan's changes) are used as
// they are, neither copied nor sorted.
func inPathOrder(edits []Edit) []Edit {
	sorted := true
	for i := 1; i < len(edits) && sorted; i++ {
		sorted = edits[i-1].Path < edits[i].Path
	}
	if sorted {
		return edits
	}
	out := make([]Edit, len(edits))
	copy(out, edits)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	uniq := out[:0]
	for i, e := range out {
		if i+1 < len(out) && out[i+1].Path == e.Path {
			continue
		}
		uniq = append(uniq, e)
	}
	return uniq
}

type builder struct {
	odb   *git.Odb
	store func(id git.Oid, data []byte) error
	buf   []byte
}

// entry is one entry of a tree being built.
type entry struct {
	name string
	mode uint32
	dir  bool
	id   git.Oid
}

// baseEntry is one entry of a base tree, its name a slice of the tree's
// bytes: a folder's entries cost no string each, which matters when most
// of them are removed.
type baseEntry struct {
	name []byte
	mode uint32
	dir  bool
	id   git.Oid
}

// group is the edits beneath one folder name of a level.
type group struct {
	name  string
	edits []Edit
	off   int
}

// level rebuilds one folder from its base tree (nil: none) and its edits,
// whose paths from off on are relative to it and in path order. It reports
// whether the folder came out empty. A base entry costs a binary search of
// this level's edits, and nothing more unless it is kept: removing a
// folder's every file builds no tree for it.
func (b *builder) level(base *git.Oid, edits []Edit, off int) (git.Oid, bool, error) {
	var orig []baseEntry
	if base != nil {
		var err error
		if orig, err = b.readTree(base); err != nil {
			return git.Oid{}, false, err
		}
	}
	// The edits named here (direct, their indexes in edits, in name
	// order) and the folders edited beneath (groups, in the order of
	// name+"/": git's order of folders).
	var direct []int
	var groups []group
	for i := 0; i < len(edits); {
		rest := edits[i].Path[off:]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			direct = append(direct, i)
			i++
			continue
		}
		name := rest[:slash]
		j := i + 1
		for j < len(edits) && strings.HasPrefix(edits[j].Path[off:], rest[:slash+1]) {
			j++
		}
		groups = append(groups, group{name: name, edits: edits[i:j], off: off + slash + 1})
		i = j
	}
	// directAt is the index in edits of the edit naming name here, or -1.
	directAt := func(name []byte) int {
		k := sort.Search(len(direct), func(k int) bool { return edits[direct[k]].Path[off:] >= string(name) })
		if k < len(direct) && edits[direct[k]].Path[off:] == string(name) {
			return direct[k]
		}
		return -1
	}
	groupAt := func(name []byte) int {
		k := sort.Search(len(groups), func(k int) bool { return !gitLess(groups[k].name, true, name, true) })
		if k < len(groups) && groups[k].name == string(name) {
			return k
		}
		return -1
	}
	// A base entry is kept unless an edit names it (set or removed) or a
	// folder of the same name is edited.
	kept := 0
	children := make([]*git.Oid, len(groups))
	for i := range orig {
		e := &orig[i]
		if directAt(e.name) >= 0 {
			continue
		}
		if g := groupAt(e.name); g >= 0 {
			if e.dir {
				id := e.id // orig is compacted below
				children[g] = &id
			}
			continue
		}
		orig[kept] = *e
		kept++
	}
	orig = orig[:kept]
	// Then the folders, then the files set here: a path that is both a
	// file and a folder of the edits ends up the file.
	var ents []entry
	for g := range groups {
		id, empty, err := b.level(children[g], groups[g].edits, groups[g].off)
		if err != nil {
			return git.Oid{}, false, err
		}
		if empty {
			continue
		}
		name := groups[g].name
		if err := validName(name); err != nil {
			return git.Oid{}, false, err
		}
		if k := directAt([]byte(name)); k >= 0 && edits[k].Mode != 0 {
			continue
		}
		ents = append(ents, entry{name: name, mode: 0o40000, dir: true, id: id})
	}
	for _, k := range direct {
		e := &edits[k]
		if e.Mode == 0 {
			continue
		}
		name := e.Path[off:]
		if err := validName(name); err != nil {
			return git.Oid{}, false, err
		}
		switch e.Mode {
		case 0o100644, 0o100755, 0o120000, 0o160000, 0o40000:
		default:
			return git.Oid{}, false, fmt.Errorf("invalid mode %o for %q", e.Mode, e.Path)
		}
		id := e.ID
		if e.Oid != "" {
			var err error
			if id, err = parseID(e.Oid); err != nil {
				return git.Oid{}, false, err
			}
		}
		ents = append(ents, entry{name: name, mode: e.Mode, dir: e.Mode == 0o40000, id: id})
	}
	if len(ents) > 0 {
		// The kept base entries are in git's order already; the new ones
		// are sorted in among them.
		for _, e := range orig {
			ents = append(ents, entry{name: string(e.name), mode: e.mode, dir: e.dir, id: e.id})
		}
		orig = nil
		sort.Slice(ents, func(i, j int) bool { return gitLess(ents[i].name, ents[i].dir, ents[j].name, ents[j].dir) })
	}
	if len(ents)+len(orig) == 0 && off > 0 {
		return git.Oid{}, true, nil
	}
	b.buf = b.buf[:0]
	for _, e := range ents {
		b.buf = appendEntry(b.buf, e.mode, e.name, &e.id)
	}
	for _, e := range orig {
		b.buf = appendEntry(b.buf, e.mode, e.name, &e.id)
	}
	data := b.buf
	h := sha1.New()
	fmt.Fprintf(h, "tree %d\x00", len(data))
	h.Write(data)
	var id git.Oid
	h.Sum(id[:0])
	if err := b.store(id, data); err != nil {
		return git.Oid{}, false, err
	}
	return id, len(data) == 0, nil
}

// readTree parses a base tree's entries, keeping each mode as the number
// it is (libgit2 writes a base entry's mode back as the number it reads).
// The names are slices of one copy of the tree's bytes.
func (b *builder) readTree(id *git.Oid) ([]baseEntry, error) {
	obj, err := b.odb.Read(id)
	if err != nil {
		return nil, err
	}
	defer obj.Free()
	if obj.Type() != git.ObjectTree {
		return nil, fmt.Errorf("%s is not a tree", id)
	}
	data := bytes.Clone(obj.Data())
	out := make([]baseEntry, 0, bytes.Count(data, []byte{0}))
	ordered := true
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp <= 0 || nul < sp || len(data) < nul+21 {
			return nil, fmt.Errorf("tree %s is damaged", id)
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("tree %s is damaged", id)
		}
		e := baseEntry{mode: uint32(mode), name: data[sp+1 : nul : nul], dir: mode&0o170000 == 0o40000}
		copy(e.id[:], data[nul+1:nul+21])
		if n := len(out); n > 0 && !gitLess(out[n-1].name, out[n-1].dir, e.name, e.dir) {
			ordered = false
		}
		out = append(out, e)
		data = data[nul+21:]
	}
	if !ordered {
		out = repairOrder(out)
	}
	return out, nil
}

// repairOrder puts the entries of a tree git would not write (out of its
// order, or a name twice) in git's order, each name's last entry taken:
// what a tree rebuilt by name from it holds.
func repairOrder(ents []baseEntry) []baseEntry {
	sort.SliceStable(ents, func(i, j int) bool { return bytes.Compare(ents[i].name, ents[j].name) < 0 })
	uniq := ents[:0]
	for i, e := range ents {
		if i+1 < len(ents) && bytes.Equal(ents[i+1].name, e.name) {
			continue
		}
		uniq = append(uniq, e)
	}
	sort.Slice(uniq, func(i, j int) bool { return gitLess(uniq[i].name, uniq[i].dir, uniq[j].name, uniq[j].dir) })
	return uniq
}

// appendEntry appends one tree entry in git's format: the mode in octal
// without a leading zero, the name, and the raw id.
func appendEntry[N string | []byte](buf []byte, mode uint32, name N, id *git.Oid) []byte {
	buf = strconv.AppendUint(buf, uint64(mode), 8)
	buf = append(buf, ' ')
	buf = append(buf, name...)
	buf = append(buf, 0)
	return append(buf, id[:]...)
}

// gitLess is git's tree order: names compared bytewise, a folder's as if
// it ended in '/'.
func gitLess[A, B string | []byte](an A, adir bool, bn B, bdir bool) bool {
	n := min(len(an), len(bn))
	for i := 0; i < n; i++ {
		if an[i] != bn[i] {
			return an[i] < bn[i]
		}
	}
	ac, bc := byte(0), byte(0)
	if len(an) > n {
		ac = an[n]
	} else if adir {
		ac = '/'
	}
	if len(bn) > n {
		bc = bn[n]
	} else if bdir {
		bc = '/'
	}
	return ac < bc
}

var errBadName = errors.New("invalid tree entry name")

// validName refuses the names libgit2's tree builder refuses (and git
// never stores): empty, "." and "..", a slash or NUL inside, and .git in
// any case or its NTFS short or padded forms.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%w: %q", errBadName, name)
	}
	low := strings.TrimRight(strings.ToLower(name), " .")
	if low == ".git" || low == "git~1" {
		return fmt.Errorf("%w: %q", errBadName, name)
	}
	return nil
}

// parseID reads a hex object id without allocating.
func parseID(s string) (git.Oid, error) {
	var id git.Oid
	if len(s) != 40 {
		return id, fmt.Errorf("bad object id %q", s)
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return id, fmt.Errorf("bad object id %q", s)
		}
		id[i] = hi<<4 | lo
	}
	return id, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
