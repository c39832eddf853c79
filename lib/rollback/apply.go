package rollback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/libgit2/git2go/v34"
	"golang.org/x/sys/unix"

	"github.com/git-venom/git-venom/lib/capture"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitindex"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/plan"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/runpace"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treeedit"
	"github.com/git-venom/git-venom/lib/treepath"
)

// applier runs docs/rollback.md#the-real-call's recipe on one tree. It writes the working files
// through a temporary index, never the user's; only a HEAD move in an
// unguarded tree writes the user's index (docs/rollback.md#head), after saving it.
type applier struct {
	ctx    context.Context
	r      *repo.Repo
	tmp    string
	moved  bool   // HEAD moved
	backup string // the user's index before the move; "" when there was none
	// backupMode is the index's permission bits, which the restore keeps.
	backupMode os.FileMode
	// written are the regular files placed that were still exactly as
	// checked out right after (capture.NoteWritten).
	written []capture.Written
	// direct and viaGit count the files written in process and by git
	// checkout-index.
	direct, viaGit int
	// release drops the files the writes replace beside the rest of the
	// rollback (treepath.Release); done waits for it.
	release *treepath.Release
	// prog counts the files done, for a progress line (nil: none).
	prog *Progress
	// keep is the caller's current folder the writes empty: never
	// removed (docs/rollback.md#the-current-folder).
	keep string
}

func newApplier(ctx context.Context, r *repo.Repo, tmp string) *applier {
	return &applier{ctx: ctx, r: r, tmp: tmp, release: treepath.NewRelease(int(heldBudget()))}
}

// done waits until the files the writes replaced are dropped.
func (ap *applier) done() { ap.release.Wait() }

// entry is one side of a change: what a path must become.
type entry struct {
	path string
	mode uint32 // 0: absent
	oid  string
}

// entryOf is one side of a change as the applier takes it: a path to
// delete needs no object id.
func entryOf(path string, mode uint32, id *git.Oid) entry {
	if mode == 0 {
		return entry{path: path}
	}
	return entry{path, mode, id.String()}
}

// forward writes T's side of every file in the plan, then moves HEAD.
// The deletions and the writes are gathered apart straight from the plan:
// a 300,000-path plan is not copied twice over, and a deletion is its
// path alone.
func (ap *applier) forward(p *plan.Plan) error {
	n := 0
	for i := range p.Changes {
		if c := &p.Changes[i]; c.Left == "" && c.TMode == 0 {
			n++
		}
	}
	dels := make([]string, 0, n)
	var writes []entry
	for i := range p.Changes {
		switch c := &p.Changes[i]; {
		case c.Left != "":
		case c.TMode == 0:
			dels = append(dels, c.Path)
		default:
			writes = append(writes, entryOf(c.Path, c.TMode, &c.TOid))
		}
	}
	if err := ap.apply(dels, writes, ap.point); err != nil {
		return err
	}
	if p.Head.Moves {
		return ap.moveHead(p, *p.Head.From, *p.Head.To)
	}
	return nil
}

// files makes each path what want says: deletions first, then each
// emptied folder removed up to the root, so a file can replace a folder
// (see removeFiles); then every write (see write). Every path passed
// treepath.Verify in plan.Build, and every change goes through a
// treepath.Root: nothing is reached through a link.
func (ap *applier) files(want []entry, hook func(string) error) error {
	n := 0
	for _, e := range want {
		if e.mode == 0 {
			n++
		}
	}
	dels, writes := make([]string, 0, n), make([]entry, 0, len(want)-n)
	for _, e := range want {
		if e.mode == 0 {
			dels = append(dels, e.path)
		} else {
			writes = append(writes, e)
		}
	}
	return ap.apply(dels, writes, hook)
}

