package tests

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// plainRef is one line of git for-each-ref: a ref, the object it
// resolves to and, for a symbolic ref, the ref it names.
type plainRef struct{ name, oid, symref string }

// plainRefs is what git for-each-ref lists under refs/ in plainCommonDir's
// case, but for the refs under skip ("" skips none), read from the loose
// and packed files as git's files backend reads them: a loose ref wins,
// and one whose object is not there is listed as git lists it. False
// where unsure: a repository with extensions (reftable among them), a
// name or file git might read otherwise, a symbolic ref to one not there.
func plainRefs(top string, environ []string, skip string) ([]plainRef, bool) {
	dir, ok := plainCommonDir(top, environ)
	if !ok {
		return nil, false
	}
	if cfg, err := os.ReadFile(filepath.Join(dir, "config")); err != nil ||
		bytes.Contains(bytes.ToLower(cfg), []byte("extensions")) {
		return nil, false
	}
	if _, err := os.Lstat(filepath.Join(dir, "reftable")); !os.IsNotExist(err) {
		return nil, false
	}
	all := map[string]string{} // name -> loose or packed contents
	packed, err := os.ReadFile(filepath.Join(dir, "packed-refs"))
	if err != nil && !os.IsNotExist(err) {
		return nil, false
	}
	for i, line := range strings.SplitAfter(string(packed), "\n") {
		switch {
		case line == "":
		case i == 0 && strings.HasPrefix(line, "# pack-refs with:"):
		case len(line) == 42 && line[0] == '^' && isHexLine([]byte(line[1:])):
		case len(line) > 42 && line[40] == ' ' && isHexLine([]byte(line[:40]+"\n")) && strings.HasSuffix(line, "\n"):
			name := strings.TrimSuffix(line[41:], "\n")
			if skip != "" && strings.HasPrefix(name, skip) {
				continue
			}
			if !plainRefName(name) {
				return nil, false
			}
			all[name] = line[:40] + "\n"
		default:
			return nil, false
		}
	}
	sure := true
	root := filepath.Join(dir, "refs")
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		name := filepath.ToSlash(rel)
		switch {
		case p == root:
			return nil
		case d.IsDir() && skip != "" && strings.HasPrefix(name+"/", skip):
			return filepath.SkipDir
		case !plainRefName(name):
			sure = false
			return filepath.SkipAll
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			sure = false
			return filepath.SkipAll
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		all[name] = string(b)
		return nil
	})
	if err != nil || !sure {
		return nil, false
	}
	var out []plainRef
	for name, v := range all {
		r := plainRef{name: name}
		if target, isSym := strings.CutPrefix(v, "ref: "); isSym {
			r.symref = strings.TrimSuffix(target, "\n")
			to, found := all[r.symref]
			if !strings.HasSuffix(target, "\n") || !plainRefName(r.symref) || !found || !isHexLine([]byte(to)) {
				return nil, false
			}
			v = to
		}
		if !isHexLine([]byte(v)) {
			return nil, false
		}
		r.oid = v[:40]
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, true
}

// plainRefName is a ref name under refs/ of a few plain characters that
// git takes as it is (check_refname_format): no component starting with
// a dot or ending in .lock, no "..".
func plainRefName(name string) bool {
	if !strings.HasPrefix(name, "refs/") || strings.Contains(name, "..") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return false
		}
		for _, c := range part {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.+=,%", c)) {
				return false
			}
		}
	}
	return true
}

// forEachRef is plainRefs' list of what git for-each-ref lists for the
// pattern prefix (the ref of that name and those under it), or false.
func (e *Env) forEachRef(prefix string) ([]plainRef, bool) {
	all, ok := plainRefs(e.Dir, e.Environ(), "")
	if !ok {
		return nil, false
	}
	var out []plainRef
	for _, r := range all {
		if r.name == strings.TrimSuffix(prefix, "/") && !strings.HasSuffix(prefix, "/") ||
			strings.HasPrefix(r.name, strings.TrimSuffix(prefix, "/")+"/") {
			out = append(out, r)
		}
	}
	return out, true
}

// listRefs is git for-each-ref's list for the pattern prefix: read by
// forEachRef where it is sure, else git's.
func (e *Env) listRefs(prefix string) []plainRef {
	e.t.Helper()
	if refs, ok := e.forEachRef(prefix); ok {
		return refs
	}
	var refs []plainRef
	for _, line := range strings.Split(e.Git("for-each-ref", "--format=%(refname) %(objectname) %(symref)", prefix), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			r := plainRef{name: f[0], oid: f[1]}
			if len(f) == 3 {
				r.symref = f[2]
			}
			refs = append(refs, r)
		}
	}
	return refs
}

