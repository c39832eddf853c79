package ignore

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Knobs for the differential test: go test ./lib/ignore -run Differential
// -args -ignore.seeds=10000 tries more trees, -ignore.from=N -ignore.seeds=1
// replays seed N.
var (
	seedCount = flag.Int64("ignore.seeds", 50, "random trees TestStack_DifferentialAgainstGit tries")
	seedFrom  = flag.Int64("ignore.from", 1, "the first seed TestStack_DifferentialAgainstGit tries")
)

// gitRepo is one scratch repository, reused by every case: git init once,
// then each case replaces the worktree, info/exclude and the excludes file.
type gitRepo struct {
	top, gitDir, excludesFile string
	env                       []string
	// Files (and symlinks) present and listed, over all cases: a test
	// where nothing or everything is ignored would prove little.
	files, listed int
}

// newGitRepo makes an empty repository with a hermetic environment: no
// system or global config, HOME and XDG in the temp dir, so no ignore file of
// the machine's user leaks in.
func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	tmp := t.TempDir()
	r := &gitRepo{
		top:          filepath.Join(tmp, "wt"),
		excludesFile: filepath.Join(tmp, "excludes"),
		env: []string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + tmp,
			"XDG_CONFIG_HOME=" + filepath.Join(tmp, "xdg"),
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + filepath.Join(tmp, "gitconfig"),
			"LC_ALL=C",
		},
	}
	r.gitDir = filepath.Join(r.top, ".git")
	require.NoError(t, os.Mkdir(r.top, 0o755))
	r.git(t, "init", "-q")
	return r
}

// git runs git in the worktree and returns its stdout, raw.
func (r *gitRepo) git(t *testing.T, args ...string) []byte {
	t.Helper()
	c := exec.Command("git", append([]string{"-c", "core.excludesFile=" + r.excludesFile}, args...)...)
	c.Dir = r.top
	c.Env = r.env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	require.NoError(t, err, "git %v: %s", args, stderr.String())
	return out
}

// untrackedByGit is git's answer: with an empty index every file is
// untracked, so this lists exactly the files and symlinks not ignored.
func (r *gitRepo) untrackedByGit(t *testing.T) []string {
	out := r.git(t, "ls-files", "-z", "--others", "--exclude-standard")
	var paths []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	sort.Strings(paths)
	return paths
}

// readIfRegular returns a file's content when it is a regular file, nil
// otherwise: git opens .gitignore with O_NOFOLLOW.
func readIfRegular(t *testing.T, path string) []byte {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// readGlobal parses a global ignore file, nil when there is none.
func readGlobal(t *testing.T, path string) *List {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return Parse(b, "")
}

// untrackedByStack is this package's answer: the walk a caller does, into
// the directories that are not excluded only, listing files and symlinks.
func (r *gitRepo) untrackedByStack(t *testing.T) []string {
	root := Root(readGlobal(t, filepath.Join(r.gitDir, "info", "exclude")), readGlobal(t, r.excludesFile))
	var paths []string
	var walk func(s *Stack)
	walk = func(s *Stack) {
		dir := filepath.Join(r.top, filepath.FromSlash(s.Path()))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			name := e.Name()
			switch {
			case name == ".git":
			case e.IsDir():
				if !s.Excluded(name, true) {
					c := s.Child(name, readIfRegular(t, filepath.Join(dir, name, ".gitignore")))
					require.False(t, c.DirExcluded())
					walk(c)
				} else {
					require.True(t, s.Child(name, nil).DirExcluded())
				}
			case e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0:
				if !s.Excluded(name, false) {
					paths = append(paths, s.Path()+name)
				}
			}
		}
	}
	walk(root.Top(readIfRegular(t, filepath.Join(r.top, ".gitignore"))))
	sort.Strings(paths)
	return paths
}

// reset empties the worktree (but .git), info/exclude and the excludes file.
func (r *gitRepo) reset(t *testing.T) {
	entries, err := os.ReadDir(r.top)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != ".git" {
			require.NoError(t, os.RemoveAll(filepath.Join(r.top, e.Name())))
		}
	}
	for _, p := range []string{filepath.Join(r.gitDir, "info", "exclude"), r.excludesFile} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			require.NoError(t, err)
		}
	}
}

