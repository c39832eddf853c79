package ui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPagerCommand_GitsOrder(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	assert.Equal(t, "less", PagerCommand(env(nil), ""))
	assert.Equal(t, "more", PagerCommand(env(map[string]string{"PAGER": "more"}), ""))
	assert.Equal(t, "core", PagerCommand(env(map[string]string{"PAGER": "more"}), "core"))
	assert.Equal(t, "gp", PagerCommand(env(map[string]string{"GIT_PAGER": "gp", "PAGER": "more"}), "core"))
	assert.Equal(t, "", PagerCommand(env(map[string]string{"GIT_PAGER": "cat"}), "core"))
}

func TestPage_NotOnAPipe(t *testing.T) {
	s, out, _ := Test()
	done := s.Page()
	s.Printf("text\n")
	done()
	assert.Equal(t, "text\n", out.String())
}
