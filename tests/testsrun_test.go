package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGo stands in for go: it logs each call, fails the go test calls with
// $FAIL_PART in their arguments (golist: the listing of files), answers
// tags as go does with env.sh's GOFLAGS and venomtest, lib/hook's other
// files with venomtest, and folders (with $TWIN, ./... holds lib/x/a too).
// go test -c -o DIR/ writes test binaries that log their calls (name,
// folder, VENOM_TEST_BIN_DIR's files), fail when their path or arguments
// hold $FAIL_PART, run a second with $LONG_PART, die with $KILL_PART.
const fakeGo = `#!/bin/sh
echo "go $*" >>"$CALLS"
m=github.com/git-venom/git-venom
case "$1" in
env) echo cc ;;
list) case "$*" in
  *context.BuildTags*) echo static,system_libgit2,venomtest ;;
  *.Dir*) for a in "$@"; do case "$a" in $m/lib/a|$m/lib/x/a|$m/lib/hook|$m/tests)
    mkdir -p "${a#$m/}" && echo "$a $PWD/${a#$m/}" ;; esac; done ;;
  *GoFiles*) [ "$FAIL_PART" != golist ] || exit 1
    printf '%s\n' "$m/lib/a [a.go][a_test.go]" "$m/lib/b [b.go][]" "$m/lib/c [c.go][]"
    case "$*" in *venomtest*) echo "$m/lib/hook [on.go][a_test.go]" ;; *) echo "$m/lib/hook [off.go][a_test.go]" ;; esac ;;
  *) printf '%s\n' $m/lib/a ${TWIN:+$m/lib/x/a} $m/tests ;;
  esac ;;
test) if [ -n "$FAIL_PART" ]; then case "$*" in *"$FAIL_PART"*) echo "go: $FAIL_PART does not build" >&2; exit 1 ;; esac; fi
  o=; for a in "$@"; do case "$a" in -o) o=1 ;; ./*|$m/*) [ "$o" != 2 ] || {
    printf '%s\n' '#!/bin/sh' \
      'echo "$(basename "$0") in $(basename "$PWD") bins $(ls "${VENOM_TEST_BIN_DIR:-/nonexistent}" 2>/dev/null | tr "\n" " ")$*" >>"$CALLS"' \
      'echo "$(basename "$0") nice $(cut -d" " -f19 /proc/$$/stat)" >>"$CALLS"' \
      '[ -z "$LONG_PART" ] || case "$*" in *"$LONG_PART"*) sleep 1; echo "$(basename "$0") ended $*" >>"$CALLS" ;; esac' \
      '[ -z "$KILL_PART" ] || case "$*" in *"$KILL_PART"*) kill -9 $$ ;; esac' \
      '[ -z "$SLOW" ] || { echo $$ >>"$PIDS"; exec sleep 300; }' \
      'if [ -n "$FAIL_PART" ]; then case "$0 $*" in *"$FAIL_PART"*) echo "--- FAIL: TestFake"; echo FAIL; exit 1 ;; esac; fi' >"$dir$(basename "$a").test"
    chmod +x "$dir$(basename "$a").test"; } ;;
  *) [ "$o" != 1 ] || { dir="$a"; o=2; } ;; esac; done ;;
build) for a in "$@"; do case "$a" in -o) o=1 ;; ./*) [ -z "$o" ] || : >"$dir$(basename "$a")" ;; *) [ "$o" != 1 ] || { dir="$a"; o=2; } ;; esac; done ;;
esac
exit 0
`

// runTestsRun runs a copy of tests/run in a tree of stubs, with go and the
// tools tests/run looks for replaced; it returns the exit code, the output
// and the calls made.
func runTestsRun(t *testing.T, failPart string) (int, string, []string) {
	t.Helper()
	return runTestsRunIn(t, t.TempDir(), failPart)
}

// runTestsRunIn is runTestsRun in the tree root, HOME too (where tests/run
// keeps its test binaries), again if called again. In the calls returned,
// ROOT stands for root.
func runTestsRunIn(t *testing.T, root, failPart string, env ...string) (int, string, []string) {
	t.Helper()
	cmd, calls := testsRunCommand(t, root, failPart, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%s", out)
		code = exit.ExitCode()
	}
	logged, err := os.ReadFile(calls)
	require.NoError(t, err)
	return code, string(out), strings.Split(strings.TrimSpace(strings.ReplaceAll(string(logged), root, "ROOT")), "\n")
}