// describe lists the worktree and the ignore files, for a failure message.
func (r *gitRepo) describe(t *testing.T) string {
	var b strings.Builder
	_ = filepath.WalkDir(r.top, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(r.top, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&os.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			fmt.Fprintf(&b, "  %q -> %q\n", rel, dest)
		case d.IsDir():
			fmt.Fprintf(&b, "  %q/\n", rel)
		default:
			fmt.Fprintf(&b, "  %q\n", rel)
		}
		if d.Name() == ".gitignore" && d.Type().IsRegular() {
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "      %q\n", c)
		}
		return nil
	})
	for _, p := range []string{filepath.Join(r.gitDir, "info", "exclude"), r.excludesFile} {
		if c, err := os.ReadFile(p); err == nil {
			fmt.Fprintf(&b, "%s: %q\n", filepath.Base(p), c)
		}
	}
	return b.String()
}

// check compares both answers on the current worktree.
func (r *gitRepo) check(t *testing.T, what string) bool {
	t.Helper()
	want, got := r.untrackedByGit(t), r.untrackedByStack(t)
	r.listed += len(want)
	_ = filepath.WalkDir(r.top, func(p string, d os.DirEntry, err error) error {
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			r.files++
		}
		return nil
	})
	if strings.Join(want, "\x00") == strings.Join(got, "\x00") {
		return true
	}
	t.Errorf("%s: git and Stack disagree\nonly git lists: %q\nonly Stack lists: %q\ntree:\n%s",
		what, minus(want, got), minus(got, want), r.describe(t))
	return false
}

// minus is the sorted a without the elements of b.
func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}

// names are the entry names of random trees, and the literal parts of
// random patterns: dots, spaces (leading, inner, trailing), glob specials,
// '!', '#', backslashes and non-ASCII bytes.
var names = []string{
	"a", "b", "ab", "A", "foo", "foo.txt", "bar.o", ".hidden", "x y", "trail ",
	" lead", "[ab]", "[", "!bang", "#hash", `back\slash`, `\`, "*", "?", "é",
	"日本", "a-b", "build", "x\ty", "x\vy",
}

// globs are the wildcard parts of random patterns, including malformed ones
// git still gives a meaning to.
var globs = []string{
	"*", "?", "*.txt", "*.o", "f*", "*o*", "[ab]", "[!a]*", "[^a]*", "[a-c]*",
	"[[:alpha:]]*", "[[:space:]]*", "*[[:digit:][:punct:]]*", `\!bang`, `\#hash`,
	`back\\slash`, `x\ y`, "x?y", "[]]", "[!]]*", "??", `*\ `, "a[", "[[:bogus:]]",
	"**", "a**", "**b", `\*`, `\\`, "*[é]*", "é*", "[[:blank:]]*", "trail\\ ", "[a-]*",
	"x[[:space:]]y", "x[[:cntrl:]]y", "[[:print:]]", "[![:graph:]]*", "[[:upper:][:lower:]]?",
	"b*.o", "*.txt*", "[!.]*", ".*", "*[!.]", "\\*", "[\\]*", "?\\*",
}

