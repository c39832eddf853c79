package kind

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-venom/git-venom/lib/harness/jsontext"
	"github.com/git-venom/git-venom/lib/harness/ojson"
)

// CheckSettingsHooks is doctor's check of in.Kind, a harness whose hooks
// `hook install` writes into JSON settings files (Kind.Settings): each
// scope's file that exists parses as the harness reads it (comments where
// SettingsComments); git-venom's hooks cover every event of Kind.Events in
// one scope at least, when the repository has agents of that harness or
// any hook is there; and git and git-venom-checkpoint, which the hook
// runs, are on PATH.
func CheckSettingsHooks(in Doctor, id string) Finding {
	k := in.Kind
	type file struct{ path, flag string }
	var found []file
	var seen []string
	events := map[string]bool{}
	for _, scope := range []struct{ name, flag string }{{"local", ""}, {"project", " --scope=project"}, {"user", " --scope=user"}} {
		root, name := k.Settings(Scope{Name: scope.name, Top: in.Top, Getenv: in.Getenv})
		path := filepath.Join(root, filepath.FromSlash(name))
		if slices.Contains(seen, path) || (root == in.Top && in.Top == "") {
			continue
		}
		seen = append(seen, path)
		data, err := in.ReadSettings(root, name)
		if err != nil {
			return Finding{ID: id, Status: "warn", Message: fmt.Sprintf("cannot read %s: %v", path, err),
				Fix: "make " + path + " a readable regular file"}
		}
		if len(data) == 0 {
			continue // missing (or empty: the harness reads no settings)
		}
		on, err := hookEvents(data, k)
		if err != nil {
			return Finding{ID: id, Status: "warn",
				Message: fmt.Sprintf("%s does not parse (%v): %s ignores it, hooks and all", path, err, k.Title),
				Fix:     "mend " + path + " at that line, then git venom-checkpoint hook install " + k.Name + scope.flag}
		}
		if len(on) > 0 {
			found = append(found, file{path, scope.flag})
		}
		for _, e := range on {
			events[e] = true
		}
	}
	agents := 0
	if in.State != nil {
		for _, a := range in.State.Active() {
			if a.Harness == k.Name {
				agents++
			}
		}
	}
	fix := "git venom-checkpoint hook install " + k.Name
	switch {
	case len(found) == 0 && agents > 0:
		return Finding{ID: id, Status: "warn", Fix: fix, Message: fmt.Sprintf(
			"this repository has %s agents but no git-venom hooks in %s", k.Title, strings.Join(seen, " or "))}
	case len(found) == 0:
		return Finding{ID: id, Status: "ok", Message: "no " + k.Title + " hooks"}
	}
	var missing []string
	for _, e := range k.Events {
		if !events[e.Name] {
			missing = append(missing, e.Name)
		}
	}
	if len(missing) > 0 {
		return Finding{ID: id, Status: "warn", Fix: fix + found[0].flag, Message: fmt.Sprintf(
			"git-venom's %s hooks in %s lack %s: those events are not recorded", k.Title, found[0].path,
			strings.Join(missing, ", "))}
	}
	for _, prog := range []string{"git", "git-venom-checkpoint"} {
		if _, err := lookPath(prog, in.Getenv); err != nil {
			return Finding{ID: id, Status: "warn", Message: fmt.Sprintf(
				"%s runs git-venom's hooks (%s) with %s, which is not on PATH: every hook fails", k.Title, found[0].path, prog),
				Fix: "put the folder holding " + prog + " on the PATH " + k.Title + " starts with (install.sh's PREFIX/bin)"}
		}
	}
	paths := make([]string, len(found))
	for i, f := range found {
		paths[i] = f.path
	}
	return Finding{ID: id, Status: "ok", Message: fmt.Sprintf("git-venom's %s hooks are in %s", k.Title, strings.Join(paths, ", "))}
}

// hookEvents lists the events whose hooks in a settings file's text run
// git-venom's hook for k; an error when the text does not parse as the
// harness reads it.
func hookEvents(data []byte, k *Kind) ([]string, error) {
	doc, err := jsontext.Parse(data, k.SettingsComments)
	if err != nil {
		return nil, err
	}
	root, err := doc.Decode(doc.Root)
	if err != nil {
		return nil, err
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(ojson.Compact(root), &s) != nil {
		return nil, nil // not a settings object of hooks: none of ours
	}
	var out []string
	for event, groups := range s.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if IsHookCommand(k.Name, h.Command) && !slices.Contains(out, event) {
					out = append(out, event)
				}
			}
		}
	}
	return out, nil
}

// lookPath finds prog on the PATH of getenv, as the harness would.
func lookPath(prog string, getenv func(string) string) (string, error) {
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, prog)
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not on PATH", prog)
}
