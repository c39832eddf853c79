package ignore

import "strings"

// This file is git's wildmatch.c (dowild) in Go, step for step, because the
// answer must be git's for every pattern, malformed ones included: a "[" that
// never closes, a trailing "\", "**" glued to other characters. Patterns and
// paths hold no NUL here (Parse cuts a line at its first NUL, as git's C
// strings do), so byteAt's 0 past the end plays the C terminator.
// WM_CASEFOLD is left out: callers run with core.ignoreCase=false.

// The results of dowild, as in git's wildmatch.h. Only wmMatch is a match.
const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// wmPathname is git's WM_PATHNAME: "*", "?" and "[...]" never match '/', and
// "**" matches across directories only as a whole path component.
const wmPathname = 1

// wildmatch reports whether text matches pattern, as git's wildmatch() with
// flags 0 or wmPathname.
func wildmatch(pattern, text string, flags int) bool {
	return dowild(pattern, text, flags) == wmMatch
}

// Wildmatch is git's wildmatch() for others who match as git does (git's
// pathspecs, lib/pathspec): pathname is WM_PATHNAME, for glob magic.
func Wildmatch(pattern, text string, pathname bool) bool {
	flags := 0
	if pathname {
		flags = wmPathname
	}
	return wildmatch(pattern, text, flags)
}

// byteAt is s[i], or 0 past the end, where C would read the terminator.
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// isGlobSpecial is git's is_glob_special (sane_ctype GIT_GLOB_SPECIAL).
func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

// dowild matches text against p. A recursive call gets the rest of the
// pattern as its own p, so "at the start of the pattern" (the "**/" rule)
// means the start of that rest, as in git.
func dowild(p, text string, flags int) int {
	pathname := flags&wmPathname != 0
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		tc := byteAt(text, ti)
		if tc == 0 && pc != '*' {
			return wmAbortAll
		}
		switch pc {
		case '\\':
			// A literal match with the next pattern byte; a trailing
			// "\" compares 0 with a text byte and fails.
			pi++
			if tc != byteAt(p, pi) {
				return wmNoMatch
			}
		default:
			if tc != pc {
				return wmNoMatch
			}
		case '?':
			if pathname && tc == '/' {
				return wmNoMatch
			}
		case '*':
			var matchSlash bool
			pi++
			if byteAt(p, pi) == '*' {
				prev := pi - 2 // the byte before the first '*'
				for pi++; byteAt(p, pi) == '*'; pi++ {
				}
				next := byteAt(p, pi)
				switch {
				case !pathname:
					matchSlash = true
				case (prev < 0 || p[prev] == '/') &&
					(next == 0 || next == '/' || (next == '\\' && byteAt(p, pi+1) == '/')):
					// "**/" may match nothing: "foo/**/bar"
					// matches "foo/bar" as well as "foo/a/bar".
					if next == '/' && dowild(p[pi+1:], text[ti:], flags) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				default:
					// "**" glued to other bytes is a "*".
					matchSlash = false
				}
			} else {
				matchSlash = !pathname
			}
			if pi >= len(p) {
				// A trailing "**" matches everything, a trailing
				// "*" only up to the next '/'.
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			} else if !matchSlash && p[pi] == '/' {
				// One "*" then '/' matches the rest of this
				// directory name; the loop consumes both slashes.
				slash := strings.IndexByte(text[ti:], '/')
				if slash < 0 {
					return wmNoMatch
				}
				ti += slash
				continue
			}
			for tc != 0 {
				// Before a literal, skip the text bytes that
				// cannot start the rest of the match; without
				// matchSlash the '*' stops at the first '/'.
				if !isGlobSpecial(p[pi]) {
					pc = p[pi]
					for {
						tc = byteAt(text, ti)
						if tc == 0 || (!matchSlash && tc == '/') || tc == pc {
							break
						}
						ti++
					}
					if tc != pc {
						return wmNoMatch
					}
				}
				if m := dowild(p[pi:], text[ti:], flags); m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && tc == '/' {
					return wmAbortToStarStar
				}
				ti++
				tc = byteAt(text, ti)
			}
			return wmAbortAll
		case '[':
			pi++
			pc = byteAt(p, pi)
			if pc == '^' {
				pc = '!'
			}
			negated := pc == '!'
			if negated {
				pi++
				pc = byteAt(p, pi)
			}
			var prev byte
			matched := false
			// A do-while in git: the first byte, even ']', belongs
			// to the set; a "continue" there goes to the condition.
			for first := true; ; first = false {
				if !first {
					prev = pc
					pi++
					pc = byteAt(p, pi)
					if pc == ']' {
						break
					}
				}
				if pc == 0 {
					return wmAbortAll
				}
				if pc == '\\' {
					pi++
					pc = byteAt(p, pi)
					if pc == 0 {
						return wmAbortAll
					}
					if tc == pc {
						matched = true
					}
				} else if pc == '-' && prev != 0 && byteAt(p, pi+1) != 0 && byteAt(p, pi+1) != ']' {
					pi++
					pc = p[pi]
					if pc == '\\' {
						pi++
						pc = byteAt(p, pi)
						if pc == 0 {
							return wmAbortAll
						}
					}
					if tc <= pc && tc >= prev {
						matched = true
					}
					pc = 0 // a range end starts no range
				} else if pc == '[' && byteAt(p, pi+1) == ':' {
					pi += 2
					s := pi
					for pc = byteAt(p, pi); pc != 0 && pc != ']'; pc = byteAt(p, pi) {
						pi++
					}
					if pc == 0 {
						return wmAbortAll
					}
					n := pi - s - 1
					if n < 0 || p[pi-1] != ':' {
						// No ":]": the '[' is a plain member.
						pi = s - 2
						pc = '['
						if tc == pc {
							matched = true
						}
						continue
					}
					in, ok := inClass(p[s:s+n], tc)
					if !ok {
						return wmAbortAll // malformed [:class:]
					}
					if in {
						matched = true
					}
					pc = 0
				} else if tc == pc {
					matched = true
				}
			}
			if matched == negated || (pathname && tc == '/') {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// inClass reports whether c is in the POSIX class name, with git's ASCII-only
// ctype (git's own table for space, punct, cntrl; the C locale for blank and
// graph). ok is false for an unknown class name.
func inClass(name string, c byte) (in, ok bool) {
	lower := c >= 'a' && c <= 'z'
	upper := c >= 'A' && c <= 'Z'
	digit := c >= '0' && c <= '9'
	switch name {
	case "alnum":
		return lower || upper || digit, true
	case "alpha":
		return lower || upper, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return lower, true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !lower && !upper && !digit, true
	case "space":
		// git's isspace: no '\v' nor '\f'.
		return c == ' ' || c == '\t' || c == '\n' || c == '\r', true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
