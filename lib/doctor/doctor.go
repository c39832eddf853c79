// Package doctor checks a repository's checkpoints and venom state
// (docs/json.md#agents-and-doctor): git's version, refs the
// log does not account for, mirror remotes, the claude-code rewind version,
// and the state directory's health. Each check says what to run to fix it.
// It only reads.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	git "github.com/libgit2/git2go/v34"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/explain"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/harness"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/quote"
	"github.com/git-venom/git-venom/lib/refs"
	"github.com/git-venom/git-venom/lib/state"
	"github.com/git-venom/git-venom/lib/treepath"
	"github.com/git-venom/git-venom/lib/ui"
)

// Statuses of a check.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail"
)

// Check is one line of the report: {id, status, message, fix}.
type Check struct {
	ID      string  `json:"id"`
	Status  string  `json:"status"`
	Message string  `json:"message"`
	Fix     *string `json:"fix"`
}

// Report is doctor's result: {ok, checks}; ok is false when a check fails.
type Report struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

func ok(id, format string, args ...any) Check {
	return Check{ID: id, Status: OK, Message: fmt.Sprintf(format, args...)}
}

func bad(id, status, fix, format string, args ...any) Check {
	return Check{ID: id, Status: status, Message: fmt.Sprintf(format, args...), Fix: &fix}
}

// MinGit is the oldest git the suite works with (--path-format).
var MinGit = [3]int{2, 31, 0}

// Run makes every check.
func Run(ctx context.Context, s *state.Store) *Report {
	r := &Report{OK: true}
	l, st, err := s.ReadWhole()
	r.Checks = append(r.Checks, gitVersion(ctx, s))
	if err != nil {
		r.Checks = append(r.Checks, bad("state.log", Fail, "check the permissions of "+s.Repo.StateDir,
			"cannot read the log: %v", err))
	} else {
		r.Checks = append(r.Checks, refsCheck(ctx, s, st, l), symrefs(s), mirror(ctx, s))
		r.Checks = append(r.Checks, harnessChecks(ctx, s, st)...)
		r.Checks = append(r.Checks, logCheck(s, l), lockCheck(s), rollbackCheck(s, st), treesCheck(ctx, s, st))
		r.Checks = append(r.Checks, unsafePaths(ctx, s), untrackedFolders(ctx, s))
	}
	r.Checks = append(r.Checks, repositoryConfig(s))
	for _, c := range r.Checks {
		if c.Status == Fail {
			r.OK = false
		}
	}
	return r
}

// Compiled on first use, not at every command's start.
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`git version (\d+)\.(\d+)(?:\.(\d+))?`) })

