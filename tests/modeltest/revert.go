package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// turnRec is one of an agent's ended turns as its captures have it: the
// checkpoint it started from and the one it ended on.
type turnRec struct {
	n          int
	started    bool // opened by a turn_start
	start, end *checkpoint
}

// noteTurn records c, a turn_start or turn_end capture of a's, for the
// revert steps.
func (a *agent) noteTurn(c capture) {
	n := c.turn
	if n < 0 {
		n = -n
	}
	if n == 0 {
		return
	}
	if a.turnRecs == nil {
		a.turnRecs = map[int]*turnRec{}
	}
	r := a.turnRecs[n]
	if r == nil {
		r = &turnRec{n: n}
		a.turnRecs[n] = r
	}
	switch c.reason {
	case "turn_start":
		r.started, r.start = true, c.ck
	case "turn_end":
		r.end = c.ck
	}
}

// startOf is the checkpoint a turn started from: its turn_start's; for a
// turn a harness started with no turn_start, the agent's last live
// checkpoint before its end (docs/rollback.md#revert), nil when none.
func (a *agent) startOf(r *turnRec) *checkpoint {
	if r.started {
		return r.start
	}
	var prev *checkpoint
	for _, k := range a.ckpts {
		if k.n >= r.end.n {
			break
		}
		if !k.pruned {
			prev = k
		}
	}
	return prev
}

// revertStep picks what to take back (an ended turn, t<n>, or a pair of
// checkpoints, k<a>..k<b>), with or without --conflicts=markers and
// -- paths, runs the dry run, compares it with the model's three-way
// merge of each path, and sometimes the real call (or an interrupted
// one), checked as a rollback's is.
func (w *world) revertStep(a *agent) {
	t := a.tree
	var from, to *checkpoint
	name, what := "", "the turn"
	if w.rng.Intn(5) < 3 {
		var turns []*turnRec
		for n := 1; n <= a.turns; n++ {
			if r := a.turnRecs[n]; r != nil && r.end != nil {
				turns = append(turns, r)
			}
		}
		if len(turns) == 0 {
			return
		}
		r := turns[w.rng.Intn(len(turns))]
		from, to = a.startOf(r), r.end
		name = fmt.Sprintf("t%d", r.n)
		what = name
	} else {
		if len(a.ckpts) < 2 {
			return
		}
		i := w.rng.Intn(len(a.ckpts) - 1)
		j := i + 1 + w.rng.Intn(len(a.ckpts)-i-1)
		from, to = a.ckpts[i], a.ckpts[j]
		name = fmt.Sprintf("k%d..k%d", from.n, to.n)
	}
	args := []string{"--agent=" + a.id, "--revert=" + name, "--json"}
	markers := w.rng.Intn(2) == 0
	if markers {
		args = append(args, "--conflicts=markers")
	}
	scope := ""
	if w.rng.Intn(4) == 0 {
		scopes := append([]string{"src", "sw", "docs", "new"}, pool...)
		scope = scopes[w.rng.Intn(len(scopes))]
	}
	var tail []string
	if scope != "" {
		tail = []string{"--", scope}
	}
	w.note("%s: revert dry run %s", a.id, strings.Join(append(args[1:], tail...), " "))
	pr := w.predictRevert(a, from, to, what, markers, scope)
	r := w.venom(t.dir, "rollback", append(append(args, "--dry-run"), tail...)...)
	w.checkPlan(r, pr, a, "the revert's dry run")
	w.checkTree(t, "the revert's dry run")
	w.count(pr, "revert dry run")
	if pr.refuse != "" || w.rng.Intn(4) == 0 {
		return
	}
	var dry rbResult
	w.decode(r, &dry)
	real := append(append(append([]string{}, args...), "--plan="+dry.Plan), tail...)
	w.note("%s: revert real call %s --plan", a.id, name)
	if pr.writesNothing() {
		w.nothingReverted(a, pr, w.venom(t.dir, "rollback", real...))
		return
	}
	if w.rng.Intn(4) == 0 && !w.opt.off["interrupt"] {
		w.interruptedRollback(a, to, pr, real)
		return
	}
	r = w.venom(t.dir, "rollback", real...)
	w.checkPlan(r, pr, a, "the revert's real call")
	w.applyRollback(a, pr, r)
	w.stats["revert done"]++
}

// writesNothing reports a plan every path of which is left.
func (pr prediction) writesNothing() bool {
	for p := range pr.changes {
		if pr.left[p] == "" {
			return false
		}
	}
	return !pr.moves
}

