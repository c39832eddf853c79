package refs

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-venom/git-venom/lib/repo"
)

// checkpointsNS is the namespace of the agents' checkpoint refs.
const checkpointsNS = "refs/venom/checkpoints/"

// Numbers lists, by agent, the numbers n of the refs
// refs/venom/checkpoints/<agent>/<n> there are, loose or packed, read as
// files: the loose refs first, then packed-refs, as git's own listing
// does, so a ref that git pack-refs moves meanwhile is seen in one of
// them. It says only that a ref of that name exists, not what it holds
// (a loose file that is not a ref counts too): a caller that finds a
// number missing looks again through Resolve. It costs a scan of
// packed-refs, where git for-each-ref sorts every ref (0.9 s and 125 MB
// for 400,000). A repository whose refs are in neither form (reftable)
// lists none.
func Numbers(r *repo.Repo) (map[string]map[int]bool, error) {
	out := map[string]map[int]bool{}
	add := func(name string) {
		rest, ok := strings.CutPrefix(name, checkpointsNS)
		if !ok {
			return
		}
		agent, num, ok := strings.Cut(rest, "/")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 1 || strconv.Itoa(n) != num {
			return
		}
		if out[agent] == nil {
			out[agent] = map[int]bool{}
		}
		out[agent][n] = true
	}
	root := filepath.Join(r.CommonDir, filepath.FromSlash(checkpointsNS))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == root {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(r.CommonDir, path)
			if err != nil {
				return err
			}
			add(filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(r.CommonDir, "packed-refs"))
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	prefix := []byte(" " + checkpointsNS)
	for sc.Scan() {
		// "<oid> <name>"; "# ..." and "^<peeled>" lines have no such name.
		line := sc.Bytes()
		if i := bytes.IndexByte(line, ' '); i > 0 && bytes.HasPrefix(line[i:], prefix) {
			add(string(line[i+1:]))
		}
	}
	return out, sc.Err()
}
