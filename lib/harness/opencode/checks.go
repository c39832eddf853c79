package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/statefile"
)

// CheckID is doctor's check of the OpenCode plugin.
const CheckID = "harness.opencode.plugin"

// commandLine finds the argv line; compiled on first use, not at every
// command's start.
var commandLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^const command = (\[.*\])$`) })

// State is what the plugin file at path holds: "missing", "ours" (what
// install writes), "changed" (git-venom's, edited since) or "foreign"
// (another file under git-venom's name, or a FIFO or device, which is
// never opened for reading so that it cannot hang doctor).
func State(path string) string {
	f, err := statefile.OpenRegular(path, os.O_RDONLY, 0, false)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing"
	}
	var notRegular *statefile.NotRegularError
	if errors.As(err, &notRegular) {
		return "foreign"
	}
	if err != nil {
		return "changed"
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return "changed"
	}
	return StateOf(data)
}

// StateOf is State of a plugin file's bytes.
func StateOf(data []byte) string {
	if !strings.HasPrefix(string(data), Marker) {
		return "foreign"
	}
	m := commandLine().FindSubmatch(data)
	var argv []string
	if m == nil || json.Unmarshal(m[1], &argv) != nil || string(PluginText(argv)) != string(data) {
		return "changed"
	}
	return "ours"
}

func truthy(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

// checks reports the plugin: missing while the repository has an opencode
// agent, changed since install wrote it, or shadowed: OPENCODE_PURE
// (what `opencode --pure` sets) loads no plugin file, and
// OPENCODE_DISABLE_PROJECT_CONFIG none of the repository's. doctor sees
// its own environment only: `--pure` given to one opencode command is
// not visible to it.
func checks(_ context.Context, in kind.Doctor) []kind.Finding {
	fix := "git venom-checkpoint hook install opencode"
	project := filepath.Join(in.Top, ".opencode", "plugins", PluginName)
	root, name := plugin(kind.Scope{Name: "user", Top: in.Top, Getenv: in.Getenv})
	user := filepath.Join(root, filepath.FromSlash(name))
	ps, us := State(project), State(user)
	agents := 0
	if in.State != nil {
		for _, a := range in.State.Active() {
			if a.Harness == Name {
				agents++
			}
		}
	}
	switch {
	case ps == "changed" || us == "changed":
		at := project
		if ps != "changed" {
			at = user
		}
		return []kind.Finding{{ID: CheckID, Status: "warn",
			Message: at + " was changed since hook install wrote it", Fix: fix + " (writes it again)"}}
	case ps != "ours" && us != "ours" && agents > 0:
		return []kind.Finding{{ID: CheckID, Status: "warn",
			Message: "this repository has OpenCode agents but no git-venom plugin at " + project, Fix: fix}}
	case ps != "ours" && us != "ours":
		return []kind.Finding{{ID: CheckID, Status: "ok", Message: "no OpenCode plugin"}}
	case truthy(in.Getenv("OPENCODE_PURE")):
		return []kind.Finding{{ID: CheckID, Status: "warn",
			Message: "OPENCODE_PURE is set: OpenCode loads no plugin file, so its turns are not recorded",
			Fix:     "unset OPENCODE_PURE, and run opencode without --pure"}}
	case ps == "ours" && us != "ours" && truthy(in.Getenv("OPENCODE_DISABLE_PROJECT_CONFIG")):
		return []kind.Finding{{ID: CheckID, Status: "warn",
			Message: "OPENCODE_DISABLE_PROJECT_CONFIG is set: OpenCode does not load " + project,
			Fix:     "unset it, or install the plugin for the user: " + fix + " --scope=user"}}
	}
	at := project
	if ps != "ours" {
		at = user
	}
	return []kind.Finding{{ID: CheckID, Status: "ok", Message: "plugin installed at " + at +
		" (opencode --pure skips it)"}}
}
