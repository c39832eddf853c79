package ui

import "strings"

// ColorMode is the colour setting that applies, as git picks it: the
// --color flag, else color.venom, else color.ui; "auto" when none is set.
// The result is always, never or auto (git's true, yes, on and 1 mean auto
// for color.*, as in git since 1.8.4; false, no, off and 0 mean never).
func ColorMode(flag, venom, ui string) string {
	for _, v := range []string{flag, venom, ui} {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "":
			continue
		case "always":
			return "always"
		case "never", "false", "no", "off", "0":
			return "never"
		default: // auto, true, yes, on, 1, and what git would not take
			return "auto"
		}
	}
	return "auto"
}

// ColorOn decides colour for one stream. always and never are final (a
// flag or a config key the person set wins over the environment, as
// no-color.org asks); auto colours a terminal unless NO_COLOR is set or
// TERM is dumb, and CLICOLOR_FORCE (not "0") colours even a pipe.
func ColorOn(mode string, tty bool, getenv func(string) string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if getenv("NO_COLOR") != "" {
		return false
	}
	if f := getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	return tty && getenv("TERM") != "dumb"
}
