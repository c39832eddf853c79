package qwen

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-venom/git-venom/lib/harness/jsontext"
	"github.com/git-venom/git-venom/lib/harness/kind"
	"github.com/git-venom/git-venom/lib/harness/ojson"
	"github.com/git-venom/git-venom/lib/statefile"
)

// CheckID is doctor's check of Qwen Code's hooks.
const CheckID = "harness.qwen-code.hooks"

// settingsFile is what the check reads of a Qwen Code settings file.
type settingsFile struct {
	DisableAllHooks *bool `json:"disableAllHooks"`
	Hooks           map[string][]struct {
		Hooks []struct {
			Command string `json:"command"`
		} `json:"hooks"`
	} `json:"hooks"`
	Security struct {
		FolderTrust struct {
			Enabled bool `json:"enabled"`
		} `json:"folderTrust"`
	} `json:"security"`
}

// readJSONC reads a settings file as Qwen Code does, comments and all,
// into v; false when it is missing, unreadable or not a regular file (a
// FIFO planted there must not hang doctor).
func readJSONC(path string, v any) bool {
	f, err := statefile.OpenRegular(path, os.O_RDONLY, 0, false)
	if err != nil {
		return false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return false
	}
	doc, err := jsontext.Parse(data, true)
	if err != nil {
		return false
	}
	root, err := doc.Decode(doc.Root)
	if err != nil {
		return false
	}
	return json.Unmarshal(ojson.Compact(root), v) == nil
}

// ours reports a settings file that runs git-venom's hook for Qwen Code.
func (s *settingsFile) ours() bool {
	for _, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if kind.IsHookCommand(Name, h.Command) {
					return true
				}
			}
		}
	}
	return false
}

func truthy(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

// checks reports whether Qwen Code runs git-venom's hooks here: none
// installed while the repository has qwen-code agents; all hooks turned
// off (disableAllHooks, the project's file over the user's, or
// QWEN_CODE_SAFE_MODE / QWEN_CODE_SIMPLE in doctor's environment, what
// --safe-mode and --bare set); or hooks in the repository's file only
// while folder trust is on and the folder is not trusted, when Qwen Code
// does not load that file.
func checks(_ context.Context, in kind.Doctor) []kind.Finding {
	fix := "git venom-checkpoint hook install " + Name
	projectPath := filepath.Join(in.Top, ".qwen", "settings.json")
	userPath := filepath.Join(home(in.Getenv), "settings.json")
	var project, user settingsFile
	readJSONC(projectPath, &project)
	readJSONC(userPath, &user)
	agents := 0
	if in.State != nil {
		for _, a := range in.State.Active() {
			if a.Harness == Name {
				agents++
			}
		}
	}
	disabled := user.DisableAllHooks
	if project.DisableAllHooks != nil {
		disabled = project.DisableAllHooks
	}
	switch {
	case !project.ours() && !user.ours() && agents > 0:
		return []kind.Finding{{ID: CheckID, Status: "warn",
			Message: "this repository has Qwen Code agents but no git-venom hooks in " + projectPath +
				" or " + userPath, Fix: fix}}
	case !project.ours() && !user.ours():
		return []kind.Finding{{ID: CheckID, Status: "ok", Message: "no Qwen Code hooks"}}
	case disabled != nil && *disabled:
		at := userPath
		if project.DisableAllHooks != nil {
			at = projectPath
		}
		return []kind.Finding{{ID: CheckID, Status: "warn",
			Message: "disableAllHooks is true in " + at + ": Qwen Code runs no hook, so its turns are not recorded",
			Fix:     "remove disableAllHooks from " + at}}
	case truthy(in.Getenv("QWEN_CODE_SAFE_MODE")) || truthy(in.Getenv("QWEN_CODE_SIMPLE")):
		return []kind.Finding{{ID: CheckID, Status: "warn",
			Message: "QWEN_CODE_SAFE_MODE or QWEN_CODE_SIMPLE is set: Qwen Code runs no hook, so its turns are not recorded",
			Fix:     "unset them, and run qwen without --safe-mode or --bare"}}
	case project.ours() && !user.ours() && user.Security.FolderTrust.Enabled && !trusted(in.Getenv, in.Top):
		return []kind.Finding{{ID: CheckID, Status: "warn",
			Message: "folder trust is on and " + in.Top + " is not trusted: Qwen Code does not load " + projectPath,
			Fix:     "trust the folder in Qwen Code (/permissions), or install for the user: " + fix + " --scope=user"}}
	}
	at := projectPath
	if !project.ours() {
		at = userPath
	}
	return []kind.Finding{{ID: CheckID, Status: "ok", Message: "hooks installed in " + at +
		" (qwen --safe-mode and --bare skip them)"}}
}

// trusted reads Qwen Code's trust rules ($QWEN_CODE_TRUSTED_FOLDERS_PATH,
// else trustedFolders.json in its folder: {path: TRUST_FOLDER |
// TRUST_PARENT | DO_NOT_TRUST}) as it does: the deepest rule whose folder
// holds dir decides, DO_NOT_TRUST winning a tie; no rule, not trusted.
// Paths are compared as written and with their links resolved, as Qwen
// Code compares them.
func trusted(getenv func(string) string, dir string) bool {
	path := getenv("QWEN_CODE_TRUSTED_FOLDERS_PATH")
	if path == "" {
		path = filepath.Join(home(getenv), "trustedFolders.json")
	}
	var rules map[string]string
	if !readJSONC(path, &rules) {
		return false
	}
	depth, verdict := -1, false
	for p, level := range rules {
		var trust bool
		switch level {
		case "TRUST_FOLDER":
			trust = true
		case "TRUST_PARENT":
			trust, p = true, filepath.Dir(p)
		case "DO_NOT_TRUST":
		default:
			continue
		}
		d := holds(p, dir)
		if d >= 0 && (d > depth || d == depth && !trust) {
			depth, verdict = d, trust
		}
	}
	return depth >= 0 && verdict
}

// holds is the depth of the deepest form of folder (as written, links
// resolved) that holds a form of dir, or -1 when none does.
func holds(folder, dir string) int {
	depth := -1
	for _, f := range forms(folder) {
		for _, d := range forms(dir) {
			rel, err := filepath.Rel(f, d)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			n := 0
			if f != "/" {
				n = len(strings.Split(strings.Trim(f, "/"), "/"))
			}
			depth = max(depth, n)
		}
	}
	return depth
}

// forms is a path as written, cleaned, and with its links resolved.
func forms(p string) []string {
	out := []string{filepath.Clean(p)}
	if r, err := filepath.EvalSymlinks(p); err == nil && r != out[0] {
		out = append(out, r)
	}
	return out
}
