package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGo stands in for go: it logs each call and fails the go test calls
// whose arguments contain $FAIL_PART (the listing of files: golist). It
// answers the build tags as go does with env.sh's GOFLAGS and venomtest,
// and that lib/hook has other files with venomtest. go test -c -o FILE
// (failing when $FAIL_PART is -c) writes a test binary that logs its calls
// (its folder, VENOM_TEST_BIN_DIR's files) and fails alike; go build -o
// DIR/ writes empty binaries.
const fakeGo = `#!/bin/sh
echo "go $*" >>"$CALLS"
case "$1" in
env) echo cc ;;
list) m=github.com/git-venom/git-venom
  case "$*" in
  *context.BuildTags*) echo static,system_libgit2,venomtest ;;
  *GoFiles*) [ "$FAIL_PART" != golist ] || exit 1
    printf '%s\n' "$m/lib/a [a.go][a_test.go]" "$m/lib/b [b.go][]" "$m/lib/c [c.go][]"
    case "$*" in *venomtest*) echo "$m/lib/hook [on.go][]" ;; *) echo "$m/lib/hook [off.go][]" ;; esac ;;
  *) printf '%s\n' $m/lib/a $m/tests ;;
  esac ;;
test) if [ "$4" = -c ]; then
    [ "$FAIL_PART" != -c ] || exit 1
  elif [ -n "$FAIL_PART" ]; then case "$*" in *"$FAIL_PART"*) exit 1 ;; esac; fi
  if [ "$2 $3 $4 $5 $7" = "-tags static,system_libgit2,venomtest -c -o -ldflags=-w -extldflags=-fuse-ld=gold" ]; then
    printf '%s\n' '#!/bin/sh' \
      'echo "tests.test in $(basename "$PWD") bins $(ls "$VENOM_TEST_BIN_DIR" | tr "\n" " ")$*" >>"$CALLS"' \
      'if [ -n "$FAIL_PART" ]; then case "$*" in *"$FAIL_PART"*) exit 1 ;; esac; fi' >"$6"
    chmod +x "$6"
  fi ;;
build) for a in "$@"; do case "$a" in -o) o=1 ;; ./*) [ -z "$o" ] || : >"$dir$(basename "$a")" ;; *) [ "$o" != 1 ] || { dir="$a"; o=2; } ;; esac; done ;;
esac
exit 0
`

// runTestsRun runs a copy of tests/run in a tree of stubs, with go and the
// tools tests/run looks for replaced; it returns the exit code, the output
// and the calls made.
func runTestsRun(t *testing.T, failPart string) (int, string, []string) {
	t.Helper()
	root, stubs := t.TempDir(), t.TempDir()
	script, err := os.ReadFile(filepath.Join(repoRoot(), "tests", "run"))
	require.NoError(t, err)
	calls := filepath.Join(stubs, "calls")
	write := func(path, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o755))
	}
	write(filepath.Join(root, "tests", "run"), string(script))
	write(filepath.Join(root, "tests", "harnesses", "install"), "#!/bin/sh\nexit 0\n")
	write(filepath.Join(root, "tests", "fuzz"), "#!/bin/sh\necho \"fuzz $FUZZTIME $FUZZWORKERS\" >>\"$CALLS\"\n[ \"$FAIL_PART\" != fuzz ]\n")
	env, err := os.ReadFile(filepath.Join(repoRoot(), "lib", "static", "env.sh"))
	require.NoError(t, err)
	write(filepath.Join(root, "lib", "static", "env.sh"), string(env))
	write(filepath.Join(stubs, "go"), fakeGo)
	for _, tool := range []string{"gofmt", "pkg-config", "cc", "man", "git-lfs", "watchman"} {
		write(filepath.Join(stubs, tool), "#!/bin/sh\nexit 0\n")
	}
	cmd := exec.Command("bash", filepath.Join(root, "tests", "run"))
	cmd.Env = []string{"PATH=" + stubs + ":/usr/bin:/bin", "CALLS=" + calls, "FAIL_PART=" + failPart,
		"HOME=" + root, "TMPDIR=" + t.TempDir(), "VENOM_HARNESS_DIR=" + root}
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%s", out)
		code = exit.ExitCode()
	}
	logged, err := os.ReadFile(calls)
	require.NoError(t, err)
	return code, string(out), strings.Split(strings.TrimSpace(string(logged)), "\n")
}

// TestTestsRun_ExitsZeroWhenEveryPartPasses: with no arguments tests/run
// runs the tests package in two parts (one test binary, built once with
// the three binaries it runs) beside the other packages, the unit tests
// again without the venomtest tag (of the packages whose own files the
// tag changes), and the short fuzz pass, and exits
// 0 when they all pass. Every go test and go vet with venomtest keeps the
// tags GOFLAGS names (the static libgit2 install.sh links) as well.
func TestTestsRun_ExitsZeroWhenEveryPartPasses(t *testing.T) {
	t.Parallel()
	code, out, calls := runTestsRun(t, "")
	require.Equal(t, 0, code, "%s", out)
	assert.NotContains(t, out, "FAIL")
	assert.Subset(t, calls, []string{
		"go vet ./...",
		"go vet -tags static,system_libgit2,venomtest ./...",
		"tests.test in tests bins git-venom-checkpoint git-venom-diff git-venom-rollback -test.count=1 -test.timeout=25m -test.parallel=4 -test.paniconexit0 -test.run ^TestReal",
		"tests.test in tests bins git-venom-checkpoint git-venom-diff git-venom-rollback -test.count=1 -test.timeout=25m -test.parallel=4 -test.paniconexit0 -test.skip ^TestReal",
		"go test -tags static,system_libgit2,venomtest -ldflags=-w -extldflags=-fuse-ld=gold -vet=off -count=1 -timeout 25m -parallel 4 github.com/git-venom/git-venom/lib/a",
		"go test -ldflags=-w -extldflags=-fuse-ld=gold -vet=off -count=1 -timeout 25m github.com/git-venom/git-venom/lib/hook",
		"fuzz 5s 1",
	})
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

// TestTestsRun_FailsWhenAnyPartFails: a failing part, or a tests package
// that does not build, fails the run with exit 1, after every other part
// has run.
func TestTestsRun_FailsWhenAnyPartFails(t *testing.T) {
	t.Parallel()
	for _, part := range []string{"-c", "-test.run ^TestReal", "-test.skip ^TestReal", "lib/a", "lib/hook", "fuzz"} {
		t.Run(part, func(t *testing.T) {
			t.Parallel()
			code, out, calls := runTestsRun(t, part)
			assert.Equal(t, 1, code, "%s", out)
			assert.Contains(t, out, "tests/run: FAIL")
			assert.Contains(t, calls, "fuzz 5s 1")
			assert.Contains(t, calls, "go test -ldflags=-w -extldflags=-fuse-ld=gold -vet=off -count=1 -timeout 25m github.com/git-venom/git-venom/lib/hook")
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
	assert.Contains(t, calls, "fuzz 5s 1")
	for _, c := range calls {
		assert.NotContains(t, c, "lib/hook", "a release rerun after a failed listing")
	}
}
