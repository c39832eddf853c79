package journal

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// FuzzScan reads any bytes as a log, seeded with a real log and damaged
// copies of it (records cut, joined, repeated, dropped, moved back, NULs,
// a torn tail). Scan never fails on a readable file and agrees with the
// oracle readPlainly on every record and damaged line; bytes after the
// last newline change only Torn; a one-agent read takes an in-order part
// of the full read; a writer cuts only the torn tail and appends a record
// above every seq a line claims, which the next read takes.
func FuzzScan(f *testing.F) {
	f.Add([]byte(rec(1) + rec(2) + rec(3)))
	f.Add([]byte(rec(1) + cut(2) + rec(3)))
	f.Add([]byte(rec(1) + rec(1) + rec(3) + rec(2) + "\n\n" + rec(9)))
	f.Add([]byte(rec(1) + "\x00\x00\n" + rec(2)[:20]))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "log.jsonl")
		scan := func(text []byte, o ScanOptions) (*Log, []Entry) {
			if err := os.WriteFile(path, text, 0o666); err != nil {
				t.Fatal(err)
			}
			var es []Entry
			l, err := ScanWith(path, o, func(e *Entry) { es = append(es, *e) })
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			return l, es
		}
		l, got := scan(data, ScanOptions{})
		want := readPlainly(data)
		if !equalEntries(got, want.entries) {
			t.Fatalf("records:\n got %v\nwant %v", got, want.entries)
		}
		if l.LastSeq() != want.last || l.Torn() != want.torn {
			t.Fatalf("last %d torn %v, want %d %v", l.LastSeq(), l.Torn(), want.last, want.torn)
		}
		if l.Damaged() != len(want.damaged) || !slices.Equal(linesOf(l.Damage()), want.damaged[:min(len(want.damaged), maxDamage)]) {
			t.Fatalf("damage %d %v, want %v", l.Damaged(), l.Damage(), want.damaged)
		}

		whole := data[:bytes.LastIndexByte(data, '\n')+1]
		wl, wgot := scan(whole, ScanOptions{})
		if wl.Torn() || !equalEntries(wgot, got) || wl.Damaged() != l.Damaged() || !slices.Equal(wl.Damage(), l.Damage()) {
			t.Fatalf("the torn tail changed the read")
		}

		if l.Damaged() == 0 {
			al, agot := scan(data, ScanOptions{Agent: "a1"})
			if al.Damaged() != 0 {
				t.Fatalf("a read of a1 finds damage a full read does not: %v", al.Damage())
			}
			if !subsequence(agot, got) {
				t.Fatalf("a read of a1 took records the full read does not")
			}
		}

		if err := os.WriteFile(path, data, 0o666); err != nil {
			t.Fatal(err)
		}
		ll, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		e, err := ll.Append("agent.archived", map[string]string{"agent": "a1"})
		if err != nil {
			if max(ll.LastSeq(), ll.high) != math.MaxInt64 {
				t.Fatalf("append: %v", err)
			}
			return // no seq above the last there can be: refused
		}
		for _, line := range bytes.Split(whole, []byte{'\n'}) {
			if seq, _, ok := headSeq(line); ok && seq >= e.Seq {
				t.Fatalf("appended seq %d, not above the %d a line claims", e.Seq, seq)
			}
		}
		for _, x := range got {
			if x.Seq >= e.Seq {
				t.Fatalf("appended seq %d, not above record %d", e.Seq, x.Seq)
			}
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(after, whole) || bytes.Count(after[len(whole):], []byte{'\n'}) != 1 {
			t.Fatalf("the writer changed a whole line or wrote more than one")
		}
		again := readPlainly(after)
		if n := len(again.entries); n == 0 || again.entries[n-1].Seq != e.Seq || !equalEntries(again.entries[:n-1], got) {
			t.Fatalf("the appended record is not read after the others")
		}
	})
}

func equalEntries(a, b []Entry) bool { return slices.EqualFunc(a, b, sameEntry) }

// sameEntry compares two records member by member: the fast decoder and
// encoding/json must agree exactly.
func sameEntry(a, b Entry) bool { return reflect.DeepEqual(a, b) }

// subsequence reports whether every record of part is in all, in order.
func subsequence(part, all []Entry) bool {
	i := 0
	for _, x := range part {
		for i < len(all) && !sameEntry(all[i], x) {
			i++
		}
		if i == len(all) {
			return false
		}
		i++
	}
	return true
}
