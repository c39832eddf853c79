package treepath

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// tricky are paths near each of git's rules, on both sides of them.
var tricky = []string{
	"a", "a/b", "a/b/c", ".a", "a.", "...", "..a", "a..", ".gitignore", ".github/x", "x/.gitkeep",
	"", "/a", "a/", "a//b", "./a", "a/.", "a/./b", "..", "../x", "a/..", "a/../b",
	"zz/../../outside/victim", "zz/../.git/config",
	".git", ".GIT", ".Git/config", "a/.git", "a/.git/b", ".gitx", "x.git",
	"git~1", "GIT~1/x", "a/git~1", "git~2", "git~10", "git~1x", "git~",
	".git.", ".git ", ".git. .", ".git./x", ".git x", ".git::$INDEX_ALLOCATION", ".git:x", "git~1::$DATA",
	"a\\.git", "a\\.git\\b", "\\.git", "a\\git~1", "a\\b",
	".g\u200cit", "\u200c.git", ".git\u200d", ".gi\ufefft/x", ".G\u206fIT", ".g\u200bit",
	".git\xff", ".git\xef\xbf\xbf", ".git\xef\xbf\xbd", ".gi\xc0t", ".\xe2\x80",
	".gitmodules", ".GITMODULES", "a/.gitmodules", ".gitmodules ", ".gitmodules.", ".gitmodules:x",
	".gitmodules/x", "gitmod~1", "GITMOD~4", "gitmod~5", "gi7eba~1", "gi7eba~12", "gi7eb~1", "gi7eba~0",
	".gitmodulesx", ".g\u200citmodules", "a\\.gitmodules", "a\\gitmod~1",
	"a b", "a:b", "\xff\xfe", "é/ü",
}

// gitVerdict asks git whether it would put path in an index with mode,
// with core.protectNTFS and core.protectHFS on.
func gitVerdict(t *testing.T, dir string, mode uint32, path string) bool {
	t.Helper()
	cmd := exec.Command("git", "-c", "core.protectNTFS=true", "-c", "core.protectHFS=true",
		"update-index", "--add", "--cacheinfo", fmt.Sprintf("%o,%s,%s", mode, emptyBlob, path))
	cmd.Dir = dir
	// A fresh index each time: paths must not clash with earlier ones.
	_ = os.Remove(dir + "/scratch-index")
	cmd.Env = append(cmd.Environ(), "GIT_INDEX_FILE="+dir+"/scratch-index")
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "nvalid path") {
		t.Fatalf("git update-index %q: %v\n%s", path, err, out)
	}
	return err == nil
}

const emptyBlob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"hash-object", "-w", "--stdin"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestVerifyAgreesWithGit(t *testing.T) {
	dir := gitRepo(t)
	for _, mode := range []uint32{ModeRegular, ModeSymlink} {
		for _, p := range tricky {
			if p == "" {
				continue // git's command line cannot say it; see TestVerifyRules
			}
			want := gitVerdict(t, dir, mode, p)
			if got := VerifyMode(p, mode) == nil; got != want {
				t.Errorf("VerifyMode(%q, %o) accepts=%v, git accepts=%v (%v)", p, mode, got, want, VerifyMode(p, mode))
			}
		}
	}
}

// TestVerifyAgreesWithGitRandom builds paths from the pieces the rules look
// at and compares with git; VENOM_TEST_SEED-free: the seed is fixed so a
// failure repeats.
func TestVerifyAgreesWithGitRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git a few hundred times")
	}
	pieces := []string{".", "/", "git", "GiT", "~1", "~4", " ", "\\", ":", "modules", "gi7eba", "gitmod",
		"a", "\u200c", "\ufeff", "\xff", "\xef\xbf\xbf", "$DATA", "~"}
	rng := rand.New(rand.NewSource(12))
	dir := gitRepo(t)
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for n := 1 + rng.Intn(5); n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
		}
		p := b.String()
		mode := uint32(ModeRegular)
		if i%3 == 0 {
			mode = ModeSymlink
		}
		if want, got := gitVerdict(t, dir, mode, p), VerifyMode(p, mode) == nil; got != want {
			t.Errorf("VerifyMode(%q, %o) accepts=%v, git accepts=%v", p, mode, got, want)
		}
	}
}

func TestVerifyRules(t *testing.T) {
	for p, rule := range map[string]Rule{
		"":                        RuleEmpty,
		"a\x00b":                  RuleNUL,
		"/a":                      RuleSlash,
		"a//b":                    RuleSlash,
		"a/":                      RuleSlash,
		"a/./b":                   RuleDot,
		"zz/../../outside/victim": RuleDotDot,
		"zz/../.git/config":       RuleDotDot,
		".GIT/config":             RuleDotGit,
		"git~1/config":            RuleNTFSDotGit,
		".git::$INDEX_ALLOCATION": RuleNTFSDotGit,
		".g\u200cit/hooks/x":      RuleHFSDotGit,
		"a\\.git":                 RuleNTFSDotGit,
	} {
		var e *Error
		if err := Verify(p); !errors.As(err, &e) || e.Rule != rule || e.Path != p {
			t.Errorf("Verify(%q) = %v, want rule %s", p, err, rule)
		}
	}
	var e *Error
	if err := VerifyMode(".gitmodules", ModeSymlink); !errors.As(err, &e) || e.Rule != RuleGitmodules {
		t.Errorf("a .gitmodules link: %v", err)
	}
	if err := VerifyName("a/b", ModeRegular); !errors.As(err, &e) || e.Rule != RuleNameHasPath {
		t.Errorf("VerifyName(a/b): %v", err)
	}
	// fsck's badFilemode: only the modes git writes.
	for _, mode := range []uint32{0, 0o100664, 0o100600, 0o644, 0o120777, 0o040755, 0o170000} {
		if err := VerifyName("f", mode); !errors.As(err, &e) || e.Rule != RuleMode {
			t.Errorf("VerifyName(f, %o) = %v, want rule mode", mode, err)
		}
	}
	for _, mode := range []uint32{0o100644, 0o100755, 0o120000, 0o040000, 0o160000} {
		if err := VerifyName("f", mode); err != nil {
			t.Errorf("VerifyName(f, %o) = %v", mode, err)
		}
	}
}
