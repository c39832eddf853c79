package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hook install and uninstall never write outside the
// repository (or the user scope named), and refuse a link that leads
// elsewhere.

// installedClaude and installedCodex are settings that already hold
// git-venom's hooks besides the user's own: install would rewrite them
// (more events) and uninstall too (fewer), so a command that went through
// a link would change them.
const installedClaude = `{
  "model": "sonnet",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "git venom-checkpoint hook claude-code",
            "timeout": 40
          }
        ]
      }
    ]
  }
}
`

const installedCodexHooks = `{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "git venom-checkpoint hook codex",
            "timeout": 40
          }
        ]
      }
    ]
  }
}
`

const installedCodexConfig = `notify = ["git", "venom-checkpoint", "hook", "codex"]
model = "gpt-5.5"
`

// commitLink commits a symbolic link at rel, as a cloned or unpacked
// repository brings it.
func commitLink(t *testing.T, env *Env, rel, target string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(env.Path(rel)), 0o755))
	require.NoError(t, os.Symlink(target, env.Path(rel)))
	env.Commit("add " + rel)
}

func TestSecurity_HookInstallRefusesLinksOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		harness string
		link    string // the committed link, relative to the top
		target  func(outside string) string
		files   map[string]string // in the outside folder
		args    [][]string        // each refused, install and uninstall
	}{
		{
			name: "claude folder link", harness: "claude-code", link: ".claude",
			target: func(string) string { return "../outside" }, // relative, climbing out
			files:  map[string]string{"settings.local.json": installedClaude},
			args:   [][]string{{"install"}, {"install", "--dry-run"}, {"uninstall"}},
		},
		{
			name: "claude settings file link", harness: "claude-code", link: ".claude/settings.local.json",
			target: func(o string) string { return filepath.Join(o, "victim.json") }, // absolute
			files:  map[string]string{"victim.json": installedClaude},
			args:   [][]string{{"install"}, {"uninstall"}},
		},
		{
			name: "claude project settings link", harness: "claude-code", link: ".claude/settings.json",
			target: func(string) string { return "../../outside/victim.json" },
			files:  map[string]string{"victim.json": installedClaude},
			args:   [][]string{{"install", "--scope=project"}, {"uninstall", "--scope=project"}},
		},
		{
			name: "codex folder link", harness: "codex", link: ".codex",
			target: func(o string) string { return o },
			files:  map[string]string{"hooks.json": installedCodexHooks, "config.toml": installedCodexConfig},
			args:   [][]string{{"install", "--via=hooks"}, {"uninstall"}},
		},
		{
			name: "codex link through an inner folder", harness: "codex", link: "sub/up",
			target: func(string) string { return "../.." }, // sub/up is the repository's parent
			files:  map[string]string{"hooks.json": installedCodexHooks, "config.toml": installedCodexConfig},
			args:   [][]string{{"install", "--via=hooks"}, {"uninstall"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			outside := env.Outside(tc.files)
			commitLink(t, env, tc.link, tc.target(outside))
			refusedAt := env.Path(tc.link)
			if tc.link == "sub/up" {
				// .codex itself is a plain link into the link that leads out.
				commitLink(t, env, ".codex", "sub/up/outside")
				refusedAt = env.Path(".codex")
			}
			before := treeHash(outside)
			files := env.Snapshot().Files
			for _, args := range tc.args {
				cmd := append([]string{"hook"}, args[0], tc.harness)
				cmd = append(cmd, args[1:]...)
				r := env.Venom("checkpoint", append(cmd, "--json")...).Fails(t, 1, "failed.state")
				data := r.Map(t)["error"].(map[string]any)["data"].(map[string]any)
				assert.Equal(t, refusedAt, data["refused"], "%v names the link", args)
				h := env.Venom("checkpoint", cmd...).Fails(t, 1, "failed.state")
				assert.Contains(t, h.Stderr, "refused "+refusedAt+":", "%v", args)
				assert.Empty(t, h.Stdout)
				assert.Equal(t, before, treeHash(outside), "%v changed the folder outside the repository", args)
				assert.Equal(t, files, env.Snapshot().Files, "%v changed the repository's files", args)
			}
			for name, content := range tc.files {
				b, err := os.ReadFile(filepath.Join(outside, name))
				require.NoError(t, err)
				assert.Equal(t, content, string(b))
			}
		})
	}
}

