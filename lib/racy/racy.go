// Package racy is git-venom's one rule for when stat data may stand for a
// file's content: git's racy-git rule as the installed git applies it,
// called by every stat cache (private index, quick scan, memo, carry). An
// entry is racy when its mtime falls in its reference time's second or
// later: whole seconds, as git without USE_NSEC compares, which catches
// all the nanosecond rule does (docs/checkpoints.md#racy-stat-data).
package racy

import (
	"time"

	"github.com/git-venom/git-venom/lib/testhook"
)

// Against says whether stat data of a file last changed in the second
// changed (unix seconds: an mtime, or a ctime where the cache compares
// it) is racy in a cache whose reference time is ref (a time of the file
// system's clock): its second is not older than ref's. A racy file is
// read, never trusted by its stat data, and an index entry racy against
// the index it came from is written smudged.
func Against(changed int64, ref time.Time) bool { return changed >= ref.Unix() }

// Entry is Against for an index entry's mtime seconds, as the index stores
// them (32 bits).
func Entry(mtimeSec uint32, ref time.Time) bool { return Against(int64(mtimeSec), ref) }

// Margin is how far the file system's clock may lag the wall clock: file
// times come from the kernel's coarse clock, a tick (at most 10 ms)
// behind, and a file system that keeps whole seconds truncates them by
// less than a second. Stat data taken at wall-clock time t has the
// reference t less Margin: a file changed after t gets a time of that
// second or a later one.
const Margin = time.Second

// Taken says whether stat data taken at wall time taken, of a file with
// these mtime and ctime (unix ns), is racy: Against taken less Margin,
// for either time; the rule of git-venom's own caches. VENOM_TEST_RACY_MS=n
// (tests only) trusts instead a file changed more than n ms before, to
// the nanosecond.
func Taken(mtime, ctime int64, taken time.Time) bool {
	if ms := testhook.Int("VENOM_TEST_RACY_MS"); ms > 0 {
		recent := taken.Add(-time.Duration(ms) * time.Millisecond).UnixNano()
		return mtime > recent || ctime > recent
	}
	ref := taken.Add(-Margin)
	return Against(seconds(mtime), ref) || Against(seconds(ctime), ref)
}

// seconds is the unix second a time in unix ns falls in.
func seconds(ns int64) int64 {
	s := ns / 1e9
	if ns%1e9 < 0 {
		s--
	}
	return s
}