// apply is files with the deletions and the writes given apart, each in
// path order. Each fault point is also where the writes stop once the
// applier's context ends (a signal, docs/rollback.md#interrupts): one
// before each deletion and each file placed, so a stop comes within a
// file's time.
func (ap *applier) apply(dels []string, writes []entry, point func(string) error) error {
	if len(dels)+len(writes) == 0 {
		return nil
	}
	ap.prog.count(len(dels) + len(writes))
	hook := func(name string) error {
		if err := interrupt.Check(ap.ctx); err != nil {
			return err
		}
		return point(name)
	}
	root, err := treepath.Open(ap.r.Top)
	if err != nil {
		return err
	}
	defer root.Close()
	root.Release(ap.release)
	if len(dels) > 0 {
		if err := hook("rollback-apply-unlink"); err != nil {
			return err
		}
		if err := removeFiles(root, dels, hook, ap.prog, ap.keep); err != nil {
			return err
		}
	}
	if len(writes) == 0 {
		return nil
	}
	if err := hook("rollback-apply-write"); err != nil {
		return err
	}
	return ap.write(root, writes, hook)
}

// write makes each entry's file in a fresh staging folder, in process
// (direct.go) or by git checkout-index beneath the stage's git/, then
// renames it into its tree folder, opened beneath the top without
// following links: checkout-index on the tree itself lstats the leading
// folders and then opens the path, racing a folder swapped for a link. The
// stage is reached only through its descriptor (git gets /proc/self/fd/3),
// so tmp/ or the stage swapped or renamed away changes nothing placed.
func (ap *applier) write(root *treepath.Root, writes []entry, hook func(string) error) error {
	t0 := time.Now()
	stage, err := statefile.MkdirTemp(ap.tmp, "rollback-write-")
	if err != nil {
		return err
	}
	defer stage.RemoveAll()
	// Under core.symlinks=false git writes a link as a file holding its
	// target.
	symlinks := ap.symlinks()
	st := make([]staged, len(writes))
	defer closeHeld(st)
	if d, free := ap.newDirect(root, writes, symlinks); d != nil {
		err := d.stageAll(ap.ctx, stage.Fd(), writes, st, ap.prog)
		free()
		if err != nil {
			return err
		}
	}
	var viaGit []entry
	for i, e := range writes {
		if st[i].name != "" {
			ap.direct++
			continue
		}
		st[i] = staged{name: gitStage + "/" + e.path, link: e.mode == 0o120000 && symlinks}
		viaGit = append(viaGit, e)
	}
	if len(viaGit) > 0 {
		if err := unix.Mkdirat(stage.Fd(), gitStage, 0o700); err != nil {
			return err
		}
		if err := ap.checkoutIndex(stage, viaGit, hook); err != nil {
			return err
		}
		ap.prog.add(len(viaGit))
		remakeGitWritten(root, stage.Fd(), writes, st)
	}
	testhook.Timed("rollback-staged", t0)
	// Between the writes and the renames: the files are staged.
	if err := hook("rollback-apply-staged"); err != nil {
		return err
	}
	// Each file's folder is held for the next file of the same folder
	// (treepath.Held): the files come in path order.
	var held treepath.Held
	defer held.Close()
	var pc runpace.Pacer
	for i, e := range writes {
		pc.Pace()
		// Before each file placed, so a test can change the tree between
		// two files of one folder.
		if err := hook("rollback-place-each"); err != nil {
			return err
		}
		var placed *treepath.Placed
		var err error
		if st[i].held {
			placed, err = placeUnnamed(root, &held, stage.Fd(), &st[i], e)
		} else {
			placed, err = placeFile(root, &held, stage.Fd(), st[i].name, st[i].link, e)
		}
		if err != nil {
			return err
		}
		if w, ok := writtenFile(e, placed); ok {
			w.Direct = st[i].direct
			ap.written = append(ap.written, w)
		}
		ap.prog.add(1)
	}
	return nil
}