// nothingReverted checks the real call of a revert plan that writes no
// file (docs/rollback.md#revert): a whole-file conflict left makes it
// conflict.revert_conflicts, else it is the plan with no checkpoint; the
// tree, the log's checkpoints and the model stay as they were.
func (w *world) nothingReverted(a *agent, pr prediction, r result) {
	conflict := false
	for _, why := range pr.left {
		conflict = conflict || why == "conflict"
	}
	var res rbResult
	w.decode(r, &res)
	if conflict {
		if r.code != 5 || res.Error == nil || res.Error.Code != "conflict.revert_conflicts" {
			w.failf("the revert's real call leaves only whole-file conflicts: the model expects "+
				"conflict.revert_conflicts\n%s\n%s", r, pr.describe())
		}
		w.stats["revert nothing: conflict"]++
	} else {
		w.checkPlan(r, pr, a, "the revert's real call that writes nothing")
		if res.Safety != "" || res.After != "" || res.Exact != nil {
			w.failf("the revert's real call writes nothing, yet reports checkpoints %q, %q\n%s", res.Safety, res.After, r)
		}
		w.stats["revert nothing to revert"]++
	}
	w.checkTree(a.tree, "the revert's real call that writes nothing")
}

// side is one of a revert's three entries of a path: absent, a file or
// link, or (ours only) a folder.
type side struct {
	e      entry
	ok     bool
	folder bool
}

func (s side) same(o side) bool {
	return s.ok == o.ok && s.folder == o.folder && (!s.ok || s.folder || (s.e.mode == o.e.mode && s.e.oid == o.e.oid))
}

func (s side) regular() bool {
	return s.ok && !s.folder && (s.e.mode == "100644" || s.e.mode == "100755")
}

