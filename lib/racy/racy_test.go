package racy

import (
	"testing"
	"time"

	"github.com/git-venom/git-venom/lib/testhook"
	"github.com/stretchr/testify/require"
)

// gitSeconds and gitNanoseconds are read-cache.c's is_racy_stat as git
// builds it without USE_NSEC and with it (istate->timestamp against
// sd_mtime; a zero timestamp, an index never read from a file, aside).
func gitSeconds(ref, mtime time.Time) bool { return ref.Unix() <= mtime.Unix() }

func gitNanoseconds(ref, mtime time.Time) bool {
	return ref.Unix() < mtime.Unix() || ref.Unix() == mtime.Unix() && ref.Nanosecond() <= mtime.Nanosecond()
}

// TestAgainst_RacyUnderEitherOfGitsRules: an entry is racy exactly when
// one of git's two rules says so, whichever way the nanoseconds fall: an
// mtime in the index's second, before or after it to the nanosecond, is
// racy; one in an earlier second is not, however close.
func TestAgainst_RacyUnderEitherOfGitsRules(t *testing.T) {
	const s = 1_796_421_677
	var times []time.Time
	for _, sec := range []int64{s - 1, s, s + 1} {
		for _, ns := range []int64{0, 1, 200_936_193, 999_999_998, 999_999_999} {
			times = append(times, time.Unix(sec, ns))
		}
	}
	for _, ref := range times {
		for _, m := range times {
			want := gitSeconds(ref, m) || gitNanoseconds(ref, m)
			require.Equal(t, want, Against(m.Unix(), ref), "index %v, mtime %v", ref, m)
			require.Equal(t, want, Entry(uint32(m.Unix()), ref), "index %v, mtime %v", ref, m)
		}
	}
	// The file written, then the index, in one
	// second; git without USE_NSEC reads the file, so it is racy here.
	written, index := time.Unix(s, 200_936_193), time.Unix(s, 916_936_193)
	require.False(t, gitNanoseconds(index, written))
	require.True(t, Entry(uint32(written.Unix()), index))
	require.False(t, Entry(uint32(s-1), time.Unix(s, 0)), "a second before the index")
}

// TestTaken_WallClockWithMargin: stat data taken at a wall-clock time
// vouches for a file whose mtime and ctime both fall in a second before
// that time less Margin; a file changed within it, by either time, is
// racy.
func TestTaken_WallClockWithMargin(t *testing.T) {
	taken := time.Unix(1_796_421_677, 300_000_000)
	ns := func(d time.Duration) int64 { return taken.Add(d).UnixNano() }
	old := ns(-3 * time.Second)
	cases := []struct {
		name         string
		mtime, ctime int64
		racy         bool
	}{
		{"long before", old, old, false},
		{"in the second before the margin's", ns(-1400 * time.Millisecond), ns(-1400 * time.Millisecond), false},
		{"in the margin's second", ns(-1200 * time.Millisecond), ns(-1200 * time.Millisecond), true},
		{"within the margin", ns(-500 * time.Millisecond), ns(-500 * time.Millisecond), true},
		{"after", ns(time.Millisecond), ns(time.Millisecond), true},
		{"ctime recent, mtime old", old, ns(-100 * time.Millisecond), true},
	}
	for _, c := range cases {
		require.Equal(t, c.racy, Taken(c.mtime, c.ctime, taken), c.name)
	}
	// Before 1970 a time's second is still its floor: -1 ns is in second -1.
	require.False(t, Taken(-1, -1, time.Unix(0, 0).Add(Margin)))
	require.True(t, Taken(0, 0, time.Unix(0, 0).Add(Margin)))
}

// TestTaken_TestWindow: VENOM_TEST_RACY_MS (tests only) trusts a file
// changed more than that many ms before, to the nanosecond.
func TestTaken_TestWindow(t *testing.T) {
	if !testhook.Enabled {
		t.Skip("the hooks are off: this needs -tags venomtest")
	}
	t.Setenv("VENOM_TEST_RACY_MS", "50")
	taken := time.Unix(1_796_421_677, 300_000_000)
	require.False(t, Taken(taken.Add(-60*time.Millisecond).UnixNano(), taken.Add(-60*time.Millisecond).UnixNano(), taken))
	require.True(t, Taken(taken.Add(-40*time.Millisecond).UnixNano(), taken.Add(-60*time.Millisecond).UnixNano(), taken))
}
