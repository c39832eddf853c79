package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// pins is the configuration docs/checkpoints.md#how-a-capture-runs pins on every git command.
var pins = []string{
	"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
	"-c", "core.untrackedCache=false", "-c", "core.quotePath=false",
	"-c", "status.showUntrackedFiles=normal",
}

// repo is the working copy under measurement.
type repo struct {
	top     string
	index   string   // the user's index, absolute
	objects string   // the object directory, absolute
	private string   // where persistent strategies keep their state
	tmp     string   // scratch for temporary index copies
	changed []string // the files the scenario writes
}

// result is what one timed run of a strategy produced.
type result struct {
	tree   string // the captured tree, when the strategy reports one
	commit string // else a commit whose tree is the captured one
}

// strategy is one way of capturing the tree.
type strategy struct {
	name string
	// persistent strategies keep state between runs; in a scenario that
	// changes files each timed run starts from state warmed on the committed
	// tree, as a capture loop would have left it.
	persistent bool
	// keepObjects strategies own refs to what they write, so their objects
	// are not removed after a run; they are timed after the others.
	keepObjects bool
	seed        func(r *repo, p *proc) error
	run         func(r *repo, p *proc) (result, error)
	cleanup     func(r *repo, p *proc) error
}

func gitArgs(cfg []string, args ...string) []string {
	return append(append([]string(nil), cfg...), args...)
}

// copyIndex copies the user's index keeping its mtime (cp -p), which racy-git
// detection needs: a copy with a new mtime would make racily clean entries
// look clean.
func copyIndex(p *proc, src, dst string) error {
	if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
		return err
	}
	_, err := p.cmd(nil, "cp", "-p", src, dst)
	return err
}

// clearAssumeUnchanged is docs/checkpoints.md#how-a-capture-runs step 2, with the filter in Go.
func clearAssumeUnchanged(p *proc, cfg []string) error {
	out, err := p.run(nil, gitArgs(cfg, "ls-files", "-v", "-z")...)
	if err != nil {
		return err
	}
	var in []byte
	for _, e := range bytes.Split(out, []byte{0}) {
		if len(e) > 2 && e[0] >= 'a' && e[0] <= 'z' {
			in = append(append(in, e[2:]...), 0)
		}
	}
	_, err = p.run(in, gitArgs(cfg, "update-index", "-z", "--no-assume-unchanged", "--stdin")...)
	return err
}

// statusPaths lists, from status --porcelain=v1 -z --no-renames, the paths
// whose worktree side differs from the index: files for update-index, and
// untracked directories (as untracked=normal shows them) for git add.
func statusPaths(out []byte) (files, dirs []byte) {
	for _, e := range bytes.Split(out, []byte{0}) {
		if len(e) < 4 {
			continue
		}
		if e[0] != '?' && e[1] == ' ' {
			continue
		}
		path := e[3:]
		if path[len(path)-1] == '/' {
			dirs = append(append(dirs, path...), 0)
		} else {
			files = append(append(files, path...), 0)
		}
	}
	return files, dirs
}

const message = "venom checkpoint bench/k1\n\nVenom-Agent: bench\nVenom-Checkpoint: k1\nVenom-Reason: manual\n"

func commitTree(p *proc, cfg []string, tree string) (string, error) {
	out, err := p.run([]byte(message), gitArgs(cfg, "commit-tree", "-p", "HEAD", "-F", "-", tree)...)
	return string(bytes.TrimSpace(out)), err
}

// statusStrategy is the baseline: plain git status on the user's index.
func statusStrategy() strategy {
	return strategy{name: "status", run: func(r *repo, p *proc) (result, error) {
		_, err := p.run(nil, "status", "--porcelain")
		return result{}, err
	}}
}

// hashStrategy stores the scenario's files as blobs and nothing else: the
// floor a capture of 1,000 changes is measured against.
func hashStrategy() strategy {
	return strategy{name: "hash", run: func(r *repo, p *proc) (result, error) {
		if len(r.changed) == 0 {
			return result{}, nil
		}
		var in []byte
		for _, f := range r.changed {
			in = append(append(in, f...), '\n')
		}
		_, err := p.run(in, gitArgs(pins, "hash-object", "-w", "--stdin-paths")...)
		return result{}, err
	}}
}

