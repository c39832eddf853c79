package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompletion_TabAtATerminal types into an interactive bash on a
// pseudo-terminal, as a person does, and reads what the screen shows after
// <TAB><TAB>: the agent's live checkpoints (in number order, k2 before
// k10) and turns where a rollback or diff takes one, its turns after
// --revert=, and the checkpoint completed in place when only one fits;
// never the folder's files where no path goes (--plan=, a checkpoint).
func TestCompletion_TabAtATerminal(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(gitBashCompletion); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: git's bash completion comes with Debian's git package", gitBashCompletion)
		}
		t.Skipf("%s is missing (Debian's git package has it)", gitBashCompletion)
	}
	env := NewEnv(t)
	for i := 1; i <= 5; i++ {
		env.Turn("b2", func() { env.Write(fmt.Sprintf("file-%d.txt", i), "x\n") })
	}
	for i := 6; i <= 10; i++ {
		env.Write(fmt.Sprintf("file-%d.txt", i), "y\n")
		env.Take(t, "--agent=b2")
	}
	// One match a line, in the order given, so that the screen's order
	// is the order offered.
	rc := filepath.Join(t.TempDir(), "rc")
	require.NoError(t, os.WriteFile(rc, []byte("PS1='$ '\nsource "+gitBashCompletion+"\nsource "+
		filepath.Join(repoRoot(), "completion", "git-venom.bash")+"\nbind 'set bell-style none'\n"+
		"bind 'set completion-display-width 0'\nbind 'set completion-query-items 0'\nbind 'set page-completions off'\n"), 0o644))
	sc := env.startScreen(t, "bash --rcfile "+rc+" -i", "COLUMNS=80", "LINES=24", "INPUTRC=/dev/null")
	sc.WaitFor(0, "$ ")
	checkpoints := []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11",
		"t1", "t2", "t3", "t4", "t5", "last"}
	turns := []string{"t1", "t2", "t3", "t4", "t5"}
	type keys struct {
		typed, want string
		offered     []string // in this order, one a line
	}
	// Ctrl-C once bash reads keys again (screen.Interrupt).
	const interrupt = "\x03"
	for _, k := range []keys{
		// Many candidates: the first TAB completes what they share, the
		// second lists them below the line.
		{"git venom-rollback --agent=b2 \t\t", "last", checkpoints},
		{interrupt, "$ ", nil},
		{"git venom-diff --agent=b2 k3 \t\t", "last", checkpoints},
		{interrupt, "$ ", nil},
		{"git venom-rollback --agent=b2 --revert=t\t\t", "t5", turns},
		{interrupt, "$ ", nil},
		{"git venom-checkpoint list --agent=b2 --turn=t\t\t", "t5", turns},
		{interrupt, "$ ", nil},
		// One candidate: completed on the line itself.
		{"git venom-checkpoint list --agent=b\t", "--agent=b2 ", nil},
		{interrupt, "$ ", nil},
		// Where no file goes, none is offered: the line stays as typed.
		{"git venom-rollback --agent=b2 --plan=\t\t\x05 END\n", "END", nil},
		{"git venom-rollback --agent=b2 k1 \t\t\x05 END\n", "END", nil},
		// After --, files.
		{"git venom-diff --agent=b2 k1 -- file-5\t", "file-5.txt", nil},
		{interrupt, "$ ", nil},
	} {
		if k.typed == interrupt {
			sc.Interrupt("ZZ", k.want)
			continue
		}
		from := len(sc.Shown())
		sc.Type(k.typed)
		end := sc.WaitFor(from, k.want)
		if k.offered != nil {
			var lines []string
			for _, l := range strings.Split(ansiEscape.ReplaceAllString(sc.Shown()[from:end], ""), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "$") && !strings.HasPrefix(l, "git ") {
					lines = append(lines, l)
				}
			}
			assert.Equal(t, k.offered, lines, "%q offered", k.typed)
		}
		if strings.HasSuffix(k.typed, " END\n") {
			assert.NotContains(t, sc.Shown()[from:end], "file-", "%q offered files", k.typed)
			sc.WaitFor(end, "$ ") // the line ran; bash reads the next
		}
	}
	sc.Type("exit\n")
	sc.Wait()
}

// shareLikeInstall lays out the completion files under a share folder as
// install.sh does (TestInstall checks it does), for a real zsh and fish
// to find where each looks.
func shareLikeInstall(t *testing.T) string {
	t.Helper()
	share := t.TempDir()
	src := filepath.Join(repoRoot(), "completion")
	copyTo := func(from, to string) {
		b, err := os.ReadFile(filepath.Join(src, from))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(share, to)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(share, to), b, 0o644))
	}
	for _, cmd := range []string{"git-venom-checkpoint", "git-venom-rollback", "git-venom-diff"} {
		copyTo("git-venom.zsh", "zsh/site-functions/_"+cmd)
		copyTo("git-venom.fish", "fish/vendor_completions.d/"+cmd+".fish")
	}
	copyTo("git-venom-git.fish", "fish/vendor_conf.d/git-venom.fish")
	return share
}

