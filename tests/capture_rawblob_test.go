package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A capture stores a file's bytes without asking git hash-object when no
// attribute could convert the file and it holds no CR (lib/capture/
// store/rawblob.go). These tests check, through the binaries, that every way git
// converts a file on its way in still gives the recipe's tree, and that git
// is spared exactly when nothing converts.

// rawCase is a repository state (committed before the first capture) and
// the changes one capture then takes.
type rawCase struct {
	name   string
	setup  func(env *Env)
	change func(env *Env)
}

// upperFilter defines the clean filter `upper`, which upper-cases.
func upperFilter(env *Env) {
	env.Git("config", "filter.upper.clean", "tr a-z A-Z")
	env.Git("config", "filter.upper.smudge", "cat")
}

// utf16 is s in UTF-16LE with its byte order mark, ASCII only.
func utf16(s string) string {
	b := []byte{0xff, 0xfe}
	for _, c := range []byte(s) {
		b = append(b, c, 0)
	}
	return string(b)
}

// runRawCase captures the committed state, then the case's changes, and
// checks the second capture equals the recipe's tree.
func runRawCase(t *testing.T, c rawCase) {
	env := NewEnv(t)
	if c.setup != nil {
		c.setup(env)
		env.Commit("setup")
	}
	env.Take(t, "--agent=a1")
	c.change(env)
	want := env.RecipeTree()
	snap := env.Snapshot()
	res := env.Take(t, "--agent=a1")
	env.AssertUntouched(t, snap)
	require.Equal(t, "k2", *res.Checkpoint)
	require.Equal(t, want, env.CheckpointTree("a1", 2), "the capture differs from the recipe")
}

func TestCapture_RawBlobsEqualTheRecipeWhateverConverts(t *testing.T) {
	t.Parallel()
	lfFiles := func(env *Env) {
		env.Write("a.txt", "a changed\n")
		env.Write("d/new.txt", "new\n")
	}
	cases := []rawCase{
		{name: "no attributes",
			setup:  func(env *Env) { env.Write("a.txt", "a\n") },
			change: lfFiles},
		{name: "text=auto with CRLF and LF files",
			setup: func(env *Env) {
				env.Write(".gitattributes", "* text=auto\n")
				env.Write("a.txt", "a\n")
				env.Write("crlf.txt", "one\r\ntwo\r\n")
			},
			change: func(env *Env) {
				lfFiles(env)
				env.Write("crlf.txt", "one\r\ntwo\r\nthree\r\n")
				env.Write("new-crlf.txt", "x\r\ny\r\n")
				env.Write("lone-cr.txt", "x\ry\n")
			}},
		{name: "eol=crlf",
			setup: func(env *Env) {
				env.Write(".gitattributes", "*.txt text eol=crlf\n")
				env.Write("a.txt", "a\r\n")
			},
			change: func(env *Env) {
				env.Write("a.txt", "a\r\nchanged\r\n")
				env.Write("lf.txt", "only lf\n")
				env.Write("mixed.txt", "one\r\ntwo\n")
			}},
		{name: "ident",
			setup: func(env *Env) {
				env.Write(".gitattributes", "*.id ident\n")
				env.Write("c.id", "$Id$\n")
			},
			change: func(env *Env) {
				env.Write("c.id", "$Id: 0123456789abcdef $\nmore\n")
				env.Write("d.id", "$Id$ new\n")
				env.Write("plain.txt", "$Id: not expanded here $\n")
			}},
		{name: "a clean filter",
			setup: func(env *Env) {
				upperFilter(env)
				env.Write(".gitattributes", "*.up filter=upper\n")
				env.Write("x.up", "lower\n")
			},
			change: func(env *Env) {
				lfFiles(env)
				env.Write("x.up", "still lower\n")
				env.Write("y.up", "new lower\n")
			}},
		{name: "working-tree-encoding",
			setup: func(env *Env) {
				env.Write(".gitattributes", "*.u16 working-tree-encoding=UTF-16\n")
				env.Write("w.u16", utf16("wide\n"))
			},
			change: func(env *Env) {
				env.Write("w.u16", utf16("wide changed\n"))
				env.Write("v.u16", utf16("new wide\n"))
			}},
		{name: "a macro",
			setup: func(env *Env) {
				upperFilter(env)
				env.Write(".gitattributes", "[attr]mine filter=upper\n")
				env.Write("sub/.gitattributes", "*.m mine\n")
				env.Write("sub/x.m", "lower\n")
			},
			change: func(env *Env) {
				env.Write("sub/x.m", "still lower\n")
				env.Write("sub/y.m", "new lower\n")
			}},
		{name: "attributes added in the same capture",
			setup: upperFilter,
			change: func(env *Env) {
				env.Write("sub/.gitattributes", "*.txt filter=upper\n")
				env.Write("sub/x.txt", "lower\n")
				env.Write("elsewhere.txt", "lower\n")
			}},
		{name: "a folder's attributes apply below it only",
			setup: func(env *Env) {
				upperFilter(env)
				env.Write("sub/.gitattributes", "*.txt filter=upper\n")
				env.Write("sub/deep/x.txt", "lower\n")
				env.Write("other/x.txt", "lower\n")
			},
			change: func(env *Env) {
				env.Write("sub/deep/x.txt", "still lower\n")
				env.Write("other/x.txt", "still lower\n")
				env.Write("x.txt", "lower\n")
			}},
		{name: "attributes that are a link, which git ignores",
			setup: func(env *Env) {
				upperFilter(env)
				env.Write("target", "*.txt filter=upper\n")
				require.NoError(env.t, os.MkdirAll(env.Path("sub"), 0o755))
				require.NoError(env.t, os.Symlink("../target", env.Path("sub/.gitattributes")))
				env.Write("sub/x.txt", "lower\n")
			},
			change: func(env *Env) { env.Write("sub/x.txt", "still lower\n") }},
		{name: "info/attributes",
			setup: func(env *Env) {
				upperFilter(env)
				env.Write(".git/info/attributes", "*.txt filter=upper\n")
				env.Write("a.txt", "lower\n")
			},
			change: lfFiles},
		{name: "core.attributesFile in the global config",
			setup: func(env *Env) {
				attrs := filepath.Join(env.Home, "attributes")
				require.NoError(env.t, os.WriteFile(attrs, []byte("*.txt filter=upper\n"), 0o644))
				env.SetGlobal("core.attributesFile", attrs)
				env.SetGlobal("filter.upper.clean", "tr a-z A-Z")
				env.Write("a.txt", "lower\n")
			},
			change: lfFiles},
		{name: "core.attributesFile in a file the global config includes",
			setup: func(env *Env) {
				require.NoError(env.t, os.WriteFile(filepath.Join(env.Home, "attrs"), []byte("*.txt filter=upper\n"), 0o644))
				require.NoError(env.t, os.WriteFile(filepath.Join(env.Home, "more.gitconfig"),
					[]byte("[core]\n\tattributesFile = ~/attrs\n"), 0o644))
				env.SetGlobal("include.path", "~/more.gitconfig")
				upperFilter(env)
				env.Write("a.txt", "lower\n")
			},
			change: lfFiles},
		{name: "the XDG attributes file",
			setup: func(env *Env) {
				env.Write("../home/.config/git/attributes", "*.txt filter=upper\n")
				upperFilter(env)
				env.Write("a.txt", "lower\n")
			},
			change: lfFiles},
		{name: "core.autocrlf=true",
			setup: func(env *Env) {
				env.Git("config", "core.autocrlf", "true")
				env.Write("a.txt", "a\r\n")
			},
			change: func(env *Env) {
				env.Write("a.txt", "a\r\nchanged\r\n")
				env.Write("new.txt", "x\r\ny\r\n")
				env.Write("lf.txt", "only lf\n")
			}},
	}
	if _, err := exec.LookPath("git-lfs"); err == nil {
		cases = append(cases, rawCase{name: "Git LFS",
			setup: func(env *Env) {
				env.Git("lfs", "install", "--local")
				env.Git("lfs", "track", "*.bin")
				env.Write("model.bin", strings.Repeat("weights ", 100))
			},
			change: func(env *Env) {
				lfFiles(env)
				env.Write("model.bin", strings.Repeat("changed ", 100))
				env.Write("new.bin", "a new large file\n")
			}})
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runRawCase(t, c)
		})
	}
}