// testsRunCommand is runTestsRunIn's tree and command, unstarted, and the
// file its calls are logged to.
func testsRunCommand(t *testing.T, root, failPart string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	stubs := t.TempDir()
	script, err := os.ReadFile(filepath.Join(repoRoot(), "tests", "run"))
	require.NoError(t, err)
	calls := filepath.Join(stubs, "calls")
	write := func(path, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o755))
	}
	write(filepath.Join(root, "tests", "run"), string(script))
	write(filepath.Join(root, "tests", "harnesses", "install"), "#!/bin/sh\nexit 0\n")
	write(filepath.Join(root, "tests", "fuzz"), "#!/bin/sh\nprintf '%s\\n' \"fuzz $FUZZTIME $FUZZWORKERS\" \"fuzz bins $VENOM_FUZZ_BIN_DIR\" \"fuzz nice $(cut -d' ' -f19 /proc/$$/stat)\" >>\"$CALLS\"\n[ -z \"$SLOW\" ] || { echo $$ >>\"$PIDS\"; exec sleep 300; }\n[ \"$FAIL_PART\" != tests/fuzz ]\n")
	env0, err := os.ReadFile(filepath.Join(repoRoot(), "lib", "static", "env.sh"))
	require.NoError(t, err)
	write(filepath.Join(root, "lib", "static", "env.sh"), string(env0))
	write(filepath.Join(stubs, "go"), fakeGo)
	for _, tool := range []string{"gofmt", "pkg-config", "cc", "man", "git-lfs", "watchman"} {
		write(filepath.Join(stubs, tool), "#!/bin/sh\nexit 0\n")
	}
	cmd := exec.Command("bash", filepath.Join(root, "tests", "run"))
	cmd.Env = append([]string{"PATH=" + stubs + ":/usr/bin:/bin", "CALLS=" + calls, "FAIL_PART=" + failPart,
		"HOME=" + root, "TMPDIR=" + t.TempDir(), "VENOM_HARNESS_DIR=" + root}, env...)
	return cmd, calls
}

// The folder tests/run keeps the test binaries in under HOME, as calls name it.
const keptBins = "ROOT/.cache/git-venom/test-binaries"

// TestTestsRun_ExitsZeroWhenEveryPartPasses: with no arguments tests/run
// runs the tests package in two parts (one test binary, built once with
// the three binaries it runs) beside the other packages, the unit tests
// again without the tag (of the packages whose files it changes), and the
// short fuzz pass, every binary linked into the folder kept under HOME,
// and exits 0 when they all pass. Every go test and go vet with venomtest
// keeps the tags GOFLAGS names (the static libgit2 install.sh links).
func TestTestsRun_ExitsZeroWhenEveryPartPasses(t *testing.T) {
	t.Parallel()
	code, out, calls := runTestsRun(t, "")
	require.Equal(t, 0, code, "%s", out)
	assert.NotContains(t, out, "FAIL")
	assert.Subset(t, calls, []string{
		"go vet ./...",
		"go vet -tags static,system_libgit2,venomtest ./...",
		"go build -tags static,system_libgit2,venomtest -o " + keptBins + "/product/ ./git-venom-checkpoint ./git-venom-rollback ./git-venom-diff",
		"go test -tags static,system_libgit2,venomtest -c -o " + keptBins + "/tests/ -ldflags=-w -extldflags=-fuse-ld=gold -vet=off ./tests",
		"tests.test in tests bins git-venom-checkpoint git-venom-diff git-venom-rollback -test.count=1 -test.timeout=25m -test.parallel=4 -test.paniconexit0 -test.run ^TestReal",
		"tests.test in tests bins git-venom-checkpoint git-venom-diff git-venom-rollback -test.count=1 -test.timeout=25m -test.parallel=12 -test.paniconexit0 -test.skip ^TestReal",
		"go test -ldflags=-w -extldflags=-fuse-ld=gold -vet=off -c -o " + keptBins + "/unit/ -tags static,system_libgit2,venomtest github.com/git-venom/git-venom/lib/a",
		"a.test in a bins git-venom-checkpoint git-venom-diff git-venom-rollback -test.count=1 -test.timeout=25m -test.parallel=4 -test.paniconexit0",
		"go test -ldflags=-w -extldflags=-fuse-ld=gold -vet=off -c -o " + keptBins + "/release/ github.com/git-venom/git-venom/lib/hook",
		"hook.test in hook bins -test.count=1 -test.timeout=25m -test.paniconexit0",
		"fuzz 3s 1",
		"fuzz bins " + keptBins + "/fuzz",
	})
	assert.Contains(t, out, "ok  \tgithub.com/git-venom/git-venom/lib/a\t")
	assert.Contains(t, out, "ok  \tgithub.com/git-venom/git-venom/lib/hook\t")
	assert.Contains(t, out, "tests/run: test binaries kept in ")
}

