module github.com/git-venom/git-venom

go 1.26.0

require (
	github.com/alecthomas/kong v1.17.0
	github.com/fatih/color v1.19.0
	github.com/libgit2/git2go/v34 v34.0.0
	github.com/mattn/go-isatty v0.0.24
	github.com/mattn/go-runewidth v0.0.31
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.49.0
)

require (
	github.com/clipperhouse/uax29/v2 v2.2.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.58.0 // indirect
)
