package private

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/git-venom/git-venom/lib/capture/store"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
)

// A capture without the private index (another process holds it, or it is
// unusable) starts from a copy of the user's index, and so does the private
// index when it is made: the copy's stat cache spares hashing the tree.

// CopyIndex copies the user's index into tmpDir, keeping its mtime: git
// decides "racily clean" entries from it, and a fresh mtime would hide an edit
// that keeps a file's size (docs/checkpoints.md#how-a-capture-runs). git replaces its index by rename,
// so the copy is never half written. No index yet: no copy, and a name no
// file has, which git may then create. The copy is a new file of an
// unpredictable name in a folder reached link-free (statefile), so nothing
// planted in the state folder can receive it.
func CopyIndex(src, tmpDir string) (string, error) {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return statefile.TempName(tmpDir, "capture-*.index")
	}
	if err != nil {
		return "", err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return "", err
	}
	out, err := statefile.CreateTemp(tmpDir, "capture-*.index")
	if err != nil {
		return "", err
	}
	dst := out.Name()
	_, err = io.Copy(out, in)
	if err == nil {
		err = statefile.SetModTime(out, fi.ModTime())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		statefile.Remove(dst)
		return "", err
	}
	return dst, nil
}

// PrepareCopy reads the flagged entries of an index copy and clears its
// assume-unchanged bits (docs/checkpoints.md#how-a-capture-runs step 2: in the copy only, so those edits
// are seen; libgit2 honours the bit and would hide them).
func PrepareCopy(ctx context.Context, r *repo.Repo, idx string) ([]gitindex.Entry, error) {
	env := []string{"GIT_INDEX_FILE=" + idx}
	flagged, err := readFlags(ctx, r, idx, env)
	if err != nil {
		return nil, err
	}
	var assumed, keep []gitindex.Entry
	for _, e := range flagged {
		if e.AssumeValid && !e.SkipWorktree {
			assumed = append(assumed, e)
		}
		if e.SkipWorktree || e.SparseDir || e.Mode == 0o160000 {
			keep = append(keep, e)
		}
	}
	if len(assumed) > 0 {
		_, err := r.Git.RunCall(ctx, gitcli.Call{Env: env, Stdin: bytes.NewReader(gitcli.NulList(pathsOf(assumed)))},
			"update-index", "-z", "--no-assume-unchanged", "--stdin")
		if err != nil {
			return nil, store.Failed("update-index", err)
		}
	}
	return keep, nil
}

// readFlags lists the flagged entries of the index copy, through git when the
// index is split (its entries live in a shared file).
func readFlags(ctx context.Context, r *repo.Repo, idx string, env []string) ([]gitindex.Entry, error) {
	ix, err := gitindex.Read(idx)
	if err == nil {
		return ix.Flagged, nil
	}
	if !errors.Is(err, gitindex.ErrSplit) {
		return nil, store.Failed("read_index", err)
	}
	out, err := r.Git.RunCall(ctx, gitcli.Call{Env: env}, "ls-files", "-z", "-v", "--stage")
	if err != nil {
		return nil, store.Failed("ls-files", err)
	}
	var flagged []gitindex.Entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		// "<tag> <mode> <oid> <stage>\t<path>"
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok || len(meta) < 2 {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) < 4 {
			continue
		}
		tag := f[0]
		var mode uint32
		fmt.Sscanf(f[1], "%o", &mode)
		e := gitindex.Entry{Path: string(path), Mode: mode,
			AssumeValid:  tag != strings.ToUpper(tag),
			SkipWorktree: strings.EqualFold(tag, "S"),
			SparseDir:    mode == 0o040000}
		if e.AssumeValid || e.SkipWorktree || e.SparseDir || mode == 0o160000 {
			flagged = append(flagged, e)
		}
	}
	return flagged, nil
}

func pathsOf(es []gitindex.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}
