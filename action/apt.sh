#!/bin/sh
# The Action's apt step, as apt-eatmydata-action does it: dpkg linked to
# the command (symlink mode runs the dpkg later in PATH under the
# library), and apt told to run that link.
# usage: apt.sh PREFIX ROOT   (ROOT: a tree to set up instead of /, or empty)
set -eu
prefix=$1 root=$2
mkdir -p "$root/usr/local/bin" "$root/etc/apt/apt.conf.d"
ln -sfn "$prefix/bin/eatmydata" "$root/usr/local/bin/dpkg"
echo 'Dir::Bin::dpkg "/usr/local/bin/dpkg";' >"$root/etc/apt/apt.conf.d/00eatmydata-action"
echo "eatmydata: apt-get and dpkg run dpkg under eatmydata (/usr/local/bin/dpkg)" >&2
