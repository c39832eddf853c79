package treepath

// The names other file systems read as .git or .gitmodules, as git 2.39
// matches them (utf8.c is_hfs_dot_generic, path.c is_ntfs_dotgit and
// is_ntfs_dot_generic). Each takes the rest of the path from a component's
// start; the end of the string stands for C's NUL.

// at is s[i], or NUL past the end.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// isHFSDot reports whether s starts with a component HFS+ folds to
// "."+needle: code points HFS+ ignores are skipped and ASCII case is
// folded. Malformed UTF-8 ends the name, as in git.
func isHFSDot(s, needle string) bool {
	if nextHFS(&s) != '.' {
		return false
	}
	for i := 0; i < len(needle); i++ {
		c := nextHFS(&s)
		if c > 127 || lower(byte(c)) != needle[i] {
			return false
		}
	}
	c := nextHFS(&s)
	return c == 0 || c == '/'
}

// nextHFS returns the next code point HFS+ does not ignore, 0 at the end
// or at malformed UTF-8 (then s is emptied).
func nextHFS(s *string) rune {
	for {
		c, n := decodeGit(*s)
		if n < 0 {
			*s = ""
			return 0
		}
		*s = (*s)[n:]
		switch c {
		case 0x200c, 0x200d, 0x200e, 0x200f,
			0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
			0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f,
			0xfeff:
			continue
		}
		return c
	}
}

// decodeGit is git's pick_one_utf8_char: one code point and its length, n
// -1 for malformed input (which, unlike Go's decoder, includes U+FFFE and
// U+FFFF). At the end of s it returns NUL with length 0.
func decodeGit(s string) (rune, int) {
	if s == "" {
		return 0, 0
	}
	cont := func(i int) bool { return at(s, i)&0xc0 == 0x80 }
	c0, c1, c2 := s[0], at(s, 1), at(s, 2)
	switch {
	case c0 < 0x80:
		return rune(c0), 1
	case c0&0xe0 == 0xc0:
		if !cont(1) || c0&0xfe == 0xc0 {
			return 0, -1
		}
		return rune(c0&0x1f)<<6 | rune(c1&0x3f), 2
	case c0&0xf0 == 0xe0:
		if !cont(1) || !cont(2) ||
			(c0 == 0xe0 && c1&0xe0 == 0x80) || // overlong
			(c0 == 0xed && c1&0xe0 == 0xa0) || // surrogate
			(c0 == 0xef && c1 == 0xbf && c2&0xfe == 0xbe) { // U+FFFE, U+FFFF
			return 0, -1
		}
		return rune(c0&0x0f)<<12 | rune(c1&0x3f)<<6 | rune(c2&0x3f), 3
	case c0&0xf8 == 0xf0:
		if !cont(1) || !cont(2) || !cont(3) ||
			(c0 == 0xf0 && c1&0xf0 == 0x80) || // overlong
			(c0 == 0xf4 && c1 > 0x8f) || c0 > 0xf4 { // past U+10FFFF
			return 0, -1
		}
		return rune(c0&0x07)<<18 | rune(c1&0x3f)<<12 | rune(c2&0x3f)<<6 | rune(at(s, 3)&0x3f), 4
	}
	return 0, -1
}

// isNTFSDotGit: ".git" or its short name "git~1", in any case, followed
// only by spaces and dots (which NTFS drops) up to a separator, the end,
// or a ':' (an alternate data stream such as "::$INDEX_ALLOCATION").
func isNTFSDotGit(s string) bool {
	var i int
	switch {
	case at(s, 0) == '.' && lower(at(s, 1)) == 'g' && lower(at(s, 2)) == 'i' && lower(at(s, 3)) == 't':
		i = 4
	case lower(at(s, 0)) == 'g' && lower(at(s, 1)) == 'i' && lower(at(s, 2)) == 't' && at(s, 3) == '~' && at(s, 4) == '1':
		i = 5
	default:
		return false
	}
	for ; ; i++ {
		switch at(s, i) {
		case 0, '/', '\\', ':':
			return true
		case ' ', '.':
		default:
			return false
		}
	}
}

// isNTFSDotGitmodules is is_ntfs_dot_generic for ".gitmodules": the name,
// its 6-character short names "gitmod~1" to "~4", and the fall-back short
// names "gi7eba~<digits>", each followed only by spaces and dots.
func isNTFSDotGitmodules(s string) bool {
	const name, short = "gitmodules", "gi7eba"
	onlySpacesAndPeriods := func(i int) bool {
		for ; ; i++ {
			switch at(s, i) {
			case 0, ':':
				return true
			case ' ', '.':
			default:
				return false
			}
		}
	}
	if at(s, 0) == '.' && hasFoldPrefix(s[1:], name) {
		return onlySpacesAndPeriods(1 + len(name))
	}
	if hasFoldPrefix(s, name[:6]) && at(s, 6) == '~' && at(s, 7) >= '1' && at(s, 7) <= '4' {
		return onlySpacesAndPeriods(8)
	}
	tilde := false
	for i := 0; i < 8; i++ {
		c := at(s, i)
		switch {
		case c == 0:
			return false
		case tilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if c := at(s, i); c < '1' || c > '9' {
				return false
			}
			tilde = true
		case i >= 6, c&0x80 != 0, lower(c) != short[i]:
			return false
		}
	}
	return onlySpacesAndPeriods(8)
}

// hasFoldPrefix is strncasecmp(s, prefix, len(prefix)) == 0.
func hasFoldPrefix(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(s[i]) != lower(prefix[i]) {
			return false
		}
	}
	return true
}
