package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pool is the paths edits choose from: files, a file that becomes a
// folder (sw, sw/in.txt), a link, and ignored files (*.log, build/).
var pool = []string{"a.txt", "b.txt", "src/c.go", "src/d.go", "src/deep/e.txt", "docs/f.md", "sw", "sw/in.txt",
	"ln", "new/h.txt", "debug.log", "sw/x.log", "build/out.o", "src/gen.log"}

var linkTargets = []string{"a.txt", "src", "nowhere", "sw/in.txt"}

// setup makes the repository (main worktree, agent a1 in place, guarded)
// and a linked worktree (agent w1, isolation worktree), with a side branch
// for merges.
func (w *world) setup() {
	w.home = filepath.Join(w.root, "home")
	must(os.MkdirAll(w.home, 0o755))
	w.keep = 100000
	if w.rng.Intn(2) == 0 {
		w.keep = 2 + w.rng.Intn(4)
	}
	cfg := "[user]\n\tname = Model\n\temail = model@example.com\n[init]\n\tdefaultBranch = main\n" +
		fmt.Sprintf("[venom]\n\tkeep = %d\n", w.keep) +
		// A revert's markers follow merge.conflictStyle; diff3 is the
		// style the model's merge (git merge-file --diff3) writes.
		"[merge]\n\tconflictStyle = diff3\n"
	must(os.WriteFile(filepath.Join(w.home, ".gitconfig"), []byte(cfg), 0o644))
	main := &tree{name: "main", dir: filepath.Join(w.root, "repo"), files: files{}, index: files{}, written: map[string]time.Time{}}
	must(os.MkdirAll(main.dir, 0o755))
	w.git(main.dir, "init", "-q")
	w.writeFile(main, ".gitignore", []byte("*.log\nbuild/\n"), false)
	for _, p := range []string{"a.txt", "b.txt", "src/c.go", "src/d.go", "docs/f.md"} {
		var b strings.Builder
		for i := 1; i <= 12; i++ {
			b.WriteString(w.content(fmt.Sprintf("i%d.", i), 16))
		}
		w.writeFile(main, p, []byte(b.String()), false)
	}
	w.git(main.dir, "add", "-A")
	w.git(main.dir, "commit", "-q", "-m", "base")
	w.git(main.dir, "branch", "side")
	w.git(main.dir, "checkout", "-q", "side")
	w.writeFile(main, "side.txt", []byte("side\n"), false)
	w.git(main.dir, "add", "-A")
	w.git(main.dir, "commit", "-q", "-m", "side")
	w.git(main.dir, "checkout", "-q", "main")
	w.writeFile(main, "debug.log", []byte("log\n"), false)
	w.writeFile(main, "build/out.o", []byte("built\n"), false)
	wt := &tree{name: "wt1", dir: filepath.Join(w.root, "wt1"), written: map[string]time.Time{}}
	w.git(main.dir, "worktree", "add", "-q", "-b", "w1", wt.dir)
	wt2 := &tree{name: "wt2", dir: filepath.Join(w.root, "wt2"), written: map[string]time.Time{}}
	w.git(main.dir, "worktree", "add", "-q", "-b", "c1", wt2.dir)
	w.sync(main)
	w.sync(wt)
	w.sync(wt2)
	w.trees = []*tree{main, wt, wt2}
	a1 := &agent{id: "a1", tree: main, isolation: "in_place"}
	w1 := &agent{id: "w1", tree: wt, isolation: "worktree"}
	c1 := &agent{id: "c1", tree: wt2, isolation: "worktree", harness: true, edits: map[int]map[string]bool{},
		session: fmt.Sprintf("%08x-0000-4000-8000-%012x", w.seed, w.rng.Int63()&0xffffffffffff)}
	a2 := &agent{id: "a2", tree: main, isolation: "in_place"}
	w.agents = []*agent{a1, w1, c1, a2}
	w.captureStep(a1, "manual", "--isolation=in_place")
	w.captureStep(a2, "manual", "--isolation=in_place")
	w.captureStep(w1, "manual", "--isolation=worktree")
	w.captureStep(c1, "turn_start")
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// --- captures ---

type takeResult struct {
	Agent      string  `json:"agent"`
	Checkpoint *string `json:"checkpoint"`
	Reused     bool    `json:"reused"`
}

// captureStep takes a checkpoint of a's tree with the reason, and checks
// the model's prediction: a new k<n> whose tree is git add -A's, or a
// reuse of the latest when nothing changed since it (same tree and HEAD).
func (w *world) captureStep(a *agent, reason string, extra ...string) {
	t := a.tree
	if a.harness && ((reason == "turn_end" && a.turn == 0) || (reason == "turn_start" && a.turn != 0)) {
		return // Claude Code sends Stop only after a prompt, and one prompt at a time
	}
	w.note("%s: capture %s", a.id, reason)
	view := t.view()
	from := w.logRecords(t)
	var res takeResult
	if a.harness && (reason == "turn_start" || reason == "turn_end") {
		// Claude Code's hooks: no JSON result; the refs and the log say.
		ev, turn := "UserPromptSubmit", a.turns+1
		if reason == "turn_end" {
			ev, turn = "Stop", a.turn
		}
		w.hook(a, ev, turn, "")
		for _, m := range w.readLog(t)[from:] {
			typ, _ := m["type"].(string)
			if m["agent"] != a.id || !strings.HasPrefix(typ, "checkpoint.") || typ == "checkpoint.pruned" {
				continue
			}
			if typ == "checkpoint.failed" {
				w.failf("hook %s: the capture failed: %v", ev, m)
			}
			id, _ := m["checkpoint"].(string)
			res.Checkpoint = &id
			res.Reused = typ == "checkpoint.reused"
		}
		if res.Checkpoint == nil {
			w.failf("hook %s logged no capture of %s", ev, a.id)
		}
	} else {
		args := append([]string{"--agent=" + a.id, "--reason=" + reason, "--json"}, extra...)
		r := w.venom(t.dir, "checkpoint", args...)
		if r.code != 0 {
			w.failf("capture: %s", r)
		}
		w.decode(r, &res)
	}
	// A killed call's ref that no record named is adopted by the next
	// capture, logged before the capture's own record.
	refs := w.agentRefs(a)
	w.learnAdopted(a, refs, from)
	last := a.latest()
	reuse := reason != "pre_rollback" && last != nil && sameFiles(last.view, view) && last.head == t.head
	c := capture{agent: a, reason: reason, view: view}
	switch reason {
	case "turn_start":
		a.turns++
		a.turn, a.started = a.turns, true
		c.turn = a.turn
	case "turn_end":
		if a.turn == 0 {
			a.turns++
			c.turn = -a.turns // a turn with no start: never a turn window
		} else {
			c.turn = a.turn
		}
		a.turn = 0
	default:
		c.turn = a.turn
	}
	c.open = w.openTurns(t)
	w.stats[fmt.Sprintf("capture reused=%v", reuse)]++
	if reuse {
		if !res.Reused || res.Checkpoint == nil || *res.Checkpoint != fmt.Sprintf("k%d", last.n) {
			w.failf("capture: the model expects a reuse of k%d (nothing changed since), got %s reused=%v", last.n, *res.Checkpoint, res.Reused)
		}
		c.ck = last
	} else {
		n := len(a.ckpts) + 1
		if res.Reused || res.Checkpoint == nil || *res.Checkpoint != fmt.Sprintf("k%d", n) {
			got := "none"
			if res.Checkpoint != nil {
				got = *res.Checkpoint
			}
			w.failf("capture: the model expects a new k%d, got %s reused=%v", n, got, res.Reused)
		}
		ck := &checkpoint{n: n, reason: reason, view: view, head: t.head, branch: t.branch, first: len(t.captures)}
		a.ckpts = append(a.ckpts, ck)
		c.ck = ck
		w.checkCheckpoint(a, refs, ck, "the capture")
	}
	t.captures = append(t.captures, c)
	if reason == "turn_start" || reason == "turn_end" {
		a.noteTurn(c)
	}
	if reason == "turn_end" {
		w.prune(a)
	}
	w.checkRefs(a, refs, "the capture")
}

// hook runs git venom-checkpoint hook claude-code with an event of a's
// session, as Claude Code would: UserPromptSubmit, PostToolUse (a Write
// of path) or Stop. A hook always exits 0; what it did is read from the
// refs and the log.
func (w *world) hook(a *agent, event string, turn int, path string) {
	m := map[string]any{
		"session_id": a.session, "transcript_path": filepath.Join(w.home, a.session+".jsonl"), "cwd": a.tree.dir,
		"prompt_id": fmt.Sprintf("prompt-%s-%d", a.id, turn), "permission_mode": "acceptEdits", "hook_event_name": event,
	}
	switch event {
	case "UserPromptSubmit":
		m["prompt"] = fmt.Sprintf("turn %d", turn)
	case "PostToolUse":
		m["tool_name"] = "Write"
		m["tool_input"] = map[string]any{"file_path": w.abs(a.tree, path), "content": "…"}
		m["tool_use_id"] = fmt.Sprintf("toolu_%d", len(w.steps))
	case "Stop":
		m["stop_hook_active"] = false
	}
	b, _ := json.Marshal(m)
	c := w.command(a.tree.dir, "git", "venom-checkpoint", "hook", "claude-code", "--agent="+a.id, "--isolation="+a.isolation)
	r := runCmd(c, string(b))
	if r.code != 0 || strings.Contains(r.err, "error") {
		w.failf("hook %s: %s", event, r)
	}
}

// toolWrite is an agent's Write tool call: the file written, and for a
// harness agent its PostToolUse hook, which records the path as the
// turn's edit (ignored paths apart, for ignored_edits).
func (w *world) toolWrite(a *agent, p string) {
	t := a.tree
	exec := false
	if e, ok := t.files[p]; ok {
		exec = e.mode == "100755"
	}
	w.writeFile(t, p, []byte(w.content("tool", 24)), exec)
	w.note("agent %s Write tool: %s:%s", a.id, t.name, p)
	if !a.harness {
		return
	}
	w.hook(a, "PostToolUse", a.turn, p)
	if _, tracked := t.index[p]; ignored(p) && !tracked {
		a.ignEdit = append(a.ignEdit, ignoredEdit{path: p, after: len(t.captures)})
	} else {
		if a.edits[a.turn] == nil {
			a.edits[a.turn] = map[string]bool{}
		}
		a.edits[a.turn][p] = true
	}
}

// pruneStep runs git venom-checkpoint prune: retention for every agent.
func (w *world) pruneStep() {
	w.note("prune")
	r := w.venom(w.trees[0].dir, "checkpoint", "prune", "--json")
	if r.code != 0 {
		w.failf("prune: %s", r)
	}
	refs := w.checkpointRefs(w.trees[0], "refs/venom/checkpoints/")
	for _, a := range w.agents {
		w.prune(a)
		w.checkRefs(a, refs, "prune")
	}
}

// openTurns lists the agents of t with a started turn running now.
func (w *world) openTurns(t *tree) map[*agent]int {
	out := map[*agent]int{}
	for _, b := range w.agents {
		if b.tree == t && b.turn != 0 && b.started {
			out[b] = b.turn
		}
	}
	return out
}

// checkCheckpoint compares a checkpoint's commit (read with git: refs is
// agentRefs' listing) with what the model says its capture saw, and its
// parent with HEAD then.
func (w *world) checkCheckpoint(a *agent, refs map[string]refCommit, ck *checkpoint, what string) {
	ref := fmt.Sprintf("refs/venom/checkpoints/%s/%d", a.id, ck.n)
	got := w.refTree(a.tree, refs, ref)
	if d := diffFiles(fmt.Sprintf("%s k%d (%s)", a.id, ck.n, ref), ck.view, got); d != "" {
		w.failf("%s: the checkpoint's tree is not what the model says the capture saw\n%s", what, d)
	}
	if parent := refs[ref].parent; parent != ck.head {
		w.failf("%s: %s's parent is %q, HEAD was %q", what, ref, parent, ck.head)
	}
}

func (w *world) decode(r result, v any) {
	dec := json.NewDecoder(strings.NewReader(r.out))
	if err := dec.Decode(v); err != nil {
		w.failf("not JSON: %v\n%s", err, r)
	}
}

// --- edits ---

// edit changes one path of t at random: a write (mostly of one size, so
// that edits keep the size), a deletion, a mode flip, a link, a folder
// removed, a same-size edit that keeps the mtime.
func (w *world) edit(t *tree, who string) {
	p := pool[w.rng.Intn(len(pool))]
	switch k := w.rng.Intn(20); {
	case k < 9 && w.rng.Intn(3) != 0 && w.lineEdit(t, p):
		w.note("%s rewrites a line of %s:%s", who, t.name, p)
	case k < 9:
		n := 24
		if w.rng.Intn(4) == 0 {
			n = 8 + w.rng.Intn(40)
		}
		exec := false
		if e, ok := t.files[p]; ok {
			exec = e.mode == "100755"
		}
		w.writeFile(t, p, []byte(w.content(who, n)), exec)
		w.note("%s writes %s:%s (%d bytes)", who, t.name, p, n)
	case k < 12:
		if _, ok := t.files[p]; ok && p != ".gitignore" {
			w.removePath(t, p)
			w.note("%s deletes %s:%s", who, t.name, p)
		}
	case k < 14:
		if e, ok := t.files[p]; ok && e.mode != "120000" {
			w.flipMode(t, p)
			w.note("%s flips the mode of %s:%s", who, t.name, p)
		}
	case k < 16:
		if ignored(p) || p == "sw/in.txt" || p == "src/deep/e.txt" {
			return
		}
		target := linkTargets[w.rng.Intn(len(linkTargets))]
		w.symlink(t, p, target)
		w.note("%s links %s:%s -> %s", who, t.name, p, target)
	case k < 17 && w.rng.Intn(2) == 0:
		// sw: a file becomes a folder (with an ignored file, sometimes)
		// and back.
		if e, ok := t.files["sw"]; ok && e.mode != "" {
			w.writeFile(t, "sw/in.txt", []byte(w.content(who, 24)), false)
			if w.rng.Intn(2) == 0 {
				w.writeFile(t, "sw/x.log", []byte(w.content(who, 24)), false)
			}
			w.note("%s turns %s:sw into a folder", who, t.name)
		} else {
			w.writeFile(t, "sw", []byte(w.content(who, 24)), false)
			w.note("%s turns %s:sw into a file", who, t.name)
		}
	case k < 17:
		dir := []string{"src", "sw", "docs", "new"}[w.rng.Intn(4)]
		if fi, err := os.Lstat(w.abs(t, dir)); err == nil && fi.IsDir() {
			w.removePath(t, dir)
			w.note("%s removes the folder %s:%s", who, t.name, dir)
		}
	default:
		if w.opt.off["racy"] {
			return
		}
		if w.sameSizeEdit(t, p) {
			w.note("%s same-size edit of %s:%s, mtime kept", who, t.name, p)
		}
	}
}

// lineEdit rewrites one line of p, a regular file of several lines, in
// place: the edits a revert merges line by line.
func (w *world) lineEdit(t *tree, p string) bool {
	e, ok := t.files[p]
	if !ok || e.mode == "120000" || p == ".gitignore" {
		return false
	}
	b, err := os.ReadFile(w.abs(t, p))
	if err != nil {
		w.failf("read %s: %v", p, err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) < 3 {
		return false
	}
	i := w.rng.Intn(len(lines) - 1)
	lines[i] = w.content(fmt.Sprintf("line%d.", i+1), 12+w.rng.Intn(12))
	w.writeFile(t, p, []byte(strings.Join(lines, "")), e.mode == "100755")
	return true
}

// racyEdit rewrites, in the same second, a file a rollback or capture
// just wrote or read, keeping its size and mtime.
func (w *world) racyEdit(t *tree, paths []string) {
	if w.opt.off["racy"] || len(paths) == 0 {
		return
	}
	p := paths[w.rng.Intn(len(paths))]
	if w.sameSizeEdit(t, p) {
		w.note("person same-second edit of %s:%s, size and mtime kept", t.name, p)
		w.stats["same-second edit"]++
	}
}

// --- git commands of the person or the agent: their effects are read
// back from git (git is not under test) ---

func (w *world) gitStep(t *tree, who string) {
	switch k := w.rng.Intn(10); {
	case k < 4:
		if t.merging {
			w.git(t.dir, "add", "-A")
			w.git(t.dir, "commit", "-q", "--no-edit")
			w.note("%s concludes the merge in %s", who, t.name)
		} else {
			w.git(t.dir, "add", "-A")
			w.git(t.dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("%s step %d", who, len(w.steps)))
			w.note("%s commits in %s (git add -A; git commit)", who, t.name)
		}
	case k < 5:
		p := pool[w.rng.Intn(len(pool))]
		if _, ok := t.files[p]; ok {
			w.git(t.dir, "add", "-f", "--", p)
			w.note("%s git add -f %s in %s", who, p, t.name)
		}
	case k < 7:
		if t.merging {
			w.git(t.dir, "merge", "--abort")
			w.note("%s git merge --abort in %s", who, t.name)
			break
		}
		if t.head == "" || w.gitRaw(t.dir, "rev-parse", "-q", "--verify", "HEAD~1").code != 0 {
			return
		}
		mode := []string{"--soft", "--mixed", "--keep"}[w.rng.Intn(3)]
		r := w.gitRaw(t.dir, "reset", "-q", mode, "HEAD~1")
		w.note("%s git reset %s HEAD~1 in %s (exit %d)", who, mode, t.name, r.code)
	default:
		if t.merging || w.opt.off["merge"] {
			return
		}
		r := w.gitRaw(t.dir, "merge", "--no-commit", "--no-ff", "side")
		w.note("%s git merge --no-commit side in %s (exit %d)", who, t.name, r.code)
	}
	w.sync(t)
}

// --- rollbacks ---

type rbResult struct {
	Plan    string `json:"plan"`
	Guarded *bool  `json:"guarded"`
	Safety  string `json:"safety"`
	After   string `json:"after"`
	Exact   *bool  `json:"exact"`
	Repos   []struct {
		Head struct {
			Moves bool    `json:"moves"`
			To    *string `json:"to"`
		} `json:"head"`
		Files []struct {
			Path   string `json:"path"`
			Change string `json:"change"`
			Class  string `json:"class"`
		} `json:"files"`
		Left []struct {
			Path   string `json:"path"`
			Reason string `json:"reason"`
		} `json:"left"`
		IgnoredEdits []string `json:"ignored_edits"`
	} `json:"repos"`
	Error *struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// rollbackStep picks a target (or the undo), runs the dry run, compares
// it with the model's prediction, and sometimes the real call, checked the
// same way plus the tree, HEAD, the index and the two checkpoints it makes.
func (w *world) rollbackStep(a *agent, undo bool) {
	t := a.tree
	var target *checkpoint
	args := []string{"--agent=" + a.id, "--restore=files", "--json"}
	if undo {
		if a.safety == 0 {
			return
		}
		target = a.ckpts[a.safety-1]
		args = append(args, "--undo")
	} else {
		target = a.ckpts[w.rng.Intn(len(a.ckpts))]
		args = append(args, fmt.Sprintf("--checkpoint=k%d", target.n))
	}
	outside := []string{"", "refuse", "keep", "overwrite", "overwrite"}[w.rng.Intn(5)]
	if outside != "" {
		args = append(args, "--outside="+outside)
	}
	keepHead := !a.guarded() && w.rng.Intn(5) == 0
	scope := ""
	if !undo && w.rng.Intn(4) == 0 {
		scopes := append([]string{"src", "sw", "docs", "new"}, pool...)
		scope = scopes[w.rng.Intn(len(scopes))]
		keepHead = false
	}
	if keepHead {
		args = append(args, "--keep-head")
	}
	var tail []string
	if scope != "" {
		tail = []string{"--", scope}
	}
	what := fmt.Sprintf("k%d", target.n)
	if undo {
		what = fmt.Sprintf("--undo (k%d)", target.n)
	}
	w.note("%s: rollback dry run to %s %s", a.id, what, strings.Join(append(args[2:], tail...), " "))
	pr := w.predict(a, target, undo, outside, keepHead, scope)
	r := w.venom(t.dir, "rollback", append(append(args, "--dry-run"), tail...)...)
	w.checkPlan(r, pr, a, "the dry run")
	w.checkTree(t, "the dry run")
	w.count(pr, "dry run")

	if pr.refuse != "" || w.rng.Intn(4) == 0 {
		return
	}
	var dry rbResult
	w.decode(r, &dry)
	real := append(append(append([]string{}, args...), "--plan="+dry.Plan), tail...)
	w.note("%s: rollback real call %s --plan", a.id, what)
	if w.rng.Intn(4) == 0 && !w.opt.off["interrupt"] {
		w.interruptedRollback(a, target, pr, real)
		return
	}
	r = w.venom(t.dir, "rollback", real...)
	w.checkPlan(r, pr, a, "the real call")
	w.applyRollback(a, pr, r)
}

// applyRollback checks a real call that succeeded and moves the model on:
// the safety checkpoint (S, old HEAD), the rollback checkpoint (the
// planned tree, new HEAD), the tree, HEAD and the index.
func (w *world) applyRollback(a *agent, pr prediction, r result) {
	t := a.tree
	var res rbResult
	w.decode(r, &res)
	n := len(a.ckpts)
	if res.Safety != fmt.Sprintf("k%d", n+1) || res.After != fmt.Sprintf("k%d", n+2) {
		w.failf("the real call: safety %q and after %q, the model expects k%d and k%d", res.Safety, res.After, n+1, n+2)
	}
	if res.Exact == nil || !*res.Exact {
		w.failf("the real call reports exact: false, and nothing else wrote during it\n%s", r.out)
	}
	oldHead, branch := t.head, t.branch
	safety := &checkpoint{n: n + 1, reason: "pre_rollback", view: pr.s, head: oldHead, branch: branch, first: len(t.captures)}
	t.captures = append(t.captures, capture{agent: a, reason: "pre_rollback", ck: safety, view: pr.s, open: w.openTurns(t)})
	t.files = pr.after
	t.written = map[string]time.Time{}
	now := time.Now()
	for p := range pr.changes {
		if _, ok := pr.target[p]; ok && pr.left[p] == "" {
			t.written[p] = now
		}
	}
	if pr.moves {
		t.head = pr.headTo
		t.index = w.lsTree(t.dir, t.head)
		got := w.lsIndex(t.dir)
		if d := diffFiles("the index after HEAD moved", t.index, got); d != "" {
			w.failf("the real call moved HEAD but the index is not the new HEAD's tree\n%s", d)
		}
		t.indexSum = fileHash(w.gitPath(t, "index"))
	}
	afterView := t.view()
	after := &checkpoint{n: n + 2, reason: "rollback", view: afterView, head: t.head, branch: branch, first: len(t.captures)}
	t.captures = append(t.captures, capture{agent: a, reason: "rollback", ck: after, view: afterView, open: w.openTurns(t)})
	a.ckpts = append(a.ckpts, safety, after)
	a.safety = safety.n
	refs := w.agentRefs(a)
	w.checkCheckpoint(a, refs, safety, "the safety checkpoint")
	w.checkCheckpoint(a, refs, after, "the rollback checkpoint")
	w.checkTree(t, "the real call")
	w.stats["real call done"]++
}

// count notes what a prediction exercised, for -v's figures.
func (w *world) count(pr prediction, what string) {
	if pr.refuse != "" {
		w.stats[what+" refused "+pr.refuse]++
		return
	}
	w.stats[what+" plan"]++
	for p := range pr.changes {
		if r := pr.left[p]; r != "" {
			w.stats["left "+r]++
		} else {
			w.stats["class "+pr.classes[p]]++
		}
	}
	if pr.moves {
		w.stats["head moves"]++
	}
}

// checkPlan compares a dry run's or real call's output with the
// prediction: the refusal's code, or every path with its change and
// class, the left paths and reasons, and HEAD.
func (w *world) checkPlan(r result, pr prediction, a *agent, what string) {
	var res rbResult
	w.decode(r, &res)
	if pr.refuse != "" {
		if res.Error == nil || res.Error.Code != pr.refuse {
			w.failf("%s: the model expects the refusal %s\n%s\n%s", what, pr.refuse, r, pr.describe())
		}
		return
	}
	if r.code != 0 || res.Error != nil || len(res.Repos) != 1 {
		w.failf("%s: the model expects a plan\n%s\n%s", what, r, pr.describe())
	}
	repo := res.Repos[0]
	var b strings.Builder
	got := map[string]string{}
	for _, f := range repo.Files {
		got[f.Path] = f.Change + " " + f.Class
	}
	for _, l := range repo.Left {
		got[l.Path] = "left " + l.Reason
	}
	want := map[string]string{}
	for p, c := range pr.changes {
		if pr.left[p] != "" {
			want[p] = "left " + pr.left[p]
		} else {
			want[p] = c + " " + pr.classes[p]
		}
	}
	var all []string
	for p := range want {
		all = append(all, p)
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			all = append(all, p)
		}
	}
	sort.Strings(all)
	for _, p := range all {
		if want[p] != got[p] {
			fmt.Fprintf(&b, "  %s: model %q, venom %q\n", p, want[p], got[p])
		}
	}
	if repo.Head.Moves != pr.moves || (pr.moves && (repo.Head.To == nil || *repo.Head.To != pr.headTo)) {
		fmt.Fprintf(&b, "  head: model moves=%v to %s, venom %s\n", pr.moves, pr.headTo, r.out)
	}
	if strings.Join(repo.IgnoredEdits, " ") != strings.Join(pr.ignEdit, " ") {
		fmt.Fprintf(&b, "  ignored_edits: model %q, venom %q\n", pr.ignEdit, repo.IgnoredEdits)
	}
	if res.Guarded != nil && *res.Guarded != a.guarded() {
		fmt.Fprintf(&b, "  guarded: model %v, venom %v\n", a.guarded(), *res.Guarded)
	}
	if b.Len() > 0 {
		w.failf("%s is not what the model says:\n%s%s", what, b.String(), pr.describe())
	}
}

func (pr prediction) describe() string {
	var b strings.Builder
	b.WriteString("model: S and T differ at:\n")
	var ps []string
	for p := range pr.changes {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s %s %s left=%q (S %s, T %s)\n", p, pr.changes[p], pr.classes[p], pr.left[p],
			show(pr.s[p], has(pr.s, p)), show(pr.target[p], has(pr.target, p)))
	}
	return b.String()
}

func has(f files, p string) bool { _, ok := f[p]; return ok }

// --- interrupts ---

// interruptedRollback runs the real call and sends it SIGINT, SIGTERM or
// SIGKILL after a random delay. Whatever it reports must be true: success
// leaves the planned tree; failed.rollback_undone leaves S; a kill leaves
// every planned path old or new and nothing else changed. Then the model
// learns from the log what the call recorded, and nothing of the person's
// is lost: S is in the safety checkpoint when one was made.
func (w *world) interruptedRollback(a *agent, target *checkpoint, pr prediction, args []string) {
	t := a.tree
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}
	if w.opt.off["sigint"] {
		sigs = []syscall.Signal{syscall.SIGKILL}
	}
	sig := sigs[w.rng.Intn(len(sigs))]
	w.stats["interrupt "+sig.String()]++
	delay := time.Duration(w.rng.Intn(120)) * time.Millisecond
	w.steps[len(w.steps)-1] += fmt.Sprintf(", %v after %v", sig, delay)
	logBefore := w.logRecords(t)
	before := t.files.clone()
	headBefore, indexBefore := t.head, t.index.clone()
	c := w.command(t.dir, "git", append([]string{"venom-rollback"}, args...)...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	// The signal goes to the venom process itself, not git's wrapper.
	c.Path = filepath.Join(w.bin, "git-venom-rollback")
	c.Args = append([]string{"git-venom-rollback"}, args...)
	if err := c.Start(); err != nil {
		w.failf("start: %v", err)
	}
	time.Sleep(delay)
	_ = c.Process.Signal(sig)
	r := finish(c, c.Wait(), &out, &errb)
	if strings.Contains(r.err, "panic:") {
		w.failf("interrupted rollback crashed: %s", r)
	}
	if r.code == 0 {
		w.steps[len(w.steps)-1] += " (finished first)"
		w.stats["interrupted: finished first"]++
		w.applyRollback(a, pr, r)
		return
	}
	var res rbResult
	_ = json.Unmarshal(out.Bytes(), &res)
	code := ""
	if res.Error != nil {
		code = res.Error.Code
	}
	w.steps[len(w.steps)-1] += fmt.Sprintf(" -> exit %d %s%s", r.code, code, r.signal)
	w.stats[fmt.Sprintf("interrupted: exit %d %s%s", r.code, code, r.signal)]++
	disk, err := readDisk(t.dir)
	if err != nil {
		w.failf("reading the tree: %v", err)
	}
	// Every path is S's or T's, and only the plan's paths moved.
	for _, m := range []files{before, disk} {
		for p := range m {
			if !differ(before, disk, p) {
				continue
			}
			if _, planned := pr.changes[p]; !planned || differ(pr.after, disk, p) {
				w.failf("the interrupted rollback (%v, %s) left %s neither as S nor as planned\n%s\n%s", sig, code, p,
					diffFiles("S and the tree now", before, disk), r)
			}
		}
	}
	w.sync(t)
	safety := w.learnFromLog(a, logBefore, pr.s)
	if safety != nil && w.undoable(t, a, logBefore) {
		a.safety = safety.n
	}
	if !sameFiles(before, disk) && safety == nil {
		w.failf("the interrupted rollback (%v, %s) changed the tree with no safety checkpoint logged\n%s", sig, code,
			diffFiles("S and the tree now", before, disk))
	}
	// docs/rollback.md#interrupts: the code says what the tree holds.
	switch {
	case r.signal != "":
		// Killed: no report to check.
	case code == "failed.interrupted" || code == "failed.rollback_undone":
		if d := diffFiles("S and the tree now", before, disk); d != "" {
			w.failf("the interrupted rollback reported %s but the tree is not S\n%s", code, d)
		}
		if code == "failed.interrupted" && safety != nil {
			w.failf("the interrupted rollback reported failed.interrupted (before the safety checkpoint) "+
				"but logged its safety checkpoint\n%s", r)
		}
		if t.head != headBefore || !sameFiles(t.index, indexBefore) {
			w.failf("the interrupted rollback reported %s but HEAD or the index is not as before (HEAD %s, was %s)\n%s",
				code, t.head, headBefore, diffFiles("the index", indexBefore, t.index))
		}
	case code == "failed.rollback_partial":
		if !sameFiles(before, disk) {
			break // a true report
		}
		w.failf("the interrupted rollback reported failed.rollback_partial but the tree is exactly S\n%s", r)
	default:
		w.failf("the interrupted rollback (%v) ended with exit %d %q, not a code of docs/rollback.md#interrupts\n%s",
			sig, r.code, code, r)
	}
	if w.opt.fsck {
		w.fsck(t)
	}
}

// logRecords is the number of lines of the log now.
func (w *world) logRecords(t *tree) int {
	return len(w.readLog(t))
}

func (w *world) readLog(t *tree) []map[string]any {
	common := w.gitPathOf(t, "--git-common-dir")
	b, err := os.ReadFile(filepath.Join(common, "venom", "log.jsonl"))
	if err != nil {
		return nil
	}
	var out []map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// learnFromLog reads the checkpoints an interrupted call logged for a
// (the safety checkpoint, perhaps the rollback one) and adds them to the
// model as its tree's captures: their trees are checked against S for the
// safety one, and read from git for the other.
func (w *world) learnFromLog(a *agent, from int, s files) (safety *checkpoint) {
	t := a.tree
	// A command that takes the lock writes the interrupted end first.
	recs := w.readLog(t)
	var refs map[string]refCommit
	for _, m := range recs[from:] {
		typ, _ := m["type"].(string)
		if m["agent"] != a.id || (typ != "checkpoint.taken" && typ != "checkpoint.reused") {
			continue
		}
		reason, _ := m["reason"].(string)
		id, _ := m["checkpoint"].(string)
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "k"))
		if typ == "checkpoint.reused" || n != len(a.ckpts)+1 {
			w.failf("the interrupted rollback logged %s %s; the model expects k%d taken", typ, id, len(a.ckpts)+1)
		}
		ref := fmt.Sprintf("refs/venom/checkpoints/%s/%d", a.id, n)
		if refs == nil {
			refs = w.agentRefs(a)
		}
		view, head := w.refTree(t, refs, ref), refs[ref].parent
		ck := &checkpoint{n: n, reason: reason, view: view, head: head, branch: t.branch, first: len(t.captures)}
		if reason == "pre_rollback" {
			if d := diffFiles("the safety checkpoint", s, view); d != "" {
				w.failf("the interrupted rollback's safety checkpoint is not S\n%s", d)
			}
			safety = ck
		}
		a.ckpts = append(a.ckpts, ck)
		t.captures = append(t.captures, capture{agent: a, reason: reason, ck: ck, view: view, open: w.openTurns(t)})
	}
	return safety
}

