// Command git-venom-checkpoint is `git venom-checkpoint`; see man git-venom-checkpoint.
package main

import (
	"os"

	"github.com/git-venom/git-venom/lib/checkpointcmd"
	"github.com/git-venom/git-venom/lib/cli"
)

func main() { os.Exit(cli.Main("git-venom-checkpoint", checkpointcmd.New(), os.Args[1:])) }
