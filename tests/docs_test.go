package tests

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
)

// The design ships in docs/: the README links it, its
// links and anchors resolve, its error table is the registry, and nothing
// that ships cites sections of documents that do not.

// docFiles are the Markdown files that ship: README, tests/README, docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(repoRoot(), "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs, "docs/ has no pages")
	return append([]string{filepath.Join(repoRoot(), "README.md"), filepath.Join(repoRoot(), "tests", "README.md")}, docs...)
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// anchors are a page's heading ids, as GitHub makes them.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(text, -1) {
		slug := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), ""), " ", "-")
		out[slug] = true
	}
	return out
}

func TestDocs_LinksResolve(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	require.NoError(t, err)
	for _, page := range []string{"docs/README.md", "docs/checkpoints.md", "docs/rollback.md", "docs/harness.md", "docs/errors.md", "docs/json.md"} {
		assert.Contains(t, string(readme), "("+page, "README links %s", page)
	}
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		rel, _ := filepath.Rel(repoRoot(), file)
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			text, err := os.ReadFile(dest)
			if !assert.NoError(t, err, "%s links %s, which does not exist", rel, target) {
				continue
			}
			if anchor != "" {
				assert.True(t, anchors(string(text))[anchor], "%s links %s: no heading has that anchor", rel, target)
			}
		}
	}
}

func TestDocs_ErrorRegistry(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "errors.md"))
	require.NoError(t, err)
	for code := range errcode.Registry {
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(string(code)) + "` \\| (\\d+) \\|").FindStringSubmatch(string(b))
		if assert.NotNil(t, row, "docs/errors.md has no row for %s", code) {
			assert.Equal(t, strconv.Itoa(code.Class().Exit()), row[1], "docs/errors.md: exit of %s", code)
		}
		// The Data table shows the shape declared beside the code.
		data := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(string(code)) + "` \\| `([^`]*)`").FindStringSubmatch(string(b))
		if assert.NotNil(t, data, "docs/errors.md has no data row for %s", code) {
			assert.Equal(t, errcode.Data[code].String(), data[1], "docs/errors.md: data of %s", code)
		}
	}
	assert.Contains(t, string(b), "must be treated as a failure")
}

// TestDocs_NoUnshippedCitations: the README, docs/, the man pages and every
// help text stand on their own: none cites the design documents, which do
// not ship (TestDocs_GoCommentsStandAlone checks the code's comments).
func TestDocs_NoUnshippedCitations(t *testing.T) {
	t.Parallel()
	cite := regexp.MustCompile(`\b(RFC|CONTRACT)\b`)
	files := docFiles(t)
	pages, err := filepath.Glob(filepath.Join(repoRoot(), "man", "*.1"))
	require.NoError(t, err)
	for _, file := range append(files, pages...) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			assert.False(t, cite.MatchString(line), "%s:%d cites a document that does not ship: %s", file, i+1, line)
		}
	}
	for _, bin := range manBinaries {
		for _, verb := range helpVerbs(t, bin, nil) {
			out := help(t, bin, verb)
			assert.False(t, cite.MatchString(out), "%s %v -h cites a document that does not ship:\n%s", bin, verb, out)
		}
	}
}

