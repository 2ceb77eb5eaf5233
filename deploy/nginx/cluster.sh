#!/usr/bin/env bash
# Starts nginx (deploy/nginx/deltatok.conf, private prefix and temp paths) and 3 `deltatok serve`
# instances on loopback ports, replays a corpus through them with the Python client, prints one
# JSON line per request and a summary (reuse, client counters), and stops everything.
#   deploy/nginx/cluster.sh [--corpus FILE] [--instances 3] [--workers 0]
#                           [--method apply_chat_template|count_prompt] [--kill-third]
# Needs a build (npm run build), nginx (apt-get install -y nginx) and python3.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
[ -f "$root/dist/scripts/cluster.js" ] || { echo "cluster.sh: not built; run npm run build in $root" >&2; exit 2; }
exec node "$root/dist/scripts/cluster.js" "$@"
