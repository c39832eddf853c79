package main

// The shortcuts mode: each of our own readers and writers of git's formats
// (index, tree diff, tree edit, ignore, config, journal, pack write)
// against libgit2 or encoding/json, in this process, on the Go source tree
// and a generated one; a shortcut earns its lines at own/plain <= 0.90 on
// both (docs/benchmarks.md#our-own-git-formats).
//
//	go run ./tests/bench -shortcuts -shortcuts-files 100000 -runs 11

import (
	"bufio"
	"crypto/sha1"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/gitconfig"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/packfile"
	"github.com/git-venom/git-venom/lib/treeedit"
	"github.com/git-venom/git-venom/lib/treewalk"
)

func init() {
	if !modeSelected("shortcuts") {
		return
	}
	fs := flag.NewFlagSet("bench -shortcuts", flag.ExitOnError)
	fs.Bool("shortcuts", true, "compare our own git-format code with the plain way")
	files := fs.String("shortcuts-files", "100000", "comma-separated sizes of generated trees (empty: none)")
	goTree := fs.Bool("shortcuts-go", true, "also the Go source tree (GOROOT/src in a repository of one commit)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for cached repositories")
	runs := fs.Int("runs", 11, "timed runs of each side")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := runShortcuts(*work, *files, *goTree, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

// shortcut is one own implementation and the plain way to the same result.
type shortcut struct {
	name       string
	own, plain func() error
}

func runShortcuts(work, files string, goTree bool, runs int) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	type tree struct{ name, dir string }
	var trees []tree
	if goTree {
		dir, err := goSourceRepo(work)
		if err != nil {
			return err
		}
		trees = append(trees, tree{"go-src", dir})
	}
	p := &proc{git: "git", env: baseEnv(), dir: work}
	for _, f := range strings.Split(files, ",") {
		var n int
		if strings.TrimSpace(f) == "" {
			continue
		}
		if _, err := fmt.Sscan(f, &n); err != nil || n < 2 {
			return fmt.Errorf("bad -shortcuts-files entry %q", f)
		}
		dir, err := prepare(p, work, n, "")
		if err != nil {
			return err
		}
		trees = append(trees, tree{fmt.Sprintf("gen-%d", n), dir})
	}
	logDir, _, err := journalRepo(work, 10000)
	if err != nil {
		return err
	}
	version, _ := p.line("version")
	fmt.Printf("%s, %d runs of each side, interleaved; medians (min-max) in ms\n", version, runs)
	fmt.Printf("%-10s %-10s %22s %22s %9s\n", "tree", "shortcut", "own", "plain", "own/plain")
	for _, t := range trees {
		cases, cleanup, err := shortcutCases(t.dir, logDir)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		for _, c := range cases {
			own, plain, err := timePair(c, runs)
			if err != nil {
				cleanup()
				return fmt.Errorf("%s %s: %w", t.name, c.name, err)
			}
			fmt.Printf("%-10s %-10s %22s %22s %9.2f\n", t.name, c.name, fineSpread(own), fineSpread(plain),
				float64(median(own))/float64(median(plain)))
		}
		cleanup()
	}
	return nil
}

// timePair runs own and plain in turn, the first of each pair alternating.
func timePair(c shortcut, runs int) (own, plain []time.Duration, err error) {
	// One untimed run of each warms the page cache and libgit2's caches.
	if err := c.own(); err != nil {
		return nil, nil, err
	}
	if err := c.plain(); err != nil {
		return nil, nil, err
	}
	for i := 0; i < runs; i++ {
		sides := []func() error{c.own, c.plain}
		out := []*[]time.Duration{&own, &plain}
		if i%2 == 1 {
			sides[0], sides[1], out[0], out[1] = sides[1], sides[0], out[1], out[0]
		}
		for j, f := range sides {
			start := time.Now()
			if err := f(); err != nil {
				return nil, nil, err
			}
			*out[j] = append(*out[j], time.Since(start))
		}
	}
	return own, plain, nil
}

// fineSpread is spread to a hundredth of a millisecond: some pairs take
// less than one.
func fineSpread(d []time.Duration) string {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	f := func(x time.Duration) string { return fmt.Sprintf("%.2f", float64(x.Microseconds())/1000) }
	return fmt.Sprintf("%s (%s-%s)", f(median(s)), f(s[0]), f(s[len(s)-1]))
}

// shortcutCases prepares every pair on the repository at dir; logDir holds
// the repository whose log the journal pair reads.
func shortcutCases(dir, logDir string) ([]shortcut, func(), error) {
	repo, err := git.OpenRepository(dir)
	if err != nil {
		return nil, nil, err
	}
	odb, err := repo.Odb()
	if err != nil {
		return nil, nil, err
	}
	head, err := repo.RevparseSingle("HEAD^{tree}")
	if err != nil {
		return nil, nil, err
	}
	base := head.Id()
	edits, err := twentyEdits(repo, base)
	if err != nil {
		return nil, nil, err
	}
	edited, err := treeedit.Apply(repo, base, edits)
	if err != nil {
		return nil, nil, err
	}
	folders, err := listFolders(dir)
	if err != nil {
		return nil, nil, err
	}
	scratch, err := os.MkdirTemp("", "venom-bench-shortcuts-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(scratch) }
	blobs := make([][]byte, 1000)
	for i := range blobs {
		blobs[i] = []byte(strings.Repeat(fmt.Sprintf("blob %d of the pack pair\n", i), 80))
	}
	configs := []string{filepath.Join(dir, ".git", "config"), filepath.Join(os.Getenv("HOME"), ".gitconfig")}
	logPath := filepath.Join(logDir, ".git", "venom", "log.jsonl")
	if _, err := os.Stat(logPath); err != nil {
		cleanup()
		return nil, nil, err
	}
	records, err := countLines(logPath)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	// The pack merge pair: the 1,000 blobs in 10 packs of a bare
	// repository, merged into one by packfile.Merge (discarded after) and
	// by git pack-objects, which copies packed entries as they are too.
	mergeRepo := filepath.Join(scratch, "merge.git")
	mergePacks := filepath.Join(mergeRepo, "objects", "pack")
	var mergeNames []string
	var mergeIDs strings.Builder
	if out, err := exec.Command("git", "init", "-q", "--bare", mergeRepo).CombinedOutput(); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("git init: %v: %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(scratch, "git-merged"), 0o755); err != nil {
		cleanup()
		return nil, nil, err
	}
	for k := 0; k < 10; k++ {
		w, err := packfile.Create(mergePacks, 100)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		for _, b := range blobs[k*100 : (k+1)*100] {
			id := blobID(b)
			fmt.Fprintf(&mergeIDs, "%x\n", id)
			if err := w.Add(id, packfile.Blob, b); err != nil {
				w.Abort()
				cleanup()
				return nil, nil, err
			}
		}
		name, err := w.Finish()
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		mergeNames = append(mergeNames, name)
	}
	indexPath := filepath.Join(dir, ".git", "index")
	// The index patch pair: own writes a patched copy, plain patches its
	// own copy of the index in place through libgit2 (the same 20 updates
	// each run, so it reads and writes the same bytes every time).
	patch, err := twentyPatches(indexPath)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	ownIndex, plainIndex := filepath.Join(scratch, "own.index"), filepath.Join(scratch, "plain.index")
	if err := copyFile(indexPath, plainIndex); err != nil {
		cleanup()
		return nil, nil, err
	}
	run := 0
	ownIgnored := -1 // the own side's count, which runs first (timePair)
	return []shortcut{
		{"index", func() error {
			_, err := gitindex.Read(indexPath)
			return err
		}, func() error {
			r, err := git.OpenRepository(dir)
			if err != nil {
				return err
			}
			defer r.Free()
			idx, err := r.Index()
			if err != nil {
				return err
			}
			defer idx.Free()
			h := sha1.New()
			for i := uint(0); i < idx.EntryCount(); i++ {
				e, err := idx.EntryByIndex(i)
				if err != nil {
					return err
				}
				h.Write([]byte(e.Path))
				h.Write(e.Id[:])
			}
			return nil
		}},
		{"tree diff", func() error {
			n := 0
			err := treewalk.Diff(odb, base, edited, func(string, treewalk.Side, treewalk.Side) { n++ })
			return wantCount("treewalk", n, 20, err)
		}, func() error {
			a, err := repo.LookupTree(base)
			if err != nil {
				return err
			}
			b, err := repo.LookupTree(edited)
			if err != nil {
				return err
			}
			d, err := repo.DiffTreeToTree(a, b, nil)
			if err != nil {
				return err
			}
			defer d.Free()
			n, err := d.NumDeltas()
			return wantCount("libgit2 diff", n, 20, err)
		}},
		{"tree edit", func() error {
			_, err := treeedit.Apply(repo, base, edits)
			return err
		}, func() error {
			t, err := repo.LookupTree(base)
			if err != nil {
				return err
			}
			idx, err := git.NewIndex()
			if err != nil {
				return err
			}
			defer idx.Free()
			if err := idx.ReadTree(t); err != nil {
				return err
			}
			for _, e := range edits {
				id := e.ID
				if e.Oid != "" {
					o, err := git.NewOid(e.Oid)
					if err != nil {
						return err
					}
					id = *o
				}
				if err := idx.Add(&git.IndexEntry{Path: e.Path, Mode: git.Filemode(e.Mode), Id: &id}); err != nil {
					return err
				}
			}
			got, err := idx.WriteTreeTo(repo)
			if err == nil && !got.Equal(edited) {
				err = fmt.Errorf("libgit2 wrote %s, treeedit %s", got, edited)
			}
			return err
		}},
		{"ignore", func() error {
			n := 0
			defer func() { ownIgnored = n }()
			stacks := map[string]*ignore.Stack{}
			for _, f := range folders {
				var s *ignore.Stack
				if f.path == "" {
					s = ignore.Root().Top(f.gitignore)
				} else {
					parent, name := splitFolder(f.path)
					s = stacks[parent].Child(name, f.gitignore)
				}
				stacks[f.path] = s
				for _, e := range f.entries {
					if s.DirExcluded() || s.Excluded(e.name, e.dir) {
						n++
					}
				}
			}
			return nil
		}, func() error {
			n := 0
			for _, f := range folders {
				for _, e := range f.entries {
					p := f.path + e.name
					if e.dir {
						p += "/"
					}
					ignored, err := repo.IsPathIgnored(p)
					if err != nil {
						return err
					}
					if ignored {
						n++
					}
				}
			}
			// Both sides judge the same entries: they must agree.
			return wantCount("libgit2's ignore", n, ownIgnored, nil)
		}},
		{"config", func() error {
			for _, c := range configs {
				if _, err := gitconfig.ReadFile(c); err != nil && !os.IsNotExist(err) {
					return err
				}
			}
			return nil
		}, func() error {
			for _, c := range configs {
				if _, err := os.Stat(c); err != nil {
					continue
				}
				cfg, err := git.OpenOndisk(c)
				if err != nil {
					return err
				}
				it, err := cfg.NewIterator()
				if err != nil {
					cfg.Free()
					return err
				}
				for {
					if _, err := it.Next(); err != nil {
						break
					}
				}
				it.Free()
				cfg.Free()
			}
			return nil
		}},
		{"journal", func() error {
			n := 0
			_, err := journal.Scan(logPath, func(*journal.Entry) { n++ })
			return wantCount("journal.Scan", n, records, err)
		}, func() error {
			f, err := os.Open(logPath)
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<24)
			n := 0
			for sc.Scan() {
				var e journal.Entry
				if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
					return err
				}
				n++
			}
			return wantCount("encoding/json", n, records, sc.Err())
		}},
		{"pack write", func() error {
			run++
			d := filepath.Join(scratch, fmt.Sprintf("own-%d", run))
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			w, err := packfile.Create(d, len(blobs))
			if err != nil {
				return err
			}
			for _, b := range blobs {
				if err := w.Add(blobID(b), packfile.Blob, b); err != nil {
					w.Abort()
					return err
				}
			}
			_, err = w.Finish()
			return err
		}, func() error {
			run++
			d := filepath.Join(scratch, fmt.Sprintf("plain-%d", run))
			o, err := git.NewOdb()
			if err != nil {
				return err
			}
			defer o.Free()
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			loose, err := git.NewOdbBackendLoose(d, -1, false, 0, 0)
			if err != nil {
				return err
			}
			if err := o.AddBackend(loose, 1); err != nil {
				return err
			}
			for _, b := range blobs {
				if _, err := o.Write(b, git.ObjectBlob); err != nil {
					return err
				}
			}
			return nil
		}},
		{"pack merge", func() error {
			w, n, err := packfile.Merge(mergePacks, mergeNames, packfile.Options{Sync: true})
			if err != nil {
				return err
			}
			w.Discard()
			return wantCount("packfile.Merge", n, len(blobs), nil)
		}, func() error {
			c := exec.Command("git", "-C", mergeRepo, "pack-objects", "-q", filepath.Join(scratch, "git-merged", "pack"))
			c.Stdin = strings.NewReader(mergeIDs.String())
			c.Env = baseEnv()
			if out, err := c.CombinedOutput(); err != nil {
				return fmt.Errorf("git pack-objects: %v: %s", err, out)
			}
			return nil
		}},
		{"index patch", func() error {
			st, err := gitindex.ReadStats(indexPath)
			if err != nil {
				return err
			}
			defer st.Close()
			updates := map[int]gitindex.Update{}
			for _, u := range patch {
				if i := st.Find([]byte(u.path)); i >= 0 {
					updates[i] = u.update
				}
			}
			f, err := os.Create(ownIndex)
			if err != nil {
				return err
			}
			b := bufio.NewWriterSize(f, 256<<10)
			n, err := st.WritePatched(b, updates, st.Mtime)
			if err == nil {
				err = b.Flush()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return wantCount("WritePatched", n, len(patch), err)
		}, func() error {
			idx, err := git.OpenIndex(plainIndex)
			if err != nil {
				return err
			}
			defer idx.Free()
			for _, u := range patch {
				e, err := idx.EntryByPath(u.path, 0)
				if err != nil {
					return err
				}
				id := git.Oid(u.update.Oid)
				e.Id = &id
				e.Mtime = git.IndexTime{}
				e.Mtime.Seconds, e.Mtime.Nanoseconds = int32(u.update.Stat.MtimeSec), u.update.Stat.MtimeNsec
				e.Size = u.update.Stat.Size
				if err := idx.Add(e); err != nil {
					return err
				}
			}
			return idx.Write()
		}},
	}, cleanup, nil
}

// indexPatch is one entry of the index patch pair: a path of the index
// and what a capture that wrote its file would give it.
type indexPatch struct {
	path   string
	update gitindex.Update
}

// twentyPatches picks 20 entries spread over the index at indexPath and
// gives each a new object id and a size and mtime one step on, as the
// private index takes after a capture wrote 20 files.
func twentyPatches(indexPath string) ([]indexPatch, error) {
	st, err := gitindex.ReadStats(indexPath)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var out []indexPatch
	for k := 0; k < 20 && st.Len() > 0; k++ {
		i := k * st.Len() / 20
		path := string(st.Path(i))
		if len(out) > 0 && out[len(out)-1].path == path {
			continue
		}
		content := []byte(fmt.Sprintf("patched %d\n", k))
		out = append(out, indexPatch{path: path, update: gitindex.Update{Oid: blobID(content), Stat: gitindex.Stat{
			MtimeSec: uint32(time.Now().Unix()) - 10, Size: uint32(len(content)), Mode: 0o100644}}})
	}
	if len(out) != 20 {
		return nil, fmt.Errorf("an index of %d entries has no 20 to patch", st.Len())
	}
	return out, nil
}

func wantCount(what string, got, want int, err error) error {
	if err == nil && got != want {
		err = fmt.Errorf("%s found %d, want %d", what, got, want)
	}
	return err
}

func countLines(path string) (int, error) {
	b, err := os.ReadFile(path)
	return strings.Count(string(b), "\n"), err
}

func blobID(b []byte) [20]byte {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	var id [20]byte
	copy(id[:], h.Sum(nil))
	return id
}

// twentyEdits changes 10 of base's files (the first 10 in path order) and
// adds 10 in a new folder.
func twentyEdits(repo *git.Repository, base *git.Oid) ([]treeedit.Edit, error) {
	t, err := repo.LookupTree(base)
	if err != nil {
		return nil, err
	}
	var edits []treeedit.Edit
	err = t.Walk(func(dir string, e *git.TreeEntry) error {
		if len(edits) == 10 {
			return git.TreeWalkSkip
		}
		if e.Type == git.ObjectBlob && e.Filemode == git.FilemodeBlob {
			edits = append(edits, treeedit.Edit{Path: dir + e.Name, Mode: uint32(git.FilemodeBlob)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := 0; i < 10; i++ {
		edits = append(edits, treeedit.Edit{Path: fmt.Sprintf("zz-bench-new/f%02d.txt", i), Mode: uint32(git.FilemodeBlob)})
	}
	for i := range edits {
		id, err := repo.CreateBlobFromBuffer([]byte(fmt.Sprintf("bench edit %d of %s\n", i, edits[i].Path)))
		if err != nil {
			return nil, err
		}
		edits[i].ID = *id
	}
	return edits, nil
}

type folderEntry struct {
	name string
	dir  bool
}

// folder is one folder of the work tree as a capture's walk meets it:
// its path ("" or ending in '/'), its .gitignore, its entries.
type folder struct {
	path      string
	gitignore []byte
	entries   []folderEntry
}

// listFolders lists the work tree, parents before children, leaving out .git.
func listFolders(top string) ([]folder, error) {
	var out []folder
	queue := []string{""}
	for len(queue) > 0 {
		rel := queue[0]
		queue = queue[1:]
		ents, err := os.ReadDir(filepath.Join(top, rel))
		if err != nil {
			return nil, err
		}
		f := folder{path: rel}
		for _, e := range ents {
			if rel == "" && e.Name() == ".git" {
				continue
			}
			f.entries = append(f.entries, folderEntry{e.Name(), e.IsDir()})
			if e.IsDir() {
				queue = append(queue, rel+e.Name()+"/")
			}
			if e.Name() == ".gitignore" {
				if f.gitignore, err = os.ReadFile(filepath.Join(top, rel, ".gitignore")); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// splitFolder splits "a/b/" into "a/" and "b".
func splitFolder(p string) (parent, name string) {
	p = strings.TrimSuffix(p, "/")
	i := strings.LastIndexByte(p, '/')
	return p[:i+1], p[i+1:]
}
