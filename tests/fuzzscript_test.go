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

// TestFuzzScript_EveryTargetFromOneBuildAPackage runs a copy of tests/fuzz
// on a module of its own, with the real go behind a logging stand-in: a
// package with two targets is built once, without DWARF and through gold,
// and both run; a failing input kept in the package's testdata/fuzz/ is
// found (the target runs in the package's folder), and fails the pass
// naming its target.
func TestFuzzScript_EveryTargetFromOneBuildAPackage(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	root, stubs := t.TempDir(), t.TempDir()
	write := func(path, text string, mode os.FileMode) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), mode))
	}
	for _, f := range []string{"tests/fuzz", "lib/static/env.sh"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(), f))
		require.NoError(t, err)
		write(filepath.Join(root, f), string(b), 0o755)
	}
	write(filepath.Join(root, "go.mod"), "module example.com/fz\n\ngo 1.22\n", 0o644)
	write(filepath.Join(root, "lib", "p", "p.go"), "package p\n", 0o644)
	write(filepath.Join(root, "lib", "p", "p_test.go"), `package p

import "testing"

func FuzzA(f *testing.F) {
	f.Add("a")
	f.Fuzz(func(t *testing.T, s string) {})
}

func FuzzB(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if s == "kept" {
			t.Fatal("the kept input")
		}
	})
}
`, 0o644)
	write(filepath.Join(root, "lib", "p", "testdata", "fuzz", "FuzzB", "kept"), "go test fuzz v1\nstring(\"kept\")\n", 0o644)
	calls := filepath.Join(stubs, "calls")
	write(filepath.Join(stubs, "go"), "#!/bin/sh\n[ \"$1\" != test ] || echo \"go $*\" >>\""+calls+"\"\nexec '"+goBin+"' \"$@\"\n", 0o755)

	cmd := exec.Command("bash", filepath.Join(root, "tests", "fuzz"))
	cmd.Env = append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"), "FUZZTIME=1s", "FUZZWORKERS=1", "GOFLAGS=", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 1, exit.ExitCode(), "%s", out)
	assert.Contains(t, string(out), "tests/fuzz: example.com/fz/lib/p FuzzA for 1s")
	assert.Contains(t, string(out), "tests/fuzz: example.com/fz/lib/p FuzzB for 1s")
	assert.Contains(t, string(out), "tests/fuzz: FuzzB failed")
	logged, err := os.ReadFile(calls)
	require.NoError(t, err)
	assert.Equal(t, []string{"go test -tags venomtest -c -fuzz . -ldflags=-w -extldflags=-fuse-ld=gold -o"},
		firstWords(strings.Split(strings.TrimSpace(string(logged)), "\n"), 10), "%s", out)
}

// firstWords keeps the first n words of each line.
func firstWords(lines []string, n int) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		w := strings.Fields(l)
		out[i] = strings.Join(w[:min(n, len(w))], " ")
	}
	return out
}
