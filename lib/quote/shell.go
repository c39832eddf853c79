package quote

import "strings"

// Shell joins argv as a POSIX shell command line a person can paste: a word
// of only characters no shell treats specially as it is, any other in
// single quotes (each quote in it closed, escaped and reopened). A word
// holding a character that does not print is shown as C shows it instead:
// what reaches the terminal comes first, and no id git-venom makes holds
// one.
func Shell(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		switch {
		case hasUnsafe(w):
			words[i] = Always(w)
		case w != "" && strings.Trim(w, shellSafe) == "":
			words[i] = w
		default:
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}

const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-"
