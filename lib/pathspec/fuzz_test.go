package pathspec

import (
	"strings"
	"testing"

	"github.com/git-venom/git-venom/lib/treepath"
)

// FuzzParse checks what callers rely on for any argument and any folder
// of the tree: an accepted pathspec's pattern is repository-relative and
// clean (no "..", ".", empty or .git component, no leading "/"), Resolve
// gives a path treepath.Verify accepts (or the top), and the stored form
// reads back to the same items.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a.txt", "src/", "../x", "..", ".", ":/", ":/docs", ":(top)a", ":(glob)**/*.go", ":(literal)a*b",
		":!x", ":^x", ":/!x", ":(exclude,glob)*.md", ":(icase)x", ":(", "a//b/./c/..", "/repo/a", "/etc/passwd",
		".git/config", "sub/.GIT/x", "git~1/x", "b64:YS50eHQ=", "b64:!!", "a\x00b", "caf\xe9", "",
	} {
		f.Add(s, "sub/dir")
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, arg, cwd string) {
		const top = "/repo"
		if strings.Contains(cwd, "..") {
			return // a folder of the tree, as a process's cwd is
		}
		dir := top + "/" + cwd
		set, err := Parse(top, dir, []string{arg})
		if err == nil {
			p := strings.TrimSuffix(set.Items[0].Pattern, "/")
			if strings.HasPrefix(p, "/") || (p != "" && treepath.Verify(p) != nil) {
				t.Fatalf("Parse(%q) from %q = %q", arg, cwd, set.Items[0].Pattern)
			}
			again, err := ParseStored(set.Strings())
			if err != nil || len(again.Items) != 1 || again.Items[0] != set.Items[0] {
				t.Fatalf("stored %q reads back as %+v, %v; want %+v", set.Strings(), again.Items, err, set.Items[0])
			}
		}
		rel, err := Resolve(top, dir, arg)
		if err == nil && rel != "" && treepath.Verify(rel) != nil {
			t.Fatalf("Resolve(%q) from %q = %q, which git would refuse", arg, cwd, rel)
		}
	})
}
