package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// genVersion names the layout; bump it when generate changes so that cached
// repositories made by an older layout are not reused.
const genVersion = "v1"

var (
	dirPrefix = []string{"pkg", "mod", "part", "leaf"}
	fileExt   = []string{".go", ".md", ".txt", ".c", ".h", ".json", ".py", ".yaml"}
	words     = strings.Fields(`checkpoint rollback agent turn tree index commit
		object blob stage worktree capture restore status config ref journal lock
		plan repo path file entry cache stat hash merge branch head remote fetch
		alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega value
		return func struct error string int byte slice map chan select defer`)
)

// generate writes a repository of n tracked files under dir and commits it.
// Directories hold 20-50 files and nest up to four levels; files are 200 B to
// 4 KiB of text, log-uniform. A .gitignore hides a build/ directory full of
// files and scattered *.o and *.log files.
func generate(p *proc, dir string, n int) error {
	rng := rand.New(rand.NewSource(int64(n)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dirs := (n + 34) / 35
	fan := 2
	for capacity(fan-1, 4) < 2*dirs {
		fan++
	}
	type node struct {
		path  string
		depth int
	}
	queue := []node{{"", 0}}
	made, ndir := 0, 0
	write := func(rel string, size int) error {
		return os.WriteFile(filepath.Join(dir, rel), text(rng, rel, size), 0o644)
	}
	for made < n {
		if len(queue) == 0 {
			queue = append(queue, node{fmt.Sprintf("extra%03d", ndir), 1})
		}
		cur := queue[0]
		queue = queue[1:]
		ndir++
		if err := os.MkdirAll(filepath.Join(dir, cur.path), 0o755); err != nil {
			return err
		}
		k := 20 + rng.Intn(31)
		if k > n-made {
			k = n - made
		}
		for i := 0; i < k; i++ {
			rel := filepath.Join(cur.path, fmt.Sprintf("file%03d%s", i, fileExt[rng.Intn(len(fileExt))]))
			size := int(200 * math.Exp(rng.Float64()*math.Log(20)))
			if err := write(rel, size); err != nil {
				return err
			}
		}
		made += k
		if ndir%10 == 3 {
			// Ignored files inside tracked directories.
			if err := write(filepath.Join(cur.path, "cache.o"), 500); err != nil {
				return err
			}
			if err := write(filepath.Join(cur.path, "debug.log"), 300); err != nil {
				return err
			}
		}
		if cur.depth < 4 {
			for i, m := 0, fan-1+rng.Intn(3); i < m; i++ {
				queue = append(queue, node{filepath.Join(cur.path, fmt.Sprintf("%s%02d", dirPrefix[cur.depth], i)), cur.depth + 1})
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("/build/\n/dist/\n*.o\n*.log\n"), 0o644); err != nil {
		return err
	}
	// An ignored build directory with a few hundred files.
	for i := 0; i < 300; i++ {
		rel := filepath.Join("build", "obj", fmt.Sprintf("d%02d", i%15), fmt.Sprintf("unit%03d.o", i))
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		if err := write(rel, 1000); err != nil {
			return err
		}
	}
	g := &proc{dir: dir, git: p.git, env: p.env}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "bench: generated repository"},
		{"repack", "-adq"},
		{"prune-packed"},
	} {
		if _, err := g.run(nil, args...); err != nil {
			return err
		}
	}
	return nil
}

func capacity(fan, depth int) int {
	total, level := 0, 1
	for d := 0; d <= depth; d++ {
		total += level
		level *= fan
	}
	return total
}

func text(rng *rand.Rand, rel string, size int) []byte {
	b := make([]byte, 0, size+16)
	b = append(b, "// "+rel+"\n"...)
	for len(b) < size {
		n := 4 + rng.Intn(9)
		for i := 0; i < n; i++ {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, words[rng.Intn(len(words))]...)
		}
		b = append(b, '\n')
	}
	return b
}

// prepare returns a fresh working copy of the repository to measure, made
// from a cached source under work: a generated repository of n files, or a
// clone of src. The source is never modified.
func prepare(p *proc, work string, n int, src string) (string, error) {
	var cache string
	if src != "" {
		abs, err := filepath.Abs(src)
		if err != nil {
			return "", err
		}
		sum := sha1.Sum([]byte(abs))
		cache = filepath.Join(work, "clone-"+filepath.Base(abs)+"-"+hex.EncodeToString(sum[:4]))
	} else {
		cache = filepath.Join(work, fmt.Sprintf("gen-%d-%s", n, genVersion))
	}
	marker := filepath.Join(cache, ".git", "bench-complete")
	if _, err := os.Stat(marker); err != nil {
		if err := os.RemoveAll(cache); err != nil {
			return "", err
		}
		start := time.Now()
		if src != "" {
			logf("cloning %s into %s", src, cache)
			if _, err := p.run(nil, "clone", "-q", "--no-hardlinks", src, cache); err != nil {
				return "", err
			}
		} else {
			logf("generating %d files in %s", n, cache)
			if err := generate(p, cache, n); err != nil {
				return "", err
			}
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return "", err
		}
		logf("made %s in %s", cache, time.Since(start).Round(time.Millisecond))
	}
	run := filepath.Join(work, "run")
	if err := os.RemoveAll(run); err != nil {
		return "", err
	}
	if _, err := p.cmd(nil, "cp", "-a", cache, run); err != nil {
		return "", err
	}
	// The copy has new inodes and ctimes, so every index entry is stat-dirty:
	// refresh once, after the clock has moved on, so that the real index is in
	// the steady state a user's index is in.
	g := &proc{dir: run, git: p.git, env: p.env}
	if err := settle(g); err != nil {
		return "", err
	}
	return run, nil
}

// settle refreshes the real index once the clock has passed every file's
// mtime, so that no entry is racily clean.
func settle(g *proc) error {
	time.Sleep(1100 * time.Millisecond)
	// With -q a path that needs an update is not an error, but git still
	// exits 1 for it; the tree is clean here, so only a failure to run counts.
	if _, err := g.run(nil, "update-index", "-q", "--refresh"); err != nil && !strings.Contains(err.Error(), "exit status 1") {
		return err
	}
	return nil
}
