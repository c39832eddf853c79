package state

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/agents"
	"github.com/git-venom/git-venom/lib/config"
	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gittest"
	"github.com/git-venom/git-venom/lib/journal"
	"github.com/git-venom/git-venom/lib/lock"
	"github.com/git-venom/git-venom/lib/repo"
)

// newStore is an empty repository's store.
func newStore(t *testing.T) *Store {
	t.Helper()
	dir := t.TempDir()
	gittest.Run(t, dir, "", nil, "init", "-q")
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	r, err := repo.Open(context.Background(), dir, env)
	require.NoError(t, err)
	t.Cleanup(r.Free)
	require.NoError(t, os.MkdirAll(r.StateDir, 0o755))
	return &Store{Repo: r, Config: config.Defaults(), Environ: env}
}

// history writes a log of about n records, seeded: three agents, two of
// them sharing one tree, with turns (some without a turn_start), taken,
// reused and failed captures, edits naming ignored paths, prunes of the
// oldest checkpoints, a removal, rollbacks (one files-only, whose note is
// delivered later), an archived agent and a turn left open. Each line is
// whole, as the writers leave them.
func history(n int, seed int64) []string {
	rng := rand.New(rand.NewSource(seed))
	var lines []string
	rec := func(typ string, members map[string]any) {
		b, _ := json.Marshal(members)
		lines = append(lines, fmt.Sprintf(`{"seq":%d,"ts":"2026-11-30T12:00:00.000Z","type":%q,%s`,
			len(lines)+1, typ, b[1:]))
	}
	repos := func(k int) []map[string]any {
		return []map[string]any{{"repo": ".", "path": "/t", "commit": fmt.Sprintf("%040x", k), "head": nil,
			"skipped": []any{}, "submodules": []any{}}}
	}
	type agent struct {
		id, tree        string
		turn, k         int
		open            bool
		live            []int
		archived, harns bool
	}
	as := []*agent{{id: "a1", tree: "/t"}, {id: "a2", tree: "/t", harns: true}, {id: "b1", tree: "/u"}}
	for _, a := range as {
		h := "none"
		if a.harns {
			h = "claude-code"
		}
		rec("agent.registered", map[string]any{"agent": a.id, "tree": a.tree, "isolation": "in_place", "harness": h, "parent": nil})
	}
	take := func(a *agent, reason string, turn *string) {
		if a.k > 0 && rng.Intn(4) == 0 {
			rec("checkpoint.reused", map[string]any{"agent": a.id, "checkpoint": fmt.Sprintf("k%d", a.live[len(a.live)-1]),
				"reason": reason, "turn": turn, "at": "2026-11-30T12:00:00.000Z"})
			return
		}
		if rng.Intn(15) == 0 {
			rec("checkpoint.failed", map[string]any{"agent": a.id, "reason": reason, "code": "failed.checkpoint", "turn": turn, "at": "x"})
			return
		}
		a.k++
		through := fmt.Sprintf("t%d", a.turn)
		m := map[string]any{"agent": a.id, "checkpoint": fmt.Sprintf("k%d", a.k), "reason": reason, "turn": turn,
			"through_turn": &through, "at": "2026-11-30T12:00:00.000Z", "mid_turn": false, "overlap": false,
			"repos": repos(a.k)}
		if rng.Intn(5) == 0 {
			m["label"] = fmt.Sprintf("label %d", a.k)
		}
		rec("checkpoint.taken", m)
		a.live = append(a.live, a.k)
	}
	noted := false
	for len(lines) < n {
		a := as[rng.Intn(len(as))]
		if a.archived {
			continue
		}
		switch r := rng.Intn(20); {
		case !a.open && r < 8:
			a.turn++
			a.open = true
			t := fmt.Sprintf("t%d", a.turn)
			rec("turn.started", map[string]any{"agent": a.id, "turn": t, "harness_turn": fmt.Sprintf("h-%s-%d", a.id, a.turn)})
			take(a, "turn_start", &t)
		case a.open && r < 10:
			t := fmt.Sprintf("t%d", a.turn)
			ign := []string{}
			if rng.Intn(3) == 0 {
				ign = []string{fmt.Sprintf("build/%d.o", rng.Intn(9))}
			}
			rec("edit.recorded", map[string]any{"agent": a.id, "turn": t, "paths": []string{fmt.Sprintf("f%d", rng.Intn(9))}, "ignored": ign})
		case r < 14:
			if !a.open {
				a.turn++ // a turn that had no turn_start
			}
			a.open = false
			t := fmt.Sprintf("t%d", a.turn)
			rec("turn.ended", map[string]any{"agent": a.id, "turn": t, "harness_version": "2.0.1"})
			take(a, "turn_end", &t)
		case r < 15 && len(a.live) > 13:
			var ids []string
			kept := []int{}
			for _, k := range a.live[:len(a.live)-10] {
				if a.id == "a1" && k == 1 {
					kept = append(kept, k) // an old checkpoint kept for good
					continue
				}
				ids = append(ids, fmt.Sprintf("k%d", k))
			}
			typ := "checkpoint.pruned"
			if rng.Intn(6) == 0 {
				typ = "checkpoint.removed"
			}
			rec(typ, map[string]any{"agent": a.id, "checkpoints": ids, "repo": ".", "removed": len(ids), "kept": 10})
			a.live = append(kept, a.live[len(a.live)-10:]...)
		case r == 15 && !a.open && len(a.live) > 2:
			target := fmt.Sprintf("k%d", a.live[rng.Intn(len(a.live))])
			take(a, "pre_rollback", nil)
			safety := fmt.Sprintf("k%d", a.k)
			restore := "all"
			if !noted {
				restore, noted = "files", true
			}
			rec("rollback.started", map[string]any{"agent": a.id, "checkpoint": target, "safety": safety, "restore": restore, "plan": "p1"})
			rec("rollback.ended", map[string]any{"agent": a.id, "checkpoint": target, "safety": safety, "restore": restore, "ok": true,
				"drops": []string{fmt.Sprintf("t%d", a.turn)}})
		case r == 16 && a.harns:
			rec("note.delivered", map[string]any{"agent": a.id, "rollback": 1, "from": "x", "checkpoint": "k1"})
			rec("agent.binding", map[string]any{"agent": a.id, "harness_session": fmt.Sprintf("s%d", a.turn), "harness_pid": 7, "harness_start": 9})
		case r == 17 && a.id == "b1" && len(lines) > n*3/4:
			rec("agent.archived", map[string]any{"agent": a.id})
			a.archived = true
		default:
			take(a, "manual", nil)
		}
	}
	return lines
}