// treeOf is the tree of a commit git rev-parse <commit>^{tree} reads
// from one loose file or one undeltified entry of a pack (its index of
// version 2, its head and checksum what the index says, as git checks),
// its hash checked as git's parse_object checks it; false for anything
// else: another type, a delta, a multi-pack index, replace refs.
func treeOf(top string, environ []string, oid string) (string, bool) {
	dir, ok := plainCommonDir(top, environ)
	if !ok || !isHexLine([]byte(oid+"\n")) {
		return "", false
	}
	if _, err := os.Lstat(filepath.Join(dir, "refs", "replace")); !os.IsNotExist(err) {
		return "", false
	}
	if b, err := os.ReadFile(filepath.Join(dir, "packed-refs")); err == nil && bytes.Contains(b, []byte(" refs/replace/")) {
		return "", false
	}
	objects := filepath.Join(dir, "objects")
	if _, err := os.Lstat(filepath.Join(objects, "pack", "multi-pack-index")); !os.IsNotExist(err) {
		return "", false
	}
	var b []byte
	copies := 0
	if f, err := os.Open(filepath.Join(objects, oid[:2], oid[2:])); err == nil {
		copies++
		z, err := zlib.NewReader(f)
		if err == nil {
			b, _ = io.ReadAll(io.LimitReader(z, 1<<20))
		}
		f.Close()
	} else if !os.IsNotExist(err) {
		return "", false
	}
	idxs, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	for _, idx := range idxs {
		body, found, ok := packedCommit(idx, oid)
		if !ok {
			return "", false
		}
		if found {
			copies++
			b = append([]byte(fmt.Sprintf("commit %d\x00", len(body))), body...)
		}
	}
	if sum := sha1.Sum(b); copies != 1 || hex.EncodeToString(sum[:]) != oid {
		return "", false
	}
	head, body, found := bytes.Cut(b, []byte{0})
	tree, isTree := bytes.CutPrefix(body, []byte("tree "))
	if !found || string(head) != fmt.Sprintf("commit %d", len(body)) || !isTree || len(tree) < 41 || !isHexLine(tree[:41]) {
		return "", false
	}
	return string(tree[:40]), true
}

// packedCommit is the body of the commit oid in the pack of the index
// file idx, if there; ok false where unsure (see treeOf).
func packedCommit(idx, oid string) (body []byte, found, ok bool) {
	x, err := os.ReadFile(idx)
	be := binary.BigEndian
	if err != nil || len(x) < 8+1024+40 || string(x[:8]) != "\377tOc\x00\x00\x00\x02" {
		return nil, false, false
	}
	n := int(be.Uint32(x[8+1020:]))
	if len(x) < 8+1024+28*n+40 {
		return nil, false, false
	}
	want, _ := hex.DecodeString(oid)
	names := x[8+1024 : 8+1024+20*n]
	i := sort.Search(n, func(i int) bool { return bytes.Compare(names[20*i:20*i+20], want) >= 0 })
	if i == n || !bytes.Equal(names[20*i:20*i+20], want) {
		return nil, false, true
	}
	off := int64(be.Uint32(x[8+1024+24*n+4*i:]))
	if off&0x80000000 != 0 {
		return nil, false, false // a large offset: packs this size are not the tests'
	}
	pf, err := os.Open(strings.TrimSuffix(idx, ".idx") + ".pack")
	if err != nil {
		return nil, false, os.IsNotExist(err) // git uses no index without its pack
	}
	defer pf.Close()
	st, err := pf.Stat()
	head, sum := make([]byte, 12), make([]byte, 20)
	if err != nil || st.Size() < 32 {
		return nil, false, false
	}
	if _, err := pf.ReadAt(head, 0); err != nil {
		return nil, false, false
	}
	if _, err := pf.ReadAt(sum, st.Size()-20); err != nil {
		return nil, false, false
	}
	v := be.Uint32(head[4:])
	if string(head[:4]) != "PACK" || v != 2 && v != 3 || int(be.Uint32(head[8:])) != n || !bytes.Equal(x[len(x)-40:len(x)-20], sum) {
		return nil, false, false
	}
	// The entry: type in bits 4-6 of the first byte, size in 7-bit groups.
	r := bufio.NewReader(io.NewSectionReader(pf, off, st.Size()-20-off))
	c, err := r.ReadByte()
	if err != nil || (c>>4)&7 != 1 {
		return nil, false, false
	}
	size, shift := int64(c&15), 4
	for c&0x80 != 0 {
		if c, err = r.ReadByte(); err != nil || shift > 56 {
			return nil, false, false
		}
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	z, err := zlib.NewReader(r)
	if err != nil {
		return nil, false, false
	}
	body, err = io.ReadAll(io.LimitReader(z, size+1))
	if err != nil || int64(len(body)) != size {
		return nil, false, false
	}
	return body, true, true
}

// refTree is git rev-parse <ref>^{tree} for a full ref name, read by
// refRead where it is sure; else git's.
func (e *Env) refTree(ref string) string {
	e.t.Helper()
	if _, tree, ok := e.refRead(ref); ok {
		return tree
	}
	return e.Git("rev-parse", ref+"^{tree}")
}

// refCommit is git rev-parse ref and ref^{tree}: read by refRead where
// it can; both asked of git else.
func (e *Env) refCommit(ref string) (id, tree string) {
	e.t.Helper()
	if id, tree, ok := e.refRead(ref); ok {
		return id, tree
	}
	return e.Git("rev-parse", ref), e.Git("rev-parse", ref+"^{tree}")
}

// refRead is a full ref's id and tree, read by forEachRef and treeOf;
// ok only where both are sure.
func (e *Env) refRead(ref string) (id, tree string, ok bool) {
	refs, sure := e.forEachRef(ref)
	if !sure {
		return "", "", false
	}
	for _, r := range refs {
		if r.name != ref {
			continue
		}
		if tree, ok := treeOf(e.Dir, e.Environ(), r.oid); ok {
			return r.oid, tree, true
		}
	}
	return "", "", false
}
