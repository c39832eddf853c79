package main

// The per-tool mode: what `hook install --per-tool` adds to each tool call
// (docs/benchmarks.md#per-tool-call), after a call that changed one file
// and one that changed none, against git status, interleaved, target <=
// 1.0; -pertool-base <folder> times an earlier binary beside it, and the
// floors (perToolFloors) run in the same turns.
//
//	go run ./tests/bench -pertool 1000,10000 -runs 21

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-venom/git-venom/tests/buildtags"
)

var perToolSizes *string

func init() {
	if !modeSelected("pertool") {
		return
	}
	fs := flag.NewFlagSet("bench -pertool", flag.ExitOnError)
	perToolSizes = fs.String("pertool", "10000", "comma-separated sizes of generated repositories")
	bin := fs.String("pertool-bin", "", "folder with git-venom-checkpoint (default: build it)")
	base := fs.String("pertool-base", "", "folder with an earlier git-venom-checkpoint, timed beside the other (before/after)")
	work := fs.String("work", filepath.Join(os.TempDir(), "git-venom-bench"), "directory for cached repositories and the working copy")
	runs := fs.Int("runs", 21, "timed runs per size")
	gitPath := fs.String("git", "git", "git binary")
	verb := fs.Bool("v", false, "log progress on stderr")
	_ = fs.Parse(os.Args[1:])
	verbose = *verb
	if err := os.MkdirAll(*work, 0o755); err != nil {
		fatal(err)
	}
	if err := runPerToolMode(&proc{git: *gitPath, env: baseEnv(), dir: *work}, *work, *bin, *base, *runs); err != nil {
		fatal(err)
	}
	os.Exit(0)
}

// perToolSide is one binary's timings: after a changing call and after a
// reading one, wall and CPU.
type perToolSide struct {
	name, exe                string
	changed, unchanged       []time.Duration
	changedCPU, unchangedCPU []time.Duration
	unchangedFaults          []int64
}

// perToolFloor is a process that starts and exits, timed in the same
// runs: its CPU time and minor page faults.
type perToolFloor struct {
	name   string
	argv   []string
	cpu    []time.Duration
	faults []int64
}

// perToolFloors builds into work/floor the programs that break a hook
// call's start-up down, cheapest first, and returns them with git
// --version and each side's --version: C that does nothing, linked
// statically and dynamically (a process start, then the dynamic loader),
// Go alone (its runtime), Go with cgo (as git-venom is, for libgit2), Go
// with libgit2 linked and started as lib/repo does it, and every package
// git-venom-checkpoint imports initialised with a main that returns.
func perToolFloors(work, git string, sides []*perToolSide) ([]*perToolFloor, error) {
	dir := filepath.Join(work, "floor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var floors []*perToolFloor
	for _, f := range []struct{ name, exe, flag string }{{"C, static", "c-static", "-static"}, {"C, dynamic", "c-dynamic", ""}} {
		src := filepath.Join(dir, "empty.c")
		if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
			return nil, err
		}
		exe := filepath.Join(dir, f.exe)
		args := []string{"-O2", "-o", exe, src}
		if f.flag != "" {
			args = append([]string{f.flag}, args...)
		}
		if out, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
			logf("no %s floor: cc: %v: %s", f.name, err, out)
			continue
		}
		floors = append(floors, &perToolFloor{name: f.name, argv: []string{exe}})
	}
	floors = append(floors, &perToolFloor{name: "git --version", argv: []string{git, "--version"}})
	for _, f := range []struct{ name, src, cgo string }{
		{"Go, no cgo", "package main\n\nfunc main() {}\n", "0"},
		{"Go with cgo", "package main\n\nimport \"C\"\n\nfunc main() {}\n", "1"},
	} {
		dir := filepath.Join(dir, "cgo"+f.cgo)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(f.src), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module floor\n\ngo 1.21\n"), 0o644); err != nil {
			return nil, err
		}
		exe := filepath.Join(dir, "floor")
		c := exec.Command("go", "build", "-o", exe, ".")
		c.Dir = dir
		c.Env = append(os.Environ(), "CGO_ENABLED="+f.cgo, "GOFLAGS=", "GOWORK=off")
		if out, err := c.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building the %s floor: %v: %s", f.name, err, out)
		}
		floors = append(floors, &perToolFloor{name: f.name, argv: []string{exe}})
	}
	const mod = "github.com/git-venom/git-venom/lib/"
	for _, f := range []struct {
		name, pkg string
		imports   []string
	}{
		{"Go with libgit2", "libgit2", []string{mod + "repo"}},
		{"every package, empty main", "packages", []string{mod + "checkpointcmd", mod + "cli"}},
	} {
		exe, err := buildFloorInModule(dir, f.pkg, f.imports)
		if err != nil {
			return nil, fmt.Errorf("building the %s floor: %v", f.name, err)
		}
		floors = append(floors, &perToolFloor{name: f.name, argv: []string{exe}})
	}
	for _, sd := range sides {
		floors = append(floors, &perToolFloor{name: sd.name + " --version", argv: []string{sd.exe, "--version"}})
	}
	return floors, nil
}

