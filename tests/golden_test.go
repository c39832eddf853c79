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
// go test ./tests -run TestX -update, or VENOM_TEST_UPDATE_GOLDEN=1 where a flag
// cannot be passed. tests/run never sets either.
var update = flag.Bool("update", false, "rewrite tests/testdata/golden/* instead of comparing (also VENOM_TEST_UPDATE_GOLDEN=1)")

func updatingGolden() bool { return *update || os.Getenv("VENOM_TEST_UPDATE_GOLDEN") == "1" }

var (
	oidRE  = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	uuidRE = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	timeRE = regexp.MustCompile(`"(ts|at)":"[^"]*"`)
	isoRE  = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b`)
)

// Normalize replaces what varies between runs in a command's output, the
// one normaliser of every golden file: distinct oids become <oid1>, ...,
// uuids <uuid1>, ..., ts, at and other clock times <ts>, and the temp
// paths $REPO and $ROOT. The rest (fixed-clock commits, blobs, plan ids,
// checkpoint and turn ids, counts) is the same every run, and stays.
func (e *Env) Normalize(out string) string {
	out = numbered(out, oidRE, "oid")
	out = numbered(out, uuidRE, "uuid")
	out = timeRE.ReplaceAllString(out, `"$1":"<ts>"`)
	out = isoRE.ReplaceAllString(out, "<ts>")
	out = strings.ReplaceAll(out, e.Dir, "$REPO")
	return strings.ReplaceAll(out, e.Root, "$ROOT")
}

// numbered replaces each distinct match of re by <what1>, <what2>, ... in
// order of appearance, so a golden file still shows which are the same.
func numbered(out string, re *regexp.Regexp, what string) string {
	seen := map[string]string{}
	return re.ReplaceAllStringFunc(out, func(m string) string {
		if n, ok := seen[m]; ok {
			return n
		}
		seen[m] = fmt.Sprintf("<%s%d>", what, len(seen)+1)
		return seen[m]
	})
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
	want, path := golden(t, name+".json", pretty.String())
	assert.JSONEq(t, want, pretty.String(), "golden file %s", path)
	assert.Equal(t, want, pretty.String(), "golden file %s: the member order differs", path)
}

// GoldenText compares text output (human text, JSON lines), normalised,
// byte for byte with tests/testdata/golden/<file>.
func (e *Env) GoldenText(t *testing.T, file, out string) {
	t.Helper()
	got := e.Normalize(out)
	want, path := golden(t, file, got)
	assert.Equal(t, want, got, "golden file %s", path)
}

// golden reads the golden file, or with -update (VENOM_TEST_UPDATE_GOLDEN=1)
// writes got there and returns it.
func golden(t *testing.T, file, got string) (want, path string) {
	t.Helper()
	path = filepath.Join(repoRoot(), "tests", "testdata", "golden", file)
	if updatingGolden() {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return got, path
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: run VENOM_TEST_UPDATE_GOLDEN=1 go test ./tests -run %s, and review it", t.Name())
	return string(b), path
}
