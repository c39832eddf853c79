package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// venom.timeout=0 is not "no limit", as 0 is for some of git's keys: a
// hook must end within venom.timeout, so 0 and negatives are the invalid
// config error, and nothing is captured or logged. A hook reports it on
// stderr and exits 0, as every hook failure.
func TestConfig_TimeoutZeroRefused(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0", "0s", "-1s"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			env := NewEnv(t)
			env.SetGlobal("venom.timeout", v)
			r := env.Venom("checkpoint", "--agent=a1", "--json")
			r.Fails(t, 2, "invalid_params.config")
			assert.Contains(t, r.Stdout, "venom.timeout")
			assert.Empty(t, env.Git("for-each-ref", "refs/venom"))

			h := env.Hook("claude-code", env.Payload("claude/hooks/UserPromptSubmit.json", map[string]any{"prompt_id": "p1"}))
			h.OK(t)
			assert.Contains(t, h.Stderr, "invalid_params.config")
			assert.Empty(t, env.Git("for-each-ref", "refs/venom"))

			env.SetGlobal("venom.timeout", "1s")
			env.Take(t, "--agent=a1")
			assert.Len(t, strings.Fields(env.Git("for-each-ref", "--format=%(refname)", "refs/venom")), 1)
		})
	}
}
