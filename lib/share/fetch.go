package share

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/pathspec"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/git-venom/git-venom/lib/treepath"
)

// MaxLogBytes caps a fetched log copy: a year of one agent's records is a
// few MiB.
const MaxLogBytes = 64 << 20

// Fetched is fetch's result.
type Fetched struct {
	Remote  string    `json:"remote"`
	Copies  []Copy    `json:"copies"`
	Refused []Refusal `json:"refused"`
	Deleted []string  `json:"deleted"` // local copy refs the remote no longer has
}

// Copy is one machine's agent as fetched.
type Copy struct {
	Copy        string   `json:"copy"` // <remote>/<machine>/<agent>
	Machine     string   `json:"machine"`
	Agent       string   `json:"agent"`
	Checkpoints []string `json:"checkpoints"`
}

// Refusal is a remote ref that was not taken, and why.
type Refusal struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
	Cap    *Over  `json:"cap,omitempty"` // the cap a budget refusal is past
}

// Refusal reasons.
const (
	RefusedName     = "name"     // not a name a push makes
	RefusedMissing  = "missing"  // the remote did not send its object
	RefusedTrailers = "trailers" // not a checkpoint commit of that agent and id
	RefusedPath     = "path"     // its tree holds a path git would refuse
	RefusedLog      = "log"      // the log copy is missing, damaged or not the agent's
	RefusedUnlogged = "unlogged" // the log copy names no such checkpoint, or another commit
	// RefusedSymbolic: the local ref is a symbolic ref (refs.ErrSymbolic),
	// neither written nor deleted, Ref its name here; or the remote's ref
	// is one, never followed, Ref its name there.
	RefusedSymbolic = "symbolic"
	// RefusedBudget: its tree comes to more than a venom.copyMax* cap
	// allows (Over, in Refusal.Cap).
	RefusedBudget = "budget"
	// RefusedObjects: git's checks (fetch.fsckObjects) refused an object
	// of the copy: each of its refs is refused so.
	RefusedObjects = "objects"
)

