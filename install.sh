#!/usr/bin/env bash
# Installs git-venom: the three git subcommands and their man pages.
#   ./install.sh [--prefix DIR]     (or PREFIX=DIR ./install.sh; default /usr/local)
# Installs what the build needs when missing (libgit2-dev, pkg-config, man-db)
# with apt-get as root; without root it says exactly what to install.
set -eu

prefix="${PREFIX:-/usr/local}"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --local) prefix="$HOME/.local"; shift ;;
    -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

command -v go >/dev/null 2>&1 || { echo "install.sh: Go is not on PATH; install Go 1.22 or newer first" >&2; exit 1; }
command -v git >/dev/null 2>&1 || { echo "install.sh: git is not on PATH" >&2; exit 1; }

missing=""
pkg-config --exists 'libgit2 >= 1.5' 2>/dev/null && pkg-config --exists 'libgit2 < 1.6' 2>/dev/null || missing="$missing libgit2-dev"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v man >/dev/null 2>&1 || missing="$missing man-db"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "install.sh: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "install.sh: missing:$missing" >&2
    echo "install.sh: run as root: apt-get install$missing" >&2
    exit 1
  fi
fi

mkdir -p "$prefix/bin" "$prefix/share/man/man1" 2>/dev/null || true
if [ ! -w "$prefix/bin" ] || [ ! -w "$prefix/share/man/man1" ]; then
  echo "install.sh: $prefix is not writable; run as root or use --prefix DIR" >&2
  exit 1
fi

version="$(git describe --always --dirty 2>/dev/null || echo dev)"
echo "install.sh: building git-venom $version (the first cgo build of libgit2's bindings takes a minute)"
go build -trimpath -ldflags "-X github.com/git-venom/git-venom/lib/cli.Version=$version" \
  -o "$prefix/bin/" ./git-venom-checkpoint ./git-venom-rollback ./git-venom-diff
install -m 0644 man/git-venom-checkpoint.1 man/git-venom-rollback.1 man/git-venom-diff.1 "$prefix/share/man/man1/"
if command -v mandb >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then mandb -q "$prefix/share/man" >/dev/null 2>&1 || true; fi

case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install.sh: add $prefix/bin to PATH (and $prefix/share/man to MANPATH)" ;;
esac
PATH="$prefix/bin:$PATH" git venom-checkpoint --version