// randPattern builds one line of an ignore file from names and globs, with
// the git syntax around them: negation, anchoring, "**/" and "/**", dir-only
// trailing slashes, trailing spaces kept or trimmed, comments.
func randPattern(rng *rand.Rand) string {
	specials := []string{
		"", "#comment", "# x", "!", "/", "*", "**", "!*/", "!**/", "*/", "!*",
		" ", "\t", "**/", "/*", "!/*", "!*.txt", "*.txt/", "!.gitignore", ".gitignore",
		"a\x00b", "!x\x00", "\x00*", "\r", "!\r",
	}
	if rng.Intn(8) == 0 {
		return specials[rng.Intn(len(specials))]
	}
	part := func() string {
		switch rng.Intn(10) {
		case 0, 1, 2, 3:
			return names[rng.Intn(len(names))]
		case 4:
			return "**"
		default:
			return globs[rng.Intn(len(globs))]
		}
	}
	var b strings.Builder
	if rng.Intn(3) == 0 {
		b.WriteString("!")
	}
	switch rng.Intn(6) {
	case 0:
		b.WriteString("/")
	case 1:
		b.WriteString("**/")
	}
	n := 1 + rng.Intn(3)
	if rng.Intn(2) == 0 {
		n = 1
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("/")
		}
		b.WriteString(part())
	}
	switch rng.Intn(8) {
	case 0, 1:
		b.WriteString("/")
	case 2:
		b.WriteString("/**")
	case 3:
		b.WriteString("/*")
	}
	switch rng.Intn(10) {
	case 0:
		b.WriteString(" ")
	case 1:
		b.WriteString("  ")
	case 2:
		b.WriteString(`\ `)
	case 3:
		b.WriteString(`\`)
	}
	return b.String()
}

// randIgnoreFile is a random ignore file: patterns, with LF or CRLF line
// ends, sometimes a BOM, sometimes no final newline.
func randIgnoreFile(rng *rand.Rand) []byte {
	var b bytes.Buffer
	if rng.Intn(6) == 0 {
		b.WriteString("\xef\xbb\xbf")
	}
	crlf := rng.Intn(4) == 0
	n := 1 + rng.Intn(4)
	for i := 0; i < n; i++ {
		b.WriteString(randPattern(rng))
		if i < n-1 || rng.Intn(5) > 0 {
			if crlf || rng.Intn(10) == 0 {
				b.WriteString("\r")
			}
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// randTree fills dir with random files, directories (depth at most 4) and
// symlinks (to directories, files, nowhere), and returns the directories it
// made, dir first.
func randTree(t *testing.T, rng *rand.Rand, dir string, depth int) []string {
	all := []string{dir}
	n := 2 + rng.Intn(5)
	var dirs []string
	for i := 0; i < n; i++ {
		name := names[rng.Intn(len(names))]
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		switch k := rng.Intn(10); {
		case k < 5 || depth >= 4:
			require.NoError(t, os.WriteFile(p, []byte(name), 0o644))
		case k < 8:
			require.NoError(t, os.Mkdir(p, 0o755))
			dirs = append(dirs, name)
			all = append(all, randTree(t, rng, p, depth+1)...)
		default:
			dest := []string{".", "..", "nowhere", name + "x"}[rng.Intn(4)]
			if len(dirs) > 0 && rng.Intn(2) == 0 {
				dest = dirs[rng.Intn(len(dirs))]
			}
			require.NoError(t, os.Symlink(dest, p))
		}
	}
	return all
}

// randIgnores gives each directory a random .gitignore or none, and the
// repository a random info/exclude and core.excludesFile or none.
func (r *gitRepo) randIgnores(t *testing.T, rng *rand.Rand, dirs []string) {
	write := func(p string, ok bool) {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		if ok {
			require.NoError(t, os.WriteFile(p, randIgnoreFile(rng), 0o644))
		}
	}
	for _, d := range dirs {
		p := filepath.Join(d, ".gitignore")
		switch rng.Intn(40) {
		case 0:
			// git ignores a symlinked .gitignore (O_NOFOLLOW).
			write(p+"-real", true)
			write(p, false)
			require.NoError(t, os.Symlink(".gitignore-real", p))
		default:
			write(p, rng.Intn(2) == 0)
		}
	}
	write(filepath.Join(r.gitDir, "info", "exclude"), rng.Intn(3) > 0)
	write(r.excludesFile, rng.Intn(3) > 0)
}

// subtrees is the number of random subtrees a case puts side by side under
// the top, and configs the number of random sets of ignore files tried on one
// tree: writing a tree and starting git cost far more than writing ignore
// files and walking, so each tree serves many cases.
const (
	subtrees = 6
	configs  = 6
)

// TestStack_DifferentialAgainstGit builds random trees with random ignore
// files at random levels, in info/exclude and in core.excludesFile, and
// checks that a walk with Stack lists exactly the untracked files git lists.
// Each seed is one tree (a random top level beside random subtrees
// "case0/"...) tried with configs random sets of ignore files.
func TestStack_DifferentialAgainstGit(t *testing.T) {
	r := newGitRepo(t)
	first, count := *seedFrom, *seedCount
	failures := 0
	for seed := first; seed < first+count && failures < 3; seed++ {
		rng := rand.New(rand.NewSource(seed))
		r.reset(t)
		dirs := randTree(t, rng, r.top, 2)
		for i := 0; i < subtrees; i++ {
			p := filepath.Join(r.top, fmt.Sprintf("case%d", i))
			require.NoError(t, os.Mkdir(p, 0o755))
			dirs = append(dirs, randTree(t, rng, p, 0)...)
		}
		for c := 0; c < configs && failures < 3; c++ {
			r.randIgnores(t, rng, dirs)
			if !r.check(t, fmt.Sprintf("seed %d, ignore files %d (replay: -args -ignore.from=%d -ignore.seeds=1)", seed, c, seed)) {
				failures++
			}
		}
	}
	t.Logf("compared %d trees, each with %d sets of ignore files, with git: %d of %d files listed",
		count, configs, r.listed, r.files)
}

// TestStack_PatternsAgainstCheckIgnore asks git check-ignore about many
// random paths at once, none of which exist: a path's leading directories
// count as directories (git's prep_exclude checks them so), its last
// component as no directory. With few patterns per file, each pattern's own
// match shows, so this puts wildmatch and the pattern forms through far more
// cases per git process than a walk can. "sub/" exists, with its own
// .gitignore, for patterns relative to a subdirectory.
func TestStack_PatternsAgainstCheckIgnore(t *testing.T) {
	r := newGitRepo(t)
	// A round costs a fifth of a tree of the walk test: five per seed.
	// Each round is a folder "r<seed>/" of its own, as the top of its
	// .gitignore and sub/, in a repository with no other ignore file: a
	// .gitignore's patterns match relative to its folder, so git answers
	// for "r<seed>/" + path as for path at the top. One git process
	// answers batch rounds.
	const paths, batch = 400, 50
	first, count := *seedFrom*5, *seedCount*5
	failures := 0
	checked, ignored := 0, 0
	type round struct {
		seed     int64
		top, sub []byte
		want     map[string]bool
	}
	for from := first; from < first+count && failures < 3; from += batch {
		r.reset(t)
		var rounds []round
		var in bytes.Buffer
		for seed := from; seed < from+batch && seed < first+count; seed++ {
			rng := rand.New(rand.NewSource(seed))
			folder := filepath.Join(r.top, fmt.Sprintf("r%d", seed))
			require.NoError(t, os.MkdirAll(filepath.Join(folder, "sub"), 0o755))
			// Half the seeds draw patterns and names from a few bytes,
			// glob specials among them, so odd and malformed patterns
			// ("[!]", "\\[", "a**b/") meet paths they match.
			noise := seed%2 == 0
			top, sub := randIgnoreFile(rng), randIgnoreFile(rng)
			if noise {
				top, sub = randNoiseFile(rng), randNoiseFile(rng)
			}
			require.NoError(t, os.WriteFile(filepath.Join(folder, ".gitignore"), top, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(folder, "sub", ".gitignore"), sub, 0o644))
			root := Root().Top(top)
			want := map[string]bool{}
			for i := 0; i < paths; i++ {
				var parts []string
				if rng.Intn(3) == 0 {
					parts = append(parts, "sub")
				}
				for n := 1 + rng.Intn(3); n > 0; n-- {
					if noise {
						parts = append(parts, randNoiseName(rng, len(parts) == 0))
					} else {
						parts = append(parts, names[rng.Intn(len(names))])
					}
				}
				if parts[len(parts)-1] == "sub" {
					continue // sub is a directory
				}
				s := root
				for _, p := range parts[:len(parts)-1] {
					var gitignore []byte
					if s == root && p == "sub" {
						gitignore = sub
					}
					s = s.Child(p, gitignore)
				}
				path := strings.Join(parts, "/")
				want[path] = s.Excluded(parts[len(parts)-1], false)
				fmt.Fprintf(&in, "r%d/%s\x00", seed, path)
			}
			rounds = append(rounds, round{seed, top, sub, want})
		}
		c := exec.Command("git", "check-ignore", "--no-index", "-z", "--stdin")
		c.Dir, c.Env, c.Stdin = r.top, r.env, &in
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			err = nil // nothing ignored
		}
		require.NoError(t, err, "rounds %d to %d: %s", from, from+batch-1, stderr.String())
		got := map[string]bool{}
		for _, p := range bytes.Split(out, []byte{0}) {
			if len(p) > 0 {
				got[string(p)] = true
			}
		}
		for _, rd := range rounds {
			if failures >= 3 {
				break
			}
			for path, excluded := range rd.want {
				checked++
				gitIgnores := got[fmt.Sprintf("r%d/%s", rd.seed, path)]
				if gitIgnores {
					ignored++
				}
				if gitIgnores != excluded {
					t.Errorf("round %d (replay: -args -ignore.from=%d -ignore.seeds=1): %q: git ignores it: %v, Stack: %v\n"+
						".gitignore: %q\nsub/.gitignore: %q", rd.seed, rd.seed/5, path, gitIgnores, excluded, rd.top, rd.sub)
					failures++
					break
				}
			}
		}
	}
	t.Logf("compared %d paths (%d ignored) with git check-ignore", checked, ignored)
}

// noiseBytes are the bytes of noise names, 'a' and 'b' most often.
const noiseBytes = `aaaabbbb.-]^!: [\\*?`

// randNoiseToken is one piece of a noise pattern: a literal, an escape, a
// wildcard, a slash, a bracket expression (negated, ranges, classes, escapes,
// ']' first) or something malformed.
func randNoiseToken(rng *rand.Rand) string {
	pick := func(s string) string { return string(s[rng.Intn(len(s))]) }
	switch rng.Intn(20) {
	case 0, 1, 2, 3, 4, 5:
		return pick("ab")
	case 6:
		return pick(".-]^!: ")
	case 7:
		return `\` + pick(`ab*?[]\ `)
	case 8, 9:
		return "*"
	case 10:
		return "**"
	case 11:
		return "?"
	case 12, 13:
		return "/"
	case 14, 15, 16:
		var b strings.Builder
		b.WriteString("[")
		b.WriteString([]string{"", "", "!", "^"}[rng.Intn(4)])
		for n := 1 + rng.Intn(3); n > 0; n-- {
			b.WriteString([]string{
				pick(`ab-]^![:`), pick("ab"), "a-b", "]-a", "!-b", "a-", `\]`, `\\`, `a-\b`,
				"[:alpha:]", "[:punct:]", "[:space:]", "[:bogus:]", "[:", "[::]",
			}[rng.Intn(15)])
		}
		b.WriteString("]")
		return b.String()
	case 17:
		return []string{"[", `\`, "[:alpha:", "[!", "[]"}[rng.Intn(5)]
	case 18:
		return " "
	}
	return `\ `
}

// randNoiseFile is an ignore file of 1 to 3 lines of noise tokens.
func randNoiseFile(rng *rand.Rand) []byte {
	var b bytes.Buffer
	for n := 1 + rng.Intn(3); n > 0; n-- {
		if rng.Intn(4) == 0 {
			b.WriteString("!")
		}
		for k := 1 + rng.Intn(6); k > 0; k-- {
			b.WriteString(randNoiseToken(rng))
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// randNoiseName is a path component of 1 to 4 noiseBytes, never "." nor
// ".." (git would resolve them), and for the first component of a path not
// starting with ':' (check-ignore takes pathspecs, where that is magic, and
// refuses GIT_LITERAL_PATHSPECS).
func randNoiseName(rng *rand.Rand, first bool) string {
	for {
		var b strings.Builder
		for k := 1 + rng.Intn(4); k > 0; k-- {
			b.WriteByte(noiseBytes[rng.Intn(len(noiseBytes))])
		}
		if n := b.String(); n != "." && n != ".." && (!first || n[0] != ':') {
			return n
		}
	}
}
