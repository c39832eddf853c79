package treepath

import "testing"

func TestAbs_JoinsBeneathTheTop(t *testing.T) {
	for _, c := range []struct{ top, rel, want string }{
		{"/w", "a/b", "/w/a/b"},
		{"/w/", "dir/", "/w/dir"},
		{"/w", "", "/w"},
	} {
		if got := Abs(c.top, c.rel); got != c.want {
			t.Errorf("Abs(%q, %q) = %q, want %q", c.top, c.rel, got, c.want)
		}
	}
}

func TestParent_OfARepositoryPath(t *testing.T) {
	for rel, want := range map[string]string{"a/b/c": "a/b", "a": "", "": "", "a b/c\\d": "a b"} {
		if got := Parent(rel); got != want {
			t.Errorf("Parent(%q) = %q, want %q", rel, got, want)
		}
	}
}