// checkoutIndex has git checkout-index write the entries beneath the
// stage's folder git/, through a temporary index of them alone. The index
// is made in the stage too, beside git/, and reached only through the
// stage's descriptor (ours /proc/self/fd/<n>/, git's /proc/self/fd/3/):
// in tmp/, group-writable under core.sharedRepository, a group member
// could replace it by name between its write and git's read, and have
// checkout-index write blobs of its choosing.
func (ap *applier) checkoutIndex(stage *statefile.TempDir, writes []entry, hook func(string) error) error {
	ours := fmt.Sprintf("/proc/self/fd/%d/%s", stage.Fd(), stageIndex)
	env := []string{"GIT_INDEX_FILE=/proc/self/fd/3/" + stageIndex}
	if err := writeIndex(ours, writes); err != nil {
		// libgit2 refuses some names git accepts: let git build it.
		_ = unix.Unlinkat(stage.Fd(), stageIndex, 0)
		var info bytes.Buffer
		for _, e := range writes {
			fmt.Fprintf(&info, "%o %s\t%s\x00", e.mode, e.oid, e.path)
		}
		call := gitcli.Call{Env: env, Stdin: &info, ExtraFiles: []*os.File{stage.File()}}
		if _, err := ap.r.Git.RunCall(ap.ctx, call, "update-index", "-z", "--index-info"); err != nil {
			return err
		}
	}
	// The index is written, git has not read it.
	if err := hook("rollback-apply-index"); err != nil {
		return err
	}
	var list bytes.Buffer
	for _, e := range writes {
		list.WriteString(e.path)
		list.WriteByte(0)
	}
	call := gitcli.Call{Env: env, Stdin: &list, ExtraFiles: []*os.File{stage.File()}}
	ap.viaGit += len(writes)
	_, err := ap.r.Git.RunCall(ap.ctx, call, "checkout-index", "-f", "-z",
		"--prefix=/proc/self/fd/3/"+gitStage+"/", "--stdin")
	return err
}

// writtenFile is e as capture.NoteWritten takes it: a regular file whose
// entry in the tree is the one staged, untouched since, and of the
// executable bit e's mode says.
func writtenFile(e entry, placed *treepath.Placed) (capture.Written, bool) {
	if placed == nil || !placed.Same {
		return capture.Written{}, false
	}
	st := &placed.Placed
	if st.Mode&unix.S_IFMT != unix.S_IFREG ||
		(e.mode == 0o100755) != (st.Mode&0o100 != 0) || (e.mode != 0o100644 && e.mode != 0o100755) {
		return capture.Written{}, false
	}
	return capture.Written{Path: e.path, Mode: e.mode, Oid: e.oid, Stat: gitindex.Stat{
		CtimeSec: uint32(st.Ctim.Sec), CtimeNsec: uint32(st.Ctim.Nsec),
		MtimeSec: uint32(st.Mtim.Sec), MtimeNsec: uint32(st.Mtim.Nsec),
		Dev: uint32(st.Dev), Ino: uint32(st.Ino), UID: st.Uid, GID: st.Gid, Size: uint32(st.Size)}}, true
}

// placeFile moves e's file, staged as rel (a link when link is set), into
// the tree, replacing the file or link at its path, making missing
// folders. A parent that is no longer a
// folder of the tree (a link or a file now), or a folder at the path,
// means another process changed the tree during the rollback: the path is
// left, and step 6's capture shows it (exact:false). A staged entry that
// is missing or not of e's kind (treepath.ErrStaged) fails the rollback.
func placeFile(root *treepath.Root, held *treepath.Held, stage int, rel string, link bool, e entry) (*treepath.Placed, error) {
	placed, err := root.RenameFromStatIn(held, stage, rel, e.path, link)
	if err == nil {
		return &placed, nil
	}
	if left, failed := leftOrFailed(root, e, err); left || failed != nil {
		return nil, failed
	}
	return nil, fmt.Errorf("write %s: %w", e.path, err)
}

// leftOrFailed sorts an error of placing e: a staged entry not of e's kind
// fails the rollback (failed); a parent no longer a folder, or a folder at
// the path, leaves the path (left). Anything else is neither: the caller
// decides.
func leftOrFailed(root *treepath.Root, e entry, err error) (left bool, failed error) {
	switch {
	case errors.Is(err, treepath.ErrStaged):
		return false, fmt.Errorf("write %s: %w", e.path, err)
	case treepath.NotDir(err):
		return true, nil
	}
	if fi, lerr := root.Lstat(e.path); lerr == nil && fi.IsDir() {
		return true, nil
	}
	return false, nil
}

// placeUnnamed places e's file, written unnamed and held open (s.held), as
// placeFile does a staged one: linked at its path (treepath.LinkUnnamedIn).
// Where the link cannot be made (an entry at the path, another file
// system, no /proc), the file is named in the stage as s.name and placed
// from there, replacing what is at the path in one step (swapIn); a
// folder at the path is left, as placeFile leaves it.
func placeUnnamed(root *treepath.Root, held *treepath.Held, stage int, s *staged, e entry) (*treepath.Placed, error) {
	defer unhold(s)
	placed, err := root.LinkUnnamedIn(held, s.fd, e.path)
	if err == nil {
		return &placed, nil
	}
	if left, failed := leftOrFailed(root, e, err); left || failed != nil {
		return nil, failed
	}
	if err := nameHeld(stage, s); err != nil {
		return nil, fmt.Errorf("write %s: %w", e.path, err)
	}
	return placeFile(root, held, stage, s.name, false, e)
}