// buildFloorInModule builds, into dir/name, a main package of this module
// that imports the given packages and returns at once: their init
// functions and the link they need, nothing else. The package is put in
// the module through go build -overlay, so the tree gets no file; it is
// built with the tags the bench's binaries have.
func buildFloorInModule(dir, name string, imports []string) (string, error) {
	root, err := buildtags.ModuleRoot()
	if err != nil {
		return "", err
	}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, imp := range imports {
		fmt.Fprintf(&src, "\t_ %q\n", imp)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	file := filepath.Join(dir, name+".go")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		return "", err
	}
	pkg := filepath.Join("tests", "bench", "floor-"+name)
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(root, pkg, "main.go"): file}})
	if err != nil {
		return "", err
	}
	ov := filepath.Join(dir, name+".overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return "", err
	}
	exe := filepath.Join(dir, name)
	tags := buildtags.With(os.Getenv("GOFLAGS"), "venomtest")
	_, err = (&proc{dir: root, env: os.Environ()}).cmd(nil, "go", "build", "-overlay", ov, "-tags", tags, "-o", exe, "./"+filepath.ToSlash(pkg))
	return exe, err
}

func medianFaults(n []int64) int64 {
	s := append([]int64(nil), n...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func runPerToolMode(p *proc, work, bin, base string, runs int) error {
	bin, err := benchBinaries(work, bin, "./git-venom-checkpoint")
	if err != nil {
		return err
	}
	version, _ := p.line("version")
	fmt.Printf("%s, PostToolUse --per-tool hook vs git status, %d runs, medians in ms (wall / CPU)\n", version, runs)
	fmt.Printf("%8s %-20s %15s %15s   %s\n", "files", "", "changed", "unchanged", "changed/status, unchanged/status: wall; CPU (target <= 1.0)")
	for _, s := range strings.Split(*perToolSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -pertool entry %q", s)
		}
		sides := []*perToolSide{{name: "hook", exe: filepath.Join(bin, "git-venom-checkpoint")}}
		if base != "" {
			sides = append(sides, &perToolSide{name: "hook (-pertool-base)", exe: filepath.Join(base, "git-venom-checkpoint")})
		}
		floors, err := perToolFloors(work, p.git, sides)
		if err != nil {
			return err
		}
		status, statusCPU, statusFaults, err := perToolOnce(p, work, sides, floors, n, runs)
		if err != nil {
			return err
		}
		fmt.Printf("%8d %-20s %15s %15s   page faults %d\n", n, "git status", ms(median(status))+" / "+ms(median(statusCPU)), "",
			medianFaults(statusFaults))
		for _, sd := range sides {
			fmt.Printf("%8s %-20s %15s %15s   %s, %s; %s, %s\n", "", sd.name,
				ms(median(sd.changed))+" / "+ms(median(sd.changedCPU)),
				ms(median(sd.unchanged))+" / "+ms(median(sd.unchangedCPU)),
				ratio(median(sd.changed), median(status)), ratio(median(sd.unchanged), median(status)),
				ratio(median(sd.changedCPU), median(statusCPU)), ratio(median(sd.unchangedCPU), median(statusCPU)))
			fmt.Printf("%8s %-20s %15s %15s   page faults %d (unchanged)\n", "", "", "", "", medianFaults(sd.unchangedFaults))
		}
		perToolFloorTable(floors, sides, statusCPU, statusFaults)
	}
	return nil
}

// perToolFloorTable prints the floors, cheapest first, then the hook call
// that changed nothing, each with its CPU median, min-max, ratio to git
// status's CPU and page faults; and what the call costs above its own
// --version beside what git status costs above git --version.
func perToolFloorTable(floors []*perToolFloor, sides []*perToolSide, statusCPU []time.Duration, statusFaults []int64) {
	st := median(statusCPU)
	row := func(name string, cpu []time.Duration, faults []int64) {
		fmt.Printf("%8s %-40s %7s %13s %6sx %6d\n", "", name, ms(median(cpu)), minMax(cpu), ratio(median(cpu), st), medianFaults(faults))
	}
	fmt.Printf("%8s %-40s %7s %13s %7s %6s\n", "", "start-up, CPU ms", "median", "min-max", "÷status", "faults")
	row("git status", statusCPU, statusFaults)
	var gitVersion *perToolFloor
	versions := map[string]*perToolFloor{}
	for _, f := range floors {
		row(f.name, f.cpu, f.faults)
		if f.name == "git --version" {
			gitVersion = f
		}
		versions[f.name] = f
	}
	for _, sd := range sides {
		row(sd.name+", nothing changed", sd.unchangedCPU, sd.unchangedFaults)
	}
	if gitVersion == nil {
		return
	}
	git := median(statusCPU) - median(gitVersion.cpu)
	for _, sd := range sides {
		v := versions[sd.name+" --version"]
		if v == nil {
			continue
		}
		own := median(sd.unchangedCPU) - median(v.cpu)
		fmt.Printf("%8s above its own start: %s, nothing changed - its --version %s ms; git status - git --version %s ms; %sx\n",
			"", sd.name, ms(own), ms(git), ratio(own, git))
	}
}

func perToolOnce(p *proc, work string, sides []*perToolSide, floors []*perToolFloor, n, runs int) (status, statusCPU []time.Duration, statusFaults []int64, err error) {
	top, err := prepare(p, work, n, "")
	if err != nil {
		return nil, nil, nil, err
	}
	g := &proc{dir: top, git: p.git, env: p.env}
	const session = "7ed25220-ebd9-4d8a-a85d-0225263a02da"
	payload := func(event, command string) []byte {
		return []byte(fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%q,"prompt_id":"p1","hook_event_name":%q,"prompt":"bench","tool_name":"Bash","tool_input":{"command":%q},"tool_use_id":"toolu_bench"}`,
			session, top, event, command))
	}
	// timed runs one command in the tree: its wall time and its CPU time.
	timed := func(stdin []byte, name string, args ...string) (wall, cpu time.Duration, out []byte, err error) {
		g.cpu, g.faults = 0, 0
		start := time.Now()
		out, err = g.cmd(stdin, name, args...)
		return time.Since(start), g.cpu, out, err
	}
	hookRun := func(exe, event, command string) (time.Duration, time.Duration, error) {
		wall, cpu, out, err := timed(payload(event, command), exe, "hook", "claude-code", "--agent=b", "--per-tool")
		if err == nil && len(out) > 0 {
			err = fmt.Errorf("the %s hook printed %q", event, out)
		}
		return wall, cpu, err
	}
	// Register and open the turn, untimed.
	for _, ev := range []string{"SessionStart", "UserPromptSubmit"} {
		if _, _, err := hookRun(sides[0].exe, ev, ""); err != nil {
			return nil, nil, nil, err
		}
	}
	edited := filepath.Join(top, "pertool-bench.txt")
	for run := 0; run < runs; run++ {
		logf("%d files, run %d", n, run+1)
		wall, cpu, _, err := timed(nil, g.git, "status", "--porcelain")
		if err != nil {
			return nil, nil, nil, err
		}
		status, statusCPU, statusFaults = append(status, wall), append(statusCPU, cpu), append(statusFaults, g.faults)
		for i := range sides {
			sd := sides[(run+i)%len(sides)]
			if err := os.WriteFile(edited, []byte(fmt.Sprintf("run %d, %s\n", run, sd.name)), 0o644); err != nil {
				return nil, nil, nil, err
			}
			wall, cpu, err := hookRun(sd.exe, "PostToolUse", fmt.Sprintf("echo run %d > pertool-bench.txt", run))
			if err != nil {
				return nil, nil, nil, err
			}
			sd.changed, sd.changedCPU = append(sd.changed, wall), append(sd.changedCPU, cpu)
			if wall, cpu, err = hookRun(sd.exe, "PostToolUse", "cat pertool-bench.txt"); err != nil {
				return nil, nil, nil, err
			}
			sd.unchanged, sd.unchangedCPU = append(sd.unchanged, wall), append(sd.unchangedCPU, cpu)
			sd.unchangedFaults = append(sd.unchangedFaults, g.faults)
		}
		for _, f := range floors {
			_, cpu, _, err := timed(nil, f.argv[0], f.argv[1:]...)
			if err != nil {
				return nil, nil, nil, err
			}
			f.cpu, f.faults = append(f.cpu, cpu), append(f.faults, g.faults)
		}
	}
	if _, _, err := hookRun(sides[0].exe, "Stop", ""); err != nil {
		return nil, nil, nil, err
	}
	// Every changing call, and no reading one, left a mark.
	log, err := os.ReadFile(filepath.Join(top, ".git", "venom", "log.jsonl"))
	if err != nil {
		return nil, nil, nil, err
	}
	if got, want := strings.Count(string(log), `"type":"tool.marked"`), runs*len(sides); got != want {
		return nil, nil, nil, fmt.Errorf("%d tool calls marked, want %d", got, want)
	}
	_ = os.Remove(edited)
	return status, statusCPU, statusFaults, nil
}