func writeLog(t *testing.T, s *Store, lines []string) {
	t.Helper()
	require.NoError(t, os.WriteFile(s.Repo.Log, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

func appendLog(t *testing.T, s *Store, text string) {
	t.Helper()
	f, err := os.OpenFile(s.Repo.Log, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// snapshotAt writes the snapshot of the log as it stands, as a lock holder does.
func snapshotAt(t *testing.T, s *Store) {
	t.Helper()
	l, st, _, err := s.fold("", false, true, nil)
	require.NoError(t, err)
	require.NoError(t, s.writeSnapshot(l, st))
}

// sameAsWhole checks that a read that may use the snapshot gives what a
// read of every line gives: the same fold (compared as the snapshots both
// would write, which hold everything a command reads of it), the same
// windows and ignored edits, the same last seq, damage and torn tail. It
// returns how many records the first read folded from the log.
func sameAsWhole(t *testing.T, s *Store) int64 {
	t.Helper()
	partial := 0
	lw, whole, _, err := s.fold("", false, false, nil)
	require.NoError(t, err)
	ls, got, tail, err := s.fold("", false, true, nil)
	require.NoError(t, err)
	assert.Equal(t, lw.LastSeq(), ls.LastSeq(), "last seq")
	assert.Equal(t, lw.Damage(), ls.Damage(), "damage")
	assert.Equal(t, lw.Damaged(), ls.Damaged(), "damaged")
	assert.Equal(t, lw.Torn(), ls.Torn(), "torn")
	rw, err := lw.Resume()
	require.NoError(t, err)
	rs, err := ls.Resume()
	require.NoError(t, err)
	assert.Equal(t, rw, rs, "where the next record goes")
	every := func(*agents.Agent) bool { return true }
	a, aParts, err := whole.MarshalSplit(lw.LastSeq(), every)
	require.NoError(t, err)
	b, bParts, err := got.MarshalSplit(ls.LastSeq(), every)
	require.NoError(t, err)
	assert.JSONEq(t, string(a), string(b), "fold")
	require.Len(t, bParts, len(aParts))
	for id, p := range aParts {
		assert.JSONEq(t, string(p.Body), string(bParts[id].Body), "the part of %s", id)
		assert.Equal(t, p.Ends, bParts[id].Ends, "the turn_end checkpoints of the turns %s left out", id)
	}
	// A fold for one agent: that agent as whole as in the whole fold,
	// the others' stubs as the whole fold has them.
	for _, id := range whole.Order {
		_, one, _, err := s.fold(id, false, true, nil)
		require.NoError(t, err)
		_, parts, err := one.MarshalSplit(ls.LastSeq(), func(x *agents.Agent) bool { return x.ID == id })
		require.NoError(t, err)
		assert.JSONEq(t, string(aParts[id].Body), string(parts[id].Body), "the part of %s, folded alone", id)
		for _, o := range whole.Order {
			wa, oa := whole.Agents[o], one.Agents[o]
			require.NotNil(t, oa, o)
			if one.Stub(o) {
				// What a stub's live checkpoints come to is the whole
				// agent's, without loading it (the history's numbers
				// only go up); its time is no later.
				wk, ok := wa.Kept()
				require.True(t, ok, o)
				ok2, known := oa.Kept()
				require.True(t, known, "%s beside %s: a stub knows its live checkpoints", o, id)
				assert.Equal(t, [3][][2]int{wk.Counted, wk.Safety, wk.Other}, [3][][2]int{ok2.Counted, ok2.Safety, ok2.Other},
					"live checkpoints of %s beside %s", o, id)
				assert.LessOrEqual(t, ok2.Oldest, wk.Oldest, "the time of %s beside %s", o, id)
				assert.True(t, one.Stub(o), "%s is still a stub", o)
			}
			assert.Equal(t, wa.LiveCount(), oa.LiveCount(), "live checkpoints of %s beside %s", o, id)
			assert.Equal(t, wa.Newest(), oa.Newest(), "the newest checkpoint of %s beside %s", o, id)
			assert.Equal(t, wa.State, oa.State, "state of %s beside %s", o, id)
			assert.Equal(t, wa.LastSeq, oa.LastSeq, "last seq of %s beside %s", o, id)
			assert.Equal(t, wa.LastCkptN, oa.LastCkptN, "last checkpoint of %s beside %s", o, id)
			assert.Equal(t, wa.NotePending, oa.NotePending, "note of %s beside %s", o, id)
			assert.Equal(t, wa.OpenTurn == nil, oa.OpenTurn == nil, "open turn of %s beside %s", o, id)
			if wa.OpenTurn != nil && oa.OpenTurn != nil {
				assert.Equal(t, wa.OpenTurn.ID, oa.OpenTurn.ID, "open turn of %s beside %s", o, id)
			}
		}
	}
	for _, id := range whole.Order {
		wa, ga := whole.Agents[id], got.Agents[id]
		require.NotNil(t, ga, id)
		for _, c := range wa.Checkpoints {
			if !c.Live() {
				assert.True(t, ga.Had(c.Checkpoint), "%s %s", id, c.Checkpoint)
				continue
			}
			if got.Partial(ga.Tree, c.Seq) {
				partial++ // a rollback to it folds the whole log
				continue
			}
			assert.Equal(t, c.Turn, ga.Checkpoint(c.Checkpoint).Turn)
			if c.ThroughTurn != nil {
				assert.Equal(t, wa.Turn(*c.ThroughTurn), ga.Turn(*c.ThroughTurn), "through turn of %s %s", id, c.Checkpoint)
			}
			assert.Equal(t, whole.Windows(wa, c.Seq), got.Windows(ga, c.Seq), "windows of %s from %s", id, c.Checkpoint)
			assert.Equal(t, whole.IgnoredEditsAfter(id, c.Seq), got.IgnoredEditsAfter(id, c.Seq), "ignored edits of %s after %s", id, c.Checkpoint)
		}
		for _, wt := range wa.Turns {
			if gt := ga.Turn(wt.ID); gt != nil {
				assert.Equal(t, wt.EndCheckpoint, gt.EndCheckpoint)
			} else {
				assert.True(t, ga.ForgotTurn(wt.ID), "%s %s", id, wt.ID)
				assert.Equal(t, wt.EndCheckpoint, ga.ForgottenTurnEnd(wt.ID), "%s %s", id, wt.ID)
			}
		}
		assert.Equal(t, wa.LastEndedTurn(), ga.LastEndedTurn(), "last ended turn of %s", id)
		assert.Equal(t, wa.OpenTurn, ga.OpenTurn, "open turn of %s", id)
		assert.Equal(t, wa.NotePending, ga.NotePending, "note of %s", id)
	}
	partials += partial
	return tail
}

// partials counts the live checkpoints older than the history snapshots
// kept whole, across a test.
var partials int

func TestSnapshot_FoldsLikeTheWholeLog(t *testing.T) {
	if !testhook.Enabled {
		t.Skip("the hooks are off: this needs -tags venomtest")
	}
	t.Setenv("VENOM_TEST_FOLD_RECENT", "40")
	partials = 0
	defer func() { assert.Positive(t, partials, "some snapshots kept only the recent history") }()
	for _, seed := range []int64{1, 2, 3} {
		lines := history(1500, seed)
		s := newStore(t)
		for cut := 40; cut < len(lines); cut += 173 {
			writeLog(t, s, lines[:cut])
			snapshotAt(t, s)
			writeLog(t, s, lines)
			tail := sameAsWhole(t, s)
			assert.Equal(t, int64(len(lines)-cut), tail, "seed %d cut %d: only the records after the snapshot are folded", seed, cut)
		}
	}
}

func TestSnapshot_LeavesOutLongPrunedHistory(t *testing.T) {
	s := newStore(t)
	lines := history(5000, 4)
	writeLog(t, s, lines)
	snapshotAt(t, s)
	data, err := os.ReadFile(s.SnapshotPath())
	require.NoError(t, err)
	log, err := os.ReadFile(s.Repo.Log)
	require.NoError(t, err)
	assert.Less(t, len(data)*4, len(log), "the snapshot holds what the agents hold now, not their history")
	assert.Equal(t, int64(0), sameAsWhole(t, s))
}

// TestSnapshot_NotUsable: a snapshot that is a link, damaged, of another
// format, or whose log was cut, rewritten or replaced beneath it, is passed
// over; the whole log is folded; the next writer replaces it.
func TestSnapshot_NotUsable(t *testing.T) {
	lines := history(800, 5)
	cases := map[string]func(t *testing.T, s *Store){
		"missing": func(t *testing.T, s *Store) { require.NoError(t, os.Remove(s.SnapshotPath())) },
		"damaged": func(t *testing.T, s *Store) {
			data, err := os.ReadFile(s.SnapshotPath())
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(s.SnapshotPath(), data[:len(data)/2], 0o644))
		},
		"another format": func(t *testing.T, s *Store) {
			data, err := os.ReadFile(s.SnapshotPath())
			require.NoError(t, err)
			data = bytes.Replace(data, []byte(allFormat), []byte("git-venom fold 0"), 1)
			require.NoError(t, os.WriteFile(s.SnapshotPath(), data, 0o644))
		},
		"a link": func(t *testing.T, s *Store) {
			// A snapshot elsewhere that claims agents the log never had.
			elsewhere := filepath.Join(t.TempDir(), "fold.json")
			data, err := os.ReadFile(s.SnapshotPath())
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(elsewhere, bytes.ReplaceAll(data, []byte(`"a1"`), []byte(`"zz"`)), 0o644))
			require.NoError(t, os.Remove(s.SnapshotPath()))
			require.NoError(t, os.Symlink(elsewhere, s.SnapshotPath()))
		},
		"log cut below the mark": func(t *testing.T, s *Store) { writeLog(t, s, lines[:500]) },
		"log rewritten beneath": func(t *testing.T, s *Store) {
			// The same length, one record changed just before the mark.
			changed := append([]string(nil), lines...)
			changed[598] = strings.Replace(changed[598], `"ts":"2026-11-30T12:00:00.000Z"`, `"ts":"2026-11-30T12:00:00.001Z"`, 1)
			writeLog(t, s, changed)
		},
		"log replaced by another": func(t *testing.T, s *Store) { writeLog(t, s, history(800, 6)) },
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			writeLog(t, s, lines[:600])
			snapshotAt(t, s)
			writeLog(t, s, lines)
			spoil(t, s)
			l, _, tail, err := s.fold("", false, true, nil)
			require.NoError(t, err)
			assert.Equal(t, int64(l.LastSeq()), tail, "the whole log is folded")
			sameAsWhole(t, s)
			// A lock holder writes a new one, which is then used.
			if !testhook.Enabled {
				t.Skip("the hooks are off: this needs -tags venomtest")
			}
			t.Setenv("VENOM_TEST_FOLD_EVERY", "1")
			tx, err := s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
			require.NoError(t, err)
			tx.End()
			fi, err := os.Lstat(s.SnapshotPath())
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular(), "a link is replaced, not written through")
			assert.Equal(t, int64(0), sameAsWhole(t, s))
		})
	}
}

