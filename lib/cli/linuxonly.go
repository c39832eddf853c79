//go:build !linux

package cli

// git-venom is built for Linux only (README.md): the tree walk, the capture
// scan and the rollback's unnamed files use Linux system calls. Elsewhere
// the build stops here with a name that says why.
var _ = gitVenomRunsOnLinuxOnly
