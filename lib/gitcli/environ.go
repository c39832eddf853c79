package gitcli

import "strings"

// Getenv returns name's value in env, a list of "NAME=value" strings
// (os.Environ's form, which commands, hooks and tests pass around), as
// getenv reads the process's own: the last entry of a name wins; "" when
// there is none.
func Getenv(env []string, name string) string {
	v, _ := LookupEnv(env, name)
	return v
}

// LookupEnv is Getenv, and whether env sets name at all.
func LookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Getter is Getenv bound to env, for the APIs that take a getenv function.
func Getter(env []string) func(string) string {
	return func(name string) string { return Getenv(env, name) }
}
