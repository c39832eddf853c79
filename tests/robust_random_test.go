package tests

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRobust_RandomSessions plays seeded, replayable sessions of agent
// turns, a person's edits, captures, dry runs, rollbacks with each
// --outside value and undos, and checks after every step with plain git
// the invariants of docs/checkpoints.md#invariants: no byte a person wrote
// lost, ignored files unchanged, a guarded tree's HEAD, branches and index
// untouched, every capture the recipe's, every plan's paths as the target
// has them. VENOM_TEST_SEED replays one seed; VENOM_TEST_LONG=1 plays more.
func TestRobust_RandomSessions(t *testing.T) {
	t.Parallel()
	seed, long := randomSeed(6)
	sessions, steps := 2, 20
	if long {
		sessions, steps = 12, 120
	}
	for i := 0; i < sessions; i++ {
		s := seed + int64(i)
		t.Run(fmt.Sprintf("seed-%d", s), func(t *testing.T) {
			t.Parallel()
			newSession(t, s, i%2 == 0).play(steps)
		})
	}
}

type session struct {
	t          *testing.T
	env        *Env
	rng        *rand.Rand
	seed       int64
	step       int
	guarded    bool
	turns      int
	ckpts      int               // the agent's highest checkpoint number
	owed       []string          // blobs of what the person wrote that a checkpointing command has seen
	pending    map[string]string // path -> blob the person wrote since the last one
	ignored    string            // hash of the ignored files
	lastSafety string
	done       map[string]int // what happened, for the log
}

var randomNames = []string{"a.txt", "b.txt", "src/c.go", "src/d.go", "src/deep/e.txt", "docs/f.md", "g.txt", "new/h.txt"}

func newSession(t *testing.T, seed int64, guarded bool) *session {
	env := NewEnv(t)
	// Nothing is pruned, so "in a checkpoint" stays checkable.
	env.Git("config", "--global", "venom.keep", "100000")
	s := &session{t: t, env: env, rng: rand.New(rand.NewSource(seed)), seed: seed, pending: map[string]string{},
		done: map[string]int{}}
	s.guarded = guarded
	env.Write(".gitignore", "*.log\nbuild/\n")
	env.Write("build/out.o", "built\n")
	env.Write("debug.log", "log\n")
	for _, n := range randomNames[:5] {
		env.Write(n, n+" v0\n")
	}
	env.Commit("base")
	s.ignored = s.ignoredHash()
	iso := "in_place"
	if !s.guarded {
		iso = "worktree"
	}
	env.Venom("checkpoint", "--agent=a1", "--isolation="+iso, "--json").OK(t)
	s.ckpts = 1
	t.Logf("seed %d: guarded=%v", seed, s.guarded)
	return s
}

func (s *session) fail(format string, args ...any) string {
	return fmt.Sprintf("seed %d step %d: ", s.seed, s.step) + fmt.Sprintf(format, args...)
}

func (s *session) ignoredHash() string {
	return fileHash(s.env.Path("build/out.o")) + fileHash(s.env.Path("debug.log"))
}

func (s *session) content(who string) string {
	return fmt.Sprintf("%s seed %d step %d %d\n", who, s.seed, s.step, s.rng.Int())
}

// personEdit writes or deletes a file, as a person between turns.
func (s *session) personEdit() {
	name := randomNames[s.rng.Intn(len(randomNames))]
	// What the person overwrites before anything captured it is theirs to lose.
	delete(s.pending, name)
	if s.rng.Intn(5) == 0 {
		s.env.Remove(name)
		return
	}
	c := s.content("person")
	s.env.Write(name, c)
	s.pending[name] = s.blobOf(c)
}

// seen: a command that makes a checkpoint runs now, so everything the
// person wrote is owed from here on.
func (s *session) seen() {
	for p, b := range s.pending {
		s.owed = append(s.owed, b)
		delete(s.pending, p)
	}
}

func (s *session) blobOf(content string) string {
	r := s.env.runInput(s.env.Dir, nil, content, "git", "hash-object", "--stdin")
	require.Equal(s.t, 0, r.Code, r.Stderr)
	return strings.TrimSpace(r.Stdout)
}

// agentTurn is one turn: tool edits (logged as edit calls), shell edits,
// sometimes a commit.
func (s *session) agentTurn() {
	env := s.env
	s.seen()
	s.venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(s.t)
	s.turns++
	var tool []string
	for i := s.rng.Intn(4); i >= 0; i-- {
		name := randomNames[s.rng.Intn(len(randomNames))]
		switch s.rng.Intn(3) {
		case 0: // a tool's edit
			env.Write(name, s.content("agent tool"))
			tool = append(tool, name)
		case 1: // a shell command's
			env.Write(name, s.content("agent shell"))
		case 2:
			env.Remove(name)
		}
	}
	if len(tool) > 0 {
		env.AppendLog("edit.recorded", map[string]any{"agent": "a1", "turn": fmt.Sprintf("t%d", s.turns), "paths": tool})
	}
	if s.rng.Intn(4) == 0 {
		env.Commit(fmt.Sprintf("agent commit %d", s.step))
	}
	s.venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(s.t)
}

