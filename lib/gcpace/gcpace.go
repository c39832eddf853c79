// Package gcpace paces the garbage collector of a command that finds it
// holds a large list live.
package gcpace

import (
	"os"
	"runtime/debug"
)

// Large lowers the collector's goal to 1.5x the live heap, from the 5x
// cli.Main sets for short commands, unless GOGC is set. A command holding
// a large list live (a capture of many files, a rollback's plan of many
// paths) would otherwise grow its heap to cli's soft memory limit: most of
// its resident set, and every page of it touched once, which costs system
// time (about 2 ms a MB on the test VM).
func Large() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}
