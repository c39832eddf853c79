package environ

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGetLastWins(t *testing.T) {
	env := []string{"A=1", "AB=2", "A=3", "B="}
	assert.Equal(t, "3", Get(env, "A"))
	assert.Equal(t, "2", Get(env, "AB"))
	assert.Equal(t, "", Get(env, "B"))
	assert.Equal(t, "", Get(env, "C"))
	assert.Equal(t, "3", Getter(env)("A"))
}