func gitVersion(ctx context.Context, s *state.Store) Check {
	const id = "checkpoints.git"
	fix := "install git 2.31 or newer with your system's update command (apt-get install git, brew upgrade git)"
	out, err := s.Repo.Git.Run(ctx, "version")
	if err != nil {
		return bad(id, Fail, fix, "git does not run: %v", err)
	}
	m := versionRE().FindStringSubmatch(string(out))
	if m == nil {
		return bad(id, Warn, fix, "cannot read git's version from %q", strings.TrimSpace(string(out)))
	}
	var v [3]int
	for i := 0; i < 3; i++ {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	for i := 0; i < 3; i++ {
		if v[i] != MinGit[i] {
			if v[i] < MinGit[i] {
				return bad(id, Fail, fix, "git %d.%d.%d is older than 2.31", v[0], v[1], v[2])
			}
			break
		}
	}
	return ok(id, "git %d.%d.%d", v[0], v[1], v[2])
}

// refsCheck compares refs/venom/checkpoints/ (and the tool calls' refs,
// refs/venom/tools/) with the log: refs no live
// record names, refs that moved, refs that went, and agents past
// venom.keep (docs/checkpoints.md#the-log, docs/checkpoints.md#limits). While the log has damage it advises nothing
// that deletes or moves a ref (keepRefs).
func refsCheck(ctx context.Context, s *state.Store, st *agents.State, l *journal.Log) Check {
	const id = "checkpoints.refs"
	out, err := s.Repo.Git.Run(ctx, "for-each-ref", "--format=%(objectname) %(refname) %(symref)", "refs/venom/checkpoints/")
	if err != nil {
		return bad(id, Warn, "run git for-each-ref refs/venom/checkpoints/ to see why", "cannot list the refs: %v", err)
	}
	have := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// A symbolic ref holds no commit of its own: the oid is the one
		// of the ref it names, and an update-ref advised on it would
		// move or delete that ref. checkpoints.symrefs reports it.
		if f := strings.Fields(line); len(f) == 2 {
			have[f[1]] = f[0]
		}
	}
	// A marked tool call's ref (docs/checkpoints.md#tool-calls) is made
	// before its record as a checkpoint's is: one no record names is a
	// killed hook's, which prune and clean delete with its turn.
	tools, err := refs.Under(ctx, s.Repo, "refs/venom/tools/")
	if err != nil {
		return bad(id, Warn, "run git for-each-ref refs/venom/tools/ to see why", "cannot list the refs: %v", err)
	}
	for name, oid := range tools {
		have[name] = oid
	}
	var orphans, moved, gone, over, fixes []string
	named := map[string]bool{}
	for _, aid := range st.Order {
		a := st.Agents[aid]
		for _, t := range a.Turns {
			for _, tc := range t.Tools {
				if n, i, err := ids.ParseToolCall(tc.Mark); err == nil {
					named[ids.ToolRefName(a.ID, n, i)] = true
				}
			}
		}
		counted := 0
		for _, c := range a.Checkpoints {
			if !c.Live() || len(c.Repos) == 0 {
				continue
			}
			if c.Reason != "manual" && c.Reason != "pre_rollback" {
				counted++
			}
			name := ids.RefName(a.ID, c.N)
			named[name] = true
			switch oid, found := have[name]; {
			case !found:
				gone = append(gone, a.ID+"/"+c.Checkpoint)
				// Nothing brings a deleted ref back; a prune records
				// the checkpoint as gone, so nothing counts on it.
				fixes = append(fixes, "git venom-checkpoint prune --agent="+a.ID)
			case oid != c.Repos[0].Commit:
				moved = append(moved, name)
				fixes = append(fixes, quote.Shell([]string{"git", "update-ref", name, c.Repos[0].Commit, oid}))
			}
		}
		if a.State != agents.Archived && counted > s.Config.Keep {
			over = append(over, fmt.Sprintf("%s has %d", a.ID, counted))
			fixes = append(fixes, "git venom-checkpoint prune --agent="+a.ID)
		}
	}
	var writing []string
	// A command holding the lock makes a checkpoint's ref, then logs it:
	// a ref no record names yet is its, about to be named, and deleting
	// it would leave the record it writes without its ref. Only refs seen
	// while no command holds the lock are orphans.
	held := !lock.IsFree(s.Repo.Lock)
	for name, oid := range have {
		switch {
		case named[name]:
		case held:
			writing = append(writing, name)
		default:
			orphans = append(orphans, name)
			fixes = append(fixes, quote.Shell([]string{"git", "update-ref", "-d", name, oid}))
		}
	}
	sort.Strings(orphans)
	sort.Strings(writing)
	var problems []string
	if len(orphans) > 0 {
		problems = append(problems, fmt.Sprintf("%d no log record names%s: %s", len(orphans), mayBeDamaged(l), strings.Join(orphans, ", ")))
	}
	if len(moved) > 0 {
		problems = append(problems, fmt.Sprintf("%d no longer hold the logged commit: %s", len(moved), strings.Join(moved, ", ")))
	}
	if len(over) > 0 {
		problems = append(problems, fmt.Sprintf("more than venom.keep (%d): %s", s.Config.Keep, strings.Join(over, ", ")))
	}
	if len(problems) == 0 && len(gone) == 0 {
		if len(writing) > 0 {
			return ok(id, "%d refs; %s not logged yet, by the command holding the lock: %s", len(have),
				plural(len(writing), "1 is", fmt.Sprintf("%d are", len(writing))), strings.Join(writing, ", "))
		}
		return ok(id, "%d refs, each named by the log", len(have))
	}
	if len(gone) > 0 {
		problems = append(problems, fmt.Sprintf("%s %s and cannot be used: %s",
			ui.Plural(len(gone), "logged checkpoint", "logged checkpoints"),
			plural(len(gone), "lost its ref", "lost their ref"), strings.Join(gone, ", ")))
	}
	fix := strings.Join(uniq(fixes), "; ")
	if l.Damaged() > 0 {
		fix = keepRefs
	}
	// A logged checkpoint whose ref is gone or moved is one a rollback or
	// a diff may be counting on and cannot have: a failure, as git fsck's
	// broken ref is an error. Refs no record names, or too many of them,
	// lose nothing: a warning.
	status := Warn
	if len(gone) > 0 || len(moved) > 0 {
		status = Fail
	}
	return bad(id, status, fix, "%d refs; %s", len(have), strings.Join(problems, "; "))
}

