#!/usr/bin/env bash
# Stops the local cluster started by `npm run cluster:up`: the leader first (it hands
# leadership over as it stops), then the other nodes, then HAProxy. `--wipe` also deletes
# cluster/data (every node's database, logs and the generated secret).
set -euo pipefail
cd "$(dirname "$0")/.."
data=cluster/data

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
  local pidfile=$1
  running "$pidfile" || { rm -f "$pidfile"; return 0; }
  local pid
  pid=$(cat "$pidfile")
  kill -TERM "$pid"
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; return 0; }
    sleep 0.1
  done
  echo "pid $pid did not stop within 10 s: killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

auth=()
[ -n "${TRINE_MASTER_KEY:-}" ] && auth=(-H "Authorization: Bearer $TRINE_MASTER_KEY")
leader=""
for i in 1 2 3; do
  view=$(curl -fsS --max-time 2 "${auth[@]}" "http://127.0.0.1:770$i/cluster" 2>/dev/null || true)
  leader=$(printf '%s' "$view" | sed -n 's/.*"leader":"\(n[0-9]*\)".*/\1/p')
  [ -n "$leader" ] && break
done
order="n1 n2 n3"
[ -n "$leader" ] && order="$leader $(echo n1 n2 n3 | tr ' ' '\n' | grep -vx "$leader" | tr '\n' ' ')"
for n in $order; do stop "$data/$n.pid"; done
stop "$data/haproxy.pid"
echo "Trine cluster stopped"

if [ "${1:-}" = "--wipe" ]; then
  rm -rf "$data"
  echo "cluster/data deleted"
fi
