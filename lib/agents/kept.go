package agents

import (
	"sort"
	"time"

	"github.com/git-venom/git-venom/lib/ids"
	"github.com/git-venom/git-venom/lib/journal"
)

// Kept is what an agent's live checkpoints come to, kept in the fold
// snapshot's part of all agents so that the agents verb and a prune need
// not load every agent's turns and checkpoints (stub.go): their numbers,
// as inclusive ranges, by what retention does with them, and a time
// before which none was taken.
type Kept struct {
	// Counted are those of a reason venom.keep counts (CountedReason),
	// Safety the pre_rollback ones, Other those of any other reason.
	Counted [][2]int `json:"counted,omitempty"`
	Safety  [][2]int `json:"safety,omitempty"`
	Other   [][2]int `json:"other,omitempty"`
	// Oldest is a time (journal.TimeFormat) that none of them with a
	// readable time is older than, "" when none has one. A prune since
	// leaves it older than the oldest left: an age no checkpoint reaches.
	Oldest string `json:"oldest,omitempty"`
}

// CountedReason reports a reason venom.keep counts
// (docs/checkpoints.md#retention-and-clean).
func CountedReason(reason string) bool {
	switch reason {
	case "turn_start", "turn_end", "takeover", "takeback", "fork", "rollback":
		return true
	}
	return false
}

// PreRollback is the reason of a rollback's safety checkpoint.
const PreRollback = "pre_rollback"

// Count is how many live checkpoints there are.
func (k *Kept) Count() int {
	n := 0
	for _, l := range [][][2]int{k.Counted, k.Safety, k.Other} {
		for _, r := range l {
			n += r[1] - r[0] + 1
		}
	}
	return n
}

// Newest is the number of the newest live checkpoint, 0 when none is.
func (k *Kept) Newest() int {
	n := 0
	for _, l := range [][][2]int{k.Counted, k.Safety, k.Other} {
		if len(l) > 0 {
			n = max(n, l[len(l)-1][1])
		}
	}
	return n
}

// class is the list of k that a checkpoint of reason goes in.
func (k *Kept) class(reason string) *[][2]int {
	switch {
	case CountedReason(reason):
		return &k.Counted
	case reason == PreRollback:
		return &k.Safety
	}
	return &k.Other
}

// add notes checkpoint n, newer than all, of reason, taken at at.
func (k *Kept) add(n int, reason, at string) {
	l := k.class(reason)
	if m := len(*l); m > 0 && (*l)[m-1][1] == n-1 {
		(*l)[m-1][1] = n
	} else {
		*l = append(*l, [2]int{n, n})
	}
	if t, err := time.Parse(journal.TimeFormat, at); err == nil {
		if o, err := time.Parse(journal.TimeFormat, k.Oldest); err != nil || t.Before(o) {
			k.Oldest = at
		}
	}
}

// drop notes checkpoint n gone.
func (k *Kept) drop(n int) {
	for _, l := range []*[][2]int{&k.Counted, &k.Safety, &k.Other} {
		rs := *l
		i := sort.Search(len(rs), func(i int) bool { return rs[i][1] >= n })
		if i == len(rs) || rs[i][0] > n {
			continue
		}
		r := rs[i]
		switch {
		case r[0] == n && r[1] == n:
			rs = append(rs[:i], rs[i+1:]...)
		case r[0] == n:
			rs[i][0]++
		case r[1] == n:
			rs[i][1]--
		default:
			rs = append(rs[:i+1], rs[i:]...)
			rs[i] = [2]int{r[0], n - 1}
			rs[i+1] = [2]int{n + 1, r[1]}
		}
		if len(rs) == 0 {
			rs = nil // as keptOf leaves a class with none
		}
		*l = rs
		return
	}
}

// valid reports ranges that are each in order, of numbers from 1, and
// apart from each other.
func (k *Kept) valid() bool {
	var all [][2]int
	for _, l := range [][][2]int{k.Counted, k.Safety, k.Other} {
		for i, r := range l {
			if r[0] < 1 || r[1] < r[0] || (i > 0 && r[0] <= l[i-1][1]) {
				return false
			}
		}
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i][0] < all[j][0] })
	for i := 1; i < len(all); i++ {
		if all[i][0] <= all[i-1][1] {
			return false
		}
	}
	if k.Oldest != "" {
		if _, err := time.Parse(journal.TimeFormat, k.Oldest); err != nil {
			return false
		}
	}
	return true
}

// keptOf is the Kept of the agent's checkpoints, or nil when the
// checkpoints do not allow one: a number that is not above every earlier
// one, or an id not as ids.Checkpoint writes it (a hand-made log). Only
// then is the newest live checkpoint the highest number, and a pruned
// record's id the checkpoint of that number.
func keptOf(cs []*Checkpoint) *Kept {
	k := &Kept{}
	last := 0
	for _, c := range cs {
		if c.N <= last || c.Checkpoint != ids.Checkpoint(c.N) {
			return nil
		}
		last = c.N
		if c.Live() {
			k.add(c.N, c.Reason, c.At)
		}
	}
	return k
}

// Kept is what the agent's live checkpoints come to; ok is false when a
// stub's summary cannot say without loading it (a hand-made log, or a
// snapshot that had none).
func (a *Agent) Kept() (k *Kept, ok bool) {
	if a.stub != nil {
		return a.stub.kept, a.stub.kept != nil
	}
	k = keptOf(a.Checkpoints)
	return k, k != nil
}

// LiveCount is how many of its checkpoints are live.
func (a *Agent) LiveCount() int {
	if k, ok := a.Kept(); ok {
		return k.Count()
	}
	a.need()
	n := 0
	for _, c := range a.Checkpoints {
		if c.Live() {
			n++
		}
	}
	return n
}

// Newest is the id of the newest live checkpoint, "" when none is.
func (a *Agent) Newest() string {
	if k, ok := a.Kept(); ok {
		if n := k.Newest(); n > 0 {
			return ids.Checkpoint(n)
		}
		return ""
	}
	if l := a.Latest(); l != nil {
		return l.Checkpoint
	}
	return ""
}

// keepTaken folds a checkpoint.taken into a stub's Kept.
func (st *stub) keepTaken(a *Agent, e *journal.Entry) {
	if st.kept == nil {
		return
	}
	n, err := ids.ParseCheckpoint(e.Checkpoint)
	if err != nil || n <= a.LastCkptN || e.Checkpoint != ids.Checkpoint(n) {
		st.kept = nil // not known without loading
		return
	}
	st.kept.add(n, e.Reason, e.At)
}

// keepGone folds a checkpoint.pruned or .removed into a stub's Kept: an
// id not as ids.Checkpoint writes it is none of its checkpoints.
func (st *stub) keepGone(e *journal.Entry) {
	if st.kept == nil {
		return
	}
	for _, id := range e.Checkpoints {
		if n, err := ids.ParseCheckpoint(id); err == nil && id == ids.Checkpoint(n) {
			st.kept.drop(n)
		}
	}
}
