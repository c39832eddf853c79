#!/usr/bin/env bash
# Installs git-venom: the three git subcommands, git venom's overview, their
# man pages and shell completion (bash, zsh, fish).
#   ./install.sh [--prefix DIR | --local]   (or PREFIX=DIR; default /usr/local; --local: ~/.local)
# Installs what the build needs when missing (libgit2-dev, pkg-config, gcc,
# man-db) with apt-get as root; without root it says exactly what to install.
set -eu

die() { echo "install.sh: $*" >&2; exit 1; }

prefix="${PREFIX:-/usr/local}"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || die "--prefix needs a folder"; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --local) prefix="$HOME/.local"; shift ;;
    -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] || die "the prefix is empty"
# A relative prefix means relative to where the user ran this, not to the
# source folder the build runs in.
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

command -v go >/dev/null 2>&1 || die "Go is not on PATH; install Go $(sed -n 's/^go //p' go.mod) or newer first"
command -v git >/dev/null 2>&1 || die "git is not on PATH"

mkdir -p "$prefix/bin" "$prefix/share/man/man1" 2>/dev/null || true
if [ ! -w "$prefix/bin" ] || [ ! -w "$prefix/share/man/man1" ]; then
  die "$prefix is not writable; run as root or use --prefix DIR"
fi

# What the build and git's help need. git2go v34 binds libgit2 1.5 through
# cgo, so it also needs a C compiler and the C library's headers.
libgit2_ok() { pkg-config --exists 'libgit2 >= 1.5' 'libgit2 < 1.6' 2>/dev/null; }
missing=""
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
libgit2_ok || missing="$missing libgit2-dev"
command -v "$(go env CC)" >/dev/null 2>&1 || missing="$missing gcc libc6-dev"
command -v man >/dev/null 2>&1 || missing="$missing man-db"
# go fetches modules over https; Debian keeps the CAs in ca-certificates.
if command -v apt-get >/dev/null 2>&1 && [ ! -e /etc/ssl/certs/ca-certificates.crt ]; then missing="$missing ca-certificates"; fi
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "install.sh: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "install.sh: missing:$missing" >&2
    die "install them first, as root: apt-get install -y$missing"
  fi
fi
if ! libgit2_ok; then
  found="$(pkg-config --modversion libgit2 2>/dev/null || echo none)"
  die "git-venom needs libgit2 1.5 (Debian 12's libgit2-dev), found $found"
fi

# libgit2 goes into the binaries when Debian's static archives are there.
. lib/static/env.sh

version="$(git describe --always --dirty 2>/dev/null || echo dev)"
echo "install.sh: building git-venom $version (the first cgo build of libgit2's bindings takes a minute)"
CGO_ENABLED=1 go build -trimpath -ldflags "-X github.com/git-venom/git-venom/lib/cli.Version=$version" \
  -o "$prefix/bin/" ./git-venom-checkpoint ./git-venom-rollback ./git-venom-diff
# git venom alone: the overview, and what makes `git help venom` open
# man git-venom (git looks for git-<name> on PATH to decide that).
install -m 0755 bin/git-venom "$prefix/bin/"
install -m 0644 man/git-venom.1 man/git-venom-checkpoint.1 man/git-venom-rollback.1 man/git-venom-diff.1 "$prefix/share/man/man1/"
# Shell completion, under the names each shell's git completion asks for
# (bash: git-venom-<cmd>; zsh: _git-venom-<cmd>; fish: git-venom-<cmd>.fish),
# in the folders each shell searches below a prefix on PATH or in
# XDG_DATA_DIRS (/usr/local/share is in both by default).
mkdir -p "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
  "$prefix/share/fish/vendor_completions.d" "$prefix/share/fish/vendor_conf.d"
for cmd in git-venom-checkpoint git-venom-rollback git-venom-diff; do
  install -m 0644 completion/git-venom.bash "$prefix/share/bash-completion/completions/$cmd"
  install -m 0644 completion/git-venom.zsh "$prefix/share/zsh/site-functions/_$cmd"
  install -m 0644 completion/git-venom.fish "$prefix/share/fish/vendor_completions.d/$cmd.fish"
done
# fish 3.6's git completion passes `git venom-<cmd>` on to no one: this one
# registers the three for git, read when fish starts.
install -m 0644 completion/git-venom-git.fish "$prefix/share/fish/vendor_conf.d/git-venom.fish"
# Refresh apropos's index where man-db keeps one (the system manpath, as
# /usr/local/share/man); mandb would take over any other folder for its user.
if [ "$(id -u)" = 0 ] && command -v mandb >/dev/null 2>&1 \
  && manpath -g 2>/dev/null | tr : '\n' | grep -qxF "$prefix/share/man"; then
  mandb -q "$prefix/share/man" >/dev/null 2>&1 || true
fi

# man finds $prefix/share/man by itself once $prefix/bin is on PATH (man-db
# maps each PATH entry's ../share/man), and git venom-<cmd> --help goes
# through man.
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install.sh: add $prefix/bin to PATH" ;;
esac
# bash loads git's completion, and ours through it, only with the
# bash-completion package; without it <TAB> after git venom-<cmd> offers files.
if command -v bash >/dev/null 2>&1 && ! pkg-config --exists bash-completion 2>/dev/null \
  && [ ! -r /usr/share/bash-completion/bash_completion ] && [ ! -r /etc/bash_completion ]; then
  echo "install.sh: bash-completion is missing, so bash completes no git command; apt-get install bash-completion"
fi
if [ -e /usr/bin/man.REAL ]; then
  # Ubuntu's minimized images divert man to a stub that shows no page.
  echo "install.sh: man is a minimized system's stub; run unminimize to get git venom-<cmd> --help"
elif command -v man >/dev/null 2>&1 && ! PATH="$prefix/bin:$PATH" man -w git-venom-checkpoint >/dev/null 2>&1; then
  echo "install.sh: man does not find the pages; add this to your shell's profile: export MANPATH=\"$prefix/share/man:\""
fi
PATH="$prefix/bin:$PATH" git venom-checkpoint --version
