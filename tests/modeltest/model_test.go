package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-venom/git-venom/tests/buildtags"
)

// fixedSeeds are played by go test (tests/run): a spread of seeds, and
// every seed that once found a defect, kept once it was fixed.
var fixedSeeds = []int64{1, 2, 3, 4, 5, 6}

// regressions are seeds (with their step counts) that once failed, each a
// model error: 3002 at 50 steps, a sharer's turn with no start across a
// rollback window, which stays one (docs/rollback.md#classes); 5023 at 40,
// a rollback killed after its safety checkpoint's ref, which the next
// capture adopts; 5024 at 120, an outside path in the way of an ignored
// folder, which --outside=refuse does not refuse.
var regressions = [][2]int64{{3002, 50}, {5023, 40}, {5024, 120}}

// TestModel plays the fixed seeds against the real binaries. Each failure
// names its seed and lists its steps; tests/model replays one.
func TestModel(t *testing.T) {
	bin := t.TempDir()
	if err := build(bin); err != nil {
		t.Fatal(err)
	}
	// Linked as install.sh links them: GOFLAGS' tags are kept.
	if got, err := buildtags.Of(filepath.Join(bin, "git-venom-rollback")); err != nil || got != buildtags.With(os.Getenv("GOFLAGS"), "venomtest") {
		t.Fatalf("the binaries were built with -tags=%s (%v), not GOFLAGS' and venomtest", got, err)
	}
	opt := options{steps: 30, off: parseOff(strings.Join(defaultOff, ",")), fsck: true}
	if os.Getenv("VENOM_TEST_LONG") != "" {
		opt.steps = 150
	}
	runs := [][2]int64{}
	for _, seed := range fixedSeeds {
		runs = append(runs, [2]int64{seed, int64(opt.steps)})
	}
	runs = append(runs, regressions...)
	for _, run := range runs {
		seed, o := run[0], opt
		o.steps = int(run[1])
		t.Run("seed", func(t *testing.T) {
			t.Parallel()
			_, stats, err := play(seed, bin, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("seed %d:\n%s", seed, figures(stats))
		})
	}
}

// TestModel_Independent: the model must not share the product's code, or
// a misreading would agree with itself.
func TestModel_Independent(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "/lib/") || strings.HasSuffix(p, "/lib") {
			t.Errorf("the model imports %s", p)
		}
	}
}

// TestHeadOf_IsGits: headOf, which asks git only when the files HEAD
// rests on changed, answers as git rev-parse does after each way HEAD
// and its branch move: commits, packed refs, a detach, a branch switch, a
// linked worktree's HEAD, its branch moved from elsewhere, a symbolic ref.
func TestHeadOf_IsGits(t *testing.T) {
	root := t.TempDir()
	w := &world{root: root, home: filepath.Join(root, "home"), bin: root}
	main := &tree{name: "main", dir: filepath.Join(root, "repo")}
	wt := &tree{name: "wt", dir: filepath.Join(root, "wt")}
	for _, d := range []string{w.home, main.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "[user]\n\tname = Model\n\temail = model@example.com\n[init]\n\tdefaultBranch = main\n"
	if err := os.WriteFile(filepath.Join(w.home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		what   string
		tr     *tree
		git    [][]string
		cached bool // a second look asks no git
	}{
		{"git init", main, [][]string{{"init", "-q"}}, true},
		{"the first commit", main, [][]string{{"commit", "-q", "--allow-empty", "-m", "1"}}, true},
		{"a commit", main, [][]string{{"commit", "-q", "--allow-empty", "-m", "2"}}, true},
		{"pack-refs", main, [][]string{{"pack-refs", "--all"}}, true},
		{"a packed branch moved", main, [][]string{{"update-ref", "refs/heads/main", "HEAD~1"}, {"pack-refs", "--all"}}, true},
		{"a detach", main, [][]string{{"checkout", "-q", "--detach"}}, true},
		{"a detached commit", main, [][]string{{"commit", "-q", "--allow-empty", "-m", "3"}}, true},
		{"a branch switch", main, [][]string{{"checkout", "-q", "-b", "side"}}, true},
		{"a worktree", main, [][]string{{"worktree", "add", "-q", "-b", "w", wt.dir}}, true},
		{"the worktree's commit", wt, [][]string{{"commit", "-q", "--allow-empty", "-m", "4"}}, true},
		{"its branch moved from main", main, [][]string{{"update-ref", "refs/heads/w", "main"}}, true},
		{"a symbolic ref", main, [][]string{{"symbolic-ref", "refs/heads/alias", "refs/heads/main"},
			{"symbolic-ref", "HEAD", "refs/heads/alias"}}, false},
		{"its target moved", main, [][]string{{"update-ref", "refs/heads/main", "side"}}, false},
	}
	for _, s := range steps {
		for _, args := range s.git {
			if r := w.gitRaw(s.tr.dir, args...); r.code != 0 {
				t.Fatalf("%s: %s", s.what, r)
			}
		}
		for _, tr := range []*tree{main, wt} {
			if _, err := os.Stat(tr.dir); err != nil {
				continue
			}
			head, branch := w.headOf(tr)
			if wantHead, wantBranch := w.askHead(tr.dir); head != wantHead || branch != wantBranch {
				t.Errorf("after %s: headOf says %s %q in %s, git %s %q", s.what, head, branch, tr.name, wantHead, wantBranch)
			}
			// The same files: git's last answer stands, unasked.
			tr.headSeen = [2]string{"unasked", ""}
			if again, _ := w.headOf(tr); (again == "unasked") != (s.cached || tr == wt) {
				t.Errorf("after %s: headOf's second look in %s asked git: %v", s.what, tr.name, again != "unasked")
			}
			tr.headSeen = [2]string{head, branch}
		}
	}
}
