package fsmonitor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse_Answers(t *testing.T) {
	clock := "c:1796436536:10108:1:5"
	cases := []struct {
		name, out, since string
		paths            []string
		ok               bool
	}{
		{"changes", clock + "\x00a.txt\x00d/\x00d/e.txt\x00", "c:1796436536:10108:1:2", []string{"a.txt", "d/", "d/e.txt"}, true},
		{"nothing", clock + "\x00", "c:1796436536:10108:1:2", nil, true},
		{"trivial", clock + "\x00/", "c:1796436536:10108:1:2", nil, false},
		{"restarted", "c:1796436999:20000:1:3\x00a.txt", "c:1796436536:10108:1:2", nil, false},
		{"watched again", "c:1796436536:10108:2:3\x00a.txt", "c:1796436536:10108:1:2", nil, false},
		{"first query", clock + "\x00a.txt", "venom:none", nil, false},
		{"no token", "\x00a.txt", "c:1796436536:10108:1:2", nil, false},
		{"nothing at all", "", "c:1796436536:10108:1:2", nil, false},
		{"outside", clock + "\x00../x", "c:1796436536:10108:1:2", nil, false},
		{"absolute", clock + "\x00/etc/passwd", "c:1796436536:10108:1:2", nil, false},
		{"dotted", clock + "\x00a/./b", "c:1796436536:10108:1:2", nil, false},
		{"other hook's token", "tok2\x00a", "tok1", []string{"a"}, true},
		{"clock from a non-clock", clock + "\x00a", "tok1", nil, false},
	}
	for _, c := range cases {
		a, err := parse([]byte(c.out), c.since)
		if !c.ok {
			require.ErrorIs(t, err, ErrNoAnswer, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		require.Equal(t, c.paths, a.Paths, c.name)
	}
}
