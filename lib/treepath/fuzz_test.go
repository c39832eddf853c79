package treepath

import (
	"errors"
	"path"
	"strings"
	"testing"
)

// FuzzVerify checks the properties a caller relies on: an accepted path is
// clean, relative and stays beneath the top, names no .git, and the rules
// are per component (a path passes when each of its parts does).
func FuzzVerify(f *testing.F) {
	for _, p := range tricky {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := Verify(p)
		linkErr := VerifyMode(p, ModeSymlink)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Path != p || e.Rule == "" {
				t.Fatalf("Verify(%q) = %v: not a rule error", p, err)
			}
			if linkErr == nil {
				t.Fatalf("%q is refused as a file but accepted as a link", p)
			}
			return
		}
		if p == "" || path.Clean(p) != p || path.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
			t.Fatalf("Verify accepted %q, which is not a clean relative path", p)
		}
		parts := strings.Split(p, "/")
		for _, c := range parts {
			if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") || strings.EqualFold(c, "git~1") {
				t.Fatalf("Verify accepted %q with component %q", p, c)
			}
			if VerifyName(c, ModeRegular) != nil {
				t.Fatalf("Verify accepted %q but not its component %q", p, c)
			}
		}
		if head, tail, ok := strings.Cut(p, "/"); ok && (Verify(head) != nil || Verify(tail) != nil) {
			t.Fatalf("Verify accepted %q but not %q and %q", p, head, tail)
		}
		if strings.HasPrefix(path.Join("top", p), "top/") == false {
			t.Fatalf("%q leaves the top", p)
		}
	})
}
