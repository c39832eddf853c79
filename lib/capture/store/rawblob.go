package store

import (
	"bytes"
	"context"
	"os"
	"path"
	"strings"

	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/gitconfig"
	"github.com/git-venom/git-venom/lib/gitfiles"
	"github.com/git-venom/git-venom/lib/repo"
	"github.com/git-venom/git-venom/lib/statefile"
	"github.com/git-venom/git-venom/lib/treepath"
)

// A file git stores as it is has its bytes as its blob, so a capture can
// compute the id instead of running git hash-object (~10 ms). Without a CR
// byte, only the filter, working-tree-encoding and ident attributes (or an
// [attr] macro) can change it; NoConversion trusts a path only when no
// attribute source that applies mentions them, and otherwise leaves it to
// git (docs/checkpoints.md#files-stored-as-they-are).

// NoConversion tells the files git would store unconverted.
type NoConversion struct {
	top string
	// usable: the attributes outside the tree and the config were read and
	// say nothing that could convert a file.
	usable bool
	// quietDirs caches, per folder of the tree ("" for the top), whether
	// its .gitattributes and those above it are quiet.
	quietDirs map[string]bool
	// words are those whose presence makes an attributes source doubtful:
	// attrWords, or smudgeWords for the way out.
	words [][]byte
}

// attrWords are the words whose presence in an attributes source may mean a
// conversion (lower case; sources are folded before the search).
var attrWords = [][]byte{[]byte("filter"), []byte("ident"), []byte("encoding"), []byte("[attr]")}

// maxAttrFile bounds the attributes files read whole; a larger one (git
// ignores those past 100 MB) is taken as not quiet.
const maxAttrFile = 1 << 20

func NewNoConversion(r *repo.Repo) *NoConversion {
	n := &NoConversion{top: r.Top, quietDirs: map[string]bool{}, words: attrWords}
	n.usable = settingsQuiet(r, n.words)
	return n
}

// The way out is convert_to_working_tree (convert.c, git 2.39): ident,
// line endings, working-tree-encoding, smudge. Its line-ending step may
// add CRs to a file with none, so the attributes text, eol and crlf count
// too; without them, and core.autocrlf unset or false, a file is never
// converted (core.eol applies only under text). The macro binary only
// unsets text; any other macro is an [attr] line.

// smudgeWords are attrWords and the attributes that decide line endings
// on the way out.
var smudgeWords = append(append([][]byte(nil), attrWords...), []byte("text"), []byte("eol"), []byte("crlf"))

// NewNoSmudge is NoConversion for the way out: AttributesQuiet then tells
// the files whose blob git's checkout writes byte for byte, whatever
// bytes it holds. Attributes are read as checkout-index with a temporary
// index of the written files reads them when no .gitattributes is among
// those files: from the tree as it is now, and outside it. Any setting of
// core.autocrlf but false, or one that cannot be read, leaves nothing quiet.
func NewNoSmudge(ctx context.Context, r *repo.Repo) *NoConversion {
	n := &NoConversion{top: r.Top, quietDirs: map[string]bool{}, words: smudgeWords}
	n.usable = autocrlfOff(ctx, r) && settingsQuiet(r, n.words)
	return n
}

// autocrlfOff reports whether core.autocrlf is unset or false, as git
// reads it here (every scope, the last value winning).
func autocrlfOff(ctx context.Context, r *repo.Repo) bool {
	entries, err := r.ConfigLast(ctx, "core.autocrlf")
	if err != nil {
		return false
	}
	e, ok := entries["core.autocrlf"]
	if !ok {
		return true
	}
	b, known := e.Bool()
	return known && !b || e.Value == "0"
}

// attributesQuiet reports whether no attribute could make git convert the
// file at path (relative to the top, '/'-separated). git then stores it as
// it is if it holds no CR byte.
func (n *NoConversion) AttributesQuiet(path string) bool {
	return n.usable && n.dirQuiet(treepath.Parent(path))
}

// dirQuiet reports whether the .gitattributes files of dir and of every
// folder above it are quiet.
func (n *NoConversion) dirQuiet(dir string) bool {
	if q, ok := n.quietDirs[dir]; ok {
		return q
	}
	q := treeAttrQuiet(treepath.Abs(n.top, path.Join(dir, ".gitattributes")), n.words)
	if q && dir != "" {
		q = n.dirQuiet(treepath.Parent(dir))
	}
	n.quietDirs[dir] = q
	return q
}

// treeAttrQuiet reads a .gitattributes of the tree. git opens those without
// following a link (and ignores one that is a link), so anything but an
// absent file or a regular one is taken as not quiet.
func treeAttrQuiet(path string, words [][]byte) bool {
	fi, err := os.Lstat(path)
	if absent(err) {
		return true
	}
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return attrFileQuiet(path, words)
}

// attrFileQuiet reads one attributes file, following links as git does for
// those outside the tree: an absent file is quiet; one that cannot be read
// is not. Quiet is a file where none of words appears.
func attrFileQuiet(path string, words [][]byte) bool {
	fi, err := os.Stat(path)
	if absent(err) {
		return true
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxAttrFile {
		return false
	}
	text, err := statefile.ReadRegular(path, false)
	if err != nil {
		return absent(err)
	}
	text = bytes.ToLower(text)
	for _, w := range words {
		if bytes.Contains(text, w) {
			return false
		}
	}
	return true
}

// absent: the error says there is no file at the path.
func absent(err error) bool {
	return treepath.Gone(err)
}

// settingsQuiet reports whether the attributes outside the tree are quiet,
// reading the config for where the global ones are. Whatever is doubtful
// (git variables that select other files, a config file git might read
// differently, a path this cannot expand) answers no.
func settingsQuiet(r *repo.Repo, words [][]byte) bool {
	var plain []string
	for _, kv := range r.Git.Env {
		name, _, _ := strings.Cut(kv, "=")
		// Our own: the repository's paths, and optional locks.
		if name != "GIT_DIR" && name != "GIT_WORK_TREE" && name != "GIT_OPTIONAL_LOCKS" {
			plain = append(plain, kv)
		}
	}
	// GIT_ATTR_NOSYSTEM, GIT_ATTR_SOURCE, GIT_CONFIG_PARAMETERS and the
	// like: not plain, and not worth following.
	if !gitconfig.PlainEnvironment(plain) {
		return false
	}
	configs, attrs, ok := gitfiles.Outside(r.Files())
	if !ok {
		return false
	}
	w := gitfiles.ConfigWalk{Home: gitcli.Getenv(r.Git.Env, "HOME"), Top: r.Top}
	for _, c := range configs {
		if !w.Read(c, 0) {
			return false
		}
	}
	for _, a := range append(attrs, w.AttributesFiles...) {
		if !attrFileQuiet(a, words) {
			return false
		}
	}
	return true
}
