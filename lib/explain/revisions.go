package explain

import (
	"context"
	"strings"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/gitcli"
	"github.com/git-venom/git-venom/lib/refs"
)

// Revisions turns what the person named, a revision or a range (A..B,
// A...B, as git rev-list reads them), into commit ids, oldest first. A
// name that is no commit is not_found.commit; an empty range is no
// commits.
func Revisions(ctx context.Context, g *gitcli.Runner, spec string) ([]string, error) {
	bad := func(err error) error {
		return errcode.Newf(errcode.NotFoundCommit, map[string]string{"commit": spec},
			"%q names no commit here", spec).Wrap(err).Hint("name a commit as git does: HEAD, a branch, an id, or A..B")
	}
	if spec == "" || strings.HasPrefix(spec, "-") {
		return nil, bad(nil)
	}
	if strings.Contains(spec, "..") {
		out, err := g.Run(ctx, "rev-list", "--reverse", "--end-of-options", spec, "--")
		if err != nil {
			return nil, bad(err)
		}
		return strings.Fields(string(out)), nil
	}
	out, err := g.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", spec+"^{commit}")
	if err != nil {
		// --quiet: git says nothing more than that it is no commit.
		return nil, bad(nil)
	}
	return strings.Fields(string(out)), nil
}

// NotesRef is where --note stores explanations; never the user's notes.
const NotesRef = "refs/notes/venom"

// StoreNote writes text as the note of commit under NotesRef, replacing
// the note explain wrote before. git(1) makes the notes commit, as
// `git notes` always does.
//
// git notes writes its ref through a symbolic ref: one at NotesRef would
// have the notes commit written to the ref it names (a branch, say), so
// the note is refused then (refs.ErrSymbolic; doctor names the ref).
func StoreNote(ctx context.Context, g *gitcli.Runner, commit, text string) error {
	if target, err := g.Run(ctx, "symbolic-ref", "--quiet", NotesRef); err == nil {
		return errcode.Newf(errcode.FailedNote, map[string]string{"commit": commit, "ref": NotesRef},
			"%s is a symbolic ref to %s: no note is stored through it", NotesRef, strings.TrimSpace(string(target))).
			Wrap(refs.ErrSymbolic).Hint("git venom-checkpoint doctor   says how to remove it")
	}
	_, err := g.RunInput(ctx, []byte(text), "notes", "--ref="+NotesRef, "add", "--force", "--file=-", "--end-of-options", commit)
	if err != nil {
		return errcode.Newf(errcode.FailedNote, map[string]string{"commit": commit, "ref": NotesRef},
			"could not store the note of %s under %s", commit, NotesRef).Wrap(err)
	}
	return nil
}
