package share

import (
	"context"
	"fmt"
	"sort"
	"strings"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/checkpoints"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/statefile"
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
}

// Refusal reasons.
const (
	RefusedName     = "name"     // not a name a push makes
	RefusedMissing  = "missing"  // the remote did not send its object
	RefusedTrailers = "trailers" // not a checkpoint commit of that agent and id
	RefusedPath     = "path"     // its tree holds a path git would refuse
	RefusedLog      = "log"      // the log copy is missing, damaged or not the agent's
	RefusedUnlogged = "unlogged" // the log copy names no such checkpoint, or another commit
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
	var wants []string
	for i := range listed {
		e := listed[i]
		r, ok := parseShared(strings.TrimPrefix(e.name, RemotePrefix))
		if !ok || !isOid(e.oid) {
			res.Refused = append(res.Refused, Refusal{e.name, RefusedName})
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
		wants = append(wants, e.oid)
	}
	if len(wants) > 0 {
		// Object ids only: git writes no ref and no FETCH_HEAD, and checks
		// every object it receives (fsck: no .git or .. entry, well-formed
		// commits and trees) before keeping any.
		_, err := s.Repo.Git.RunCall(ctx, gitcli.Call{Stdin: strings.NewReader(strings.Join(wants, "\n") + "\n")},
			"-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true",
			"fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--stdin", "--", remote)
		if err != nil {
			return nil, remoteErr(remote, "fetch", err)
		}
	}
	var keys [][2]string
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	var script strings.Builder
	want := map[string]bool{}
	seen := map[git.Oid]bool{}
	for _, k := range keys {
		g := groups[k]
		c := Copy{Copy: CopyID(remote, k[0], k[1]), Machine: k[0], Agent: k[1], Checkpoints: []string{}}
		logged, logErr := readLogCopy(s, g.log, k[1])
		if logErr != "" {
			name := remoteRef(sharedRef{machine: k[0], agent: k[1]})
			res.Refused = append(res.Refused, Refusal{name, logErr})
			continue
		}
		var ns []int
		for n := range g.refs {
			ns = append(ns, n)
		}
		sort.Ints(ns)
		for _, n := range ns {
			e := g.refs[n]
			if why := checkCheckpoint(s, e.oid, k[1], n, logged, seen); why != "" {
				res.Refused = append(res.Refused, Refusal{e.name, why})
				continue
			}
			name := localRef(remote, sharedRef{machine: k[0], agent: k[1], n: n})
			fmt.Fprintf(&script, "update %s %s\n", name, e.oid)
			want[name] = true
			c.Checkpoints = append(c.Checkpoints, ids.Checkpoint(n))
		}
		name := localRef(remote, sharedRef{machine: k[0], agent: k[1]})
		fmt.Fprintf(&script, "update %s %s\n", name, g.log.oid)
		want[name] = true
		res.Copies = append(res.Copies, c)
	}
	// What an earlier fetch brought and the remote no longer holds goes.
	prefix := LocalPrefix + remote + "/"
	out, err := s.Repo.Git.Run(ctx, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
	if err != nil {
		return nil, remoteErr(remote, "for-each-ref", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, oid, ok := strings.Cut(line, " ")
		if ok && !want[name] {
			fmt.Fprintf(&script, "delete %s %s\n", name, oid)
			res.Deleted = append(res.Deleted, name)
		}
	}
	if script.Len() > 0 {
		if _, err := s.Repo.Git.RunInput(ctx, []byte(script.String()), "update-ref", "--stdin"); err != nil {
			return nil, remoteErr(remote, "update-ref", err)
		}
	}
	return res, nil
}

func isOid(s string) bool {
	_, err := git.NewOid(s)
	return err == nil && len(s) == 40
}

// checkCheckpoint is the adoption check (CONTRACT 8.30, issue 12) of a
// fetched checkpoint commit: a commit whose trailers name this agent and
// k<n>, a tree whose every entry git would check out, and the very commit
// the log copy records for k<n>.
func checkCheckpoint(s *state.Store, oid, agent string, n int, logged map[string]string, seen map[git.Oid]bool) string {
	id, err := git.NewOid(oid)
	if err != nil {
		return RefusedName
	}
	info, err := refs.ReadCommit(s.Repo, id)
	if err != nil {
		return RefusedMissing
	}
	if !checkpoints.Trailers(info, agent, ids.Checkpoint(n)) {
		return RefusedTrailers
	}
	if refs.UnsafePath(s.Repo, info.Tree, seen) != nil {
		return RefusedPath
	}
	if logged[ids.Checkpoint(n)] != oid {
		return RefusedUnlogged
	}
	return ""
}

// readLogCopy reads and checks an agent's log copy: a commit whose tree is
// one regular file, log.jsonl, within MaxLogBytes, read by the journal's
// own reader with no damage, every record the agent's, and every path in
// it one git would check out. It returns the commit each checkpoint.taken
// record names, or a refusal reason.
func readLogCopy(s *state.Store, e *remoteRefEntry, agent string) (map[string]string, string) {
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
	blob, err := lib.LookupBlob(te.Id)
	if err != nil {
		return nil, RefusedMissing
	}
	defer blob.Free()
	tmp, err := statefile.CreateTemp(s.TmpDir(), "fetched-log-*")
	if err != nil {
		return nil, RefusedLog
	}
	defer statefile.Remove(tmp.Name())
	_, err = tmp.Write(blob.Contents())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, RefusedLog
	}
	var entries []journal.Entry
	l, err := journal.Scan(tmp.Name(), func(e *journal.Entry) { entries = append(entries, *e) })
	if err != nil || l.Damaged() > 0 || l.Torn() {
		return nil, RefusedLog
	}
	logged := map[string]string{}
	for _, e := range entries {
		if e.Agent != agent || !pathsSafe(e) {
			return nil, RefusedLog
		}
		if e.Type == journal.CheckpointTaken && len(e.Repos) > 0 {
			logged[e.Checkpoint] = e.Repos[0].Commit
		}
	}
	return logged, ""
}

// pathsSafe: every path a record holds passes treepath.Verify.
func pathsSafe(e journal.Entry) bool {
	var all []string
	all = append(all, e.Paths...)
	all = append(all, e.Ignored...)
	for _, r := range e.Repos {
		for _, k := range r.Skipped {
			all = append(all, strings.TrimSuffix(k.Path, "/"))
		}
		for _, m := range r.Submodules {
			all = append(all, m.Path)
		}
	}
	for _, p := range all {
		if treepath.Verify(p) != nil {
			return false
		}
	}
	return true
}