// learnAdopted adds to the model the checkpoints a capture adopted,
// records of the tool's own reasons logged since record from.
func (w *world) learnAdopted(a *agent, refs map[string]refCommit, from int) {
	t := a.tree
	for _, m := range w.readLog(t)[from:] {
		reason, _ := m["reason"].(string)
		if m["agent"] != a.id || m["type"] != "checkpoint.taken" || (reason != "pre_rollback" && reason != "rollback") {
			continue
		}
		id, _ := m["checkpoint"].(string)
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "k"))
		if n != len(a.ckpts)+1 {
			w.failf("capture: adopted %s; the model expects k%d", id, len(a.ckpts)+1)
		}
		ref := fmt.Sprintf("refs/venom/checkpoints/%s/%d", a.id, n)
		view, head := w.refTree(t, refs, ref), refs[ref].parent
		ck := &checkpoint{n: n, reason: reason, view: view, head: head, branch: t.branch, first: len(t.captures)}
		a.ckpts = append(a.ckpts, ck)
		t.captures = append(t.captures, capture{agent: a, reason: reason, ck: ck, view: view, open: w.openTurns(t)})
		w.note("%s: the capture adopted %s (%s), left by a killed call", a.id, id, reason)
	}
}

// undoable says whether the rollback an interrupted call logged after
// the log's first from records is the one --undo now takes back
// (docs/rollback.md#undo): it ended well, or did not end (killed, settled
// or not yet), or its way back failed; not when it was undone.
func (w *world) undoable(t *tree, a *agent, from int) bool {
	for _, m := range w.readLog(t)[from:] {
		if m["type"] != "rollback.ended" || m["agent"] != a.id {
			continue
		}
		code, _ := m["code"].(string)
		return m["ok"] == true || code == "failed.rollback_interrupted" || code == "failed.rollback_partial"
	}
	return true
}

func (w *world) fsck(t *tree) {
	r := w.gitRaw(t.dir, "fsck", "--no-progress", "--no-dangling")
	if r.code != 0 || strings.Contains(r.out+r.err, "missing") || strings.Contains(r.out+r.err, "error") {
		w.failf("git fsck is not clean: %s", r)
	}
}
