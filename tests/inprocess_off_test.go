//go:build !venomtest

package tests

// Without -tags venomtest (go vet's untagged pass; tests/run always sets
// it) every command runs the built binary: the in-process runner needs
// lock.Own, which only that build has.

func inProcessSetup(string) error { return nil }

func (e *Env) venom(dir string, extra []string, stdin string, cmd string, args ...string) Result {
	return e.runInput(dir, extra, stdin, "git", append([]string{"venom-" + cmd}, args...)...)
}
