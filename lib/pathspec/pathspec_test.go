package pathspec

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/gittest"
)

var files = []string{
	"a.txt", "a*b", "abc", "src/a.go", "src/b.go", "src/sub/c.go", "src/sub/d.txt",
	"srcx/e.go", "docs/x.md", "docs/y/z.md", "docs/y.md",
}

// repo makes a repository holding files, all tracked, and returns its top
// with links resolved (t.TempDir may sit behind one).
func repo(t *testing.T) string {
	top, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	gittest.Run(t, top, "", nil, "init", "-q")
	for _, f := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(top, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(top, f), []byte(f), 0o644))
	}
	gittest.Run(t, top, "", nil, "add", "-A")
	return top
}

// lsFiles is what git itself says the pathspecs match, from cwd, as
// repository paths; ok is false when git refuses them.
func lsFiles(t *testing.T, top, cwd string, args []string) ([]string, bool) {
	c := exec.Command("git", append([]string{"ls-files", "--full-name", "-z", "--"}, args...)...)
	c.Dir = filepath.Join(top, cwd)
	c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+top)
	out, err := c.Output()
	if err != nil {
		return nil, false
	}
	var got []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			got = append(got, p)
		}
	}
	return got, true
}

// TestMatchesGit: for each pathspec, from the top and from folders, the
// files matched are exactly those git ls-files lists, and a pathspec git
// refuses is refused.
func TestMatchesGit(t *testing.T) {
	top := repo(t)
	cases := []struct {
		cwd  string
		args []string
	}{
		{"", []string{"src"}},
		{"", []string{"src/"}},
		{"", []string{"src/a.go", "docs"}},
		{"", []string{"."}},
		{"", []string{"./docs/../src/sub"}},
		{"src", []string{"a.go"}},
		{"src", []string{"."}},
		{"src", []string{".."}},
		{"src", []string{"../docs/"}},
		{"src", []string{"../docs/y"}},
		{"src/sub", []string{"../../a.txt", "c.go"}},
		{"src", []string{":/docs"}},
		{"src", []string{":(top)docs/y.md"}},
		{"src", []string{":/"}},
		{"", []string{"*.go"}},
		{"src", []string{"*.go"}},
		{"", []string{"src/*.go"}},
		{"", []string{"sr?"}},
		{"", []string{"sr?/a.go"}},
		{"", []string{"a*b"}},
		{"", []string{":(literal)a*b"}},
		{"", []string{":(glob)*.go"}},
		{"", []string{":(glob)**/*.go"}},
		{"", []string{":(glob)src/*"}},
		{"src", []string{":(glob)*.go"}},
		{"", []string{"src", ":!src/sub"}},
		{"", []string{":^docs"}},
		{"", []string{":(exclude)*.md"}},
		{"src", []string{":!sub", "."}},
		{"", []string{"nothing/here"}},
		{"src", []string{"../.."}},
		{"src", []string{"../../x"}},
		{"", []string{".git/config"}},
		{"", []string{":(icase)A.TXT"}},
	}
	for _, c := range cases {
		name := c.cwd + ":" + strings.Join(c.args, " ")
		want, gitOK := lsFiles(t, top, c.cwd, c.args)
		set, err := Parse(top, filepath.Join(top, c.cwd), c.args)
		if !gitOK || err != nil {
			// .git paths: git matches nothing there (its files are not
			// tracked); git venom refuses them outright. icase: git
			// has it, git-venom refuses it by name.
			if c.args[0] == ".git/config" || strings.HasPrefix(c.args[0], ":(icase)") {
				assert.Error(t, err, name)
				continue
			}
			assert.Equal(t, gitOK, err == nil, "%s: git ok %v, ours %v", name, gitOK, err)
			continue
		}
		var got []string
		for _, f := range files {
			if set.Match(f) {
				got = append(got, f)
			}
		}
		assert.ElementsMatch(t, want, got, name)
		// What a plan and a log keep reads back to the same choice, and
		// git reads it the same way.
		again, err := ParseStored(set.Strings())
		require.NoError(t, err, name)
		for _, f := range files {
			assert.Equal(t, set.Match(f), again.Match(f), "%s: stored form, %s", name, f)
		}
		back, _ := lsFiles(t, top, "", set.Git())
		assert.ElementsMatch(t, want, back, "%s: as git pathspecs", name)
	}
}

// TestResolve: a harness's path, absolute or relative to its cwd, through
// a link to the tree or not; outside the tree or into .git is refused.
func TestResolve(t *testing.T) {
	top := repo(t)
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(top, link))
	for _, c := range []struct{ cwd, path, want string }{
		{top, "a.txt", "a.txt"},
		{top, filepath.Join(top, "src/a.go"), "src/a.go"},
		{filepath.Join(top, "src"), "../docs/x.md", "docs/x.md"},
		{link, "src/new.go", "src/new.go"},
		{top, filepath.Join(link, "src", "new", "f.go"), "src/new/f.go"},
		{filepath.Join(link, "src"), "sub/c.go", "src/sub/c.go"},
		{top, ".", ""},
		{top, "../x", "!"},
		{top, "/etc/passwd", "!"},
		{top, ".git/config", "!"},
		{top, "sub/.GIT/hooks/x", "!"},
		{top, "git~1/config", "!"},
	} {
		got, err := Resolve(top, c.cwd, c.path)
		if c.want == "!" {
			assert.Error(t, err, c.path)
			continue
		}
		require.NoError(t, err, c.path)
		assert.Equal(t, c.want, got, c.path)
	}
}

// A folder item loses its "/" unless a file is at that name; wildcard
// items keep theirs. Strings then agrees for "." in d and "d" at the top.
func TestCanonical(t *testing.T) {
	top := t.TempDir()
	inD, err := Parse(top, top+"/d", []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	atTop, err := Parse(top, top, []string{"d", ":(exclude)e/", "*/", ":(literal)l*/"})
	if err != nil {
		t.Fatal(err)
	}
	noFile := func(string) bool { return false }
	assert.Equal(t, []string{":(top)d/"}, inD.Strings())
	assert.Equal(t, []string{":(top)d"}, inD.Canonical(noFile).Strings())
	assert.Equal(t, []string{":(top)*/", ":(top)d", ":(top,exclude)e", ":(top,literal)l*"}, atTop.Canonical(noFile).Strings())
	isD := func(p string) bool { return p == "d" }
	assert.Equal(t, []string{":(top)d/"}, inD.Canonical(isD).Strings(), "a file at d: d/ and d differ")
}
