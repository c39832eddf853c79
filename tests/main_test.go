package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/tests/buildtags"
)

// binDir holds the binaries built once for the whole run.
var binDir string

// runDir is the run's own temporary folder, removed when it ends.
var runDir string

// gitDir is the folder of the git the tests use.
var gitDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	programsTakeInterrupts()
	// The suite's process holds a few MiB while it runs thousands of
	// commands in-process: at Go's default it collected several times a
	// second, a fifth of its own CPU. Children get their own environment.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(800)
	}
	dir, err := os.MkdirTemp("", "venom-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	runDir = dir
	if prebuilt := os.Getenv("VENOM_TEST_BIN_DIR"); prebuilt != "" {
		// tests/run builds them once for both of its runs of this package.
		if err := builtForThisBinary(prebuilt); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		binDir = prebuilt
	} else if err := buildBinaries(binDir); err != nil {
		fmt.Fprintln(os.Stderr, "building the binaries failed:", err)
		return 1
	}
	g, err := exec.LookPath("git")
	if err != nil {
		fmt.Fprintln(os.Stderr, "git is not on PATH")
		return 1
	}
	gitDir = filepath.Dir(g)
	if err := inProcessSetup(filepath.Join(dir, "no-global-config")); err != nil {
		fmt.Fprintln(os.Stderr, "setting up in-process commands:", err)
		return 1
	}
	defer stopRunWatchman()
	return m.Run()
}

// programsTakeInterrupts: a script's background job, as tests/run starts
// this package, starts with SIGINT ignored (under nohup, SIGHUP too), and
// every program the tests ran inherited that: a harness a test stops with
// SIGINT ran on to the test's timeout. A signal this process catches is
// back to its default in the programs it starts; caught here, it is
// still ignored by this process.
func programsTakeInterrupts() {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGHUP} {
		if signal.Ignored(sig) {
			signal.Notify(make(chan os.Signal, 1), sig)
		}
	}
}

// builtForThisBinary refuses a VENOM_TEST_BIN_DIR that tests/run did
// not build beside this very test binary: a folder kept from an older
// tree would test old binaries without a word.
func builtForThisBinary(dir string) error {
	want, err := os.ReadFile(filepath.Join(dir, ".for-tests-binary"))
	if err != nil {
		return fmt.Errorf("VENOM_TEST_BIN_DIR=%s was not built by tests/run (%v): unset it to build the binaries", dir, err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	f, err := os.Open(self)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if strings.TrimSpace(string(want)) != hex.EncodeToString(h.Sum(nil)) {
		return fmt.Errorf("VENOM_TEST_BIN_DIR=%s holds binaries built for another test binary: unset it to build them", dir)
	}
	return nil
}

// buildBinaries links the three binaries into dir as install.sh links
// them (GOFLAGS' tags), with the hooks.
func buildBinaries(dir string) error {
	cmd := exec.Command("go", "build", "-tags", buildtags.With(os.Getenv("GOFLAGS"), "venomtest"), "-o", dir+"/", "./git-venom-checkpoint", "./git-venom-rollback", "./git-venom-diff")
	cmd.Dir = repoRoot()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// repoRoot is the module's root folder: go.mod's, from the folder go test
// runs this binary in (tests/run builds it with -trimpath, under which
// runtime.Caller names no folder), read before any test runs.
func repoRoot() string { return moduleDir }

var moduleDir = func() string {
	if dir, err := buildtags.ModuleRoot(); err == nil {
		return dir
	}
	dir, _ := os.Getwd()
	return dir
}()

// TestMain_StaleBinDirRefused: this test binary started with a
// VENOM_TEST_BIN_DIR that tests/run did not build beside it (a folder
// kept from an older tree, or one without its stamp) refuses to run
// rather than test old binaries; with the stamp of its own bytes it runs.
func TestMain_StaleBinDirRefused(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	run := func() (string, error) {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), "VENOM_TEST_BIN_DIR="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	require.Error(t, err, "no stamp: %s", out)
	assert.Contains(t, out, "was not built by tests/run")
	stamp := filepath.Join(dir, ".for-tests-binary")
	require.NoError(t, os.WriteFile(stamp, []byte(strings.Repeat("0", 64)+"\n"), 0o644))
	out, err = run()
	require.Error(t, err, "another binary's stamp: %s", out)
	assert.Contains(t, out, "built for another test binary")
	b, err := os.ReadFile(self)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	require.NoError(t, os.WriteFile(stamp, []byte(hex.EncodeToString(sum[:])+"\n"), 0o644))
	out, err = run()
	require.NoError(t, err, "its own stamp: %s", out)
}

// TestMain_ProgramsTakeInterrupts: this test binary started with SIGINT
// and SIGHUP ignored (a script's background job, nohup) starts its
// programs with both at their default, so that a harness a test
// interrupts, or a tests/run it hangs up, stops.
func TestMain_ProgramsTakeInterrupts(t *testing.T) {
	if os.Getenv("VENOM_TEST_SIGINT_PROBE") != "" {
		b, err := exec.Command("cat", "/proc/self/status").Output()
		require.NoError(t, err)
		ignored := regexp.MustCompile(`(?m)^SigIgn:\s*([0-9a-f]+)$`).FindSubmatch(b)
		require.NotNil(t, ignored, "%s", b)
		mask, err := strconv.ParseUint(string(ignored[1]), 16, 64)
		require.NoError(t, err)
		assert.Zero(t, mask&(1<<(uint(syscall.SIGINT)-1)), "a program started by the tests ignores SIGINT")
		assert.Zero(t, mask&(1<<(uint(syscall.SIGHUP)-1)), "a program started by the tests ignores SIGHUP")
		return
	}
	t.Parallel()
	self, err := os.Executable()
	require.NoError(t, err)
	// A folder stamped for this binary, so that TestMain builds nothing.
	dir := t.TempDir()
	b, err := os.ReadFile(self)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".for-tests-binary"), []byte(hex.EncodeToString(sum[:])+"\n"), 0o644))
	cmd := exec.Command("sh", "-c", `trap "" INT HUP; exec "$0" -test.run='^TestMain_ProgramsTakeInterrupts$' -test.v`, self)
	cmd.Env = append(os.Environ(), "VENOM_TEST_BIN_DIR="+dir, "VENOM_TEST_SIGINT_PROBE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestMain_ProgramsTakeInterrupts")
}