// TestTestsRun_PartsRunOneAfterTheOther: the rest of the tests package
// starts when its tests of the real harness programs have ended (side by
// side, each slowed the other), and runs though they failed.
func TestTestsRun_PartsRunOneAfterTheOther(t *testing.T) {
	t.Parallel()
	for _, fail := range []string{"", "^TestReal"} {
		code, out, calls := runTestsRunIn(t, t.TempDir(), fail, "LONG_PART=-test.run ^TestReal")
		if fail == "" {
			require.Equal(t, 0, code, "%s", out)
		} else {
			require.Equal(t, 1, code, "%s", out)
			assert.Contains(t, out, "--- FAIL: TestFake")
		}
		const args = " -test.count=1 -test.timeout=25m"
		ended := slices.Index(calls, "tests.test ended"+args+" -test.parallel=4 -test.paniconexit0 -test.run ^TestReal")
		rest := slices.Index(calls, "tests.test in tests bins git-venom-checkpoint git-venom-diff git-venom-rollback"+args+
			" -test.parallel=12 -test.paniconexit0 -test.skip ^TestReal")
		require.NotEqual(t, -1, rest, "the rest part ran: %v", calls)
		if fail == "" {
			require.NotEqual(t, -1, ended, "the real part ended: %v", calls)
			assert.Less(t, ended, rest, "the rest part started before the real part ended: %v", calls)
		}
	}
}

// TestTestsRun_KilledRealPartStartsNoRest: a real part ended by a signal
// (tests/run's own end kills it, and its parent a moment later) starts no
// rest part, and the run fails saying so.
func TestTestsRun_KilledRealPartStartsNoRest(t *testing.T) {
	t.Parallel()
	code, out, calls := runTestsRunIn(t, t.TempDir(), "", "KILL_PART=-test.run ^TestReal")
	require.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "not run: a signal ended the real part")
	for _, c := range calls {
		assert.NotContains(t, c, "-test.skip ^TestReal", "the rest part ran")
	}
}

// TestTestsRun_FuzzPassRunsAboveTheOthers: the fuzz pass runs at the
// priority tests/run has, every test binary five nice levels below it: on
// a machine the others keep busy, the fuzz coordinator's hand-offs to its
// worker waited for a core, and most targets fuzzed nothing.
func TestTestsRun_FuzzPassRunsAboveTheOthers(t *testing.T) {
	t.Parallel()
	code, out, calls := runTestsRun(t, "")
	require.Equal(t, 0, code, "%s", out)
	nice := map[string]int{}
	for _, c := range calls {
		if name, n, ok := strings.Cut(c, " nice "); ok {
			v, err := strconv.Atoi(n)
			require.NoError(t, err, c)
			nice[name] = v
		}
	}
	require.Contains(t, nice, "fuzz", "%v", calls)
	for _, bin := range []string{"tests.test", "a.test", "hook.test"} {
		require.Contains(t, nice, bin, "%v", calls)
		assert.Equal(t, min(nice["fuzz"]+5, 19), nice[bin], "%s runs below the fuzz pass", bin)
	}
}

