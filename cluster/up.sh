#!/usr/bin/env bash
# Starts a local three-node cluster behind HAProxy (Debian's package, installed when missing):
#   nodes n1..n3   REST 127.0.0.1:7701-7703, Raft 127.0.0.1:7801-7803, data in cluster/data/n1..n3
#   HAProxy        127.0.0.1:7700 (round-robin, health checks on /health), stats on 127.0.0.1:7709
# Logs go to cluster/data/*.log. `npm run cluster:down` stops everything. Running it again
# starts only what is not running.
#
#   TRINE_CLUSTER_SECRET   node-to-node secret (default: a random one kept in cluster/data/secret)
#   GLIBC_TUNABLES         allocator settings (default: package.json's config.glibcTunables, as
#                          `npm start` uses; empty: glibc's own defaults)
#   Any other TRINE_* variable (TRINE_MASTER_KEY, TRINE_LOG_LEVEL...) reaches the nodes as usual.
set -euo pipefail
cd "$(dirname "$0")/.."
data=cluster/data
mkdir -p "$data"

bash cluster/ensure-haproxy.sh
[ -f dist/src/main.js ] || npm run build

umask 077
if [ -z "${TRINE_CLUSTER_SECRET:-}" ]; then
  [ -f "$data/secret" ] || node -e "process.stdout.write(require('crypto').randomBytes(24).toString('base64url'))" > "$data/secret"
  TRINE_CLUSTER_SECRET=$(cat "$data/secret")
fi
export TRINE_CLUSTER_SECRET
umask 022

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_http() {
  local url=$1 what=$2
  for _ in $(seq 1 150); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "$what did not answer on $url within 30 s; see cluster/data/*.log" >&2
  exit 1
}

peers="n1=127.0.0.1:7801,n2=127.0.0.1:7802,n3=127.0.0.1:7803"
# The allocator settings `npm start` uses (package.json's config.glibcTunables, see the README's
# "Memory"); a GLIBC_TUNABLES of your own, even an empty one, is used instead.
tunables="${GLIBC_TUNABLES-$(node -p "require('./package.json').config.glibcTunables")}"
# Node's options likewise (config.nodeOptions: V8's helper threads, see "Memory"); a NODE_OPTIONS
# of your own is used instead.
options="${NODE_OPTIONS-$(node -p "require('./package.json').config.nodeOptions")}"
for i in 1 2 3; do
  if running "$data/n$i.pid"; then
    echo "n$i is already running (pid $(cat "$data/n$i.pid"))"
    continue
  fi
  # The secret travels in the environment, not on the command line that `ps` shows.
  GLIBC_TUNABLES="$tunables" NODE_OPTIONS="$options" nohup node dist/src/main.js --node-id "n$i" --db-path "$data/n$i" --http-addr "127.0.0.1:770$i" \
    --raft-addr "127.0.0.1:780$i" --peers "$peers" >> "$data/n$i.log" 2>&1 &
  echo $! > "$data/n$i.pid"
done
for i in 1 2 3; do wait_http "http://127.0.0.1:770$i/health" "n$i"; done

if running "$data/haproxy.pid"; then
  echo "haproxy is already running (pid $(cat "$data/haproxy.pid"))"
else
  haproxy -c -q -f cluster/haproxy.cfg
  haproxy -D -f cluster/haproxy.cfg -p "$data/haproxy.pid"
fi
wait_http "http://127.0.0.1:7700/health" "HAProxy"

auth=()
[ -n "${TRINE_MASTER_KEY:-}" ] && auth=(-H "Authorization: Bearer $TRINE_MASTER_KEY")
for _ in $(seq 1 100); do
  view=$(curl -fsS "${auth[@]}" http://127.0.0.1:7700/cluster 2>/dev/null || true)
  case "$view" in *'"leader":"n'*) break ;; esac
  sleep 0.2
done
echo "Trine cluster up: http://127.0.0.1:7700 (nodes on 7701-7703, HAProxy stats on http://127.0.0.1:7709/)"
echo "${view:-GET /cluster did not answer}"
