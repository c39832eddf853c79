// Command git-venom-rollback is `git venom-rollback`; see man git-venom-rollback.
package main

import (
	"os"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/rollbackcmd"
)

func main() { os.Exit(cli.Main("git-venom-rollback", rollbackcmd.New(), os.Args[1:])) }
