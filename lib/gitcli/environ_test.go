package gitcli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGetenvLastWins(t *testing.T) {
	env := []string{"A=1", "AB=2", "A=3", "B="}
	assert.Equal(t, "3", Getenv(env, "A"))
	assert.Equal(t, "2", Getenv(env, "AB"))
	assert.Equal(t, "", Getenv(env, "B"))
	assert.Equal(t, "", Getenv(env, "C"))
	assert.Equal(t, "3", Getter(env)("A"))
	v, ok := LookupEnv(env, "B")
	assert.True(t, ok)
	assert.Equal(t, "", v)
	_, ok = LookupEnv(env, "C")
	assert.False(t, ok)
}
