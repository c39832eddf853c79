package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/git-venom/git-venom/lib/errcode"
)

// venom.timeout has no "no limit" value: 0 in any unit, and negatives,
// are the invalid config error; any positive duration is taken.
func TestSetKey_TimeoutMustBePositive(t *testing.T) {
	for _, v := range []string{"0", "0s", "0d", "0ms", " 0 ", "-1", "-5s"} {
		c := Defaults()
		err := c.setKey("venom.timeout", v)
		require.Error(t, err, "venom.timeout=%q", v)
		assert.True(t, errcode.Is(err, errcode.InvalidParamsConfig), "%q: %v", v, err)
		assert.Equal(t, Defaults().Timeout, c.Timeout)
	}
	for v, want := range map[string]time.Duration{"1": time.Second, "500ms": 500 * time.Millisecond, "2m": 2 * time.Minute, "1d": 24 * time.Hour} {
		c := Defaults()
		require.NoError(t, c.setKey("venom.timeout", v))
		assert.Equal(t, want, c.Timeout, v)
	}
}
