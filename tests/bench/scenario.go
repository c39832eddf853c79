package main

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
)

// scenario is a change to the committed tree that every strategy captures.
type scenario struct {
	name    string
	changed int // tracked files rewritten
	added   int // untracked files created; some go in a new directory
}

var scenarios = []scenario{
	{"clean", 0, 0},
	{"10chg+10new", 10, 10},
	{"1000chg", 1000, 0},
}

func (s scenario) mutates() bool { return s.changed+s.added > 0 }

// mutation is a scenario bound to one working tree: which files change, their
// committed content, and the new files.
type mutation struct {
	top    string
	newDir string
	chg    []string
	base   [][]byte
	added  []string
	suffix []byte
	// epoch, when set, makes each apply write content never written before,
	// so a strategy that keeps its objects (ours) pays for writing every blob
	// as the others do, instead of finding them already stored.
	epoch int
}

// bind picks the scenario's files among the tracked ones, deterministically,
// and reads their committed content. The tree must be clean.
func (s scenario) bind(top string, tracked []string) (*mutation, error) {
	rng := rand.New(rand.NewSource(int64(len(s.name)*7919 + s.changed)))
	m := &mutation{
		top:    top,
		newDir: "venom-bench-new-" + s.name,
		suffix: []byte(fmt.Sprintf("changed by bench scenario %s\n", s.name)),
	}
	var pool []string
	for _, f := range tracked {
		if f != ".gitignore" {
			pool = append(pool, f)
		}
	}
	n := s.changed
	if n > len(pool) {
		n = len(pool)
	}
	for _, i := range rng.Perm(len(pool))[:n] {
		b, err := os.ReadFile(filepath.Join(top, pool[i]))
		if err != nil {
			return nil, err
		}
		m.chg = append(m.chg, pool[i])
		m.base = append(m.base, b)
	}
	for i := 0; i < s.added; i++ {
		var rel string
		if i < s.added*7/10 {
			rel = filepath.Join(filepath.Dir(pool[rng.Intn(len(pool))]), fmt.Sprintf("venom-bench-%s-%d.txt", s.name, i))
		} else {
			rel = filepath.Join(m.newDir, "sub", fmt.Sprintf("new-%d.txt", i))
		}
		m.added = append(m.added, rel)
	}
	return m, nil
}

// apply makes the change. Content is the same every time, so every run
// captures the same tree.
func (m *mutation) apply() error {
	for i, rel := range m.chg {
		b := append(append([]byte(nil), m.base[i]...), m.suffix...)
		if m.epoch > 0 {
			b = append(b, fmt.Sprintf("epoch %d\n", m.epoch)...)
		}
		if err := os.WriteFile(filepath.Join(m.top, rel), b, 0o644); err != nil {
			return err
		}
	}
	for _, rel := range m.added {
		p := filepath.Join(m.top, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("new file %s %d\n", rel, m.epoch)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// undo puts the committed content back (with new stat data, as an editor's
// undo would) and removes the new files.
func (m *mutation) undo() error {
	for i, rel := range m.chg {
		if err := os.WriteFile(filepath.Join(m.top, rel), m.base[i], 0o644); err != nil {
			return err
		}
	}
	for _, rel := range m.added {
		if err := os.Remove(filepath.Join(m.top, rel)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return os.RemoveAll(filepath.Join(m.top, m.newDir))
}