// venom runs a venom command and checks what it must not change: in a
// guarded tree HEAD, branches and the index; anywhere, the ignored files.
func (s *session) venom(cmd string, args ...string) Result {
	before := s.env.Snapshot()
	r := s.env.Venom(cmd, args...)
	after := s.env.Snapshot()
	isRollback := cmd == "rollback" && !strings.Contains(strings.Join(args, " "), "--dry-run")
	if s.guarded || !isRollback {
		require.Equal(s.t, before.Index, after.Index, s.fail("%s %v wrote the index", cmd, args))
		require.Equal(s.t, before.Head, after.Head, s.fail("%s %v moved HEAD", cmd, args))
		require.Equal(s.t, before.Refs, after.Refs, s.fail("%s %v moved a branch", cmd, args))
	}
	if !isRollback {
		require.Equal(s.t, before.Files, after.Files, s.fail("%s %v changed a file", cmd, args))
	}
	require.Equal(s.t, s.ignored, s.ignoredHash(), s.fail("%s %v changed an ignored file", cmd, args))
	return r
}

func (s *session) capture() {
	s.seen()
	want := s.env.RecipeTree()
	var res struct {
		Checkpoint string `json:"checkpoint"`
	}
	s.venom("checkpoint", "--agent=a1", "--json").OK(s.t).JSON(s.t, &res)
	require.Equal(s.t, want, s.env.CheckpointTreeOf("a1", res.Checkpoint), s.fail("capture differs from the recipe"))
}

func (s *session) highest() int {
	recs := s.env.Records("checkpoint.taken")
	n := 0
	for _, r := range recs {
		k, _ := strconv.Atoi(strings.TrimPrefix(r["checkpoint"].(string), "k"))
		if k > n {
			n = k
		}
	}
	return n
}

// rollback rolls back to a random checkpoint with a random --outside, or
// undoes the last rollback.
func (s *session) rollback() {
	target := fmt.Sprintf("k%d", 1+s.rng.Intn(s.highest()))
	if s.lastSafety != "" && s.rng.Intn(3) == 0 {
		target = s.lastSafety
	}
	args := []string{"--agent=a1", "--checkpoint=" + target, "--restore=files"}
	if o := []string{"", "refuse", "keep", "overwrite"}[s.rng.Intn(4)]; o != "" {
		args = append(args, "--outside="+o)
	}
	if !s.guarded && s.rng.Intn(2) == 0 {
		args = append(args, "--keep-head")
	}
	dry := s.venom("rollback", append(args, "--dry-run", "--json")...)
	if dry.Code != 0 {
		// Refusals are fine when they are the design's (docs/rollback.md): outside edits in a
		// guarded tree, a HEAD that cannot move back.
		require.Equal(s.t, 5, dry.Code, s.fail("dry run: %s %s", dry.Stdout, dry.Stderr))
		require.Regexp(s.t, `conflict\.(outside_edits|head_moved|commits_pushed)`, dry.Stdout, s.fail("dry run"))
		s.done["refused"]++
		return
	}
	var plan RollbackResult
	dry.JSON(s.t, &plan)
	if s.rng.Intn(4) == 0 {
		s.done["dry run only"]++
		return // only looked
	}
	s.seen()
	var res RollbackResult
	s.venom("rollback", append(args, "--plan="+plan.Plan, "--json")...).OK(s.t).JSON(s.t, &res)
	require.True(s.t, *res.Exact, s.fail("rollback not exact"))
	s.lastSafety = res.Safety
	s.done["rolled back"]++
	now := s.env.RecipeTree()
	tc := s.env.Git("rev-parse", "refs/venom/checkpoints/a1/"+strings.TrimPrefix(target, "k"))
	for _, f := range res.Repos[0].Files {
		want := s.env.GitRaw("rev-parse", "-q", "--verify", tc+":"+f.Path).Stdout
		got := s.env.GitRaw("rev-parse", "-q", "--verify", now+":"+f.Path).Stdout
		require.Equal(s.t, want, got, s.fail("%s is not the target's after the rollback", f.Path))
	}
}

// checkOwed: every blob the person wrote is in the tree or in a checkpoint.
func (s *session) checkOwed() {
	have := map[string]bool{}
	// One git rev-list for the objects of every checkpoint and of the
	// recipe's tree of the files now (the blobs git ls-tree -r lists).
	tree := s.env.RecipeTree()
	objs := s.env.Git("rev-list", "--objects", "--no-object-names", "--glob=refs/venom/*", tree)
	for _, o := range strings.Fields(objs) {
		have[o] = true
	}
	var missing []string
	for _, b := range s.owed {
		if !have[b] {
			missing = append(missing, b)
		}
	}
	sort.Strings(missing)
	require.Empty(s.t, missing, s.fail("a person's bytes are lost"))
}

func (s *session) play(steps int) {
	for s.step = 0; s.step < steps; s.step++ {
		switch op := s.rng.Intn(10); {
		case op < 3:
			s.agentTurn()
		case op < 5:
			s.personEdit()
		case op < 6:
			s.capture()
		case op < 9:
			s.rollback()
		default:
			s.personEdit()
			s.personEdit()
		}
		s.checkOwed()
	}
	s.t.Logf("seed %d: %v, %d turns, %d person blobs owed", s.seed, s.done, s.turns, len(s.owed))
}
