package main

// The scale mode: one agent with many checkpoint refs and a long log
// (1,000 refs and 100,000 records), built by tests/scalefixture
// without running a capture for each. It times list, a capture and a
// rollback dry run there and in the same repository with a one-checkpoint
// log, so the cost of the history shows as a ratio:
//
//	go run ./tests/bench -scale 1000 -scale-records 100000 -runs 5

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/git-venom/git-venom/tests/scalefixture"
)

func init() {
	if !modeSelected("scale") {
		return
	}
	fs := flag.NewFlagSet("bench -scale", flag.ExitOnError)
	refs := fs.Int("scale", 1000, "checkpoint refs of the agent")
	records := fs.Int("scale-records", 100000, "log records in all")
	bin := fs.String("scale-bin", "", "folder with the git-venom-* binaries (default: build them)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for the repositories")
	runs := fs.Int("runs", 5, "timed runs per command")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := runScale(*work, *bin, *refs, *records, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

func runScale(work, bin string, refs, records, runs int) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	bin, err := benchBinaries(work, bin)
	if err != nil {
		return err
	}
	env := append(baseEnv(), "PATH="+bin+":"+os.Getenv("PATH"), "GIT_CONFIG_GLOBAL="+filepath.Join(work, "scale.gitconfig"))
	if err := os.WriteFile(filepath.Join(work, "scale.gitconfig"), []byte("[venom]\n\tkeep = 1000000\n\ttimeout = 600s\n"), 0o644); err != nil {
		return err
	}
	small, err := scaleRepo(work, "scale-small", env, 2, 10)
	if err != nil {
		return err
	}
	big, err := scaleRepo(work, "scale-big", env, refs, records)
	if err != nil {
		return err
	}
	version, _ := (&proc{git: "git", env: env, dir: work}).line("version")
	fmt.Printf("%s, %d runs, medians; small: %d refs and %d records, big: %d refs and %d records\n",
		version, runs, small.Checkpoints, small.Records, big.Checkpoints, big.Records)
	fmt.Printf("%-34s %10s %10s %8s\n", "command", "small ms", "big ms", "big/small")
	for _, c := range []struct {
		name string
		args []string
		edit bool
	}{
		{"checkpoint list (50)", []string{"venom-checkpoint", "list", "--agent=a1", "--json"}, false},
		{"checkpoint list --limit=1000", []string{"venom-checkpoint", "list", "--agent=a1", "--limit=1000", "--json"}, false},
		{"checkpoint (one file changed)", []string{"venom-checkpoint", "--agent=a1", "--json"}, true},
		{"rollback --dry-run to k1", []string{"venom-rollback", "--agent=a1", "--checkpoint=k1", "--restore=files",
			"--outside=overwrite", "--dry-run", "--json"}, false},
	} {
		var ts [2][]time.Duration
		for i := 0; i < runs; i++ {
			for j, f := range []*scalefixture.Fixture{small, big} {
				if c.edit {
					if err := os.WriteFile(filepath.Join(f.Dir, "edited.txt"), []byte(fmt.Sprintf("%d %d\n", i, time.Now().UnixNano())), 0o644); err != nil {
						return err
					}
				}
				p := &proc{git: "git", env: env, dir: f.Dir}
				start := time.Now()
				if _, err := p.run(nil, c.args...); err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
				ts[j] = append(ts[j], time.Since(start))
			}
		}
		s, b := median(ts[0]), median(ts[1])
		fmt.Printf("%-34s %10s %10s %8s\n", c.name, ms(s), ms(b), ratio(b, s))
	}
	return nil
}

func scaleRepo(work, name string, env []string, refs, records int) (*scalefixture.Fixture, error) {
	dir := filepath.Join(work, name)
	if _, err := filesRepo(work, dir, env, 200); err != nil {
		return nil, err
	}
	logf("building %s: %d refs, %d records", name, refs, records)
	return scalefixture.Build(dir, refs, records, env)
}

// filesRepo makes a fresh repository at dir whose one commit holds files
// small files (file000.txt, ...), and returns a proc running git there.
func filesRepo(work, dir string, env []string, files int) (*proc, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	p := &proc{git: "git", env: env, dir: work}
	if _, err := p.run(nil, "init", "-q", dir); err != nil {
		return nil, err
	}
	p.dir = dir
	for i := 0; i < files; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d.txt", i)), []byte(fmt.Sprintf("%d\n", i)), 0o644); err != nil {
			return nil, err
		}
	}
	if _, err := p.run(nil, "add", "-A"); err != nil {
		return nil, err
	}
	if _, err := p.run(nil, "commit", "-q", "-m", "base"); err != nil {
		return nil, err
	}
	return p, nil
}
