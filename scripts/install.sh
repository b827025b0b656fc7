#!/usr/bin/env bash
# Installs eatmydata: the command into PREFIX/bin with eatmydata-runtime, a
# link to it (the OCI runtime, see docs/containers.md), the library into
# PREFIX/lib/eatmydata (where the command looks for it), the man page into
# PREFIX/share/man/man1 and the bash completion; or removes them.
#
#   scripts/install.sh [--prefix PREFIX] [--destdir DIR] [--no-build] [--uninstall]
#
# PREFIX defaults to /usr/local (~/.cargo or ~/.local for one user); DESTDIR
# stages the files for a package. --uninstall removes what an install with
# the same PREFIX put there, and nothing else. The command installed is the
# static one of scripts/build-static, which runs on any system and in any
# image; with --no-build, that of target/static/, or of target/release/
# when only a plain `cargo build --release` was made.
set -euo pipefail

prefix=/usr/local
destdir=
build=1
action=install
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "eatmydata: install: --prefix needs a value" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --destdir) [ $# -ge 2 ] || { echo "eatmydata: install: --destdir needs a value" >&2; exit 2; }; destdir=$2; shift 2 ;;
    --destdir=*) destdir=${1#--destdir=}; shift ;;
    --no-build) build=0; shift ;;
    --uninstall) action=uninstall; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "eatmydata: install: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case "$prefix" in
  /*) ;;
  *) echo "eatmydata: install: --prefix must be an absolute path, not '$prefix'" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
bindir=$destdir$prefix/bin
libdir=$destdir$prefix/lib/eatmydata
mandir=$destdir$prefix/share/man/man1
completions=$destdir$prefix/share/bash-completion/completions
files=("$bindir/eatmydata" "$bindir/eatmydata-runtime" "$libdir/libeatmydata.so" "$mandir/eatmydata.1" "$completions/eatmydata")

if [ "$action" = uninstall ]; then
  for file in "${files[@]}"; do
    [ -e "$file" ] || [ -L "$file" ] || continue
    # Only our link goes: an eatmydata-runtime of some other making stays.
    if [ "$file" = "$bindir/eatmydata-runtime" ] && [ "$(readlink "$file")" != eatmydata ]; then
      continue
    fi
    rm -f "$file"
    echo "removed $file"
  done
  # The library's own folder goes when it is empty; shared ones stay.
  rmdir "$libdir" 2>/dev/null || true
  exit 0
fi

[ "$build" = 1 ] && scripts/build-static >/dev/null
built=target/static
[ -f "$built/eatmydata" ] || built=target/release
for file in "$built/eatmydata" "$built/libeatmydata.so"; do
  [ -f "$file" ] || { echo "eatmydata: install: $file is missing; run scripts/build-static" >&2; exit 1; }
done
install -d "$bindir" "$libdir" "$mandir" "$completions"
install -m 0755 "$built/eatmydata" "$bindir/eatmydata"
# The same command, an OCI runtime under this name; a relative link, so a
# staged tree (--destdir) points at the right file once in place.
ln -sfn eatmydata "$bindir/eatmydata-runtime"
install -m 0644 "$built/libeatmydata.so" "$libdir/libeatmydata.so"
install -m 0644 docs/eatmydata.1 "$mandir/eatmydata.1"
install -m 0644 packaging/debian/eatmydata.bash-completion "$completions/eatmydata"
echo "installed ${files[*]}"