// symrefs finds symbolic refs where git-venom keeps refs of its own
// (refs/venom/, refs/notes/venom): none makes one, and git reads and
// writes through one the ref it names, a branch say. Every command leaves
// them alone (refs.ErrSymbolic); the fix removes the link only.
func symrefs(s *state.Store) Check {
	const id = "checkpoints.symrefs"
	found, err := refs.Symbolic(s.Repo, "refs/venom/*", explain.NotesRef)
	if err != nil {
		return bad(id, Warn, "run git for-each-ref refs/venom/ to see why", "cannot list the refs: %v", err)
	}
	if len(found) == 0 {
		return ok(id, "no symbolic ref: refs/venom/, %s", explain.NotesRef)
	}
	var list, fixes []string
	for _, name := range refs.SymbolicNames(found) {
		list = append(list, name+" -> "+found[name])
		fixes = append(fixes, refs.RemoveSymbolicFix(name))
	}
	fix := "git-venom made none of these; every command leaves them alone. If you did not make them: " +
		strings.Join(fixes, "; ")
	return bad(id, Fail, fix, "%d symbolic refs where git-venom keeps its own, each naming another ref "+
		"that a delete or update through it would change: %s", len(found), strings.Join(list, ", "))
}

// keepRefs is the refs check's advice while the log has damage: a ref no
// whole record names may be the checkpoint of a damaged one, and deleting
// it (the advice for an orphan otherwise) would lose that checkpoint.
const keepRefs = "keep every ref until the log is mended (see state.log): refs no whole record names may be " +
	"the checkpoints of its damaged records, and prune and clean refuse until then"

// mayBeDamaged qualifies the refs no record names while the log has damage.
func mayBeDamaged(l *journal.Log) string {
	if l.Damaged() == 0 {
		return ""
	}
	return " (the log is damaged: they may be its damaged records' checkpoints)"
}

// unsafePaths finds refs under refs/venom whose trees hold a path git
// would refuse to check out (treepath.Verify, at any depth): no capture
// makes one, a rollback refuses it, and a capture never adopts it.
func unsafePaths(ctx context.Context, s *state.Store) Check {
	const id = "checkpoints.paths"
	out, err := s.Repo.Git.Run(ctx, "for-each-ref", "--format=%(tree) %(objectname) %(refname) %(symref)", "refs/venom/")
	if err != nil {
		return bad(id, Warn, "run git for-each-ref refs/venom/ to see why", "cannot list the refs: %v", err)
	}
	seen := &refs.Walk{}
	var found, fixes []string
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue // not a commit (no tree to check), or a symbolic ref (checkpoints.symrefs)
		}
		n++
		tree, err := git.NewOid(f[0])
		if err != nil {
			continue
		}
		var hit *treepath.Error
		switch err := refs.UnsafePath(s.Repo, tree, seen); {
		case errors.As(err, &hit):
			found = append(found, fmt.Sprintf("%s (%q: %s)", f[2], hit.Path, hit.Rule))
			fixes = append(fixes, quote.Shell([]string{"git", "update-ref", "-d", f[2], f[1]}))
		case err != nil:
			found = append(found, fmt.Sprintf("%s (tree unreadable: %v)", f[2], err))
		}
	}
	if len(found) == 0 {
		return ok(id, "%d refs, every path one git would check out", n)
	}
	fix := "no capture made these refs; a rollback to them is refused. If you did not make them: " +
		strings.Join(fixes, "; ")
	return bad(id, Fail, fix, "%d refs hold a path git would refuse to check out: %s", len(found),
		strings.Join(found, ", "))
}