// TestSnapshot_DamageStaysSeen: a log damaged before the mark stays
// damaged to a read from the snapshot; damage after the mark is found.
func TestSnapshot_DamageStaysSeen(t *testing.T) {
	lines := history(600, 7)
	s := newStore(t)
	damaged := append(append(append([]string(nil), lines[:100]...), `{"seq":101,"ts":"2026`), lines[100:]...)
	writeLog(t, s, damaged[:400])
	snapshotAt(t, s)
	writeLog(t, s, damaged)
	l, _, _, err := s.fold("", false, true, nil)
	require.NoError(t, err)
	require.Equal(t, 1, l.Damaged())
	assert.Equal(t, int64(101), l.Damage()[0].Line)
	assert.Error(t, Intact(l, "no rollback runs"))
	sameAsWhole(t, s)

	s = newStore(t)
	writeLog(t, s, lines)
	snapshotAt(t, s)
	appendLog(t, s, "not a record\n"+strings.Replace(lines[0], `"seq":1,`, fmt.Sprintf(`"seq":%d,`, len(lines)+2), 1)+"\n")
	l, _, tail, err := s.fold("", false, true, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1), tail, "read from the snapshot")
	require.Equal(t, 1, l.Damaged(), "damage after the mark is found")
	assert.Equal(t, int64(len(lines)+1), l.Damage()[0].Line)
	assert.Error(t, Intact(l, "no rollback runs"))
	sameAsWhole(t, s)

	// A torn tail after the mark is a torn tail, cut by the next writer.
	s = newStore(t)
	writeLog(t, s, lines)
	snapshotAt(t, s)
	appendLog(t, s, `{"seq":601,"ts":"20`)
	l, _, _, err = s.fold("", false, true, nil)
	require.NoError(t, err)
	assert.True(t, l.Torn())
	assert.Equal(t, 0, l.Damaged())
	sameAsWhole(t, s)
}

