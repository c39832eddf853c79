// Command git-venom-diff is `git venom-diff`; see man git-venom-diff.
package main

import (
	"os"

	"github.com/git-venom/git-venom/lib/cli"
	"github.com/git-venom/git-venom/lib/diffcmd"
)

func main() { os.Exit(cli.Main("git-venom-diff", diffcmd.New(), os.Args[1:])) }
