package harness

import "testing"

// TestInTreeRefusesUnsafePaths: an edit record names only a path a
// rollback may act on (treepath.Verify), not .git in any case or alias.
func TestInTreeRefusesUnsafePaths(t *testing.T) {
	const top = "/repo"
	for path, want := range map[string]string{
		"a/b.txt":                 "a/b.txt",
		"/repo/a/b.txt":           "a/b.txt",
		".gitignore":              ".gitignore",
		"../x":                    "",
		"/etc/passwd":             "",
		".git/config":             "",
		".GIT/config":             "",
		"git~1/config":            "",
		"sub/.Git/hooks/x":        "",
		".git::$INDEX_ALLOCATION": "",
		".g\u200cit/config":       "",
	} {
		got, ok := InTree(top, top, path)
		if ok != (want != "") || got != want {
			t.Errorf("InTree(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}
