package tests

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRollback_Shapes: folders and files trade places, symlinks, modes,
// deep deletions and awkward names, all back to k1 exactly.
func TestRollback_Shapes(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("p", "file p\n")
	env.Write("f/x.txt", "in folder f\n")
	require.NoError(t, os.Symlink("README.md", env.Path("link")))
	env.Write("script.sh", "#!/bin/sh\n")
	require.NoError(t, os.Chmod(env.Path("script.sh"), 0o755))
	env.Write("--y", "dashes\n")
	env.Commit("shapes")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Remove("p")
	env.Write("p/q.txt", "p is a folder now\n")
	env.Remove("f")
	env.Write("f", "f is a file now\n")
	env.Remove("link")
	env.Write("link", "a file, not a link\n")
	require.NoError(t, os.Chmod(env.Path("script.sh"), 0o644))
	env.Write("deep/a/b/c.txt", "deep\n")
	env.Write("-x file", "leading dash and a space\n")
	env.Write("line\nbreak.txt", "newline\n")
	env.Write("sp ace/f.txt", "space\n")
	env.Write("--y", "changed\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)

	res := env.Rollback("--checkpoint=k1", "--restore=files")
	require.True(t, *res.Exact)
	require.Equal(t, env.CheckpointTree("a1", 1), env.RecipeTree())
	require.Equal(t, "file p\n", env.Read("p"))
	require.Equal(t, "in folder f\n", env.Read("f/x.txt"))
	target, err := os.Readlink(env.Path("link"))
	require.NoError(t, err)
	require.Equal(t, "README.md", target)
	fi, err := os.Stat(env.Path("script.sh"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
	for _, gone := range []string{"deep", "-x file", "line\nbreak.txt", "sp ace"} {
		_, err := os.Lstat(env.Path(gone))
		require.True(t, os.IsNotExist(err), "%q is still there", gone)
	}
	require.Equal(t, "dashes\n", env.Read("--y"))
	require.Equal(t, "", env.Git("status", "--porcelain"))

	// And forward again: the rollback of the rollback, to the safety checkpoint.
	env.Rollback("--checkpoint="+res.Safety, "--restore=files")
	require.Equal(t, env.CheckpointTreeOf("a1", res.Safety), env.RecipeTree())
	require.Equal(t, "p is a folder now\n", env.Read("p/q.txt"))
}

// TestRollback_UndoBringsBackAPersonsEdit: a rollback to the safety
// checkpoint gives back the tree byte for byte, with the overwritten edit.
func TestRollback_UndoBringsBackAPersonsEdit(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--json").OK(t) // in place: guarded
	env.Write("agent.txt", "agent\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	env.Write("README.md", "a person's careful edit\n")
	env.Write("notes/new.txt", "a person's new file\n")
	before := env.Snapshot()
	status := env.Git("status", "--porcelain")
	res := env.Rollback("--checkpoint=k1", "--restore=files", "--outside=overwrite")
	require.Equal(t, "hello\n", env.Read("README.md"))
	env.Rollback("--checkpoint="+res.Safety, "--restore=files", "--outside=overwrite")
	require.Equal(t, "a person's careful edit\n", env.Read("README.md"))
	require.Equal(t, "a person's new file\n", env.Read("notes/new.txt"))
	require.Equal(t, status, env.Git("status", "--porcelain"))
	after := env.Snapshot()
	require.Equal(t, before.Index, after.Index)
	require.Equal(t, before.Head, after.Head)
	require.Equal(t, before.Refs, after.Refs)
	require.Equal(t, contentsOf(t, env), contentsOf(t, env))
}

// contentsOf lists every working file with mode and content (no mtimes).
func contentsOf(t *testing.T, env *Env) string {
	var out []string
	_ = filepath.Walk(env.Dir, func(p string, fi os.FileInfo, err error) error {
		rel, _ := filepath.Rel(env.Dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		b, _ := os.ReadFile(p)
		out = append(out, rel+" "+fi.Mode().String()+" "+string(b))
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\x00")
}

// TestRollback_LeftReasons: each reason of docs/rollback.md#the-real-call and docs/checkpoints.md#what-a-capture-holds, docs/rollback.md#left,
// 8.33, and the paths are not touched.
func TestRollback_LeftReasons(t *testing.T) {
	t.Parallel()
	type tc struct {
		before func(env *Env) // before k1
		turn   func(env *Env) // during t1
		after  func(env *Env) // after t1, before the rollback
		args   []string
		path   string
		reason string
		detail string
	}
	cases := map[string]tc{
		"too_big": {
			turn: func(env *Env) {
				env.Git("config", "--global", "venom.maxFileBytes", "10")
				env.Write("big.bin", strings.Repeat("x", 100))
			},
			path: "big.bin", reason: "too_big",
		},
		"skip_worktree": {
			before: func(env *Env) { env.Write("README.md", "worktree version\n") },
			turn:   func(env *Env) { env.Git("update-index", "--skip-worktree", "README.md") },
			path:   "README.md", reason: "skip_worktree",
		},
		"gitlink": {
			before: func(env *Env) {
				nested(t, env, "sub", "one")
			},
			turn: func(env *Env) {
				env.Write("sub/f.txt", "two\n")
				env.run(env.Path("sub"), nil, "git", "commit", "-qam", "two")
			},
			path: "sub", reason: "gitlink", detail: "gitlink",
		},
		"ignored_in_the_way (folder)": {
			before: func(env *Env) {
				env.Write(".gitignore", "build/\n")
				env.Write("build", "a file named build\n")
			},
			turn: func(env *Env) {
				env.Remove("build")
				env.Write("build/out.o", "ignored output\n")
			},
			path: "build", reason: "ignored_in_the_way", detail: "build/out.o",
		},
		"ignored_in_the_way (parent)": {
			before: func(env *Env) { env.Write("a/b.txt", "in a\n") },
			turn: func(env *Env) {
				env.Remove("a")
				env.Write(".git/info/exclude", "/a\n")
				env.Write("a", "ignored file a\n")
			},
			path: "a/b.txt", reason: "ignored_in_the_way", detail: "a",
		},
		"outside, kept": {
			after: func(env *Env) { env.Write("README.md", "person\n") },
			args:  []string{"--outside=keep"},
			path:  "README.md", reason: "outside",
		},
		"outside, blocking a restore (8.33)": {
			before: func(env *Env) { env.Write("d/f.txt", "in d\n") },
			turn:   func(env *Env) { env.Remove("d") },
			after:  func(env *Env) { env.Write("d", "a person's file d\n") },
			args:   []string{"--outside=keep"},
			path:   "d/f.txt", reason: "outside", detail: "d",
		},
		"unreadable": {
			turn: func(env *Env) {
				env.Write("secret.txt", "x\n")
				require.NoError(t, os.Chmod(env.Path("secret.txt"), 0))
			},
			path: "secret.txt", reason: "unreadable",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if name == "unreadable" && os.Geteuid() == 0 {
				t.Skip("root reads anything")
			}
			env := NewEnv(t)
			if c.before != nil {
				c.before(env)
				env.Commit("before")
			}
			env.Venom("checkpoint", "--agent=a1", "--isolation=in_place", "--reason=turn_start", "--json").OK(t)
			if c.turn != nil {
				c.turn(env)
			}
			env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
			if c.after != nil {
				c.after(env)
			}
			args := append([]string{"--checkpoint=k1", "--restore=files"}, c.args...)
			if len(c.args) == 0 {
				args = append(args, "--outside=overwrite")
			}
			res := env.DryRun(args...)
			var found bool
			for _, l := range res.Repos[0].Left {
				if l.Path == c.path {
					found = true
					require.Equal(t, c.reason, l.Reason)
					switch c.detail {
					case "":
						require.Nil(t, l.Detail)
					case "gitlink":
						require.NotNil(t, l.Detail)
						require.Equal(t, env.Git("rev-parse", "refs/venom/checkpoints/a1/1:sub"), *l.Detail)
					default:
						require.NotNil(t, l.Detail)
						require.Equal(t, c.detail, *l.Detail)
					}
				}
			}
			require.True(t, found, "%s not in left: %+v", c.path, res.Repos[0].Left)
			for _, f := range res.Repos[0].Files {
				require.NotEqual(t, c.path, f.Path)
			}
			stat := statOf(env, c.path)
			env.Rollback(args...)
			require.Equal(t, stat, statOf(env, c.path), "a path in left was touched")
		})
	}
}

// nested makes a nested repository at rel with one commit.
func nested(t *testing.T, env *Env, rel, content string) {
	t.Helper()
	dir := env.Path(rel)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	env.run(dir, nil, "git", "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content+"\n"), 0o644))
	env.run(dir, nil, "git", "add", "f.txt")
	r := env.run(dir, nil, "git", "commit", "-qm", content)
	require.Equal(t, 0, r.Code, r.Stderr)
}

// statOf describes a path and everything under it: modes, sizes, mtimes,
// contents, link targets.
func statOf(env *Env, rel string) string {
	var out []string
	_ = filepath.Walk(env.Path(rel), func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			out = append(out, "missing")
			return nil
		}
		if fi.IsDir() && fi.Name() == ".git" {
			return filepath.SkipDir // a nested repository's own git runs there
		}
		b, _ := os.ReadFile(p)
		out = append(out, p+" "+fi.Mode().String()+" "+fi.ModTime().String()+" "+string(b))
		return nil
	})
	return strings.Join(out, "\n")
}

// TestRollback_IgnoredFilesUntouched: invariant 3, a rollback never touches
// a file that isn't in its plan.
func TestRollback_IgnoredFilesUntouched(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write(".gitignore", "*.log\nbuild/\n")
	env.Write("keep.txt", "unchanged\n")
	env.Commit("base")
	env.Write("old.log", "ignored before\n")
	env.Venom("checkpoint", "--agent=a1", "--isolation=worktree", "--reason=turn_start", "--json").OK(t)
	env.Write("new.log", "ignored, made in the turn\n")
	env.Write("build/x/y.o", "ignored build output\n")
	env.Write("src/new.txt", "new\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end", "--json").OK(t)
	var before []string
	for _, p := range []string{"old.log", "new.log", "build", "keep.txt", "README.md"} {
		before = append(before, statOf(env, p))
	}
	res := env.Rollback("--checkpoint=k1", "--restore=files")
	require.Equal(t, map[string]string{"src/new.txt": "turn"}, res.Classes())
	var after []string
	for _, p := range []string{"old.log", "new.log", "build", "keep.txt", "README.md"} {
		after = append(after, statOf(env, p))
	}
	require.Equal(t, before, after)
	require.NotEqual(t, 0, env.GitRaw("cat-file", "-e", "refs/venom/checkpoints/a1/3:new.log").Code,
		"the safety checkpoint captured an ignored file")
}
