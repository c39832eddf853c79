// Package tests holds git-venom's end-to-end tests: they build the three
// binaries once, then drive them as a user does (git venom-checkpoint ...)
// on real repositories in t.TempDir(), and check every result with plain git.
package tests