// TestTestsRun_SignalEndsAllItStarted: Ctrl-C (SIGINT to the process
// group, as a terminal sends it), a hangup, or a kill of tests/run alone
// ends the run at once and every test binary and fuzz pass it started,
// which run in the background where SIGINT is ignored, and removes its
// temporary folders. Before, Ctrl-C left all of them running.
func TestTestsRun_SignalEndsAllItStarted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		group bool
		exit  int
	}{{"ctrl-c", syscall.SIGINT, true, 130}, {"hangup", syscall.SIGHUP, true, 129}, {"kill", syscall.SIGTERM, false, 143}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root, tmp := t.TempDir(), t.TempDir()
			pids := filepath.Join(t.TempDir(), "pids")
			cmd, _ := testsRunCommand(t, root, "", "SLOW=1", "PIDS="+pids, "TMPDIR="+tmp)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			// The first part, a unit test binary and the fuzz pass. Eventually
			// polls in a goroutine of its own: no require there, no shared list.
			readPids := func() (started []int) {
				b, _ := os.ReadFile(pids)
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						started = append(started, pid)
					}
				}
				return started
			}
			require.Eventually(t, func() bool { return len(readPids()) >= 3 }, time.Minute, 20*time.Millisecond, "%s", &out)
			started := readPids()
			target := cmd.Process.Pid
			if c.group {
				target = -target
			}
			require.NoError(t, syscall.Kill(target, c.sig))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("tests/run did not end on %s: %s", c.sig, &out)
			}
			assert.Equal(t, c.exit, cmd.ProcessState.ExitCode(), "%s", &out)
			for _, pid := range started {
				assert.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 5*time.Second, 20*time.Millisecond,
					"process %d still runs", pid)
			}
			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			assert.Empty(t, left, "its temporary folders")
		})
	}
}

// TestTestsRun_TagsAsGoReadsThem: venom_tags (lib/static/env.sh) gives
// the tags of GOFLAGS' last -tags, as go reads them, and venomtest once.
func TestTestsRun_TagsAsGoReadsThem(t *testing.T) {
	t.Parallel()
	for goflags, want := range map[string]string{
		"":                                       "venomtest",
		"-tags=static,system_libgit2":            "static,system_libgit2,venomtest",
		"-tags=a -trimpath --tags=b,venomtest,c": "b,c,venomtest",
	} {
		cmd := exec.Command("bash", "-c", `. lib/static/env.sh 2>/dev/null; GOFLAGS="$1" venom_tags venomtest`, "bash", goflags)
		cmd.Dir = repoRoot()
		cmd.Env = append(os.Environ(), "GOENV=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, want, strings.TrimSpace(string(out)), "GOFLAGS=%q", goflags)
	}
}

// TestTestsRun_FailsWhenAnyPartFails: a failing part, or a package that
// does not build, fails the run with exit 1, after every other part has
// run; a failing package's output is shown whole, and go's error.
func TestTestsRun_FailsWhenAnyPartFails(t *testing.T) {
	t.Parallel()
	for part, shown := range map[string]string{
		"./tests":              "go: ./tests does not build",
		"-test.run ^TestReal":  "",
		"-test.skip ^TestReal": "",
		"lib/a":                "go: lib/a does not build\nFAIL\tgithub.com/git-venom/git-venom/lib/a [build failed]",
		"unit/a.test":          "--- FAIL: TestFake\nFAIL\nFAIL\tgithub.com/git-venom/git-venom/lib/a\t",
		"release/hook.test":    "--- FAIL: TestFake\nFAIL\nFAIL\tgithub.com/git-venom/git-venom/lib/hook\t",
		"tests/fuzz":           "",
	} {
		t.Run(part, func(t *testing.T) {
			t.Parallel()
			code, out, calls := runTestsRun(t, part)
			assert.Equal(t, 1, code, "%s", out)
			assert.Contains(t, out, "tests/run: FAIL")
			assert.Contains(t, out, shown)
			assert.Contains(t, calls, "fuzz 3s 1")
			assert.Contains(t, calls, "hook.test in hook bins -test.count=1 -test.timeout=25m -test.paniconexit0")
		})
	}
}

// TestTestsRun_RunsNoBinaryOfAFailedLink: a package that no longer builds
// leaves its older test binary in the kept folder; the run reports the
// build failure and runs none of that folder's binaries it did not just
// link.
func TestTestsRun_RunsNoBinaryOfAFailedLink(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	code, out, calls := runTestsRunIn(t, root, "")
	require.Equal(t, 0, code, "%s", out)
	require.Contains(t, calls, "a.test in a bins git-venom-checkpoint git-venom-diff git-venom-rollback -test.count=1 -test.timeout=25m -test.parallel=4 -test.paniconexit0")
	code, out, calls = runTestsRunIn(t, root, "lib/a")
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "FAIL\tgithub.com/git-venom/git-venom/lib/a [build failed]")
	assert.Contains(t, calls, "go test -ldflags=-w -extldflags=-fuse-ld=gold -vet=off -c -o "+keptBins+"/unit/ -tags static,system_libgit2,venomtest github.com/git-venom/git-venom/lib/a",
		"the first run let go of the kept folder")
	for _, c := range calls {
		assert.False(t, strings.HasPrefix(c, "a.test "), "ran lib/a's older binary: %s", c)
	}
	assert.FileExists(t, filepath.Join(root, ".cache", "git-venom", "test-binaries", "unit", "a.test"))
}

