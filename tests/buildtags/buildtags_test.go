package buildtags

import "testing"

func TestWith(t *testing.T) {
	for _, c := range []struct{ goflags, want string }{
		{"", "venomtest"},
		{"-tags=static,system_libgit2", "static,system_libgit2,venomtest"},
		{"-trimpath --tags=a,venomtest -mod=mod", "a,venomtest"},
		{"-tags=a -tags=b", "b,venomtest"},
		{"-tags=,a,,", "a,venomtest"},
	} {
		if got := With(c.goflags, "venomtest"); got != c.want {
			t.Errorf("With(%q) = %q, want %q", c.goflags, got, c.want)
		}
	}
}
