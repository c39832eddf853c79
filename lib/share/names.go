// Package share sends an agent's checkpoints to a remote and brings other
// machines' back, on request only (docs/checkpoints.md#refs). A push
// writes under refs/venom/shared/<machine>/<agent>/ one ref a live
// checkpoint and "log", the agent's records; a fetch brings objects with
// no ref, checks every name, commit, tree and record, and writes what
// passed under refs/venom/remotes/ in one transaction. Nothing a remote
// sends reaches refs/venom/checkpoints or the log.
package share

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/git-venom/git-venom/lib/errcode"
	"github.com/git-venom/git-venom/lib/ids"
)

// RemotePrefix is where a push writes on the remote.
const RemotePrefix = "refs/venom/shared/"

// LocalPrefix is where a fetch writes here: LocalPrefix<remote>/.
const LocalPrefix = "refs/venom/remotes/"

// LogLeaf is the last part of an agent's log ref.
const LogLeaf = "log"

// LogFile is the log's name in the log commit's tree.
const LogFile = "log.jsonl"

// Compiled when first used, not as every command starts: the counted
// repetitions make the machine's a large program, slow to compile.
var (
	remoteRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })
	machineRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	})
)

// CheckRemote refuses a remote name that cannot be one part of a ref name
// (a '/', "..", ".lock" or the like): it names the local namespace.
func CheckRemote(name string) error {
	if !remoteRE().MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") {
		return errcode.Newf(errcode.InvalidParamsRemote, map[string]string{"remote": name},
			"%q cannot name a remote here: use a configured remote's name of [A-Za-z0-9_.-], no '/'", name)
	}
	return nil
}

// sharedRef is a parsed name under RemotePrefix or a local remote prefix.
type sharedRef struct {
	machine, agent string
	n              int // 0 for the log
}

func (r sharedRef) leaf() string {
	if r.n == 0 {
		return LogLeaf
	}
	return strconv.Itoa(r.n)
}

// parseShared reads <machine>/<agent>/<n|log>, the part after a prefix;
// ok is false for anything a push never makes.
func parseShared(rest string) (sharedRef, bool) {
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || !machineRE().MatchString(parts[0]) || !ids.ValidAgent(parts[1]) {
		return sharedRef{}, false
	}
	r := sharedRef{machine: parts[0], agent: parts[1]}
	if parts[2] == LogLeaf {
		return r, true
	}
	n, err := ids.ParseCheckpoint("k" + parts[2])
	if err != nil || strconv.Itoa(n) != parts[2] {
		return sharedRef{}, false
	}
	r.n = n
	return r, true
}

// CopyID names a fetched copy in commands and output:
// <remote>/<machine>/<agent>.
func CopyID(remote, machine, agent string) string { return remote + "/" + machine + "/" + agent }

func localRef(remote string, r sharedRef) string {
	return LocalPrefix + remote + "/" + r.machine + "/" + r.agent + "/" + r.leaf()
}

func remoteRef(r sharedRef) string {
	return RemotePrefix + r.machine + "/" + r.agent + "/" + r.leaf()
}