// TestTestsRun_RefusesPackagesNamedAlike: go test -c -o DIR/ names each
// test binary for its package's last element, so lib/a and lib/x/a would
// share one file and one's tests would pass as the other's: the run fails
// with the name, and runs neither.
func TestTestsRun_RefusesPackagesNamedAlike(t *testing.T) {
	t.Parallel()
	code, out, calls := runTestsRunIn(t, t.TempDir(), "", "TWIN=1")
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "tests/run: packages named alike would share a test binary: a\n")
	assert.Contains(t, out, "tests/run: FAIL")
	for _, c := range calls {
		assert.False(t, strings.HasPrefix(c, "a.test "), "ran a test binary two packages share: %s", c)
	}
}

// TestTestsRun_LinksIntoATemporaryFolderWhenTheKeptOneIsTaken: a run
// beside another (which holds the kept folder's lock), or one with
// VENOM_TEST_BIN_CACHE=off, links every test binary into a temporary
// folder of its own and runs them from there; VENOM_TEST_BIN_CACHE names
// another folder to keep them in.
func TestTestsRun_LinksIntoATemporaryFolderWhenTheKeptOneIsTaken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, env, kept string }{
		{"held", "", ""},
		{"off", "VENOM_TEST_BIN_CACHE=off", ""},
		{"named", "VENOM_TEST_BIN_CACHE=ROOT/bins", "ROOT/bins"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if c.name == "held" {
				dir := filepath.Join(root, ".cache", "git-venom", "test-binaries")
				require.NoError(t, os.MkdirAll(dir, 0o755))
				f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_WRONLY, 0o644)
				require.NoError(t, err)
				defer f.Close()
				require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
			}
			var env []string
			if c.env != "" {
				env = append(env, strings.ReplaceAll(c.env, "ROOT", root))
			}
			code, out, calls := runTestsRunIn(t, root, "", env...)
			require.Equal(t, 0, code, "%s", out)
			assert.Contains(t, calls, "a.test in a bins git-venom-checkpoint git-venom-diff git-venom-rollback -test.count=1 -test.timeout=25m -test.parallel=4 -test.paniconexit0")
			linked := 0
			for _, call := range calls {
				if strings.Contains(call, " -o ") {
					linked++
					assert.NotContains(t, call, keptBins)
					if c.kept != "" {
						assert.Contains(t, call, " -o "+c.kept+"/")
					}
				}
			}
			assert.Equal(t, 4, linked, "%q", calls)
			assert.Equal(t, c.kept != "", strings.Contains(out, "tests/run: test binaries kept in"), "%s", out)
		})
	}
}

// TestTestsRun_FailsWhenTheReleaseListingFails: a go list of ./lib/...
// that fails leaves no package to rerun as a release build; the run says
// so and fails instead of passing with the rerun skipped.
func TestTestsRun_FailsWhenTheReleaseListingFails(t *testing.T) {
	t.Parallel()
	code, out, calls := runTestsRun(t, "golist")
	assert.Equal(t, 1, code, "%s", out)
	assert.Contains(t, out, "tests/run: go list ./lib/... failed")
	assert.Contains(t, out, "tests/run: FAIL")
	assert.Contains(t, calls, "fuzz 3s 1")
	for _, c := range calls {
		assert.NotContains(t, c, "lib/hook", "a release rerun after a failed listing")
	}
}