// removeFiles deletes S's files at dels, each folder opened once beneath
// the top (treepath.Folder) for its run of dels, then each folder that
// empties, deepest first: nothing is reached through a link. A folder no
// longer a folder of the tree, or one where S held a file, is left; step
// 6's capture shows what the tree holds (exact: false).
func removeFiles(root *treepath.Root, dels []string, hook func(string) error, prog *Progress, keep string) error {
	// The folders files were deleted from: each is removed if that
	// emptied it, and then its parent is tried.
	emptied := map[string]bool{}
	var pc runpace.Pacer
	for start := 0; start < len(dels); {
		dir := treepath.Parent(dels[start])
		end := start + 1
		for end < len(dels) && treepath.Parent(dels[end]) == dir {
			end++
		}
		opened, err := removeIn(root, dir, dels[start:end], hook)
		if err != nil {
			return err
		}
		prog.add((end - start) * halves)
		pc.Pace()
		if opened && dir != "" {
			emptied[dir] = true
		}
		start = end
	}
	removeEmptied(root, emptied, &pc, keep)
	return nil
}

// removeIn deletes the files dels of the folder dir ("" the top), and
// reports whether the folder was there to delete them from.
func removeIn(root *treepath.Root, dir string, dels []string, hook func(string) error) (bool, error) {
	f, err := root.OpenFolder(dir)
	if err != nil && !treepath.Gone(err) {
		return false, fmt.Errorf("unlink in %s: %w", dir, err)
	}
	if err != nil {
		// The folder is gone, or no longer a folder of the tree: so are
		// its files. Each still counts for the fault point.
		for range dels {
			if err := hook("rollback-unlink-each"); err != nil {
				return false, err
			}
		}
		return false, nil
	}
	defer f.Close()
	skip := len(dir)
	if skip > 0 {
		skip++ // the "/"
	}
	for _, p := range dels {
		// Each unlink, so a test can fail the n-th after the others ran.
		if err := hook("rollback-unlink-each"); err != nil {
			return false, err
		}
		if err := f.Remove(p[skip:]); err != nil && !treepath.Gone(err) && !errors.Is(err, unix.EISDIR) {
			return false, fmt.Errorf("unlink %s: %w", p, err)
		}
	}
	return true, nil
}

// removeEmptied removes each folder of dirs that is empty now, and then
// each parent that empties, up to the top (never removed): deepest
// folders first, so a folder is tried once, after everything below it,
// and the folders of one parent through one descriptor of it. A folder
// that cannot be removed (it holds something, or is no longer a folder of
// the tree) stays, and so do the folders above it; so does keep, the
// caller's current folder, as git keeps it (setup.c's original_cwd).
func removeEmptied(root *treepath.Root, dirs map[string]bool, pc *runpace.Pacer, keep string) {
	byDepth := map[int][]string{}
	deepest := 0
	for d := range dirs {
		n := strings.Count(d, "/") + 1
		byDepth[n] = append(byDepth[n], d)
		deepest = max(deepest, n)
	}
	for depth := deepest; depth > 0; depth-- {
		level := byDepth[depth]
		sort.Strings(level) // a parent's folders side by side
		var up []string
		for start := 0; start < len(level); {
			parent := treepath.Parent(level[start])
			end := start + 1
			for end < len(level) && treepath.Parent(level[end]) == parent {
				end++
			}
			if f, err := root.OpenFolder(parent); err == nil {
				removed := false
				for _, d := range level[start:end] {
					if d == keep {
						continue
					}
					if f.RemoveEmptyDir(path.Base(d)) == nil {
						removed = true
					}
					pc.Pace()
				}
				f.Close()
				if removed && parent != "" {
					up = append(up, parent)
				}
			}
			start = end
		}
		// A parent is tried once, beside the folders of its depth that
		// had files deleted.
		for _, p := range up {
			if !dirs[p] {
				dirs[p] = true
				byDepth[depth-1] = append(byDepth[depth-1], p)
			}
		}
	}
}

