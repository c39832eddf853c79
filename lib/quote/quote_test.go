package quote

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestC(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain label", "plain label"},
		{"src/a.go", "src/a.go"},
		{"café", "café"},
		{"修正 the 测试", "修正 the 测试"},
		{"emoji 🙂", "emoji 🙂"},
		{"U+FFFD as written: \uFFFD", "U+FFFD as written: \uFFFD"},
		{"tab\there", `"tab\there"`},
		{"two\nlines", `"two\nlines"`},
		{"forged\nk9  turn_end  t9", `"forged\nk9  turn_end  t9"`},
		{"cr\rback", `"cr\rback"`},
		{"bs\bx", `"bs\bx"`},
		{"bell\a vt\v ff\f", `"bell\a vt\v ff\f"`},
		{"\033[2J", `"\033[2J"`},
		{"\033]0;pwned\007", `"\033]0;pwned\a"`},
		{"nul\x00", `"nul\000"`},
		{"del\x7f", `"del\177"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash`, `"back\\slash"`},
		{"C1 CSI \u009b2J", `"C1 CSI \302\2332J"`},
		{"C1 NEL \u0085", `"C1 NEL \302\205"`},
		{"bidi \u202eevil", `"bidi \342\200\256evil"`},
		{"zero\u200bwidth", `"zero\342\200\213width"`},
		{"line\u2028sep", `"line\342\200\250sep"`},
		{"invalid \xff\xfe", `"invalid \377\376"`},
		{"cut é \xc3", `"cut é \303"`},
		{"overlong \xc0\xaf", `"overlong \300\257"`},
	} {
		got := C(tc.in)
		assert.Equal(t, tc.want, got, "C(%q)", tc.in)
		assert.Equal(t, tc.want != tc.in, Needs(tc.in), "Needs(%q)", tc.in)
		back, err := Unquote(got)
		require.NoError(t, err, got)
		assert.Equal(t, tc.in, back, "Unquote(C(%q))", tc.in)
	}
}

func TestAlwaysAndText(t *testing.T) {
	assert.Equal(t, `"plain"`, Always("plain"))
	assert.Equal(t, `"a\033[2Jb"`, Always("a\033[2Jb"))
	assert.Equal(t, `cannot read /x/"q"\y`, Text(`cannot read /x/"q"\y`), "Text keeps quotes and backslashes")
	assert.Equal(t, `cannot read /x/\033]0;t\a: no`, Text("cannot read /x/\033]0;t\a: no"))
	assert.Equal(t, `two\nlines \302\233`, Text("two\nlines \u009b"))
}

func TestUnquoteRefuses(t *testing.T) {
	for _, s := range []string{`"`, `"abc`, `"a"b"`, `"\`, `"\x"`, `"\400"`, `"\12"`, `"\0a1"`} {
		_, err := Unquote(s)
		assert.ErrorIs(t, err, ErrSyntax, s)
	}
	got, err := Unquote("not quoted \\n")
	require.NoError(t, err)
	assert.Equal(t, "not quoted \\n", got)
}

// TestC_AsGit checks C against git's own quoting of the same bytes as a
// path: git ls-files with core.quotePath=false quotes and escapes exactly
// the ASCII controls, " and \ as C does (non-ASCII is where C chooses to
// escape more: see the package comment).
func TestC_AsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	names := []string{"plain", "tab\tx", "nl\nx", "cr\rx", "esc\033[2Jx", "bel\ax", "del\x7fx", `q"x`, `b\x`, "vt\vff\fbs\bx", "é"}
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "core.quotePath=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.Output()
		require.NoError(t, err)
		return string(out)
	}
	run("init", "-q")
	var want []string
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
		want = append(want, C(n))
	}
	run("add", "-A")
	got := strings.Split(strings.TrimSuffix(run("ls-files"), "\n"), "\n")
	assert.ElementsMatch(t, want, got)
}

// FuzzQuote: C's output never holds a byte a terminal obeys, is valid
// UTF-8, is the input itself when nothing needed quoting, and unquotes
// back to the input when it was quoted; Text's output holds no control
// either.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "\033]0;pwned\007", "\033[2J", "a\nb", "\r", "\b", "\u009b", "\xff", "é", "修正", `"\`, "\u202e", "\xc2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := C(s)
		safeOutput(t, q)
		safeOutput(t, Text(s))
		safeOutput(t, Always(s))
		if !Needs(s) {
			if q != s {
				t.Fatalf("C(%q) = %q, want the input: nothing needed quoting", s, q)
			}
			return
		}
		back, err := Unquote(q)
		if err != nil || back != s {
			t.Fatalf("Unquote(C(%q)) = %q, %v", s, back, err)
		}
		if back, err := Unquote(Always(s)); err != nil || back != s {
			t.Fatalf("Unquote(Always(%q)) = %q, %v", s, back, err)
		}
	})
}

func safeOutput(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output %q is not valid UTF-8", out)
	}
	for _, r := range out {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Fatalf("output %q holds control %U", out, r)
		}
		if r == 0x202e || r == 0x200b {
			t.Fatalf("output %q holds format character %U", out, r)
		}
	}
}
