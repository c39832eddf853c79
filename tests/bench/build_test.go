package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-venom/git-venom/tests/buildtags"
)

// The bench times binaries linked as install.sh links them: the build
// tags lib/static/env.sh puts in GOFLAGS, and venomtest's knobs.
func TestBuildBinaries_KeepGOFLAGSTags(t *testing.T) {
	goflags := os.Getenv("GOFLAGS")
	if !strings.Contains(goflags, "tags=") {
		t.Skip("GOFLAGS names no build tags (lib/static/env.sh not sourced, or no static archives)")
	}
	root, err := buildtags.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	// tests/run's binary goes in first: go build relinks it only if stale.
	buildtags.SeedPrebuilt(bin, "git-venom-checkpoint")
	if err := buildBinaries(root, bin, "./git-venom-checkpoint"); err != nil {
		t.Fatal(err)
	}
	got, err := buildtags.Of(filepath.Join(bin, "git-venom-checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	if want := buildtags.With(goflags, "venomtest"); got != want {
		t.Errorf("the bench's binary was built with -tags=%s, want %s", got, want)
	}
}
