package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHarnessRegistry_Explicit: the harnesses are registered by the
// commands that use them (harness.Use, harness.IsShell and
// harness.HookFiles as arguments), never by an init function filling a
// global, and rollback reaches no harness but through those arguments.
func TestHarnessRegistry_Explicit(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-tags", "venomtest", "-deps", "./lib/rollback")
	cmd.Dir = repoRoot()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, p := range strings.Fields(string(out)) {
		assert.False(t, p == module+"/lib/harness" || strings.HasPrefix(p, module+"/lib/harness/"),
			"lib/rollback imports %s", p)
	}

	fset := token.NewFileSet()
	root := filepath.Join(repoRoot(), "lib", "harness")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				rel, _ := filepath.Rel(repoRoot(), path)
				t.Errorf("%s:%d: an init function in a harness package", rel, fset.Position(fn.Pos()).Line)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

const module = "github.com/git-venom/git-venom"
