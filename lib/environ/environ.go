// Package environ reads a command's environment as a list of "NAME=value"
// strings (os.Environ's form, which tests and hooks pass around), as
// getenv reads the process's own: the last entry of a name wins.
package environ

import "strings"

// Get returns name's value in env, or "".
func Get(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Getter is Get bound to env, for the APIs that take a getenv function.
func Getter(env []string) func(string) string {
	return func(name string) string { return Get(env, name) }
}
