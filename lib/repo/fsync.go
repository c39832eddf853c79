package repo

import (
	"context"
	"strings"
)

// FsyncComponent is a part of what git writes that core.fsync may ask
// it to sync: the core.fsync words whose bits hold it, and whether git's
// default (FSYNC_COMPONENTS_DEFAULT on Linux) holds it.
type FsyncComponent struct {
	words     []string
	byDefault bool
}

var (
	// FsyncReference is git's reference component: refs it writes.
	FsyncReference = FsyncComponent{words: []string{"reference", "committed", "added", "all"}}
	// FsyncPack is git's pack component, which its default holds.
	FsyncPack = FsyncComponent{words: []string{"pack", "objects", "committed", "added", "all"}, byDefault: true}
)

// Syncs reports whether git syncs c where it writes in r, as core.fsync
// says; a config that cannot be read says yes, the safe side.
func (r *Repo) Syncs(c FsyncComponent) bool {
	r.fsyncOnce.Do(func() {
		const key = "core.fsync"
		entries, err := r.ConfigLast(context.Background(), key)
		if e, ok := entries[key]; ok {
			r.fsync = &e
		}
		r.fsyncErr = err
	})
	if r.fsyncErr != nil {
		return true
	}
	if r.fsync == nil || !r.fsync.HasValue {
		return c.byDefault
	}
	return c.in(r.fsync.Value)
}

// in reads a core.fsync value as git's parse_fsync_components does:
// (default, or nothing after a last word "none") &^ negated | named. A
// word names every component whose name it begins ("ref", "commit"), and
// an empty word ("-") ends the value.
func (c FsyncComponent) in(value string) bool {
	current, named, negated := c.byDefault, false, false
	for s := value; ; {
		s = strings.TrimLeft(s, ", \t\n\r")
		if s == "none" {
			current = false
			break
		}
		word, rest, more := strings.Cut(s, ",")
		neg := strings.HasPrefix(word, "-")
		word = strings.TrimPrefix(word, "-")
		if word == "" {
			break
		}
		for _, w := range c.words {
			if strings.HasPrefix(w, word) {
				named, negated = named || !neg, negated || neg
			}
		}
		if !more {
			break
		}
		s = rest
	}
	return (current && !negated) || named
}