func uniq(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range list {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// mirror warns about a remote with mirror set: git push would send
// refs/venom/ along, untracked files included (docs/checkpoints.md#refs).
func mirror(ctx context.Context, s *state.Store) Check {
	const id = "checkpoints.mirror"
	// git config exits 1 when no key matches: nothing set, then.
	out, _ := s.Repo.Git.Run(ctx, "config", "--bool", "--get-regexp", `^remote\..*\.mirror$`)
	var names, fixes []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		key, val, _ := strings.Cut(line, " ")
		if val != "true" {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "remote."), ".mirror")
		names = append(names, name)
		fixes = append(fixes, quote.Shell([]string{"git", "config", "--unset", "remote." + name + ".mirror"}))
	}
	var specs []string
	add := func(name, kind, spec, fix string) {
		src, dst, _ := strings.Cut(strings.TrimPrefix(spec, "+"), ":")
		if strings.HasPrefix(spec, "^") || !coversCheckpoints(map[string]string{"push": src, "fetch": dst}[kind]) {
			return
		}
		what := "pushes refs/venom/checkpoints/ (the checkpoints, untracked files included)"
		if kind == "fetch" {
			what = "fetches into refs/venom/checkpoints/ (so the remote can place checkpoint refs here)"
		}
		specs = append(specs, fmt.Sprintf("remote %s %s with %s", name, what, spec))
		fixes = append(fixes, fix)
	}
	if out, err := s.Repo.Git.Run(ctx, "config", "--get-regexp", `^remote\..*\.(push|fetch)$`); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			key, spec, _ := strings.Cut(line, " ")
			name, kind := key, ""
			if i := strings.LastIndexByte(key, '.'); i > 0 {
				name, kind = strings.TrimPrefix(key[:i], "remote."), key[i+1:]
			}
			add(name, kind, spec, quote.Shell([]string{"git", "config", "--unset", "--fixed-value", key, spec}))
		}
	}
	// git still reads a remote from $GIT_DIR/remotes/<name> (its Push: and
	// Pull: lines are push and fetch refspecs) when the config has no
	// remote.<name>.url.
	for _, f := range legacyRemotes(s.Repo.CommonDir) {
		add(f.name, f.kind, f.spec, "edit "+quote.Shell([]string{f.file})+" (its line "+quote.C(f.line)+")")
	}
	if len(names) == 0 && len(specs) == 0 {
		return ok(id, "no remote has mirror set")
	}
	var msgs []string
	if len(names) > 0 {
		msgs = append(msgs, fmt.Sprintf("remote %s has mirror set: a push would send the checkpoints, untracked files included",
			strings.Join(names, ", ")))
	}
	msgs = append(msgs, specs...)
	return bad(id, Warn, strings.Join(fixes, "; "), "%s", strings.Join(msgs, "; "))
}

// coversCheckpoints: a refspec side names refs/venom/checkpoints/ or a
// ref in it, itself or through a glob (refs/*, refs/venom/*), or by a
// short name git completes with refs/ (venom/checkpoints/a1/1, as git push
// finds a source; a pattern is never completed). Explicit sharing (push, fetch) never does: it uses
// refs/venom/shared/ and refs/venom/remotes/.
func coversCheckpoints(side string) bool {
	const ns = "refs/venom/checkpoints/"
	if side == "" {
		return false
	}
	if i := strings.IndexByte(side, '*'); i >= 0 {
		// A pattern matches full names only: git completes no short one.
		prefix := side[:i]
		return strings.HasPrefix(ns, prefix) || strings.HasPrefix(prefix, ns)
	}
	return strings.HasPrefix(side, ns) || strings.HasPrefix("refs/"+side, ns)
}

// legacyRemote is one Push: or Pull: line of a $GIT_DIR/remotes/ file.
type legacyRemote struct {
	file, name, kind, spec, line string
}

// legacyRemotes reads the refspecs of the remotes git keeps in files
// under the common dir's remotes/ (git's read_remotes_file): Push: lines
// are push refspecs, Pull: lines fetch refspecs. A file that cannot be
// read is passed over: doctor reports what it can see.
func legacyRemotes(common string) []legacyRemote {
	dir := filepath.Join(common, "remotes")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []legacyRemote
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		file := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(file)
		if err != nil || len(b) > 1<<20 {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			for prefix, kind := range map[string]string{"Push:": "push", "Pull:": "fetch"} {
				if v, ok := strings.CutPrefix(line, prefix); ok {
					out = append(out, legacyRemote{file: file, name: e.Name(), kind: kind, spec: strings.TrimSpace(v), line: line})
				}
			}
		}
	}
	return out
}

// harnessChecks are the checks each harness makes of itself (Kind.Checks).
func harnessChecks(ctx context.Context, s *state.Store, st *agents.State) []Check {
	var out []Check
	in := kind.Doctor{Top: s.Repo.Top, Environ: s.Environ, State: st,
		Getenv: gitcli.Getter(s.Environ), ReadSettings: harness.ReadSettings}
	for _, k := range harness.Kinds {
		if k.Checks == nil {
			continue
		}
		in.Kind = k
		for _, f := range k.Checks(ctx, in) {
			if f.Status == OK {
				out = append(out, ok(f.ID, "%s", f.Message))
			} else {
				out = append(out, bad(f.ID, f.Status, f.Fix, "%s", f.Message))
			}
		}
	}
	return out
}

