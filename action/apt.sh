#!/bin/sh
# The Action's apt step, as apt-eatmydata-action does it: dpkg linked to
# the command (symlink mode runs the dpkg later in PATH under the
# library), and apt told to run that link; `remove` takes both back,
# each only while it is still the action's.
# usage: apt.sh PREFIX ROOT [remove]   (ROOT: a tree to set up instead of /, or empty)
set -eu
prefix=$1 root=$2 verb=${3:-apply}
link=$root/usr/local/bin/dpkg
setting=$root/etc/apt/apt.conf.d/00eatmydata-action
line='Dir::Bin::dpkg "/usr/local/bin/dpkg";'
if [ "$verb" = remove ]; then
	if [ -L "$link" ] && [ "$(readlink "$link")" = "$prefix/bin/eatmydata" ]; then
		rm -f "$link"
	fi
	if [ "$(cat "$setting" 2>/dev/null)" = "$line" ]; then
		rm -f "$setting"
	fi
	echo "eatmydata: apt-get and dpkg run dpkg as before (the link and apt's setting removed)" >&2
	exit 0
fi
mkdir -p "$root/usr/local/bin" "$root/etc/apt/apt.conf.d"
ln -sfn "$prefix/bin/eatmydata" "$link"
echo "$line" >"$setting"
echo "eatmydata: apt-get and dpkg run dpkg under eatmydata (/usr/local/bin/dpkg)" >&2
