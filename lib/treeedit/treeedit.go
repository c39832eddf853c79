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
// numbers they are, entries in git's order, a folder left empty dropped.
func Build(read *git.Repository, base *git.Oid, edits []Edit, store func(id git.Oid, data []byte) error) (*git.Oid, error) {
	odb, err := read.Odb()
	if err != nil {
		return nil, err
	}
	defer odb.Free()
	// One edit a path, the last one given, in path order: a folder's edits
	// are then one run of the list.
	sorted := make([]Edit, len(edits))
	copy(sorted, edits)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	uniq := sorted[:0]
	for i, e := range sorted {
		if i+1 < len(sorted) && sorted[i+1].Path == e.Path {
			continue
		}
		uniq = append(uniq, e)
	}
	b := &builder{odb: odb, store: store}
	id, _, err := b.level(base, uniq, 0)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

type builder struct {
	odb   *git.Odb
	store func(id git.Oid, data []byte) error
	buf   bytes.Buffer
}

// entry is one entry of a tree being built.
type entry struct {
	name string
	mode string // as the tree writes it: octal, no leading zero
	dir  bool
	id   git.Oid
}

const treeMode = "40000"

// level rebuilds one folder from its base tree (nil: none) and its edits,
// whose paths from off on are relative to it. It reports whether the
// folder came out empty.
func (b *builder) level(base *git.Oid, edits []Edit, off int) (git.Oid, bool, error) {
	var orig []entry
	if base != nil {
		var err error
		if orig, err = b.readTree(base); err != nil {
			return git.Oid{}, false, err
		}
	}
	cur := make(map[string]entry, len(orig)+len(edits))
	origDirs := map[string]git.Oid{}
	for _, e := range orig {
		cur[e.name] = e
		if e.dir {
			origDirs[e.name] = e.id
		}
	}
	var direct []Edit
	type group struct {
		name  string
		edits []Edit
		off   int
	}
	var groups []group
	for i := 0; i < len(edits); {
		rest := edits[i].Path[off:]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			direct = append(direct, edits[i])
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
	// Removals first, then the folders, then the files set here: a path
	// that is both a file and a folder of the edits ends up the file.
	for _, e := range direct {
		if e.Mode == 0 {
			delete(cur, e.Path[off:])
		}
	}
	for _, g := range groups {
		var child *git.Oid
		if id, ok := origDirs[g.name]; ok {
			child = &id
		}
		delete(cur, g.name)
		id, empty, err := b.level(child, g.edits, g.off)
		if err != nil {
			return git.Oid{}, false, err
		}
		if !empty {
			if err := validName(g.name); err != nil {
				return git.Oid{}, false, err
			}
			cur[g.name] = entry{name: g.name, mode: treeMode, dir: true, id: id}
		}
	}
	for _, e := range direct {
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
		cur[name] = entry{name: name, mode: strconv.FormatUint(uint64(e.Mode), 8), dir: e.Mode == 0o40000, id: id}
	}
	ents := make([]entry, 0, len(cur))
	for _, e := range cur {
		ents = append(ents, e)
	}
	sort.Slice(ents, func(i, j int) bool { return gitLess(&ents[i], &ents[j]) })
	b.buf.Reset()
	for _, e := range ents {
		b.buf.WriteString(e.mode)
		b.buf.WriteByte(' ')
		b.buf.WriteString(e.name)
		b.buf.WriteByte(0)
		b.buf.Write(e.id[:])
	}
	data := b.buf.Bytes()
	h := sha1.New()
	fmt.Fprintf(h, "tree %d\x00", len(data))
	h.Write(data)
	var id git.Oid
	h.Sum(id[:0])
	if err := b.store(id, data); err != nil {
		return git.Oid{}, false, err
	}
	return id, len(ents) == 0, nil
}

// readTree parses a base tree's entries, keeping each mode's bytes.
func (b *builder) readTree(id *git.Oid) ([]entry, error) {
	obj, err := b.odb.Read(id)
	if err != nil {
		return nil, err
	}
	defer obj.Free()
	if obj.Type() != git.ObjectTree {
		return nil, fmt.Errorf("%s is not a tree", id)
	}
	data := obj.Data()
	var out []entry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp <= 0 || nul < sp || len(data) < nul+21 {
			return nil, fmt.Errorf("tree %s is damaged", id)
		}
		// libgit2 writes a base entry's mode back as the number it reads.
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("tree %s is damaged", id)
		}
		e := entry{mode: strconv.FormatUint(mode, 8), name: string(data[sp+1 : nul]), dir: mode&0o170000 == 0o40000}
		copy(e.id[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

// gitLess is git's tree order: names compared bytewise, a folder's as if
// it ended in '/'.
func gitLess(a, b *entry) bool {
	an, bn := a.name, b.name
	n := min(len(an), len(bn))
	if c := strings.Compare(an[:n], bn[:n]); c != 0 {
		return c < 0
	}
	ac, bc := byte(0), byte(0)
	if len(an) > n {
		ac = an[n]
	} else if a.dir {
		ac = '/'
	}
	if len(bn) > n {
		bc = bn[n]
	} else if b.dir {
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