// Fetch brings remote's shared checkpoints here, under
// refs/venom/remotes/<remote>/, after checking all of it. The caller holds
// the lock.
func Fetch(ctx context.Context, s *state.Store, remote string) (*Fetched, error) {
	if err := CheckRemote(remote); err != nil {
		return nil, err
	}
	if err := configured(ctx, s, remote); err != nil {
		return nil, err
	}
	res := &Fetched{Remote: remote, Copies: []Copy{}, Refused: []Refusal{}, Deleted: []string{}}
	listed, err := lsRemote(ctx, s, remote, RemotePrefix)
	if err != nil {
		return nil, err
	}
	type group struct {
		log  *remoteRefEntry
		refs map[int]remoteRefEntry
	}
	groups := map[[2]string]*group{}
	wants := map[[2]string][]string{}
	for i := range listed {
		e := listed[i]
		if e.symref != "" {
			res.Refused = append(res.Refused, Refusal{Ref: e.name, Reason: RefusedSymbolic})
			continue
		}
		r, ok := parseShared(strings.TrimPrefix(e.name, RemotePrefix))
		if !ok || !isOid(e.oid) {
			res.Refused = append(res.Refused, Refusal{Ref: e.name, Reason: RefusedName})
			continue
		}
		k := [2]string{r.machine, r.agent}
		if groups[k] == nil {
			groups[k] = &group{refs: map[int]remoteRefEntry{}}
		}
		if r.n == 0 {
			groups[k].log = &listed[i]
		} else {
			groups[k].refs[r.n] = e
		}
		wants[k] = append(wants[k], e.oid)
	}
	var keys [][2]string
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	lists := make([][]string, len(keys))
	for i, k := range keys {
		lists[i] = wants[k]
	}
	refused, err := fetchObjects(ctx, s, remote, lists)
	if why, ok := interrupt.From(err); ok || interrupt.Signalled(ctx) {
		if !ok {
			why = interrupt.Why(ctx)
		}
		return nil, interrupt.Coded(why, "no ref was written")
	}
	if err != nil {
		return nil, err
	}
	var script strings.Builder
	want := map[string]bool{}
	// A symbolic ref here is never written or deleted: git would write
	// the ref it names, a branch say (refs.ErrSymbolic).
	symbolic := func(name string) bool {
		sym, err := refs.IsSymbolic(s.Repo, name)
		if err == nil && !sym {
			return false
		}
		res.Refused = append(res.Refused, Refusal{Ref: name, Reason: RefusedSymbolic})
		return true
	}
	seen := walk(s.Config)
	defer seen.Free()
	for i, k := range keys {
		g := groups[k]
		if refused[i] {
			for _, e := range listed {
				if r, ok := parseShared(strings.TrimPrefix(e.name, RemotePrefix)); ok && r.machine == k[0] && r.agent == k[1] {
					res.Refused = append(res.Refused, Refusal{Ref: e.name, Reason: RefusedObjects})
				}
			}
			continue
		}
		c := Copy{Copy: CopyID(remote, k[0], k[1]), Machine: k[0], Agent: k[1], Checkpoints: []string{}}
		// Before a copy's log is read: git cat-file writes a large one
		// out on ctx, which a signal ends.
		if err := testhook.PointIn(ctx, "share-fetch-log"); err != nil {
			return nil, remoteErr(remote, "cat-file", err)
		}
		logged, logErr := readLog(ctx, s, g.log, k[1], nil)
		if logErr != "" {
			name := remoteRef(sharedRef{machine: k[0], agent: k[1]})
			res.Refused = append(res.Refused, Refusal{Ref: name, Reason: logErr})
			continue
		}
		var ns []int
		for n := range g.refs {
			ns = append(ns, n)
		}
		sort.Ints(ns)
		for _, n := range ns {
			e := g.refs[n]
			if why, over := checkCheckpoint(s, e.oid, k[1], n, logged, seen); why != "" {
				res.Refused = append(res.Refused, Refusal{e.name, why, over})
				continue
			}
			name := localRef(remote, sharedRef{machine: k[0], agent: k[1], n: n})
			want[name] = true
			if symbolic(name) {
				continue
			}
			fmt.Fprintf(&script, "update %s %s\n", name, e.oid)
			c.Checkpoints = append(c.Checkpoints, ids.Checkpoint(n))
		}
		name := localRef(remote, sharedRef{machine: k[0], agent: k[1]})
		want[name] = true
		if !symbolic(name) {
			fmt.Fprintf(&script, "update %s %s\n", name, g.log.oid)
		}
		res.Copies = append(res.Copies, c)
	}
	// A signal during the reads refused the copies whose log git was
	// writing out, and every git call from here on fails on ctx: the
	// fetch stops, as at its last safe point, not as git's failure.
	if interrupt.Signalled(ctx) {
		return nil, interrupt.Coded(interrupt.Why(ctx), "no ref was written")
	}
	// What an earlier fetch brought and the remote no longer holds goes.
	prefix := LocalPrefix + remote + "/"
	out, err := s.Repo.Git.Run(ctx, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
	if err != nil {
		return nil, remoteErr(remote, "for-each-ref", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, oid, ok := strings.Cut(line, " ")
		if ok && !want[name] && !symbolic(name) {
			fmt.Fprintf(&script, "delete %s %s\n", name, oid)
			res.Deleted = append(res.Deleted, name)
		}
	}
	if script.Len() > 0 {
		if err := testhook.PointIn(ctx, "share-fetch-refs"); err != nil {
			return nil, remoteErr(remote, "update-ref", err)
		}
		// The last safe point: once git writes the refs, in one
		// transaction, it does so on a context a signal does not end.
		if err := interrupt.Check(ctx); err != nil {
			return nil, interrupt.Coded(interrupt.Why(ctx), "no ref was written")
		}
		ctx, cancel := interrupt.Detach(ctx, s.Config.Timeout)
		defer cancel()
		// --no-deref: a symbolic ref made after the look above is
		// replaced or deleted itself, never followed.
		if _, err := s.Repo.Git.RunInput(ctx, []byte(script.String()), "update-ref", "--no-deref", "--stdin"); err != nil {
			return nil, remoteErr(remote, "update-ref", err)
		}
	}
	return res, nil
}

// fetchObjects asks git for the objects of every copy (lists: each copy's
// ids) at once: no ref, no FETCH_HEAD, every object fsck-checked. One
// refused object fails git's whole fetch, so a failed fetch is tried again
// half by half down to the copies that hold one, which are refused. When
// every copy fails, the remote does: failed.remote with git's first error.
func fetchObjects(ctx context.Context, s *state.Store, remote string, lists [][]string) (map[int]bool, error) {
	refused := map[int]bool{}
	q, err := newQuarantine(filepath.Join(s.Repo.CommonDir, "objects"))
	if err != nil {
		return nil, remoteErr(remote, "fetch", err)
	}
	defer q.remove()
	var first error
	var try func(idx []int)
	try = func(idx []int) {
		var wants []string
		for _, i := range idx {
			wants = append(wants, lists[i]...)
		}
		if len(wants) == 0 {
			return
		}
		_, err := s.Repo.Git.RunCall(ctx, gitcli.Call{Stdin: strings.NewReader(strings.Join(wants, "\n") + "\n"), Env: q.env()},
			"-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true",
			"fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--stdin", "--", remote)
		if err == nil {
			err = q.migrate()
		} else if dropErr := q.discard(); dropErr != nil {
			err = dropErr
		}
		if err == nil {
			return
		}
		if first == nil {
			first = err
		}
		if len(idx) == 1 || ctx.Err() != nil {
			for _, i := range idx {
				refused[i] = true
			}
			return
		}
		try(idx[:len(idx)/2])
		try(idx[len(idx)/2:])
	}
	all := make([]int, len(lists))
	for i := range all {
		all[i] = i
	}
	try(all)
	if first != nil && (len(refused) == len(lists) || ctx.Err() != nil) {
		return nil, remoteErr(remote, "fetch", first)
	}
	return refused, nil
}

func isOid(s string) bool {
	_, err := git.NewOid(s)
	return err == nil && len(s) == 40
}

// checkCheckpoint is the adoption check (docs/checkpoints.md#refs) of a
// fetched checkpoint commit: a commit whose trailers name this agent and
// k<n>, a tree whose every entry git would check out, within the
// venom.copyMax* budgets, and the very commit the log copy records for
// k<n>.
func checkCheckpoint(s *state.Store, oid, agent string, n int, logged map[string]string, seen *refs.Walk) (string, *Over) {
	id, err := git.NewOid(oid)
	if err != nil {
		return RefusedName, nil
	}
	info, err := refs.ReadCommit(s.Repo, id)
	if err != nil {
		return RefusedMissing, nil
	}
	if !checkpoints.Trailers(info, agent, ids.Checkpoint(n)) {
		return RefusedTrailers, nil
	}
	if why, over := budget(s, seen, info.Tree); why != "" {
		return why, over
	}
	if logged[ids.Checkpoint(n)] != oid {
		return RefusedUnlogged, nil
	}
	return "", nil
}

// readLog reads and checks an agent's log copy: a commit whose tree is one
// regular file, log.jsonl, within MaxLogBytes, read by the journal's own
// reader with no damage, every record the agent's and every path one git
// would check out. It returns the commit each checkpoint.taken record
// names, or a refusal reason. Each record goes to each (when not nil) as
// it is read and is not kept: held, a copy of MaxLogBytes took over a
// gigabyte. A caller drops what each built when the reason is not "".
func readLog(ctx context.Context, s *state.Store, e *remoteRefEntry, agent string, each func(*journal.Entry)) (map[string]string, string) {
	if e == nil {
		return nil, RefusedLog
	}
	lib, err := s.Repo.Lib()
	if err != nil {
		return nil, RefusedLog
	}
	id, _ := git.NewOid(e.oid)
	commit, err := lib.LookupCommit(id)
	if err != nil {
		return nil, RefusedMissing
	}
	defer commit.Free()
	tree, err := commit.Tree()
	if err != nil {
		return nil, RefusedMissing
	}
	defer tree.Free()
	if tree.EntryCount() != 1 {
		return nil, RefusedLog
	}
	te := tree.EntryByIndex(0)
	if te.Name != LogFile || te.Filemode != git.FilemodeBlob {
		return nil, RefusedLog
	}
	odb, err := lib.Odb()
	if err != nil {
		return nil, RefusedLog
	}
	defer odb.Free()
	size, typ, err := odb.ReadHeader(te.Id)
	if err != nil || typ != git.ObjectBlob || size > MaxLogBytes {
		return nil, RefusedLog
	}
	tmp, err := statefile.CreateTemp(s.TmpDir(), "fetched-log-*")
	if err != nil {
		return nil, RefusedLog
	}
	defer statefile.Remove(tmp.Name())
	err = writeLog(ctx, s, lib, te.Id, size, tmp)
	if err == nil {
		var fi os.FileInfo
		if fi, err = tmp.Stat(); err == nil && fi.Size() != int64(size) {
			err = fmt.Errorf("git wrote %d bytes of a %d-byte blob", fi.Size(), size)
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, RefusedLog
	}
	logged := map[string]string{}
	bad := false
	l, err := journal.Scan(tmp.Name(), func(e *journal.Entry) {
		if bad {
			return
		}
		if e.Agent != agent || !pathsSafe(e) {
			bad = true
			return
		}
		if e.Type == journal.CheckpointTaken && len(e.Repos) > 0 {
			logged[e.Checkpoint] = e.Repos[0].Commit
		}
		if each != nil {
			each(e)
		}
	})
	if err != nil || bad || l.Damaged() > 0 || l.Torn() {
		return nil, RefusedLog
	}
	return logged, ""
}

// inProcessLog is the largest log copy writeLog reads in process: a git
// process costs about 18 ms of CPU, more than reading a log of this size
// whole twice over. A variable for the package's tests.
var inProcessLog uint64 = 1 << 20

// writeLog writes blob id, a log copy of size bytes, to f for the scan,
// which reads it a line at a time. libgit2 reads an object whole, and
// git2go's Blob.Contents copies it whole again: a 32 MiB copy cost fetch
// and list 64 MiB. So a log over inProcessLog is written by git, which
// writes it out as it reads it, and no copy of it is ever whole in this
// process; core.bigFileThreshold makes git stream a packed blob too, not
// only a loose one.
func writeLog(ctx context.Context, s *state.Store, lib *git.Repository, id *git.Oid, size uint64, f *os.File) error {
	if size > inProcessLog {
		_, err := s.Repo.Git.RunCall(ctx, gitcli.Call{Stdout: f},
			"-c", "core.bigFileThreshold=1m", "cat-file", "blob", id.String())
		return err
	}
	blob, err := lib.LookupBlob(id)
	if err != nil {
		return err
	}
	defer blob.Free()
	_, err = f.Write(blob.Contents())
	return err
}

// pathsSafe: every path a record holds passes treepath.Verify, in the
// form its readers take it: a skipped path or a gitlink's by its exact
// bytes (path_b64 when set, as plan reads it; the text beside it is only
// a display), and a rollback's paths as the stored pathspecs they are
// (":(top)docs/", which Verify alone took for a bad path and refused the
// log of every agent that rolled a folder back).
func pathsSafe(e *journal.Entry) bool {
	all := append([]string{}, e.Ignored...)
	if e.Type == journal.RollbackStarted || e.Type == journal.RollbackEnded {
		if _, err := pathspec.ParseStored(e.Paths); err != nil {
			return false
		}
	} else {
		all = append(all, e.Paths...)
	}
	for _, r := range e.Repos {
		for _, k := range r.Skipped {
			all = append(all, strings.TrimSuffix(k.Path, "/"), strings.TrimSuffix(quote.RawPath(k.Path, k.PathB64), "/"))
		}
		for _, m := range r.Submodules {
			all = append(all, m.Path, quote.RawPath(m.Path, m.PathB64))
		}
	}
	for _, p := range all {
		if treepath.Verify(p) != nil {
			return false
		}
	}
	return true
}

// IsCopy reports whether an --agent value names a fetched copy
// (<remote>/<machine>/<agent>) rather than an agent of this repository.
func IsCopy(given string) bool { return strings.Count(given, "/") == 2 }

// ReadCopy folds a fetched copy's log, checked again as fetch checks it
// (the refs under refs/venom/remotes/ are as writable as any), into a
// State holding one agent whose id is the copy id, so that its refs are
// the copy's (ids.RefName). Read-only verbs list and diff take it.
func ReadCopy(ctx context.Context, s *state.Store, copyID string) (*agents.State, *agents.Agent, error) {
	parts := strings.Split(copyID, "/")
	notFound := errcode.Newf(errcode.NotFoundAgent, map[string]string{"agent": copyID},
		"no fetched copy %s here", copyID).Hint("git venom-checkpoint fetch <remote>   brings the copies a remote holds")
	if len(parts) != 3 || CheckRemote(parts[0]) != nil {
		return nil, nil, notFound
	}
	r, ok := parseShared(parts[1] + "/" + parts[2] + "/" + LogLeaf)
	if !ok {
		return nil, nil, notFound
	}
	lib, err := s.Repo.Lib()
	if err != nil {
		return nil, nil, err
	}
	ref, err := lib.References.Lookup(localRef(parts[0], r))
	if err != nil {
		return nil, nil, notFound
	}
	target := ref.Target() // nil for a symbolic ref, never followed
	ref.Free()
	if target == nil {
		return nil, nil, notFound
	}
	oid := target.String()
	st := agents.New()
	_, why := readLog(ctx, s, &remoteRefEntry{oid: oid}, r.agent, func(e *journal.Entry) {
		e.Agent = copyID
		st.Apply(e)
	})
	if why != "" && interrupt.Signalled(ctx) {
		return nil, nil, interrupt.Coded(interrupt.Why(ctx), "nothing was changed")
	}
	if why != "" {
		return nil, nil, errcode.Newf(errcode.FailedState, map[string]string{"agent": copyID, "reason": why},
			"the fetched log of %s does not pass the checks (%s)", copyID, why).
			Hint("git venom-checkpoint fetch %s   fetches it again", parts[0])
	}
	st.Settle()
	a := st.Agents[copyID]
	if a == nil {
		return nil, nil, notFound
	}
	// The tree it names is another machine's: what a copy is compared
	// with here is this worktree.
	a.Tree = s.Repo.Top
	return st, a, nil
}