// point is a test fault point on the way forward; the way back has none
// of them, so a test can fail the one and watch the other.
func (ap *applier) point(name string) error { return testhook.PointIn(ap.ctx, name) }

func noPoint(string) error { return nil }

// writeIndex makes an index holding only the entries to write, in process:
// one git process fewer than update-index, and far less to read than T's
// whole tree for checkout-index.
func writeIndex(path string, writes []entry) error {
	ix, err := git.OpenIndex(path)
	if err != nil {
		return err
	}
	defer ix.Free()
	for _, e := range writes {
		id, err := git.NewOid(e.oid)
		if err != nil {
			return err
		}
		if err := ix.Add(&git.IndexEntry{Mode: git.Filemode(e.mode), Id: id, Path: e.path}); err != nil {
			return err
		}
	}
	return ix.Write()
}

// moveHead moves the branch (or a detached HEAD) from S's head to T's with
// a compare-and-swap, then resets the user's index to it (docs/rollback.md#head). The
// index is saved first, so a failure can put it back byte for byte.
func (ap *applier) moveHead(p *plan.Plan, from, to string) error {
	if err := ap.headStillOn(p.Head.Branch); err != nil {
		return err
	}
	if _, err := plan.NotPushed(ap.ctx, ap.r, to, from); err != nil {
		return err
	}
	if err := ap.saveIndex(); err != nil {
		return err
	}
	msg := "venom rollback " + p.Agent.ID
	var err error
	if p.Head.Branch != "" {
		_, err = ap.r.Git.Run(ap.ctx, "update-ref", "-m", msg, "refs/heads/"+p.Head.Branch, to, from)
	} else {
		_, err = ap.r.Git.Run(ap.ctx, "update-ref", "--no-deref", "-m", msg, "HEAD", to, from)
	}
	if err != nil {
		return err
	}
	ap.moved = true
	// Between the branch and the index: a crash here leaves HEAD moved.
	if err := testhook.PointIn(ap.ctx, "rollback-head"); err != nil {
		return err
	}
	user := []string{"GIT_INDEX_FILE=" + ap.r.Index}
	if _, err := ap.r.Git.RunCall(ap.ctx, gitcli.Call{Env: user}, "read-tree", to); err != nil {
		return err
	}
	_, _ = ap.r.Git.RunCall(ap.ctx, gitcli.Call{Env: user}, "update-index", "-q", "--refresh")
	return nil
}

// headStillOn checks, at the last moment before the branch moves, that
// HEAD is still attached where the plan found it (to refs/heads/branch,
// or detached when branch is ""). update-ref's compare-and-swap guards the
// branch's value, not HEAD's attachment: a person who checked out another
// branch at the same commit while the files were written owns HEAD and the
// index now, and moving the old branch and resetting the index to it would
// leave their checkout with a staged reversal they never made.
func (ap *applier) headStillOn(branch string) error {
	_, nowBranch, offBranch, err := capture.ReadHead(ap.r)
	if err != nil {
		return err
	}
	if nowBranch == branch && offBranch == "" {
		return nil
	}
	name := func(branch, ref string) string {
		switch {
		case branch != "":
			return "refs/heads/" + branch
		case ref != "":
			return ref
		}
		return "a detached HEAD"
	}
	return fmt.Errorf("HEAD moved from %s to %s while the files were written; HEAD and the index are left as they are",
		name(branch, ""), name(nowBranch, offBranch))
}

