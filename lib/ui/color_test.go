package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestColorMode_FlagThenVenomThenUI(t *testing.T) {
	assert.Equal(t, "auto", ColorMode("", "", ""))
	assert.Equal(t, "never", ColorMode("", "", "false"))
	assert.Equal(t, "auto", ColorMode("", "", "true"))
	assert.Equal(t, "always", ColorMode("", "always", "never"))
	assert.Equal(t, "never", ColorMode("never", "always", "always"))
}

func TestColorOn_Environment(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	assert.True(t, ColorOn("auto", true, env(nil)))
	assert.False(t, ColorOn("auto", false, env(nil)))
	assert.False(t, ColorOn("auto", true, env(map[string]string{"NO_COLOR": "1"})))
	assert.False(t, ColorOn("auto", true, env(map[string]string{"TERM": "dumb"})))
	assert.True(t, ColorOn("auto", false, env(map[string]string{"CLICOLOR_FORCE": "1"})))
	assert.False(t, ColorOn("auto", false, env(map[string]string{"CLICOLOR_FORCE": "0"})))
	assert.True(t, ColorOn("always", false, env(map[string]string{"NO_COLOR": "1"})))
	assert.False(t, ColorOn("never", true, env(map[string]string{"CLICOLOR_FORCE": "1"})))
}