// TestCapture_HashObjectOnlyWhenSomethingConverts arms a fault at the one
// place a capture runs git hash-object: captures of files nothing converts
// succeed (git is not run), a file with a CR where neither a line-ending
// attribute nor core.autocrlf applies among them, and one of a file that
// something may convert fails there.
func TestCapture_HashObjectOnlyWhenSomethingConverts(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	upperFilter(env)
	env.Write("sub/.gitattributes", "*.txt filter=upper\n")
	env.Write("sub/x.txt", "lower\n")
	env.Write("a.txt", "a\n")
	env.Commit("base")
	env.Take(t, "--agent=a1")
	armed := []string{"VENOM_TEST_FAIL_AT=capture-hash-object"}
	n := 1
	spared := func(what string) {
		t.Helper()
		want := env.RecipeTree()
		env.VenomIn(env.Dir, armed, "checkpoint", "--agent=a1", "--json").OK(t)
		n++
		require.Equal(t, want, env.CheckpointTree("a1", n), "after %s", what)
	}
	asked := func(what string) {
		t.Helper()
		env.VenomIn(env.Dir, armed, "checkpoint", "--agent=a1", "--json").Fails(t, 1, "failed.checkpoint_git")
		// And without the fault, the recipe's tree.
		want := env.RecipeTree()
		env.Take(t, "--agent=a1")
		n++
		require.Equal(t, want, env.CheckpointTree("a1", n), "after %s", what)
	}
	env.Write("a.txt", "a changed\n")
	env.Write("new/file.txt", "new\n")
	spared("plain edits")
	// Every capture takes what differs from the user's index, so each
	// file that needs git is put back before the next step.
	env.Write("sub/x.txt", "filtered\n")
	asked("an edit under a filter")
	env.Write("sub/x.txt", "lower\n")
	// A CR is converted only under a line-ending attribute or
	// core.autocrlf (convert.c: CRLF_BINARY otherwise).
	env.Write("a.txt", "crlf\r\n")
	spared("an edit with a CR, nothing to convert it")
	env.Write("a.txt", "crlf again\r\n")
	env.Git("config", "core.autocrlf", "true")
	asked("an edit with a CR under core.autocrlf")
	env.Git("config", "--unset", "core.autocrlf")
	env.Write("a.txt", "a changed again\n")
	env.Write("other/y.txt", "beside the filtered folder\n")
	spared("an edit beside the filtered folder")
	env.Write(".gitattributes", "[attr]mine text\n")
	asked("a macro defined at the top")
}
