// Package suggest finds what a mistyped word was likely meant to be, as
// git's "did you mean": verbs, flag values and agent ids alike.
package suggest

import "strings"

// Close lists the candidates word is likely a typo of: a prefix of one,
// or within two edits (kong's rule for flags, so that verbs, values and
// flags agree).
func Close(word string, candidates []string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, word) || editDistance(c, word) <= 2 {
			out = append(out, c)
		}
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
