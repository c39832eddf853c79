package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/git-venom/git-venom/tests/buildtags"
)

// binDir holds the binaries built once for the whole run.
var binDir string

// gitDir is the folder of the git the tests use.
var gitDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "venom-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	if prebuilt := os.Getenv("VENOM_TEST_BIN_DIR"); prebuilt != "" {
		// tests/run builds them once for both of its runs of this package.
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

// buildBinaries links the three binaries into dir as install.sh links
// them (GOFLAGS' tags), with the hooks.
func buildBinaries(dir string) error {
	cmd := exec.Command("go", "build", "-tags", buildtags.With(os.Getenv("GOFLAGS"), "venomtest"), "-o", dir+"/", "./git-venom-checkpoint", "./git-venom-rollback", "./git-venom-diff")
	cmd.Dir = repoRoot()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// repoRoot is the module's root folder.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}
