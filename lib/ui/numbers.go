package ui

import "strconv"

// Thousands writes n as people read counts, with commas: 2,792. Every
// count a person reads goes through it, so one screen never shows 5,000
// on one line and 5000 on the next.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Plural is "1 file" or "2,792 files".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
}
