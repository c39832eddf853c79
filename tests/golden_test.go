package tests

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files instead of comparing (restic's -update):
// go test ./tests -run TestX -update. tests/run never passes it.
var update = flag.Bool("update", false, "rewrite tests/testdata/golden/*.json")

var (
	oidRE  = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	timeRE = regexp.MustCompile(`"(ts|at)":"[^"]*"`)
)

// Normalize replaces what varies from run to run in a command's JSON output
// (STYLE.md §3): each distinct 40-hex oid becomes <oid1>, <oid2>, ... in order
// of appearance, ts and at values become <ts>, and the test's temp paths
// become $REPO (the repository) and $ROOT (the temp dir around it).
func (e *Env) Normalize(out string) string {
	seen := map[string]string{}
	out = oidRE.ReplaceAllStringFunc(out, func(oid string) string {
		if n, ok := seen[oid]; ok {
			return n
		}
		seen[oid] = fmt.Sprintf("<oid%d>", len(seen)+1)
		return seen[oid]
	})
	out = timeRE.ReplaceAllString(out, `"$1":"<ts>"`)
	out = strings.ReplaceAll(out, e.Dir, "$REPO")
	return strings.ReplaceAll(out, e.Root, "$ROOT")
}

// Golden compares a command's JSON output, normalised, with
// tests/testdata/golden/<name>.json: the same members with the same values, in
// the same order (docs/json.md fixes the order). With -update it writes
// the file instead.
func (e *Env) Golden(t *testing.T, name, out string) {
	t.Helper()
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, []byte(strings.TrimSpace(e.Normalize(out))), "", "  "), "output: %s", out)
	pretty.WriteByte('\n')
	path := filepath.Join(repoRoot(), "tests", "testdata", "golden", name+".json")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, pretty.Bytes(), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: run go test ./tests -run %s -update, and review it", t.Name())
	assert.JSONEq(t, string(want), pretty.String(), "golden file %s", path)
	assert.Equal(t, string(want), pretty.String(), "golden file %s: the member order differs", path)
}
