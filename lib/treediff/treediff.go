// Package treediff compares two checkpoint trees, or a checkpoint and the
// current files, for git venom-diff (docs/json.md agent.checkpoint_diff). git
// itself does the diffing (diff-tree), so what a person sees is what git diff
// would show for the same two trees, attributes and binary rules included.
package treediff

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/quote"
)

// Changes of a file (docs/json.md).
const (
	Create = "create"
	Modify = "modify"
	Delete = "delete"
)

// File is one member of files[]: {repo, path, change, added, removed, binary}.
type File struct {
	Repo    string `json:"repo"`
	Path    string `json:"path"`
	PathB64 string `json:"path_b64,omitempty"`
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Binary  bool   `json:"binary"`
	raw     string
}

// Raw is the file's exact path.
func (f File) Raw() string { return f.raw }

// Patch is the patch of one path: {text, truncated, bytes}; bytes is the
// whole patch's size, text at most the limit.
type Patch struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Bytes     int    `json:"bytes"`
}

// Diff names two trees of one repository: From and To are anything
// diff-tree takes (commit or tree ids). Paths, when set, limits the diff
// to those git pathspecs (lib/pathspec's Set.Git: from the top, magic
// spelled out).
type Diff struct {
	Git   *gitcli.Runner
	Repo  string // the repo member, "." (docs/checkpoints.md#agents-turns-and-states)
	From  string
	To    string
	Paths []string
	// Leave are paths (from the top, as stored) the diff leaves out, each
	// with everything under it.
	Leave []string
}

func (d Diff) args(extra ...string) []string {
	args := append([]string{"diff-tree", "-r", "--no-renames", "--no-ext-diff", "--no-textconv"}, extra...)
	args = append(args, d.From, d.To)
	if len(d.Paths) > 0 || len(d.Leave) > 0 {
		args = append(append(args, "--"), d.Paths...)
	}
	for _, p := range d.Leave {
		args = append(args, ":(top,exclude,literal)"+p)
	}
	return args
}

// Files lists what differs, in git's path order.
func (d Diff) Files(ctx context.Context) ([]File, error) {
	out, err := d.Git.Run(ctx, d.args("-z", "--raw", "--numstat")...)
	if err != nil {
		return nil, err
	}
	return parse(out, d.Repo)
}

// parse reads -z --raw --numstat: raw records (":m m o o S\0path\0") first,
// then numstat records ("added\tremoved\tpath\0").
func parse(out []byte, repoName string) ([]File, error) {
	fields := bytes.Split(out, []byte{0})
	files := []File{}
	byPath := map[string]int{}
	for i := 0; i < len(fields); i++ {
		f := string(fields[i])
		if f == "" {
			continue
		}
		if strings.HasPrefix(f, ":") {
			if i+1 >= len(fields) {
				return nil, fmt.Errorf("diff-tree: raw record without a path")
			}
			i++
			p := string(fields[i])
			meta := strings.Fields(f)
			if len(meta) < 5 {
				return nil, fmt.Errorf("diff-tree: bad raw record %q", f)
			}
			change := Modify
			switch meta[4][:1] {
			case "A":
				change = Create
			case "D":
				change = Delete
			}
			shown, b64 := quote.JSONPath(p)
			byPath[p] = len(files)
			files = append(files, File{Repo: repoName, Path: shown, PathB64: b64, Change: change, raw: p})
			continue
		}
		parts := strings.SplitN(f, "\t", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("diff-tree: bad numstat record %q", f)
		}
		j, ok := byPath[parts[2]]
		if !ok {
			continue
		}
		if parts[0] == "-" {
			files[j].Binary = true
			continue
		}
		files[j].Added, _ = strconv.Atoi(parts[0])
		files[j].Removed, _ = strconv.Atoi(parts[1])
	}
	return files, nil
}

// Patch returns the plain patch, cut at max bytes at the end of a line.
func (d Diff) Patch(ctx context.Context, max int64) (*Patch, error) {
	out, err := d.Git.Run(ctx, d.args("-p", "--no-color", "--full-index")...)
	if err != nil {
		return nil, err
	}
	return cut(out, max), nil
}

// cut keeps whole lines up to max bytes; a single line longer than max is
// cut at a character boundary, so the text stays valid where git's was.
func cut(b []byte, max int64) *Patch {
	p := &Patch{Bytes: len(b)}
	if max <= 0 || int64(len(b)) <= max {
		p.Text = string(b)
		return p
	}
	p.Truncated = true
	head := b[:max]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	} else {
		for len(head) > 0 && !utf8.Valid(head) {
			head = head[:len(head)-1]
		}
	}
	p.Text = string(head)
	return p
}

// What Render shows.
type Mode int

const (
	Full      Mode = iota // git diff --stat --summary -p: the stat, the summary, the patch
	StatOnly              // git diff --stat
	NamesOnly             // git diff --name-only
)

// Render writes what git diff would in that mode.
func (d Diff) Render(ctx context.Context, w io.Writer, mode Mode, color bool, columns int) error {
	c := "--color=never"
	if color {
		c = "--color=always"
	}
	var env []string
	if columns > 0 {
		env = append(env, "COLUMNS="+strconv.Itoa(columns))
	}
	// Headers and the stat name paths as git's default quotes them
	// (core.quotePath=true, over the pin that machine reads use): with
	// false, git shows bytes of 0x80 and above raw, and a C1 control
	// (U+009B is CSI) or an invalid byte in a path would reach the
	// terminal. Bodies are the files' content, shown as git diff shows it.
	show := []string{"--stat", "--summary", "-p", c}
	switch mode {
	case StatOnly:
		show = []string{"--stat", c}
	case NamesOnly:
		show = []string{"--name-only"}
	}
	args := append([]string{"-c", "core.quotePath=true"}, d.args(show...)...)
	_, err := d.Git.RunCall(ctx, gitcli.Call{Stdout: w, Env: env}, args...)
	return err
}
