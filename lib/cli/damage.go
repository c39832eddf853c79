package cli

import (
	"github.com/fatih/color"

	"github.com/git-venom/git-venom/lib/journal"
)

// warnDamageOnce returns what a command does when its read of the log
// finds damage inside it: it goes on with the whole records (a list shows
// every checkpoint whose record is whole, and each can be rolled back to),
// and says so once, in one line on stderr, pointing at doctor, which names
// every damaged line and how to mend it. JSON output stays as it is: its
// readers look at doctor --json.
func (e *Env) warnDamageOnce() func(*journal.Log) {
	warned := false
	return func(l *journal.Log) {
		if e.JSON || warned {
			return
		}
		warned = true
		e.UI.Errorf("%s the log has damage inside (%s); going on with its whole records: see git venom-checkpoint doctor\n",
			e.UI.ErrStyle(color.FgYellow)("warning:"), l.DamageText(1))
	}
}