// TestSnapshot_WrittenByLockHolders: Begin writes the snapshot once the
// records it folds after the old one reach VENOM_TEST_FOLD_EVERY; readers
// never write it.
func TestSnapshot_WrittenByLockHolders(t *testing.T) {
	s := newStore(t)
	writeLog(t, s, history(300, 8))
	_, _, err := s.Read()
	require.NoError(t, err)
	assert.NoFileExists(t, s.SnapshotPath(), "a reader writes nothing")
	if !testhook.Enabled {
		t.Skip("the hooks are off: this needs -tags venomtest")
	}
	t.Setenv("VENOM_TEST_FOLD_EVERY", "301")
	tx, err := s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
	require.NoError(t, err)
	tx.End()
	assert.NoFileExists(t, s.SnapshotPath(), "below the threshold")
	t.Setenv("VENOM_TEST_FOLD_EVERY", "300")
	tx, err = s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
	require.NoError(t, err)
	_, err = tx.Append(journal.AgentArchived, journal.Archived{Agent: "a1"})
	require.NoError(t, err)
	tx.End()
	assert.FileExists(t, s.SnapshotPath())
	assert.Equal(t, int64(1), sameAsWhole(t, s), "the record appended after the snapshot")
	entries, err := os.ReadDir(s.TmpDir())
	if err == nil {
		assert.Empty(t, entries, "no temporary file left")
	}
}