// recipeStrategy is docs/checkpoints.md#how-a-capture-runs steps 1-5 (no update-ref).
func recipeStrategy() strategy {
	return strategy{name: "recipe", run: func(r *repo, p *proc) (result, error) {
		index, err := p.line(gitArgs(pins, "rev-parse", "--path-format=absolute", "--git-path", "index")...)
		if err != nil {
			return result{}, err
		}
		tmp := filepath.Join(r.tmp, "recipe.index")
		if err := copyIndex(p, index, tmp); err != nil {
			return result{}, err
		}
		defer os.Remove(tmp)
		q := p.with("GIT_INDEX_FILE=" + tmp)
		defer func() { p.cpu += q.cpu }()
		if err := clearAssumeUnchanged(q, pins); err != nil {
			return result{}, err
		}
		if _, err := q.run(nil, gitArgs(pins, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all")...); err != nil {
			return result{}, err
		}
		if _, err := q.run([]byte(".\x00"), gitArgs(pins, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")...); err != nil {
			return result{}, err
		}
		tree, err := q.line(gitArgs(pins, "write-tree")...)
		if err != nil {
			return result{}, err
		}
		os.Remove(tmp)
		_, err = commitTree(p, pins, tree)
		return result{tree: tree}, err
	}}
}

// scanOnce stages what status listed into the index p's GIT_INDEX_FILE names
// and writes the tree.
func scanOnce(p *proc, cfg []string, untracked string) (string, error) {
	out, err := p.run(nil, gitArgs(cfg, "status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files="+untracked)...)
	if err != nil {
		return "", err
	}
	files, dirs := statusPaths(out)
	if len(files) > 0 {
		if _, err := p.run(files, gitArgs(cfg, "update-index", "--add", "--remove", "--replace", "-z", "--stdin")...); err != nil {
			return "", err
		}
	}
	if len(dirs) > 0 {
		if _, err := p.run(dirs, gitArgs(cfg, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")...); err != nil {
			return "", err
		}
	}
	return p.line(gitArgs(cfg, "write-tree")...)
}

// singleStrategy is (c): a copy of the user's index, one status, and only the
// listed paths staged.
func singleStrategy() strategy {
	return strategy{name: "single", run: func(r *repo, p *proc) (result, error) {
		tmp := filepath.Join(r.tmp, "single.index")
		if err := copyIndex(p, r.index, tmp); err != nil {
			return result{}, err
		}
		defer os.Remove(tmp)
		q := p.with("GIT_INDEX_FILE=" + tmp)
		defer func() { p.cpu += q.cpu }()
		tree, err := scanOnce(q, pins, "all")
		return result{tree: tree}, err
	}}
}

// variant is one configuration of the persistent private index (d).
type variant struct {
	name      string
	version   int      // index version set once when seeding (0: keep)
	untracked string   // all or normal
	extra     []string // -c settings after the pins
	add       bool     // git add -A instead of status + update-index
	commit    bool     // also commit-tree and update-ref (e)
}

func variants() []variant {
	return []variant{
		{name: "d-rfc", untracked: "all"},
		{name: "d-uall", untracked: "all", extra: []string{"-c", "status.showUntrackedFiles=all"}},
		{name: "d-normal", untracked: "normal"},
		{name: "d-v4", version: 4, untracked: "all", extra: []string{"-c", "status.showUntrackedFiles=all"}},
		{name: "d-nopreload", untracked: "all", extra: []string{"-c", "status.showUntrackedFiles=all", "-c", "core.preloadIndex=false"}},
		{name: "d-many", untracked: "all", extra: []string{"-c", "status.showUntrackedFiles=all", "-c", "feature.manyFiles=true"}},
		{name: "d-add", untracked: "all", add: true},
	}
}

func (v variant) config() []string {
	cfg := gitArgs(pins, "-c", "core.untrackedCache=true", "-c", "core.splitIndex=false", "-c", "core.preloadIndex=true")
	return append(cfg, v.extra...)
}

func persistentStrategy(v variant) strategy {
	cfg := v.config()
	index := func(r *repo) string { return filepath.Join(r.private, v.name+".index") }
	s := strategy{name: v.name, persistent: true}
	s.seed = func(r *repo, p *proc) error {
		if err := copyIndex(p, r.index, index(r)); err != nil {
			return err
		}
		q := p.with("GIT_INDEX_FILE=" + index(r))
		if v.version != 0 {
			if _, err := q.run(nil, gitArgs(cfg, "update-index", "--index-version", fmt.Sprint(v.version))...); err != nil {
				return err
			}
		}
		if _, err := q.run(nil, gitArgs(cfg, "update-index", "--untracked-cache")...); err != nil {
			return err
		}
		return clearAssumeUnchanged(q, cfg)
	}
	s.run = func(r *repo, p *proc) (result, error) {
		q := p.with("GIT_INDEX_FILE=" + index(r))
		defer func() { p.cpu += q.cpu }()
		var tree string
		var err error
		if v.add {
			if _, err = q.run([]byte(".\x00"), gitArgs(cfg, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")...); err != nil {
				return result{}, err
			}
			tree, err = q.line(gitArgs(cfg, "write-tree")...)
		} else {
			tree, err = scanOnce(q, cfg, v.untracked)
		}
		if err != nil || !v.commit {
			return result{tree: tree}, err
		}
		commit, err := commitTree(p, cfg, tree)
		if err != nil {
			return result{}, err
		}
		_, err = p.run(nil, gitArgs(cfg, "update-ref", "refs/venom-bench/full", commit)...)
		return result{tree: tree}, err
	}
	if v.commit {
		s.cleanup = func(r *repo, p *proc) error {
			_, err := p.run(nil, "update-ref", "-d", "refs/venom-bench/full")
			return err
		}
	}
	return s
}

var hexID = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// venomStrategy times our own binary. Its state lives in the repository, so
// it is persistent and keeps its objects.
func venomStrategy(bin string) strategy {
	return strategy{name: "venom", persistent: true, keepObjects: true,
		run: func(r *repo, p *proc) (result, error) {
			out, err := p.cmd(nil, bin, "--agent=bench", "--json")
			if err != nil {
				return result{}, err
			}
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				return result{}, fmt.Errorf("venom output: %v: %.200s", err, out)
			}
			var res result
			find(v, &res)
			if res.tree == "" && res.commit == "" {
				// {"agent":"a","checkpoint":"k3",...}: check the tree of
				// its ref (docs/checkpoints.md#refs) instead.
				top, _ := v.(map[string]any)
				agent, _ := top["agent"].(string)
				id, _ := top["checkpoint"].(string)
				if agent != "" && len(id) > 1 && id[0] == 'k' {
					res.commit = "refs/venom/checkpoints/" + agent + "/" + id[1:]
				}
			}
			return res, nil
		}}
}

// find looks for the first "tree" and "commit" object ids in a JSON value.
func find(v any, res *result) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && hexID.MatchString(s) {
				if k == "tree" && res.tree == "" {
					res.tree = s
				}
				if k == "commit" && res.commit == "" {
					res.commit = s
				}
			}
			find(e, res)
		}
	case []any:
		for _, e := range x {
			find(e, res)
		}
	}
}
