package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
)

// TestReadme keeps README.md true: its set-up commands, its exit-code table
// (docs/errors.md#exit-codes, with restic's rule), its configuration keys, and its list of
// verbs that are not there yet, which must be exactly those that answer
// unsupported.not_yet.
func TestReadme(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	require.NoError(t, err)
	readme := string(b)

	assert.Contains(t, readme, "./install.sh")
	assert.Contains(t, readme, "tests/run")
	assert.Contains(t, readme, "An unknown exit code must be treated as a failure.")
	classes := map[int]errcode.Class{1: errcode.Failed, 2: errcode.InvalidParams, 3: errcode.NotFound,
		4: errcode.Denied, 5: errcode.Conflict, 7: errcode.Timeout, 10: errcode.Unsupported}
	for _, n := range exitNumbers {
		row := regexp.MustCompile(`(?m)^\| ` + strconv.Itoa(n) + ` \|([^|]*)\|`).FindStringSubmatch(readme)
		if !assert.NotNil(t, row, "README's exit table has no row for %d", n) {
			continue
		}
		if class, ok := classes[n]; ok {
			assert.Contains(t, row[1], "`"+string(class)+".*`", "README's row for exit %d", n)
			assert.Equal(t, n, class.Exit())
		}
	}
	for _, key := range []string{"venom.enabled", "venom.maxFileBytes", "venom.maxTotalBytes", "venom.keep",
		"venom.keepFor", "venom.keepSafety", "venom.timeout", "venom.rollbackNote",
		"venom.copyMaxPaths", "venom.copyMaxDepth", "venom.copyMaxFileBytes", "venom.copyMaxTotalBytes"} {
		assert.Contains(t, readme, "`"+key+"`")
	}

	m := regexp.MustCompile(`(?s)Not there yet:(.*?)\n\n`).FindStringSubmatch(readme)
	require.NotNil(t, m, `README lists what is not there yet in a paragraph starting "Not there yet:"`)
	var listed []string
	for _, q := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
		words := strings.Fields(q[1])
		if strings.Contains(q[1], ".") { // the error code
			continue
		}
		listed = append(listed, words[len(words)-1])
	}
	sort.Strings(listed)

	env := NewEnv(t)
	var notYet []string
	for _, verb := range helpVerbs(t, "git-venom-checkpoint", nil) {
		if len(verb) != 1 {
			continue
		}
		args, ok := requiredArgs(t, verb)
		if !ok {
			continue // a verb with sub-verbs is implemented
		}
		r := env.Venom("checkpoint", append(append(verb, args...), "--json")...)
		if r.Code == errcode.UnsupportedNotYet.Class().Exit() && strings.Contains(r.Stdout, string(errcode.UnsupportedNotYet)) {
			notYet = append(notYet, verb[0])
		}
	}
	for _, cmd := range []string{"rollback", "diff"} {
		r := env.Venom(cmd, "--json")
		if strings.Contains(r.Stdout, string(errcode.UnsupportedNotYet)) {
			notYet = append(notYet, cmd)
		}
	}
	sort.Strings(notYet)
	assert.Equal(t, notYet, listed, "README's \"Not there yet\" must name exactly the verbs that answer unsupported.not_yet")
}

// requiredArgs fills the required flags and arguments kong's usage line
// shows for a verb with a placeholder, so that the verb's Run is reached.
func requiredArgs(t *testing.T, verb []string) ([]string, bool) {
	t.Helper()
	usage := ""
	for _, line := range strings.Split(help(t, "git-venom-checkpoint", verb), "\n") {
		if rest, ok := strings.CutPrefix(line, "Usage: git venom-checkpoint "+strings.Join(verb, " ")); ok {
			usage = rest
		}
	}
	var args []string
	for _, w := range strings.Fields(usage) {
		switch {
		case w == "<command>":
			return nil, false
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(w, "=")
			args = append(args, name+"=zz")
		case strings.HasPrefix(w, "<"):
			args = append(args, "zz")
		}
	}
	return args, true
}

// TestReadme_TestKnobs: tests/README.md names every VENOM_* variable the code
// and tests read (the user-facing ones are in git-venom-checkpoint.1) and
// every fault point of lib/testhook.
func TestReadme_TestKnobs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "tests", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	page, err := os.ReadFile(filepath.Join(repoRoot(), "man", "git-venom-checkpoint.1"))
	require.NoError(t, err)
	environment := roffText(strings.Split(string(page), "\n"))

	variable := regexp.MustCompile(`"(VENOM_[A-Z_]+)"`)
	point := regexp.MustCompile(`(?:Point|PointIn|point|hook)\((?:[a-zA-Z.]+, )?"([a-z][a-z-]+)"\)`)
	vars, points := map[string]bool{}, map[string]bool{}
	for _, dir := range []string{"lib", "tests", "git-venom-checkpoint", "git-venom-rollback", "git-venom-diff"} {
		err := filepath.WalkDir(filepath.Join(repoRoot(), dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "readme_test.go") {
				return err
			}
			src, err := os.ReadFile(p)
			for _, m := range variable.FindAllStringSubmatch(string(src), -1) {
				vars[m[1]] = true
			}
			if dir == "lib" && !strings.HasSuffix(p, "_test.go") {
				for _, m := range point.FindAllStringSubmatch(string(src), -1) {
					points[m[1]] = true
				}
			}
			return err
		})
		require.NoError(t, err)
	}
	require.Contains(t, vars, "VENOM_TEST_FAIL_AT")
	require.Contains(t, points, "log-fsync")
	for v := range vars {
		if strings.HasPrefix(v, "VENOM_TEST_") || v == "VENOM_KEEP_TRASH" {
			assert.Contains(t, readme, "`"+v, "tests/README.md does not name %s", v)
		} else {
			assert.Contains(t, environment, v, "ENVIRONMENT of git-venom-checkpoint.1 does not name %s", v)
		}
	}
	for p := range points {
		assert.Contains(t, readme, "`"+p+"`", "tests/README.md does not name the fault point %s", p)
	}
}
