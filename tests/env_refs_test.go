package tests

import (
	"bytes"
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