// A FIFO where the settings are is refused at once, not waited on.
func TestSecurity_HookInstallRefusesFIFO(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	require.NoError(t, os.MkdirAll(env.Path(".claude"), 0o755))
	require.NoError(t, syscall.Mkfifo(env.Path(".claude/settings.local.json"), 0o644))
	require.NoError(t, os.MkdirAll(env.Path(".codex"), 0o755))
	require.NoError(t, syscall.Mkfifo(env.Path(".codex/hooks.json"), 0o644))
	for _, args := range [][]string{
		{"install", "claude-code"}, {"uninstall", "claude-code"}, {"install", "codex", "--via=hooks"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		c := exec.CommandContext(ctx, "git", append([]string{"venom-checkpoint", "hook"}, args...)...)
		c.Dir, c.Env = env.Dir, env.Environ()
		c.WaitDelay = time.Second // git's child holds the output open when only git is killed
		out, err := c.CombinedOutput()
		blocked := ctx.Err()
		cancel()
		require.NoError(t, blocked, "%v blocked on the FIFO", args)
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v: %s", args, out)
		assert.Equal(t, 1, ee.ExitCode(), "%s", out)
		assert.Contains(t, string(out), "failed.state", "%v", args)
	}
	fi, err := os.Lstat(env.Path(".claude/settings.local.json"))
	require.NoError(t, err)
	assert.True(t, fi.Mode()&os.ModeNamedPipe != 0, "the FIFO is left as it was")
}

// doctor reads every harness's settings and plugin files, in the
// repository and in HOME: a FIFO planted at any of them is passed over,
// not opened for reading and waited on for ever.
func TestSecurity_DoctorDoesNotWaitOnFIFO(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	var fifos []string
	for _, dir := range []string{env.Dir, env.Home} {
		for _, name := range []string{
			".claude/settings.json", ".claude/settings.local.json", ".gemini/settings.json",
			".codex/hooks.json", ".codex/config.toml", ".qwen/settings.json",
			".opencode/plugins/git-venom.js", ".config/opencode/plugins/git-venom.js",
		} {
			p := filepath.Join(dir, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
			fifos = append(fifos, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "git", "venom-checkpoint", "doctor")
	c.Dir, c.Env = env.Dir, env.Environ()
	c.Cancel = func() error { return c.Process.Kill() } // blocked in open(2), it ignores SIGTERM's handler
	c.WaitDelay = time.Second
	out, _ := c.CombinedOutput()
	require.NoError(t, ctx.Err(), "doctor blocked on a FIFO: %s", out)
	for _, p := range fifos {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		assert.True(t, fi.Mode()&os.ModeNamedPipe != 0, "%s is left as it was", p)
	}
}

// A link whose target stays inside the repository, relative, is followed
// for a folder: the file lands inside the repository, and the link stays
// a link through install and uninstall.
func TestSecurity_HookInstallFollowsLinkInside(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("tools/claude/README", "shared settings live here\n")
	commitLink(t, env, ".claude", "tools/claude")
	env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	assert.Contains(t, env.Read("tools/claude/settings.local.json"), "git venom-checkpoint hook claude-code")
	target, err := os.Readlink(env.Path(".claude"))
	require.NoError(t, err)
	assert.Equal(t, "tools/claude", target)
	env.Venom("checkpoint", "hook", "uninstall", "claude-code").OK(t)
	_, err = os.Lstat(env.Path("tools/claude/settings.local.json"))
	assert.True(t, os.IsNotExist(err), "uninstall removed the file install made")
	target, err = os.Readlink(env.Path(".claude"))
	require.NoError(t, err, "uninstall left the link")
	assert.Equal(t, "tools/claude", target)
	assert.Equal(t, "shared settings live here\n", env.Read("tools/claude/README"))

	// No temporary file is left beside the settings.
	env.Venom("checkpoint", "hook", "install", "claude-code").OK(t)
	names, err := os.ReadDir(env.Path("tools/claude"))
	require.NoError(t, err)
	var got []string
	for _, n := range names {
		got = append(got, n.Name())
	}
	assert.Equal(t, "README settings.local.json", strings.Join(got, " "))
}

// A committed link that stays beneath the top but leads
// into .git (".claude -> .git/hooks", ".gemini -> .git") is refused, as one
// leading out is: install wrote settings files inside git's folder.
func TestSecurity_HookInstallRefusesLinkIntoGitDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ harness, link, target string }{
		{"claude-code", ".claude", ".git/hooks"},
		{"gemini-cli", ".gemini", ".git"},
		{"codex", ".codex", "sub/../.git/info"},
		{"claude-code", ".claude", "dangling/nowhere"},
	} {
		t.Run(tc.harness+" "+tc.target, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			commitLink(t, env, tc.link, tc.target)
			gitBefore := gitDirNames(t, env)
			for _, verb := range []string{"install", "uninstall"} {
				r := env.Venom("checkpoint", "hook", verb, tc.harness, "--json").Fails(t, 1, "failed.state")
				data := r.Map(t)["error"].(map[string]any)["data"].(map[string]any)
				assert.Equal(t, env.Path(tc.link), data["refused"], "%s names the link", verb)
			}
			assert.Equal(t, gitBefore, gitDirNames(t, env), "nothing was written in .git")
			_, err := os.Lstat(env.Path("dangling"))
			assert.True(t, os.IsNotExist(err), "no folder made through a dangling link")
		})
	}
}

// gitDirNames lists .git's files, but for git-venom's own state.
func gitDirNames(t *testing.T, env *Env) []string {
	t.Helper()
	var names []string
	root := env.Path(".git")
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "venom" {
			return filepath.SkipDir
		}
		names = append(names, rel)
		return nil
	}))
	return names
}