// logCheck fails on damage inside the log, line by line (the first ten),
// and warns on a torn tail, which is what a crash leaves and is cut by the
// next writer.
func logCheck(s *state.Store, l *journal.Log) Check {
	const id = "state.log"
	if n := l.Damaged(); n > 0 {
		torn := ""
		if l.Torn() {
			torn = "; it also ends in a torn line, which is ignored"
		}
		return bad(id, Fail, mendLog(s),
			"%d damaged %s inside the log (not a torn tail): %s%s",
			n, plural(n, "line", "lines"), l.DamageText(10), torn)
	}
	if l.Torn() {
		return bad(id, Warn, "git venom-checkpoint prune (any command that writes cuts it)",
			"the log ends in a torn line left by a crash, after seq %d; it is ignored", l.LastSeq())
	}
	return ok(id, "%d records", l.LastSeq())
}

// mendLog is the fix for damage inside the log. No command rewrites the
// log (it is the truth, and a guess would lose more), so the fix is a
// person's.
func mendLog(s *state.Store) string {
	return "mend those lines of " + s.Repo.Log + " by hand, or put back a copy from a backup: no command rewrites the log. " +
		"A damaged checkpoint.taken's ref is still under refs/venom/checkpoints/ (git for-each-ref), and its commit's " +
		"Venom-Agent and Venom-Checkpoint trailers say which it was. Until then the other records are used, prune and " +
		"clean refuse, and no ref should be deleted"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// lockCheck reports a holder record whose process is gone. The lock itself
// is flock(2), released by the kernel, so such a record never blocks
// anyone; it says a command died while holding it.
func lockCheck(s *state.Store) Check {
	const id = "state.lock"
	h, err := lock.ReadHolder(s.Repo.Lock)
	if err != nil || h.PID == 0 {
		return ok(id, "free")
	}
	if !lock.IsFree(s.Repo.Lock) {
		return ok(id, "held by %s", h)
	}
	host, _ := os.Hostname()
	if h.Hostname == host && alive(h.PID) {
		return ok(id, "free")
	}
	return bad(id, Warn, "nothing to run: the lock is free, and the next command clears the record",
		"the lock names %s, which is gone: it died while holding the lock", h)
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// rollbackCheck fails on a rollback that started and never ended while no
// command holds the lock: the tree is in an unknown state (docs/rollback.md#failures).
func rollbackCheck(s *state.Store, st *agents.State) Check {
	const id = "state.rollback"
	var open []*agents.Agent
	for _, aid := range st.Order {
		if a := st.Agents[aid]; a.OpenRollback != nil {
			open = append(open, a)
		}
	}
	if len(open) == 0 {
		return ok(id, "no unfinished rollback")
	}
	if !lock.IsFree(s.Repo.Lock) {
		return ok(id, "a rollback of %s is running", open[0].ID)
	}
	var names, fixes []string
	for _, a := range open {
		names = append(names, fmt.Sprintf("%s to %s (safety %s)", a.ID, a.OpenRollback.Checkpoint, a.OpenRollback.Safety))
		fixes = append(fixes, fmt.Sprintf("git venom-diff --agent=%s %s, then if needed git venom-rollback --agent=%s --undo --restore=files --dry-run (back to %s)",
			a.ID, a.OpenRollback.Safety, a.ID, a.OpenRollback.Safety))
	}
	return bad(id, Fail, "git venom-checkpoint prune records it as failed.rollback_interrupted; then "+strings.Join(fixes, "; "),
		"a rollback was interrupted, and its trees are in an unknown state: %s", strings.Join(names, ", "))
}

// repositoryConfig warns of venom.* keys in the repository's own config,
// which git-venom ignores (config.Ignored); the fix moves them to the
// global config, where they take effect.
func repositoryConfig(s *state.Store) Check {
	const id = "config.repository"
	entries := config.Ignored(s.Repo.CommonDir)
	if len(entries) == 0 {
		return ok(id, "no venom.* key in the repository's git config")
	}
	var names []string
	for _, e := range entries {
		if !slices.Contains(names, e.Name) {
			names = append(names, e.Name)
		}
	}
	return bad(id, Warn, config.GlobalCommand(entries),
		"%s in the repository's git config is ignored: git-venom reads venom.* only from the global and system config, so that a cloned repository cannot change them",
		strings.Join(names, ", "))
}
