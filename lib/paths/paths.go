// Package paths renders repository paths in JSON: a path that is not valid
// UTF-8 appears with each invalid byte replaced by U+FFFD, plus path_b64
// holding the exact bytes (docs/json.md#conventions). A command line's b64:<base64>
// form is read by lib/pathspec, with every other way to name a path.
package paths

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/git-venom/git-venom/lib/journal"
)

// Display returns the path for JSON and, when it is not valid UTF-8, its
// exact bytes in base64.
func Display(p string) (string, string) {
	if utf8.ValidString(p) {
		return p, ""
	}
	return replaceInvalid(p), base64.StdEncoding.EncodeToString([]byte(p))
}

// replaceInvalid replaces each invalid byte with U+FFFD, one for one
// (strings.ToValidUTF8 would fold a run of them into one).
func replaceInvalid(p string) string {
	var b strings.Builder
	for len(p) > 0 {
		r, size := utf8.DecodeRuneInString(p)
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(p[:size])
		}
		p = p[size:]
	}
	return b.String()
}

// JSON returns {"path": ..., ["path_b64": ...]} plus extra members.
func JSON(p string, extra map[string]any) map[string]any {
	m := map[string]any{}
	for k, v := range extra {
		m[k] = v
	}
	shown, b64 := Display(p)
	m["path"] = shown
	if b64 != "" {
		m["path_b64"] = b64
	}
	return m
}

// FixSkipped fills path_b64 for a non-UTF-8 path.
func FixSkipped(s journal.Skipped) journal.Skipped {
	s.Path, s.PathB64 = Display(s.Path)
	return s
}

// FixSubmodule fills path_b64 for a non-UTF-8 path.
func FixSubmodule(s journal.Submodule) journal.Submodule {
	s.Path, s.PathB64 = Display(s.Path)
	return s
}

// Raw returns the exact bytes of a path rendered by Display.
func Raw(path, b64 string) string {
	if b64 == "" {
		return path
	}
	if b, err := base64.StdEncoding.DecodeString(b64); err == nil {
		return string(b)
	}
	return path
}
