#!/bin/sh
# The Action's install: the single-file command as PREFIX/bin/eatmydata,
# and PREFIX/bin/eatmydata-runtime, a link to it (the OCI runtime).
# usage: install.sh PREFIX FILE
set -eu
prefix=$1 file=$2
mkdir -p "$prefix/bin"
if [ "$(readlink -f "$file")" != "$(readlink -f "$prefix/bin/eatmydata" 2>/dev/null || true)" ]; then
	install -m 0755 "$file" "$prefix/bin/eatmydata.new"
	mv -f "$prefix/bin/eatmydata.new" "$prefix/bin/eatmydata"
fi
ln -sfn eatmydata "$prefix/bin/eatmydata-runtime"
echo "eatmydata: installed $file as $prefix/bin/eatmydata, with eatmydata-runtime beside it"
