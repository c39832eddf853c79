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
