package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecurity_ConfigOverflowRefused: venom.keepFor, venom.keepSafety and
// venom.keep past what their types hold wrapped around: a keepFor of
// 200000d (a person's "for ever") became negative and pruned every manual
// checkpoint at once, keepSafety likewise the safety checkpoints that may
// hold a person's only copy, and NaNd or Infd were read as durations. Each
// is invalid_params.config, and nothing is pruned.
func TestSecurity_ConfigOverflowRefused(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	for i := 1; i <= 3; i++ {
		env.Write("f.txt", fmt.Sprintf("step %d\n", i))
		env.Venom("checkpoint", "--agent=a1").OK(t)
		env.Tick()
	}
	refs := env.VenomRefs()
	require.Len(t, refs, 3)
	for _, kv := range [][2]string{
		{"venom.keepFor", "200000d"}, {"venom.keepFor", "9999999999999d"}, {"venom.keepFor", "30000w"},
		{"venom.keepFor", "NaNd"}, {"venom.keepFor", "Infd"}, {"venom.keepFor", "99999999999"},
		{"venom.keepSafety", "200000d"}, {"venom.keep", "99999999999g"}, {"venom.maxFileBytes", "9999999999999g"},
		{"venom.maxTotalBytes", "9999999999999g"}, {"venom.timeout", "200000d"},
	} {
		env.SetGlobal(kv[0], kv[1])
		env.Venom("checkpoint", "prune", "--agent=a1", "--dry-run").Fails(t, 2, "invalid_params.config")
		env.Write("f.txt", "changed under "+kv[0]+"\n")
		env.Venom("checkpoint", "--agent=a1", "--reason=turn_end").Fails(t, 2, "invalid_params.config")
		require.Equal(t, refs, env.VenomRefs(), "%s=%s", kv[0], kv[1])
		env.Git("config", "--global", "--unset", kv[0])
	}
	// The largest that fits is taken, and keeps everything.
	env.SetGlobal("venom.keepFor", "106751d")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end").OK(t)
	require.Len(t, env.VenomRefs(), 4)
}

// TestSecurity_TurnNumberCannotWrap: --turn names the turn a turn_start
// opens; the next turn without --turn is the last one's number plus one.
// --turn=t9223372036854775807 was taken, and the turn after it was logged
// as t-9223372036854775808, a turn no command can name. A number past the
// last one is invalid_params.turn, and nothing is logged.
func TestSecurity_TurnNumberCannotWrap(t *testing.T) {
	t.Parallel()
	env := NewEnv(t)
	env.Write("f.txt", "one\n")
	for _, turn := range []string{"t9223372036854775807", "t1099511627777", "t99999999999999999999"} {
		env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--turn="+turn).Fails(t, 2, "invalid_params.turn")
	}
	require.Empty(t, env.VenomRefs())
	// The last number there is (1<<40) is taken; the turn after it is refused.
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start", "--turn=t1099511627776").OK(t)
	env.Write("f.txt", "two\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end").OK(t)
	env.Write("f.txt", "three\n")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_start").Fails(t, 2, "invalid_params.turn")
	env.Venom("checkpoint", "--agent=a1", "--reason=turn_end").Fails(t, 2, "invalid_params.turn")
	env.Venom("checkpoint", "--agent=a1").OK(t)
	env.Venom("checkpoint", "list", "--agent=a1", "--turn=t1099511627776").OK(t)
	for _, line := range strings.Split(env.Venom("checkpoint", "list", "--agent=a1").OK(t).Stdout, "\n") {
		require.NotContains(t, line, "t-", "a turn number wrapped around")
	}
}
