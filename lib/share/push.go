package share

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/events"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/interrupt"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/testhook"
)

// Pushed is push's result.
type Pushed struct {
	Remote      string   `json:"remote"`
	Machine     string   `json:"machine"`
	Agent       string   `json:"agent"`
	Ref         string   `json:"ref"` // the remote namespace of the agent
	Checkpoints []string `json:"checkpoints"`
	Records     int      `json:"records"`
	Deleted     []string `json:"deleted"` // remote refs of checkpoints no longer live here
}

// Machine is this repository's machine id in shared ref names: its venom
// source id without the "venom/".
func Machine(s *state.Store) (string, error) {
	src, err := events.Source(s.Repo.StateDir)
	if err != nil {
		return "", state.Failed("read", s.Repo.StateDir, err)
	}
	return strings.TrimPrefix(src, "venom/"), nil
}

// Push sends agent a's live checkpoints and log records to remote, under
// refs/venom/shared/<machine>/<a>/, replacing what this machine pushed
// for a before (its refs there are this machine's alone).
func Push(ctx context.Context, s *state.Store, a *agents.Agent, remote string) (*Pushed, error) {
	if err := CheckRemote(remote); err != nil {
		return nil, err
	}
	if err := configured(ctx, s, remote); err != nil {
		return nil, err
	}
	machine, err := Machine(s)
	if err != nil {
		return nil, err
	}
	res := &Pushed{Remote: remote, Machine: machine, Agent: a.ID, Checkpoints: []string{}, Deleted: []string{}}
	res.Ref = RemotePrefix + machine + "/" + a.ID + "/"
	var specs []string
	keep := map[string]bool{}
	for _, c := range a.Checkpoints {
		if !c.Live() || len(c.Repos) == 0 {
			continue
		}
		held, err := refs.Resolve(s.Repo, a.ID, c.N)
		if err != nil || held == nil || held.String() != c.Repos[0].Commit {
			continue // gone or moved: not this checkpoint any more (docs/checkpoints.md#the-log)
		}
		dst := remoteRef(sharedRef{machine: machine, agent: a.ID, n: c.N})
		specs = append(specs, held.String()+":"+dst)
		keep[dst] = true
		res.Checkpoints = append(res.Checkpoints, c.Checkpoint)
	}
	log, n, err := agentLog(s.Repo.Log, a.ID)
	if err != nil {
		return nil, state.Failed("read", s.Repo.Log, err)
	}
	res.Records = n
	logCommit, err := logCommit(s, a.ID, log)
	if err != nil {
		return nil, errcode.Newf(errcode.FailedRemote, map[string]string{"remote": remote}, "cannot write the log commit").Wrap(err)
	}
	dst := remoteRef(sharedRef{machine: machine, agent: a.ID})
	specs = append(specs, logCommit.String()+":"+dst)
	keep[dst] = true
	there, err := lsRemote(ctx, s, remote, res.Ref)
	if err != nil {
		return nil, err
	}
	for _, r := range there {
		if r.symref != "" {
			return nil, refuseSymbolic(remote, r)
		}
	}
	for _, r := range there {
		if !keep[r.name] {
			specs = append(specs, ":"+r.name)
			res.Deleted = append(res.Deleted, r.name)
		}
	}
	// --force: the log ref is replaced every time, and the namespace is
	// this machine's. --atomic: the remote gets all of it or none.
	args := append([]string{"push", "--porcelain", "--force", "--atomic", "--no-verify", "--", remote}, specs...)
	if err := testhook.PointIn(ctx, "share-push"); err != nil {
		return nil, remoteErr(remote, "push", err)
	}
	if err := interrupt.Check(ctx); err != nil {
		return nil, interrupt.Coded(interrupt.Why(ctx), "nothing was pushed")
	}
	if _, err := s.Repo.Git.Run(ctx, args...); err != nil {
		if why, ok := interrupt.From(err); ok {
			// --atomic: the remote took all of it or none; which is
			// not known here.
			return nil, interrupt.Coded(why, "the push was stopped; the remote holds all of it or none (--atomic): push again")
		}
		return nil, remoteErr(remote, "push", err)
	}
	return res, nil
}

