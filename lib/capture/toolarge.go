package capture

import (
	"fmt"
	"sort"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ignore"
	"github.com/git-venom/git-venom/lib/quote"
)

// sizedFile is one file a capture would write, with its size.
type sizedFile struct {
	path      string
	bytes     int64
	untracked bool
}

// excludable is a folder of failed.checkpoint_too_large's data, with the
// venom.exclude pattern that matches exactly it and the command that sets it.
type excludable struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Bytes   int64  `json:"bytes"`
	Exclude string `json:"exclude"`
	Fix     string `json:"fix"`
}

// tooLargeError is failed.checkpoint_too_large (docs/checkpoints.md#what-a-capture-holds, docs/errors.md#data): the
// five largest files, and the untracked folders behind the size with the
// exact venom.exclude setting for each, since an unignored dependency or
// build folder is the usual cause.
func tooLargeError(written []sizedFile, total int64, lim Limits) error {
	sort.Slice(written, func(i, j int) bool { return written[i].bytes > written[j].bytes })
	largest := []sizedPath{}
	for i := 0; i < len(written) && i < 5; i++ {
		p, b64 := quote.JSONPath(written[i].path)
		largest = append(largest, sizedPath{Path: p, PathB64: b64, Bytes: written[i].bytes})
	}
	folders := largestFolders(written, total)
	msg := fmt.Sprintf("the new and changed files come to %d bytes, past venom.maxTotalBytes (%d)", total, lim.MaxTotalBytes)
	if len(folders) > 0 {
		var names []string
		for _, f := range folders {
			names = append(names, fmt.Sprintf("%s (%d bytes)", quote.C(f.Path), f.Bytes))
		}
		msg += "; most of it is in " + strings.Join(names, ", ")
	}
	e := errcode.Newf(errcode.FailedCheckpointTooLarge,
		tooLarge{Repo: ".", Bytes: total, Limit: lim.MaxTotalBytes, Largest: largest, Folders: folders}, "%s", msg)
	if len(folders) == 0 {
		return e.Hint("ignore the build output in .gitignore, leave it out with venom.exclude, or raise venom.maxTotalBytes")
	}
	for _, f := range folders {
		e.Hint("leave %s out of every capture: %s", quote.C(f.Path), f.Fix)
	}
	return e.Hint("or ignore it in .gitignore, or raise venom.maxTotalBytes")
}

// ExcludeCommand is the command that adds pattern to venom.exclude in the
// global scope, quoted for a POSIX shell.
func ExcludeCommand(pattern string) string {
	return quote.Shell([]string{"git", "config", "--global", "--add", "venom.exclude", pattern})
}

// largestFolders names up to three untracked folders that hold the bulk
// of the files: for each top-level folder of untracked files, largest
// first, the deepest folder on the way down that still holds 90% of it
// (web/node_modules/ rather than web/), kept when it holds a tenth of
// total or more. Tracked files are left out: excluding a tracked folder
// would freeze the agent's own work at the index's version.
func largestFolders(written []sizedFile, total int64) []excludable {
	size := map[string]int64{}               // folder "a/b/" → bytes of untracked files under it
	children := map[string]map[string]bool{} // folder → its subfolders that hold any
	for _, f := range written {
		if !f.untracked {
			continue
		}
		parent := ""
		for i := 0; i < len(f.path); i++ {
			if f.path[i] != '/' {
				continue
			}
			dir := f.path[:i+1]
			size[dir] += f.bytes
			if children[parent] == nil {
				children[parent] = map[string]bool{}
			}
			children[parent][dir] = true
			parent = dir
		}
	}
	var tops []string
	for d := range children[""] {
		tops = append(tops, d)
	}
	sort.Slice(tops, func(i, j int) bool {
		if size[tops[i]] != size[tops[j]] {
			return size[tops[i]] > size[tops[j]]
		}
		return tops[i] < tops[j]
	})
	out := []excludable{}
	for _, d := range tops {
		if len(out) == 3 || size[d]*10 < total {
			break
		}
		for {
			next := ""
			for c := range children[d] {
				if size[c]*10 >= size[d]*9 {
					next = c
				}
			}
			if next == "" {
				break
			}
			d = next
		}
		p, b64 := quote.JSONPath(d)
		pattern := ignore.EscapePath(d, true)
		out = append(out, excludable{Path: p, PathB64: b64, Bytes: size[d], Exclude: pattern, Fix: ExcludeCommand(pattern)})
	}
	return out
}

// tooLarge is failed.checkpoint_too_large's data, members in
// docs/errors.md#data's order.
type tooLarge struct {
	Repo    string      `json:"repo"`
	Bytes   int64       `json:"bytes"`
	Limit   int64       `json:"limit"`
	Largest []sizedPath `json:"largest"`
	// Folders are the untracked folders that hold most of Bytes, each
	// with the setting that leaves it out (largestFolders).
	Folders []excludable `json:"folders"`
}

type sizedPath struct {
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Bytes   int64  `json:"bytes"`
}
