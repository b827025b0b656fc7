#!/bin/sh
# The Action's build, when no built command is given: `cargo install` of
# the action's own checkout, as the runner's user (whose cargo it is).
# usage: build.sh SOURCE TEMP   prints the built command's path last
set -eu
source=$1 temp=$2
command -v cargo >/dev/null || {
	echo "eatmydata: no cargo on this runner: give the action a built command (with: path: ...), or set up Rust first" >&2
	exit 1
}
echo "eatmydata: building the command from $source with cargo install --path (no path given)" >&2
cargo install --quiet --locked --path "$source" --root "$temp/eatmydata-build" >&2
echo "$temp/eatmydata-build/bin/eatmydata"
