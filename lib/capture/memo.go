package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/repo"
)

// memo is what one scan of the private index gave, keyed by what it saw:
// status's whole output and the stat data of every path it listed. A later
// scan that sees exactly the same has the same tree, since git's own stat
// cache vouches for every path status did not list. It stages and hashes
// nothing then: untracked files an agent leaves for several turns are not
// hashed again at every capture.
type memo struct {
	Sig        string              `json:"sig"`
	Tree       string              `json:"tree"`
	Skipped    []journal.Skipped   `json:"skipped"`
	Submodules []journal.Submodule `json:"submodules"`
}

// scanSignature keys a memo, or returns "" when the scan must not be
// reused: a listed path is a nested repository (its HEAD can move without
// its folder's stat data changing), or was written too recently for its
// timestamps to tell a later write apart. The limits are part of the key:
// what was skipped as too big depends on them; so are the config and
// attributes files, which say what the clean filters make of the files.
func scanSignature(settings []string, status []byte, changes []change, stats []pathStat, lim Limits) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%d\x00%q\x00", lim.MaxFileBytes, lim.MaxTotalBytes, lim.Exclude)
	statDigest(h, settings)
	h.Write(status)
	recent := time.Now().Add(-2 * time.Second).UnixNano()
	for i, c := range changes {
		if c.submodule != "" {
			return ""
		}
		st := &stats[i]
		if st.err != nil {
			fmt.Fprintf(h, "\x00%s\x00absent", c.path)
			continue
		}
		if st.isDir() {
			return ""
		}
		if st.mtime > recent || st.ctime > recent {
			return ""
		}
		fmt.Fprintf(h, "\x00%s\x00%o:%d:%d:%d:%d:%d", c.path, st.mode, st.size, st.mtime, st.ctime, st.ino, st.dev)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// snapshot rebuilds the memo's snapshot with the current HEAD.
func (m memo) snapshot(r *repo.Repo) (*Snapshot, error) {
	id, err := git.NewOid(m.Tree)
	if err != nil {
		return nil, err
	}
	// The tree may be gone: nothing holds a tree whose commit was never made.
	lib, err := r.Lib()
	if err != nil {
		return nil, err
	}
	odb, err := lib.Odb()
	if err != nil {
		return nil, err
	}
	defer odb.Free()
	if !odb.Exists(id) {
		return nil, errors.New("the remembered tree is gone")
	}
	snap := &Snapshot{Tree: id, Skipped: m.Skipped, Submodules: m.Submodules}
	if err := readHead(r, snap); err != nil {
		return nil, err
	}
	return snap, nil
}

// statDigest writes the stat data of each file to w, or that it is absent.
func statDigest(w io.Writer, files []string) {
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			fmt.Fprintf(w, "%s:absent\x00", f)
			continue
		}
		fmt.Fprintf(w, "%s:%d:%d\x00", f, st.Size(), st.ModTime().UnixNano())
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			fmt.Fprintf(w, "%d:%d\x00", sys.Ino, sys.Ctim.Nano())
		}
	}
}

// settingsFiles are the files whose change can change what a clean filter
// gives for a file whose own stat data did not change: git's config files
// and the attributes outside the tree, with the files the config includes
// and the attributes files core.attributesFile points at.
func settingsFiles(r *repo.Repo) []string {
	configs, attrs, _ := outsideFiles(r)
	w := configWalk{home: envValue(r, "HOME"), top: r.Top}
	for _, f := range configs {
		w.read(f, 0)
	}
	return append(append(append(configs, attrs...), w.included...), w.attributesFiles...)
}
