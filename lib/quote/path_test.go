package quote

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A path that is valid UTF-8 is shown as it is; one that is not shows each
// invalid byte as U+FFFD, one for one, and carries its exact bytes in
// path_b64, which RawPath turns back into the path.
func TestJSONPath_InvalidBytesOneForOneAndExactBytes(t *testing.T) {
	shown, b64 := JSONPath("dir/é.txt")
	assert.Equal(t, "dir/é.txt", shown)
	assert.Empty(t, b64)

	raw := "a\xff\xfeb/\xc3.txt" // two invalid bytes together, a cut-off é
	shown, b64 = JSONPath(raw)
	assert.Equal(t, "a\uFFFD\uFFFDb/\uFFFD.txt", shown, "each invalid byte its own U+FFFD")
	exact, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	assert.Equal(t, raw, string(exact))
	assert.Equal(t, raw, RawPath(shown, b64))
	assert.Equal(t, "plain", RawPath("plain", ""))
	assert.Equal(t, "shown", RawPath("shown", "not base64!"), "an undecodable path_b64 falls back to the text")
}

func TestPathMembers_PathB64OnlyWhenNeeded(t *testing.T) {
	b, err := json.Marshal(PathMembers("ok.txt", map[string]any{"change": "modify"}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"path":"ok.txt","change":"modify"}`, string(b))
	b, err = json.Marshal(PathMembers("bad\xff", nil))
	require.NoError(t, err)
	assert.JSONEq(t, `{"path":"bad\ufffd","path_b64":"YmFk/w=="}`, string(b))

}