// TestDocs_GoCitationsResolve: a comment or help text in the Go code that
// sends its reader to docs/<page>.md#<anchor> names a page that ships and
// a heading it has.
func TestDocs_GoCitationsResolve(t *testing.T) {
	t.Parallel()
	cite := regexp.MustCompile(`docs/([a-z0-9_-]+\.md)#([a-z0-9_-]+)`)
	found := 0
	for _, dir := range []string{"lib", "tests", "git-venom-checkpoint", "git-venom-rollback", "git-venom-diff"} {
		err := filepath.WalkDir(filepath.Join(repoRoot(), dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(repoRoot(), p)
			for _, m := range cite.FindAllStringSubmatch(string(src), -1) {
				found++
				text, err := os.ReadFile(filepath.Join(repoRoot(), "docs", m[1]))
				if assert.NoError(t, err, "%s cites docs/%s, which does not ship", rel, m[1]) {
					assert.True(t, anchors(string(text))[m[2]], "%s cites %s: no heading has that anchor", rel, m[0])
				}
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.Greater(t, found, 50, "the code cites the docs")
}

// maxCommentLines is the longest comment block the Go code may hold: a
// comment says what and why in a few lines; a longer explanation belongs
// in docs/<page>.md, cited with its anchor, or in the commit's body.
const maxCommentLines = 7

var (
	// A comment citing what its reader cannot open: an issue or pull
	// request number, the research notes' numbered findings, the
	// design documents the project does not ship.
	citesIssue     = regexp.MustCompile(`(?i)\bissues? #?\d+|(?:^|[\s(])#\d+\b`)
	citesResearch  = regexp.MustCompile(`\bresearch/|\bharness\.md,? [A-H]\d?\b`)
	citesUnshipped = regexp.MustCompile(`\bCONTRACT\b|\bRFC\b(?: \d{3,4}\b)?`)
	publicRFC      = regexp.MustCompile(`^RFC \d{3,4}$`)
)

// commentOffences lists, as "file:line: why", the comments of one Go
// source that cite what does not ship or run past maxCommentLines. A cgo
// preamble (the comment above import "C") is C code and is left out.
func commentOffences(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err)
	preamble := map[*ast.CommentGroup]bool{}
	for _, imp := range f.Imports {
		if imp.Path.Value == `"C"` {
			preamble[imp.Doc] = true
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT && len(g.Specs) == 1 && g.Specs[0] == imp {
					preamble[g.Doc] = true
				}
			}
		}
	}
	var out []string
	for _, g := range f.Comments {
		if preamble[g] {
			continue
		}
		start, end := fset.Position(g.Pos()).Line, fset.Position(g.End()).Line
		if n := end - start + 1; n > maxCommentLines {
			out = append(out, fmt.Sprintf("%s:%d: a comment of %d lines (at most %d: move the essay to docs/)", name, start, n, maxCommentLines))
		}
		for _, c := range g.List {
			for i, line := range strings.Split(c.Text, "\n") {
				at := fmt.Sprintf("%s:%d", name, fset.Position(c.Pos()).Line+i)
				for _, m := range citesIssue.FindAllString(line, -1) {
					out = append(out, fmt.Sprintf("%s: cites an issue (%q): say what and why instead", at, strings.TrimSpace(m)))
				}
				for _, m := range citesResearch.FindAllString(line, -1) {
					out = append(out, fmt.Sprintf("%s: cites the research notes (%q), which do not ship", at, m))
				}
				for _, m := range citesUnshipped.FindAllString(line, -1) {
					if !publicRFC.MatchString(m) {
						out = append(out, fmt.Sprintf("%s: cites %s, which does not ship", at, m))
					}
				}
			}
		}
	}
	return out
}

// TestDocs_GoCommentsStandAlone: every comment in the Go code reads on its
// own: none cites an issue, the research notes or a document that does not
// ship, and none runs past maxCommentLines lines.
func TestDocs_GoCommentsStandAlone(t *testing.T) {
	t.Parallel()
	sample := "package p\n\n" +
		strings.Repeat("// A cgo preamble is C: left out.\n", maxCommentLines+1) + "import \"C\"\n\n" +
		"// Fixed in issue 27 item 6, see #31; fault point log-append#2.\nvar a int\n\n" +
		"// As harness.md F2 says (CONTRACT 8.27, RFC section 2; RFC 8259 is public).\nvar b int\n\n" +
		strings.Repeat("// An essay.\n", maxCommentLines+1) + "var c int\n"
	at := maxCommentLines + 6 // the line of the first comment after the preamble
	assert.Equal(t, []string{
		fmt.Sprintf(`sample.go:%d: cites an issue ("issue 27"): say what and why instead`, at),
		fmt.Sprintf(`sample.go:%d: cites an issue ("#31"): say what and why instead`, at),
		fmt.Sprintf(`sample.go:%d: cites the research notes ("harness.md F2"), which do not ship`, at+3),
		fmt.Sprintf(`sample.go:%d: cites CONTRACT, which does not ship`, at+3),
		fmt.Sprintf(`sample.go:%d: cites RFC, which does not ship`, at+3),
		fmt.Sprintf("sample.go:%d: a comment of %d lines (at most %d: move the essay to docs/)", at+6, maxCommentLines+1, maxCommentLines),
	}, commentOffences(t, "sample.go", []byte(sample)))

	var offences []string
	for _, dir := range []string{"lib", "tests", "bin", "git-venom-checkpoint", "git-venom-rollback", "git-venom-diff"} {
		err := filepath.WalkDir(filepath.Join(repoRoot(), dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(repoRoot(), p)
			offences = append(offences, commentOffences(t, rel, src)...)
			return nil
		})
		require.NoError(t, err)
	}
	assert.Empty(t, offences, "comments that do not stand on their own:\n%s", strings.Join(offences, "\n"))
}