func lockHolder() lock.Holder { return lock.Holder{Op: "test"} }

// TestSnapshot_AgentFilesLag: the files of agents a lock holder of another
// agent did not fold whole stay at their older marks; a file of an
// agent with records after its mark, one missing, damaged, of another
// agent or of another log, is folded on from its mark or from the first
// record, and every read answers as the whole log does.
func TestSnapshot_AgentFilesLag(t *testing.T) {
	if !testhook.Enabled {
		t.Skip("the hooks are off: this needs -tags venomtest")
	}
	lines := history(1500, 9)
	own := func(s *Store, id string) string { return s.ownPath(id) }
	cases := map[string]func(t *testing.T, s *Store){
		"older marks": func(t *testing.T, s *Store) {},
		"missing":     func(t *testing.T, s *Store) { require.NoError(t, os.Remove(own(s, "a2"))) },
		"all missing": func(t *testing.T, s *Store) { require.NoError(t, os.RemoveAll(s.SnapshotDir())) },
		"damaged": func(t *testing.T, s *Store) {
			data, err := os.ReadFile(own(s, "a2"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(own(s, "a2"), data[:len(data)/2], 0o644))
		},
		"another agent's": func(t *testing.T, s *Store) {
			data, err := os.ReadFile(own(s, "b1"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(own(s, "a2"), data, 0o644))
		},
		"of another log": func(t *testing.T, s *Store) {
			other := newStore(t)
			writeLog(t, other, history(1500, 10)[:900])
			snapshotAt(t, other)
			data, err := os.ReadFile(own(other, "a2"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(own(s, "a2"), data, 0o644))
		},
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			writeLog(t, s, lines[:400])
			snapshotAt(t, s) // every agent's file, at line 400
			writeLog(t, s, lines[:900])
			t.Setenv("VENOM_TEST_FOLD_EVERY", "1")
			tx, err := s.BeginFor(context.Background(), lockHolder(), errcode.TimeoutLock, "a1")
			require.NoError(t, err)
			tx.End()
			head := func(id string) snapshotHead {
				data, err := os.ReadFile(own(s, id))
				require.NoError(t, err)
				var h snapshotHead
				require.NoError(t, json.Unmarshal(bytes.SplitN(data, []byte("\n"), 2)[0], &h))
				return h
			}
			assert.Equal(t, int64(900), head("a1").Log.Last, "the lock holder's agent is written at the new mark")
			assert.Equal(t, int64(400), head("b1").Log.Last, "another agent's file stays at its mark")
			writeLog(t, s, lines)
			spoil(t, s)
			sameAsWhole(t, s)
			// A lock holder of every agent writes the lagging files again.
			tx, err = s.Begin(context.Background(), lockHolder(), errcode.TimeoutLock)
			require.NoError(t, err)
			tx.End()
			for _, id := range []string{"a1", "a2", "b1"} {
				assert.Equal(t, int64(len(lines)), head(id).Log.Last, "%s written again", id)
			}
			assert.Equal(t, int64(0), sameAsWhole(t, s))
		})
	}
}

// TestSnapshot_OneAgentsLockHolderWritesItsOwn: a lock holder for one
// agent that found no snapshot folds every agent whole, but writes
// fold.json and its own agent's file only: a hook's time is its agent's.
// The others' files are made from the log when read, and written by the
// lock holders that read them.
func TestSnapshot_OneAgentsLockHolderWritesItsOwn(t *testing.T) {
	if !testhook.Enabled {
		t.Skip("the hooks are off: this needs -tags venomtest")
	}
	s := newStore(t)
	writeLog(t, s, history(900, 11))
	t.Setenv("VENOM_TEST_FOLD_EVERY", "1")
	tx, err := s.BeginFor(context.Background(), lockHolder(), errcode.TimeoutLock, "a2")
	require.NoError(t, err)
	tx.End()
	require.FileExists(t, s.SnapshotPath())
	names, err := os.ReadDir(s.SnapshotDir())
	require.NoError(t, err)
	require.Len(t, names, 1)
	assert.Equal(t, "a2.json", names[0].Name())
	sameAsWhole(t, s)
	tx, err = s.BeginFor(context.Background(), lockHolder(), errcode.TimeoutLock, "b1")
	require.NoError(t, err)
	tx.End()
	assert.FileExists(t, s.ownPath("b1"), "made from the log, and written")
	assert.NoFileExists(t, s.ownPath("a1"))
	assert.Equal(t, int64(0), sameAsWhole(t, s))
}

// TestSnapshot_KeptOfAHandMadeLog: what a stub's live checkpoints come to
// (agents.Kept) is given only while the log's numbers go up and its ids
// are as captures write them; otherwise the stub says it does not know,
// and its count and newest are the whole agent's, loaded.
func TestSnapshot_KeptOfAHandMadeLog(t *testing.T) {
	var lines []string
	rec := func(typ string, members map[string]any) {
		b, _ := json.Marshal(members)
		lines = append(lines, fmt.Sprintf(`{"seq":%d,"ts":"2026-11-30T12:00:00.000Z","type":%q,%s`,
			len(lines)+1, typ, b[1:]))
	}
	take := func(agent, id, reason string) {
		rec("checkpoint.taken", map[string]any{"agent": agent, "checkpoint": id, "reason": reason,
			"at": "2026-11-30T12:00:00.000Z", "mid_turn": false, "overlap": false,
			"repos": []map[string]any{{"repo": ".", "path": "/t", "commit": fmt.Sprintf("%040x", len(lines)), "head": nil,
				"skipped": []any{}, "submodules": []any{}}}})
	}
	for _, a := range []string{"x", "y", "z", "w"} {
		rec("agent.registered", map[string]any{"agent": a, "tree": "/t", "isolation": "in_place", "harness": "none", "parent": nil})
		take(a, "k1", "turn_end")
		take(a, "k2", "pre_rollback")
		take(a, "k3", "manual")
	}
	s := newStore(t)
	writeLog(t, s, lines)
	snapshotAt(t, s)
	take("x", "k2", "turn_end") // a number taken twice
	rec("checkpoint.pruned", map[string]any{"agent": "y", "checkpoints": []string{"k01", "k3"}})
	take("z", "k05", "manual") // an id no capture writes
	rec("checkpoint.removed", map[string]any{"agent": "w", "checkpoints": []string{"k1", "k9"}})
	take("w", "k4", "turn_start")
	writeLog(t, s, lines)

	_, whole, _, err := s.fold("", false, false, nil)
	require.NoError(t, err)
	_, st, _, err := s.fold(noAgent, false, true, nil)
	require.NoError(t, err)
	known := map[string]bool{}
	for _, id := range st.Order {
		require.True(t, st.Stub(id), id)
		_, known[id] = st.Agents[id].Kept()
	}
	assert.Equal(t, map[string]bool{"x": false, "y": true, "z": false, "w": true}, known)
	k, _ := st.Agents["y"].Kept()
	assert.Equal(t, [][2]int{{1, 1}}, k.Counted, "y: k01 is none of its checkpoints; k3 went")
	assert.Equal(t, [][2]int{{2, 2}}, k.Safety)
	assert.Nil(t, k.Other)
	k, _ = st.Agents["w"].Kept()
	assert.Equal(t, [][2]int{{4, 4}}, k.Counted, "w: k1 went, k4 came")
	for _, id := range whole.Order {
		assert.Equal(t, whole.Agents[id].LiveCount(), st.Agents[id].LiveCount(), id)
		assert.Equal(t, whole.Agents[id].Newest(), st.Agents[id].Newest(), id)
	}
	assert.False(t, st.Stub("x"), "x was loaded to count")
	assert.True(t, st.Stub("y"), "y was not")
}