// shell finds zsh or fish, which tests/run installs: missing, the test
// fails under CI and is skipped elsewhere.
func shell(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: tests/run installs it (Debian's %s package)", name, name)
		}
		t.Skipf("%s is missing (Debian's %s package)", name, name)
	}
	return p
}

// completionEnv is an agent b2 with five turns and five manual
// checkpoints: k1..k11, t1..t5.
func completionEnv(t *testing.T) *Env {
	env := NewEnv(t)
	for i := 1; i <= 5; i++ {
		env.Turn("b2", func() { env.Write(fmt.Sprintf("file-%d.txt", i), "x\n") })
	}
	for i := 6; i <= 10; i++ {
		env.Write(fmt.Sprintf("file-%d.txt", i), "y\n")
		env.Take(t, "--agent=b2")
	}
	return env
}

// TestCompletion_Fish asks a real fish what it completes, with the files
// where install.sh puts them: `git venom-<cmd>` through fish's git
// completion as `git-venom-<cmd>` alone, the words the binaries'
// grammar and the agent's checkpoints and turns give (the same source as
// bash's), never the folder's files.
func TestCompletion_Fish(t *testing.T) {
	t.Parallel()
	fish := shell(t, "fish")
	env := completionEnv(t)
	share := shareLikeInstall(t)
	checkpoints := []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11",
		"t1", "t2", "t3", "t4", "t5", "last"}
	for _, c := range []struct {
		line string
		want []string
	}{
		{"git venom-rollback --re", []string{"--restore=", "--revert="}},
		// fish replaces the whole token.
		{"git venom-rollback --agent=b2 --revert=t",
			[]string{"--revert=t1", "--revert=t2", "--revert=t3", "--revert=t4", "--revert=t5"}},
		{"git venom-diff --agent=b2 k3 ", checkpoints},
		{"git -C . venom-checkpoint li", []string{"list"}},
		{"git venom-checkpoint list --agent=b", []string{"--agent=b2"}},
		{"git-venom-rollback --re", []string{"--restore=", "--revert="}},
		{"git-venom-rollback --agent=b2 k1", []string{"k1", "k10", "k11"}},
	} {
		r := env.run(env.Dir, []string{"XDG_DATA_DIRS=" + share, "XDG_CONFIG_HOME=" + env.Home}, fish, "-c",
			"complete -C '"+c.line+"'").OK(t)
		got := strings.Fields(r.Stdout)
		sort.Strings(got)
		want := append([]string{}, c.want...)
		sort.Strings(want)
		assert.Equal(t, want, got, "%q", c.line)
	}
}

// TestCompletion_Zsh types into an interactive zsh on a pseudo-terminal,
// with compinit and the files where install.sh puts them: zsh's git
// completion hands `git venom-<cmd>` to _git-venom-<cmd>, which lists
// the binaries' words; one match is completed on the line.
func TestCompletion_Zsh(t *testing.T) {
	t.Parallel()
	zsh := shell(t, "zsh")
	env := completionEnv(t)
	share := shareLikeInstall(t)
	dot := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dot, ".zshrc"), []byte("fpath=("+
		filepath.Join(share, "zsh/site-functions")+" $fpath)\nautoload -Uz compinit && compinit -u -d "+
		filepath.Join(dot, "zcompdump")+"\nunsetopt beep\nPS1='$ '\n"), 0o644))
	sc := env.startScreen(t, zsh+" -i", "COLUMNS=80", "LINES=24", "ZDOTDIR="+dot)
	sc.WaitFor(0, "$ ")
	// Ctrl-C once zsh reads keys again (screen.Interrupt): zsh drops
	// one that comes while it still finishes the completion.
	const interrupt = "\x03"
	for _, k := range []struct {
		typed string
		want  []string // each shown after the keys
	}{
		{"git venom-rollback --re\t", []string{"--restore=", "--revert="}},
		{interrupt, []string{"$ "}},
		{"git venom-rollback --agent=b2 --revert=t\t", []string{"--revert=t1", "--revert=t5"}},
		{interrupt, []string{"$ "}},
		{"git venom-diff --agent=b2 k3 \t", []string{"k10", "k11", "t5", "last"}},
		{interrupt, []string{"$ "}},
		// One match: completed on the line, and the line runs.
		{"git venom-checkpoint li\t-h\n", []string{"Usage: git venom-checkpoint list"}},
	} {
		if k.typed == interrupt {
			sc.Interrupt("ZZ", k.want[0])
			continue
		}
		from := len(sc.Shown())
		sc.Type(k.typed)
		for _, w := range k.want {
			sc.WaitFor(from, w)
		}
	}
	sc.Type("exit\n")
	sc.Wait()
}