func (ap *applier) saveIndex() error {
	in, err := os.Open(ap.r.Index)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	ap.backupMode = fi.Mode().Perm()
	// Created exclusively under a random name: a link planted in the
	// state folder cannot receive the copy.
	out, err := statefile.CreateTemp(ap.tmp, "rollback-index-backup-*")
	if err != nil {
		return err
	}
	ap.backup = out.Name()
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// restoreIndex puts the saved index back, by rename as git does.
func (ap *applier) restoreIndex() error {
	if ap.backup == "" {
		return nil
	}
	b, err := statefile.ReadFile(ap.backup)
	if err != nil {
		return err
	}
	// Beside the index, created exclusively under a random name, then
	// renamed over it: nothing is written through a planted link. Its
	// mode is set on the descriptor (fchmod), never by name: the index's
	// folder is group-writable under core.sharedRepository, and a name
	// swapped for a link meanwhile would give the mode to the file the
	// link names.
	tmp, err := os.CreateTemp(filepath.Dir(ap.r.Index), filepath.Base(ap.r.Index)+".venom-restore-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(ap.backupMode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	// Written, not yet renamed into place.
	if err == nil {
		err = testhook.PointIn(ap.ctx, "rollback-index-restore")
	}
	if err == nil {
		err = os.Rename(tmp.Name(), ap.r.Index)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// expectedTree is S with each file of the plan made T's (docs/rollback.md#the-real-call step 6):
// T's tree itself when the plan restores every difference.
func (ap *applier) expectedTree(p *plan.Plan) (string, error) {
	if p.Whole() {
		return plan.TreeID(ap.r, p.Target.Repos[0].Commit)
	}
	lib, err := ap.r.Lib()
	if err != nil {
		return "", err
	}
	var edits []treeedit.Edit
	for _, c := range p.Files() {
		edits = append(edits, treeedit.Edit{Path: c.Path, Mode: c.TMode, ID: c.TOid})
	}
	// The trees go loose into the repository: each gets git's mode under
	// core.sharedRepository, which libgit2 does not give (best effort).
	share := func(id *git.Oid) { _ = ap.r.ShareObject(id.String()) }
	id, err := treeedit.ApplyNoting(lib, lib, p.Snapshot.Tree, edits, share)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// known is the expected tree as capture.NoteWritten takes it: S's tree
// with the plan's changes made, each with S's entry and T's. Only when
// the files written are most of the plan: putting the others back must
// cost less than making the tree again from S's.
func (ap *applier) known(p *plan.Plan, expected string) capture.Known {
	id, err := git.NewOid(expected)
	if err != nil || len(ap.written) == 0 {
		return capture.Known{}
	}
	// Counted before the files are copied out of the plan: a rollback
	// deleting 300,000 files writes none, and copied them all to learn it.
	n := 0
	for i := range p.Changes {
		if p.Changes[i].Left == "" {
			n++
		}
	}
	if n > 2*len(ap.written) {
		return capture.Known{}
	}
	k := capture.Known{Base: p.Snapshot.Tree, Tree: id, Changes: make([]capture.KnownChange, 0, n)}
	for i := range p.Changes {
		if c := &p.Changes[i]; c.Left == "" {
			k.Changes = append(k.Changes, capture.KnownChange{Path: c.Path, BaseMode: c.SMode, TreeMode: c.TMode,
				BaseID: c.SOid, TreeID: c.TOid})
		}
	}
	return k
}

// stillToUndo lists S's entry for each path of the plan that is not as S
// has it now: the recipe back runs from the current state
// (docs/rollback.md#failures), so a path the way forward never reached is
// not written again. On a full disk that matters: writing every path back
// needs room the failed way forward never freed, and would leave a tree
// that is S already reported partial. When the current state cannot be
// captured, every path is written back.
func (ap *applier) stillToUndo(p *plan.Plan, s *git.Oid, lim capture.Limits) []entry {
	var want []entry
	// The paths where the tree is not S now, from one walk of the two
	// trees (equal folders skipped): a lookup of each of the plan's paths
	// in the new tree would parse each path's folders again, 12 s for
	// 36,000 paths.
	var differs map[string]bool
	if now, err := capture.Take(ap.ctx, ap.r, ap.tmp, lim); err == nil {
		if changed, err := plan.ChangedPaths(ap.ctx, ap.r, s.String(), now.Tree.String()); err == nil {
			differs = make(map[string]bool, len(changed))
			for _, path := range changed {
				differs[path] = true
			}
		}
	}
	for _, c := range p.Files() {
		if differs != nil && !differs[c.Path] {
			continue
		}
		want = append(want, entryOf(c.Path, c.SMode, &c.SOid))
	}
	return want
}

// undo runs the recipe back to S after a failure and checks S's capture
// matches again: failed.rollback_undone, or failed.rollback_partial when
// the way back fails too (docs/rollback.md#failures). It runs on a context
// of its own that no signal ends (docs/rollback.md#interrupts), with its
// own deadline, its git commands in process groups of their own.
func (r *runner) undo(ap *applier, cause error) *errcode.Error {
	p := r.p
	reason := cause.Error()
	if e, ok := errcode.As(cause); ok {
		reason = e.Message
	}
	why := "failed"
	if interrupt.Signalled(r.ctx) {
		why = interrupt.Why(r.ctx)
		reason = "interrupted (" + why + ")"
	}
	ctx, cancel := interrupt.Detach(r.ctx, r.backTimeout())
	defer cancel()
	ap.ctx = ctx
	r.prog.back(why)
	defer interrupt.Shield(r.prog.told)()
	back := func() error {
		if err := testhook.PointIn(r.ctx, "rollback-undo"); err != nil {
			return err
		}
		if ap.moved {
			msg := "venom rollback undone " + p.Agent.ID
			var err error
			if p.Head.Branch != "" {
				_, err = ap.r.Git.Run(ap.ctx, "update-ref", "-m", msg, "refs/heads/"+p.Head.Branch, *p.Head.From, *p.Head.To)
			} else {
				_, err = ap.r.Git.Run(ap.ctx, "update-ref", "--no-deref", "-m", msg, "HEAD", *p.Head.From, *p.Head.To)
			}
			if err != nil {
				return err
			}
		}
		if ap.backup != "" {
			if err := ap.restoreIndex(); err != nil {
				return err
			}
		}
		// The files the way forward placed are known, as those of the
		// way back are below: the captures need not hash them again.
		t0 := time.Now()
		capture.NoteWritten(ap.r, ap.written, capture.Known{})
		ap.written = nil
		want := ap.stillToUndo(p, r.snap.Tree, limits(r.tx.Store))
		testhook.Timed("undo-capture", t0)
		t0 = time.Now()
		if err := ap.files(want, noPoint); err != nil {
			return err
		}
		testhook.Timed("undo-files", t0)
		testhook.Counted("undo-files", len(want))
		t0 = time.Now()
		capture.NoteWritten(ap.r, ap.written, capture.Known{})
		again, err := capture.Take(ap.ctx, ap.r, ap.tmp, limits(r.tx.Store))
		testhook.Timed("undo-capture-again", t0)
		if err != nil {
			return err
		}
		if !again.Tree.Equal(r.snap.Tree) {
			return fmt.Errorf("the tree does not match S after the way back")
		}
		// HEAD is the rollback's to answer for only when it moved it: a
		// person who committed meanwhile (which failed the branch's
		// compare-and-swap) moved it by hand, and the way back did not fail.
		if ap.moved && (again.HeadString() == nil != (r.snap.Head == nil) ||
			(again.Head != nil && !again.Head.Equal(r.snap.Head))) {
			return fmt.Errorf("HEAD does not match S after the way back")
		}
		return nil
	}
	if err := back(); err != nil {
		return errcode.Newf(errcode.FailedRollbackPartial,
			map[string]any{"repos": []errcode.RepoFailure{{Repo: ".", State: "partial", Reason: err.Error()}},
				"safety": r.safety},
			"the rollback failed (%s) and could not be undone; --undo goes back to its safety checkpoint %s", reason, r.safety).
			Wrap(cause).Hint("git venom-rollback --agent=%s --undo --restore=files --outside=overwrite --dry-run "+
			"goes back to %s", p.Agent.ID, r.safety)
	}
	if why != "failed" {
		return errcode.Newf(errcode.FailedRollbackUndone, errcode.RepoReason{Repo: ".", Reason: reason},
			"the rollback was %s and undone: the files are as the safety checkpoint %s holds them", reason, r.safety)
	}
	return errcode.Newf(errcode.FailedRollbackUndone, errcode.RepoReason{Repo: ".", Reason: reason},
		"the rollback failed and was undone: %s", reason).Wrap(cause)
}

// backTimeout is the way back's deadline: venom.timeout, and twice the
// time the way forward had written for, since the way back captures the
// tree, writes at most what the way forward wrote, and captures again.
func (r *runner) backTimeout() time.Duration {
	d := r.tx.Store.Config.Timeout
	if !r.filesStart.IsZero() {
		d += 2 * time.Since(r.filesStart)
	}
	return d
}
