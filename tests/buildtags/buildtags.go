// Package buildtags gives the -tags of the builds the tests and tests/bench
// make. lib/static/env.sh links libgit2 statically through GOFLAGS
// (-tags=static,system_libgit2), and a -tags on go's command line replaces
// GOFLAGS' own: a build with `-tags venomtest` alone is linked unlike the
// one install.sh makes.
package buildtags

import (
	"debug/buildinfo"
	"slices"
	"strings"
)

// With is the -tags value for a build with tag as well as the tags
// goflags (a GOFLAGS value) names: its last -tags=, as go reads it, then
// tag, each once.
func With(goflags, tag string) string {
	var tags []string
	for _, f := range strings.Fields(goflags) {
		if v, ok := strings.CutPrefix(strings.TrimLeft(f, "-"), "tags="); ok {
			tags = strings.Split(v, ",")
		}
	}
	tags = slices.DeleteFunc(tags, func(t string) bool { return t == "" || t == tag })
	return strings.Join(append(tags, tag), ",")
}

// Of is the -tags a Go binary was built with, as it records them (what
// `go version -m` prints).
func Of(binary string) (string, error) {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return "", err
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" {
			return s.Value, nil
		}
	}
	return "", nil
}