// predictRevert is docs/rollback.md#revert read as a model: per path the
// pair differs at, a three-way merge with S as ours, the pair's end as
// the base and its start as theirs; line merges by git merge-file
// --diff3 (the world's merge.conflictStyle) with the revert's labels; then a rollback's left rules.
func (w *world) predictRevert(a *agent, from, to *checkpoint, what string, markers bool, scope string) prediction {
	t := a.tree
	pr := prediction{changes: map[string]string{}, classes: map[string]string{}, left: map[string]string{}}
	if from == nil || to == nil || from.pruned || to.pruned {
		pr.refuse = "not_found.checkpoint"
		return pr
	}
	if pr.refuse = w.busy(a); pr.refuse != "" {
		return pr
	}
	pr.headTo = t.head
	s := t.view()
	start, end := from.view, to.view
	pr.s = s
	var paths []string
	seen := map[string]bool{}
	for _, m := range []files{start, end} {
		for p := range m {
			if !seen[p] && inScope(scope, p) && differ(start, end, p) {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	labels := []string{"current", fmt.Sprintf("%s/k%d (after %s)", a.id, to.n, what),
		fmt.Sprintf("%s/k%d (before %s)", a.id, from.n, what)}
	target := files{}
	sHolds := map[string]bool{}
	for _, p := range paths {
		ours := w.oursSide(s, end, p)
		base, theirs := sideOf(end, p), sideOf(start, p)
		sHolds[p] = ours.ok
		write := func(r side) {
			if r.ok {
				target[p] = r.e
			}
			switch {
			case !ours.ok:
				pr.changes[p] = "create"
			case !r.ok:
				pr.changes[p] = "delete"
			default:
				pr.changes[p] = "modify"
			}
		}
		// A merge that comes to S's file, mode and bytes, writes
		// nothing: already as the turn found it, as git revert finds
		// nothing to commit.
		reverted := func(r side) {
			write(r)
			if ours.ok && !ours.folder && r.ok && r.e.mode == ours.e.mode && r.e.oid == ours.e.oid {
				pr.left[p] = "already_reverted"
				return
			}
			pr.classes[p] = "reverted"
		}
		whole := func() {
			write(ours)
			pr.classes[p], pr.left[p] = "conflict", "conflict"
		}
		switch {
		case ours.same(theirs):
			write(ours)
			pr.left[p] = "already_reverted"
			continue
		case ours.same(base):
			write(theirs)
			pr.classes[p] = "reverted"
			continue
		case !ours.ok || !base.ok || !theirs.ok || !ours.regular() || !base.regular() || !theirs.regular():
			whole()
			continue
		}
		// The executable bit merges apart from the lines.
		mode := ours.e.mode
		if ours.e.mode == base.e.mode {
			mode = theirs.e.mode
		}
		switch {
		case ours.e.oid == base.e.oid:
			reverted(side{e: entry{mode: mode, oid: theirs.e.oid}, ok: true})
			continue
		case theirs.e.oid == base.e.oid || ours.e.oid == theirs.e.oid:
			reverted(side{e: entry{mode: mode, oid: ours.e.oid}, ok: true})
			continue
		}
		merged, conflicts := w.mergeFile(t, p, base.e.oid, theirs.e.oid, labels)
		merge := side{e: entry{mode: mode, oid: blobID(merged), size: len(merged)}, ok: true}
		if conflicts {
			write(merge)
			pr.classes[p] = "conflict"
		} else {
			reverted(merge)
		}
		w.stats["revert line merge conflicts="+fmt.Sprint(conflicts)]++
	}
	pr.target = target
	// A write blocked by a path that stays (left, and S holds it): one
	// beneath it first, else its nearest folder that stays.
	stays := map[string]string{}
	for _, p := range paths {
		if pr.left[p] != "" && sHolds[p] {
			stays[p] = pr.left[p]
		}
	}
	for _, p := range paths {
		if _, writes := target[p]; !writes || pr.left[p] != "" {
			continue
		}
		for _, q := range paths {
			if stays[q] != "" && strings.HasPrefix(q, p+"/") {
				pr.left[p] = stays[q]
			}
		}
		for d := filepath.Dir(p); pr.left[p] == "" && d != "."; d = filepath.Dir(d) {
			pr.left[p] = stays[d]
		}
	}
	w.inTheWay(t, &pr, paths, s, target)
	for _, p := range paths {
		if pr.classes[p] == "conflict" && (pr.left[p] == "" || pr.left[p] == "conflict") && !markers {
			pr.refuse = "conflict.revert_conflicts"
			return pr
		}
	}
	seenIgn := map[string]bool{}
	for _, e := range a.ignEdit {
		if e.after > from.first && e.after <= to.first && !seenIgn[e.path] {
			seenIgn[e.path] = true
			pr.ignEdit = append(pr.ignEdit, e.path)
		}
	}
	sort.Strings(pr.ignEdit)
	pr.after = afterWrites(t.files, paths, pr.left, target)
	return pr
}

func sideOf(f files, p string) side {
	e, ok := f[p]
	return side{e: e, ok: ok}
}

// oursSide is S's entry at p: a file or link, absent, or a folder. A
// folder the pair's end holds alike is the turn's own: absent to the
// merge of the file the turn replaced by it.
func (w *world) oursSide(s, end files, p string) side {
	if e, ok := s[p]; ok {
		return side{e: e, ok: true}
	}
	under := func(f files) files {
		out := files{}
		for q, e := range f {
			if strings.HasPrefix(q, p+"/") {
				out[q] = e
			}
		}
		return out
	}
	sub := under(s)
	if len(sub) == 0 || sameFiles(sub, under(end)) {
		return side{}
	}
	return side{ok: true, folder: true}
}

// mergeFile is git merge-file -p --diff3 of the work tree's file at p
// (ours), and the blobs base and theirs, with the revert's labels: the
// merged bytes, and whether any lines conflict.
func (w *world) mergeFile(t *tree, p, base, theirs string, labels []string) ([]byte, bool) {
	dir, err := os.MkdirTemp(w.root, "merge-")
	if err != nil {
		w.failf("merge-file: %v", err)
	}
	defer os.RemoveAll(dir)
	ours, err := os.ReadFile(w.abs(t, p))
	if err != nil {
		w.failf("merge-file: %v", err)
	}
	write := func(name string, b []byte) string {
		f := filepath.Join(dir, name)
		must(os.WriteFile(f, b, 0o644))
		return f
	}
	blob := func(oid string) []byte {
		r := w.gitRaw(t.dir, "cat-file", "blob", oid)
		if r.code != 0 {
			w.failf("git cat-file blob %s: %s", oid, r)
		}
		return []byte(r.out)
	}
	r := w.gitRaw(t.dir, "merge-file", "-p", "--diff3", "-L", labels[0], "-L", labels[1], "-L", labels[2],
		write("ours", ours), write("base", blob(base)), write("theirs", blob(theirs)))
	if r.code < 0 || r.code > 127 {
		w.failf("git merge-file: %s", r)
	}
	return []byte(r.out), r.code > 0
}

// inTheWay leaves each write that would replace what S does not hold
// and nothing deletes: a file at one of its folders, a file at its path
// S does not hold (an ignored one), or anything beneath its path
// (ignored files; the paths -- paths did not choose).
func (w *world) inTheWay(t *tree, pr *prediction, paths []string, s, target files) {
	deleted := func(q string) bool {
		_, inS := s[q]
		_, inT := target[q]
		_, planned := pr.changes[q]
		return planned && inS && !inT && pr.left[q] == ""
	}
	for _, p := range paths {
		if _, writes := target[p]; !writes || pr.left[p] != "" {
			continue
		}
		for q := range t.files {
			switch {
			case strings.HasPrefix(p, q+"/"):
				if !deleted(q) {
					pr.left[p] = "ignored_in_the_way"
				}
			case q == p:
				if _, inS := s[q]; !inS {
					pr.left[p] = "ignored_in_the_way"
				}
			case strings.HasPrefix(q, p+"/"):
				if !deleted(q) {
					pr.left[p] = "ignored_in_the_way"
				}
			}
		}
	}
}

// afterWrites is the disk after the plan: the deletions, then the
// writes, of every path not left.
func afterWrites(disk files, paths []string, left map[string]string, target files) files {
	after := disk.clone()
	for _, p := range paths {
		if _, writes := target[p]; left[p] == "" && !writes {
			delete(after, p)
		}
	}
	for _, p := range paths {
		if e, writes := target[p]; left[p] == "" && writes {
			for q := range after {
				if strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
					delete(after, q)
				}
			}
			after[p] = e
		}
	}
	return after
}
