#!/usr/bin/env bash
# Installs eatmydata: the command into PREFIX/bin and the library into
# PREFIX/lib/eatmydata, where the command looks for it.
#
#   scripts/install.sh [--prefix PREFIX] [--destdir DIR] [--no-build]
#
# PREFIX defaults to /usr/local; DESTDIR stages the files for a package.
set -euo pipefail

prefix=/usr/local
destdir=
build=1
usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || { echo "eatmydata: install: --prefix needs a value" >&2; exit 2; }; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --destdir) [ $# -ge 2 ] || { echo "eatmydata: install: --destdir needs a value" >&2; exit 2; }; destdir=$2; shift 2 ;;
    --destdir=*) destdir=${1#--destdir=}; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "eatmydata: install: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case "$prefix" in
  /*) ;;
  *) echo "eatmydata: install: --prefix must be an absolute path, not '$prefix'" >&2; exit 2 ;;
esac

cd "$(dirname "$0")/.."
[ "$build" = 1 ] && cargo build --release --quiet
for file in target/release/eatmydata target/release/libeatmydata.so; do
  [ -f "$file" ] || { echo "eatmydata: install: $file is missing; run cargo build --release" >&2; exit 1; }
done

bindir=$destdir$prefix/bin
libdir=$destdir$prefix/lib/eatmydata
install -d "$bindir" "$libdir"
install -m 0755 target/release/eatmydata "$bindir/eatmydata"
install -m 0644 target/release/libeatmydata.so "$libdir/libeatmydata.so"
echo "installed $bindir/eatmydata and $libdir/libeatmydata.so"
