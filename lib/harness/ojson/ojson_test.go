package ojson

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTripKeepsOrderAndStyle(t *testing.T) {
	src := "{\n  \"z\": 1,\n  \"a\": {\n    \"list\": [\n      true,\n      null,\n      \"<&>é\"\n    ],\n    \"empty\": {},\n    \"none\": []\n  },\n  \"n\": 1.50\n}"
	v, err := Parse([]byte(src))
	require.NoError(t, err)
	assert.Equal(t, src, string(Indent(v, DetectIndent([]byte(src)))))
	assert.Equal(t, `{"z":1,"a":{"list":[true,null,"<&>é"],"empty":{},"none":[]},"n":1.50}`, string(Compact(v)))
}

func TestSetAndDelete(t *testing.T) {
	o, err := ParseObject([]byte(`{"a":1,"b":2}`))
	require.NoError(t, err)
	o.Set("a", "x")
	o.Set("c", 3)
	o.Delete("b")
	assert.Equal(t, `{"a":"x","c":3}`, string(Compact(o)))
	_, err = ParseObject([]byte(`[1]`))
	assert.Error(t, err)
	_, err = Parse([]byte(`{} {}`))
	assert.Error(t, err)
}
