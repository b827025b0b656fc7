#!/bin/sh
# The Action's post step: the account of the containers deleted since the
# action ran, in Markdown, and what the runtime could not reach.
# usage: summary.sh PREFIX SINCE DOCKER RUNNING_BEFORE
# RUNNING_BEFORE: the containers running before the action that it did
# not recreate.
set -eu
prefix=$1 since=$2 docker=$3 before=$4
if [ "$docker" != true ]; then
	exit 0
fi
"$prefix/bin/eatmydata-runtime" report --markdown --since "$since"
if [ "$before" -gt 0 ]; then
	cat <<EOT

$before container(s) running before this action ran under runc, not eatmydata: the job's container, services left as they were (\`services: false\`, or listed below with why), or containers a step started before this action. To have one under eatmydata, start it in a step after this action (\`docker run -d ...\`), or register the runtime on a self-hosted runner before the job (its job-started hook: \`eatmydata-runtime configure docker --default\`). See docs/ci.md.
EOT
fi
cat <<'EOT'

Containers still running when this summary was written are not in it: each run is counted when it ends (docker stop, or its command's end).
EOT