// configured refuses a remote git does not know: the name is the local
// namespace of what is fetched from it, so a URL will not do. Only git
// config's exit 1 means the key is not set; a config git cannot read, a
// signal or a git that did not start is that failure, not a missing remote.
func configured(ctx context.Context, s *state.Store, remote string) error {
	_, err := s.Repo.Git.Run(ctx, "config", "--get", "remote."+remote+".url")
	if err == nil {
		return nil
	}
	if why, ok := interrupt.From(err); ok {
		return interrupt.Coded(why, "nothing was sent or written")
	}
	if gitcli.ExitCode(err) != 1 {
		return remoteErr(remote, "config", err)
	}
	return errcode.Newf(errcode.InvalidParamsRemote, map[string]string{"remote": remote},
		"no remote %q is configured", remote).
		Hint("git remote add %s <url>   then run this again", remote)
}

func remoteErr(remote, verb string, err error) error {
	return errcode.Newf(errcode.FailedRemote, map[string]string{"remote": remote, "step": verb},
		"git %s %s failed", verb, remote).Wrap(err)
}

type remoteRefEntry struct {
	oid, name string
	// symref is the ref it names when it is a symbolic ref on the remote
	// ("" otherwise): never pushed to, deleted or fetched.
	symref string
}

// lsRemote lists the remote's refs under prefix, and which are symbolic
// refs there. Protocol version 2 tells that of every ref (ls-refs
// symrefs); version 0 only of HEAD, so it is asked for, and a server that
// speaks only version 0 hides them.
func lsRemote(ctx context.Context, s *state.Store, remote, prefix string) ([]remoteRefEntry, error) {
	out, err := s.Repo.Git.Run(ctx, "-c", "protocol.version=2", "ls-remote", "--refs", "--symref", "--", remote, prefix+"*")
	if err != nil {
		return nil, remoteErr(remote, "ls-remote", err)
	}
	var list []remoteRefEntry
	symrefs := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		oid, name, ok := strings.Cut(sc.Text(), "\t")
		if target, sym := strings.CutPrefix(oid, "ref: "); ok && sym {
			symrefs[name] = target
			continue
		}
		if ok && strings.HasPrefix(name, prefix) {
			list = append(list, remoteRefEntry{oid: oid, name: name})
		}
	}
	for i := range list {
		list[i].symref = symrefs[list[i].name]
	}
	return list, sc.Err()
}

// refuseSymbolic is failed.remote for a push whose namespace on the
// remote holds a symbolic ref: git's receive-pack updates or deletes the
// ref it names (a branch) instead, and a push has no --no-deref.
func refuseSymbolic(remote string, e remoteRefEntry) error {
	return errcode.Newf(errcode.FailedRemote, map[string]string{"remote": remote, "step": "symref"},
		"%s on %s is a symbolic ref to %s: a push would write or delete %s; nothing was pushed",
		e.name, remote, e.symref, e.symref).
		Hint("on the remote, remove the link only: git symbolic-ref --delete %s", e.name)
}

var seqPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\{"seq":[0-9]+,`) })

// agentLog is the agent's records of the log, in order, renumbered from 1
// so that the copy reads as a whole log (a seq is checked for gaps). Only
// whole lines are taken, never a torn tail.
func agentLog(path, agent string) ([]byte, int, error) {
	// As every state file: reached without following a link.
	f, err := statefile.Open(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	defer f.Close()
	var out bytes.Buffer
	n := 0
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // EOF: a last line without its newline is torn
		}
		var head struct {
			Agent string `json:"agent"`
		}
		if json.Unmarshal(line, &head) != nil || head.Agent != agent || !seqPrefix().Match(line) {
			continue
		}
		n++
		out.WriteString(fmt.Sprintf(`{"seq":%d,`, n))
		out.Write(line[len(seqPrefix().Find(line)):])
	}
	return out.Bytes(), n, nil
}

// logCommit writes the log copy as a commit of one file, log.jsonl, with
// no parent: the remote keeps only the latest.
func logCommit(s *state.Store, agent string, log []byte) (*git.Oid, error) {
	lib, err := s.Repo.Lib()
	if err != nil {
		return nil, err
	}
	blob, err := lib.CreateBlobFromBuffer(log)
	if err != nil {
		return nil, err
	}
	tb, err := lib.TreeBuilder()
	if err != nil {
		return nil, err
	}
	defer tb.Free()
	if err := tb.Insert(LogFile, blob, git.FilemodeBlob); err != nil {
		return nil, err
	}
	tree, err := tb.Write()
	if err != nil {
		return nil, err
	}
	sig := &git.Signature{Name: refs.Name, Email: refs.Email, When: time.Now()}
	return lib.CreateCommitFromIds("", sig, sig, "venom log "+agent+"\n", tree)
}
