package quote

// Paths in JSON: a path that is not valid UTF-8 appears with each invalid
// byte replaced by U+FFFD, plus path_b64 holding the exact bytes
// (docs/json.md#conventions), as Text and C show it to people. A command
// line's b64:<base64> form is read by lib/pathspec.

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// JSONPath returns the path for JSON and, when it is not valid UTF-8, its
// exact bytes in base64.
func JSONPath(p string) (string, string) {
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

// PathMembers returns {"path": ..., ["path_b64": ...]} plus extra members.
func PathMembers(p string, extra map[string]any) map[string]any {
	m := map[string]any{}
	for k, v := range extra {
		m[k] = v
	}
	shown, b64 := JSONPath(p)
	m["path"] = shown
	if b64 != "" {
		m["path_b64"] = b64
	}
	return m
}

// RawPath returns the exact bytes of a path JSONPath rendered.
func RawPath(path, b64 string) string {
	if b64 == "" {
		return path
	}
	if b, err := base64.StdEncoding.DecodeString(b64); err == nil {
		return string(b)
	}
	return path
}
