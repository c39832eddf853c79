// Package refs keeps checkpoint commits reachable under
// refs/venom/checkpoints/<agent>/<n> (docs/checkpoints.md#refs). Refs hold objects; the
// journal decides which refs count (docs/checkpoints.md#the-log).
package refs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

// Identity is the author and committer of every checkpoint commit.
const (
	Name  = "venom"
	Email = "venom@localhost"
)

// ErrExists says the ref is already there.
var ErrExists = errors.New("ref exists")

// Message is a checkpoint commit's message with its trailers (docs/checkpoints.md#how-a-capture-runs step 5).
func Message(agent, checkpoint, reason string, turn *string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "venom checkpoint %s/%s\n\nVenom-Agent: %s\nVenom-Checkpoint: %s\nVenom-Reason: %s\n",
		agent, checkpoint, agent, checkpoint, reason)
	if turn != nil {
		fmt.Fprintf(&b, "Venom-Turn: %s\n", *turn)
	}
	return b.String()
}

// Trailers reads the Venom-* trailers of a commit message.
func Trailers(msg string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(msg, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if ok && strings.HasPrefix(k, "Venom-") {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// Commit writes the checkpoint commit of tree, with head as its parent
// (none on an unborn HEAD).
func Commit(r *repo.Repo, tree, head *git.Oid, msg string, when time.Time) (*git.Oid, error) {
	if err := testhook.Point("commit-write"); err != nil {
		return nil, err
	}
	lib, err := r.Lib()
	if err != nil {
		return nil, err
	}
	sig := &git.Signature{Name: Name, Email: Email, When: when}
	var parents []*git.Oid
	if head != nil {
		parents = append(parents, head)
	}
	id, err := lib.CreateCommitFromIds("", sig, sig, msg, tree, parents...)
	if err == nil {
		// Best effort: the commit is written whatever its folder's mode.
		_ = r.ShareObject(id.String())
	}
	return id, err
}

// Create makes the ref of checkpoint n, only if it is absent (docs/checkpoints.md#how-a-capture-runs step 6).
func Create(r *repo.Repo, agent string, n int, commit *git.Oid) error {
	if err := testhook.Point("ref-create"); err != nil {
		return err
	}
	return create(r, ids.RefName(agent, n), commit, "venom checkpoint")
}

// packedRefsInProcess is the largest packed-refs that create leaves to
// libgit2, which reads it whole to check a name (about 1 µs a ref here);
// above it, starting git update-ref (about 10 ms) costs less.
var packedRefsInProcess int64 = 256 << 10

// create makes ref name hold commit, only if it is absent. Both ways take
// the loose ref's lock and check packed-refs under it, as git writers do:
// libgit2 in process while packed-refs is small and core.fsync syncs no
// ref (git syncs the lock before its rename; libgit2 all or nothing), else
// git update-ref with the old value all zeros, which binary-searches
// packed-refs where libgit2 reads it whole (0.44 s of a capture's 0.65 s
// CPU with 400,000 refs, docs/benchmarks.md#many-agents).
func create(r *repo.Repo, name string, commit *git.Oid, msg string) error {
	// A symbolic ref is always a loose file, which git would replace
	// (--no-deref): any file there is a ref that exists.
	if _, err := os.Lstat(filepath.Join(r.CommonDir, filepath.FromSlash(name))); err == nil {
		return ErrExists
	}
	var packed int64
	st, err := os.Stat(filepath.Join(r.CommonDir, "packed-refs"))
	if err == nil {
		packed = st.Size()
	}
	if (err == nil || errors.Is(err, fs.ErrNotExist)) && packed <= packedRefsInProcess && !r.Syncs(repo.FsyncReference) {
		return createInProcess(r, name, commit, msg)
	}
	zero := strings.Repeat("0", len(commit.String()))
	if _, err := r.Git.Run(context.Background(), "update-ref", "--no-deref", "-m", msg, name, commit.String(), zero); err != nil {
		// Refused: it exists (or git failed, said by err).
		lib, lerr := r.Lib()
		if lerr != nil {
			return err
		}
		if ref, lerr := lib.References.Lookup(name); lerr == nil {
			ref.Free()
			return ErrExists
		}
		return err
	}
	// Best effort: the ref is made whatever its mode (core.sharedRepository).
	_ = r.ShareRef(name)
	return nil
}

// createTries bounds createInProcess's tries: a person's git pack-refs
// --prune (git gc) removes the empty folders above the refs it packs,
// which can vanish between libgit2's mkdir of the parent and of the ref's
// own; git's writers try again in that case, and so do we.
const createTries = 10

// createInProcess is create through libgit2.
func createInProcess(r *repo.Repo, name string, commit *git.Oid, msg string) error {
	lib, err := r.Lib()
	if err != nil {
		return err
	}
	var ref *git.Reference
	for try := 1; ; try++ {
		ref, err = lib.References.Create(name, commit, false, msg)
		if err == nil {
			break
		}
		if git.IsErrorCode(err, git.ErrorCodeExists) {
			return ErrExists
		}
		if try == createTries || !racedWithPrune(err) {
			return err
		}
		time.Sleep(time.Duration(try) * time.Millisecond)
	}
	ref.Free()
	// Best effort: the ref is made whatever its mode (core.sharedRepository).
	// Its reflog too (core.logAllRefUpdates=always), which another member's
	// git appends to when it moves or deletes the ref.
	_ = r.ShareRef(name)
	if _, err := os.Lstat(filepath.Join(r.CommonDir, "logs", name)); err == nil {
		_ = statefile.AdjustSharedBelow(filepath.Join(r.CommonDir, "logs"), filepath.Join(r.CommonDir, "logs", name))
	}
	return nil
}

// racedWithPrune reports whether libgit2 failed at the file system
// (a folder removed under it) or on a lock another writer held a moment,
// which git's own writers wait on (core.filesRefLockTimeout).
func racedWithPrune(err error) bool {
	var e *git.GitError
	return errors.As(err, &e) && (e.Class == git.ErrorClassOS || e.Code == git.ErrorCodeLocked)
}

// Resolve returns the commit the ref of checkpoint n holds, or nil.
// A symbolic ref there holds none of its own: ErrSymbolic.
func Resolve(r *repo.Repo, agent string, n int) (*git.Oid, error) {
	lib, err := r.Lib()
	if err != nil {
		return nil, err
	}
	ref, err := lib.References.Lookup(ids.RefName(agent, n))
	if err != nil {
		if git.IsErrorCode(err, git.ErrorCodeNotFound) {
			return nil, nil
		}
		return nil, err
	}
	defer ref.Free()
	if ref.Type() != git.ReferenceOid {
		return nil, ErrSymbolic
	}
	return ref.Target(), nil
}

// Delete removes the ref of checkpoint n if it still holds commit; a
// symbolic ref there is left alone (ErrSymbolic).
func Delete(r *repo.Repo, agent string, n int, commit *git.Oid) error {
	lib, err := r.Lib()
	if err != nil {
		return err
	}
	ref, err := lib.References.Lookup(ids.RefName(agent, n))
	if err != nil {
		if git.IsErrorCode(err, git.ErrorCodeNotFound) {
			return nil
		}
		return err
	}
	defer ref.Free()
	if ref.Type() != git.ReferenceOid {
		return ErrSymbolic
	}
	if commit != nil && !ref.Target().Equal(commit) {
		return nil
	}
	return ref.Delete()
}

// CommitInfo is what a checkpoint commit says of itself.
type CommitInfo struct {
	Tree     *git.Oid
	Parent   *git.Oid
	Trailers map[string]string
	When     time.Time
}

// ReadCommit reads a checkpoint commit.
func ReadCommit(r *repo.Repo, id *git.Oid) (*CommitInfo, error) {
	lib, err := r.Lib()
	if err != nil {
		return nil, err
	}
	c, err := lib.LookupCommit(id)
	if err != nil {
		return nil, err
	}
	defer c.Free()
	info := &CommitInfo{Tree: c.TreeId(), Trailers: Trailers(c.Message()), When: c.Committer().When}
	if c.ParentCount() > 0 {
		info.Parent = c.ParentId(0)
	}
	return info, nil
}

// Deletion is one ref to delete, only while it still holds Old.
type Deletion struct {
	Name string
	Old  string
}

// DeleteAll deletes refs in one transaction of git update-ref --stdin, each
// only while it holds its old value (docs/checkpoints.md#retention-and-clean). When the transaction fails as
// a whole (a ref locked or moved), each ref is tried on its own, so one stuck
// ref does not hold the others back; the refs that still could not be
// deleted are returned with the reason. A symbolic ref is never deleted
// (ErrSymbolic), and never followed: --no-deref, should one appear after
// the look.
func DeleteAll(ctx context.Context, r *repo.Repo, dels []Deletion) map[string]error {
	if len(dels) == 0 {
		return nil
	}
	if err := testhook.PointIn(ctx, "refs-delete"); err != nil {
		return failAll(dels, err)
	}
	// The last safe point: a signal before it deletes nothing. Once git
	// runs the transaction it runs to its end (a context the signal does
	// not end), so what is reported is what git did.
	if err := interrupt.Check(ctx); err != nil {
		return failAll(dels, err)
	}
	ctx, cancel := interrupt.Detach(ctx, deleteTimeout)
	defer cancel()
	failed := map[string]error{}
	var direct []Deletion
	for _, d := range dels {
		sym, err := IsSymbolic(r, d.Name)
		switch {
		case err != nil:
			failed[d.Name] = err
		case sym:
			failed[d.Name] = ErrSymbolic
		default:
			direct = append(direct, d)
		}
	}
	if len(direct) == 0 {
		return failed
	}
	if _, err := r.Git.RunInput(ctx, script(direct), "update-ref", "--no-deref", "--stdin"); err == nil {
		return failed
	}
	for _, d := range direct {
		if _, err := r.Git.RunInput(ctx, script([]Deletion{d}), "update-ref", "--no-deref", "--stdin"); err != nil {
			failed[d.Name] = err
		}
	}
	return failed
}

// deleteTimeout bounds a deletion transaction that a signal no longer
// ends.
const deleteTimeout = 2 * time.Minute

func script(dels []Deletion) []byte {
	var b strings.Builder
	for _, d := range dels {
		fmt.Fprintf(&b, "delete %s %s\n", d.Name, d.Old)
	}
	return []byte(b.String())
}

func failAll(dels []Deletion, err error) map[string]error {
	out := map[string]error{}
	for _, d := range dels {
		out[d.Name] = err
	}
	return out
}

// CreateTool makes the ref of tool call t<n>.<i> (ids.ToolRefName), only
// if it is absent (docs/checkpoints.md#tool-calls).
func CreateTool(r *repo.Repo, agent string, n, i int, commit *git.Oid) error {
	return create(r, ids.ToolRefName(agent, n, i), commit, "venom tool call")
}

// ResolveName returns the commit a ref holds, or nil when there is none
// or it is symbolic.
func ResolveName(r *repo.Repo, name string) *git.Oid {
	lib, err := r.Lib()
	if err != nil {
		return nil
	}
	ref, err := lib.References.Lookup(name)
	if err != nil {
		return nil
	}
	defer ref.Free()
	if ref.Type() != git.ReferenceOid {
		return nil
	}
	return ref.Target()
}

// ToolMessage is a tool call capture's commit message: its trailers name
// the agent, the call and its turn, and no checkpoint (a capture never
// adopts it as one).
func ToolMessage(agent, call, turn string) string {
	return fmt.Sprintf("venom tool call %s/%s\n\nVenom-Agent: %s\nVenom-Tool-Call: %s\nVenom-Turn: %s\n",
		agent, call, agent, call, turn)
}
