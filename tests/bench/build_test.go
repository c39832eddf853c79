package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The bench times binaries linked as install.sh links them: the build
// tags lib/static/env.sh puts in GOFLAGS, and venomtest's knobs.
func TestBuildBinaries_KeepGOFLAGSTags(t *testing.T) {
	goflags := os.Getenv("GOFLAGS")
	if !strings.Contains(goflags, "tags=") {
		t.Skip("GOFLAGS names no build tags (lib/static/env.sh not sourced, or no static archives)")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := buildBinaries(root, bin, "./git-venom-checkpoint"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "version", "-m", filepath.Join(bin, "git-venom-checkpoint")).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "-tags=" + withTags(goflags, "venomtest")
	if !strings.Contains(string(out), "\tbuild\t"+want+"\n") {
		t.Errorf("the bench's binary was built with\n%s\nwant %s", out, want)
	}
	for _, c := range []struct{ goflags, want string }{
		{"", "venomtest"},
		{"-tags=static,system_libgit2", "static,system_libgit2,venomtest"},
		{"-trimpath --tags=a,venomtest -mod=mod", "a,venomtest"},
		{"-tags=a -tags=b", "b,venomtest"},
	} {
		if got := withTags(c.goflags, "venomtest"); got != c.want {
			t.Errorf("withTags(%q) = %q, want %q", c.goflags, got, c.want)
		}
	}
}
