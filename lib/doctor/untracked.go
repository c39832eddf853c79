package doctor

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/treepath"
	"github.com/git-venom/git-venom/lib/ui"
)

// BigFolderShare is the untracked-folder threshold as a share of
// venom.maxTotalBytes: a folder over a quarter of it (128 MiB by default)
// takes a large part of every capture that finds it changed, and an npm
// or pip install past the whole limit stops every capture.
const BigFolderShare = 4

// untrackedFolders warns about untracked, unignored folders that
// venom.exclude does not leave out and that hold more than a quarter of
// venom.maxTotalBytes, with the setting that leaves each out. It lists
// them as git ls-files --directory does (a folder with
// no tracked file in it, once) and sums the sizes of the regular files in
// each, links not followed and nested repositories left out.
func untrackedFolders(ctx context.Context, s *state.Store) Check {
	const id = "capture.untracked_folders"
	limit := s.Config.MaxTotalBytes / BigFolderShare
	out, err := s.Repo.Git.Run(ctx, "ls-files", "-z", "--others", "--directory", "--no-empty-directory", "--exclude-standard")
	if err != nil {
		return bad(id, Warn, "run git ls-files --others --directory to see why", "cannot list the untracked files: %v", err)
	}
	x := ignore.NewExcluder(s.Config.Exclude)
	type big struct {
		dir   string
		bytes int64
	}
	var found []big
	for _, p := range bytes.Split(out, []byte{0}) {
		dir := string(p)
		if !strings.HasSuffix(dir, "/") {
			continue
		}
		if _, excluded := x.Excluded(dir, true); excluded {
			continue
		}
		if n := folderBytes(treepath.Abs(s.Repo.Top, dir)); n > limit {
			found = append(found, big{dir, n})
		}
	}
	if len(found) == 0 {
		return ok(id, "no untracked folder holds more than %s", ui.Bytes(limit))
	}
	sort.Slice(found, func(i, j int) bool { return found[i].bytes > found[j].bytes })
	var names, fixes []string
	for _, f := range found {
		names = append(names, fmt.Sprintf("%s (%s)", quote.C(f.dir), ui.Bytes(f.bytes)))
		fixes = append(fixes, capture.ExcludeCommand(ignore.EscapePath(f.dir, true)))
	}
	return bad(id, Warn, strings.Join(fixes, "; "),
		"untracked folders over a quarter of venom.maxTotalBytes (%s): %s; a capture stores what changed in them, and one past the limit fails; leave them out with venom.exclude",
		ui.Bytes(s.Config.MaxTotalBytes), strings.Join(names, ", "))
}

// folderBytes sums the sizes of the regular files under dir, without
// following links or entering a nested repository.
func folderBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() {
			if p != dir {
				if repo.Holds(p) {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
