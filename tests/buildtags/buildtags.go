// Package buildtags serves the builds of the binaries the tests and
// tests/bench make: their -tags, the module's folder, and tests/run's
// binaries to start from. lib/static/env.sh links libgit2 statically through GOFLAGS
// (-tags=static,system_libgit2), and a -tags on go's command line replaces
// GOFLAGS' own: a build with `-tags venomtest` alone is linked unlike the
// one install.sh makes.
package buildtags

import (
	"debug/buildinfo"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// With is the -tags value for a build with tag as well as the tags
// goflags (a GOFLAGS value) names: its last -tags=, as go reads it, then
// tag, each once.
func With(goflags, tag string) string {
	var tags []string
	for _, f := range strings.Fields(goflags) {
		if v, ok := strings.CutPrefix(strings.TrimLeft(f, "-"), "tags="); ok {
			tags = strings.Split(v, ",")
		}
	}
	tags = slices.DeleteFunc(tags, func(t string) bool { return t == "" || t == tag })
	return strings.Join(append(tags, tag), ",")
}

// Of is the -tags a Go binary was built with, as it records them (what
// `go version -m` prints).
func Of(binary string) (string, error) {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return "", err
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" {
			return s.Value, nil
		}
	}
	return "", nil
}

// ModuleRoot is go.mod's folder, from the working directory up (go test
// runs a package's tests in its folder; under -trimpath, which tests/run
// builds with, runtime.Caller names no folder).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// SeedPrebuilt copies the binaries named from tests/run's folder
// (VENOM_TEST_BIN_DIR) into dir before a go build -o dir/ of them: go
// build relinks only one whose build ID says it is out of date. A copy
// that fails is removed, for go build to make.
func SeedPrebuilt(dir string, names ...string) {
	prebuilt := os.Getenv("VENOM_TEST_BIN_DIR")
	if prebuilt == "" {
		return
	}
	for _, name := range names {
		if b, err := os.ReadFile(filepath.Join(prebuilt, name)); err == nil {
			if os.WriteFile(filepath.Join(dir, name), b, 0o755) != nil {
				os.Remove(filepath.Join(dir, name))
			}
		}
	}
}
