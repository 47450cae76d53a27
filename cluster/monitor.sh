#!/usr/bin/env bash
# Starts Prometheus (Debian's `prometheus` package, installed when missing) scraping the local
# three-node cluster with cluster/prometheus.yml, in the foreground; Ctrl-C stops it.
#
#   TRINE_PROMETHEUS_ADDR   where Prometheus listens                 (default 127.0.0.1:9090)
#   TRINE_PROMETHEUS_DATA   its storage directory                    (default $TMPDIR/trine-prometheus)
#   TRINE_MONITOR_TARGETS   nodes to scrape, host:port,host:port     (default the config's 7701-7703)
#   TRINE_METRICS_KEY       API key sent to the nodes; needed when they run with a master key
set -euo pipefail
cd "$(dirname "$0")/.."

bash cluster/ensure-prometheus.sh

addr=${TRINE_PROMETHEUS_ADDR:-127.0.0.1:9090}
data=${TRINE_PROMETHEUS_DATA:-${TMPDIR:-/tmp}/trine-prometheus}
mkdir -p "$data"

# The committed config, with the targets and key asked for. The key goes to a file readable by
# this user only, never into a config file.
umask 077
key_file=""
if [ -n "${TRINE_METRICS_KEY:-}" ]; then
  key_file="$data/metrics.key"
  printf '%s' "$TRINE_METRICS_KEY" > "$key_file"
fi
targets=""
if [ -n "${TRINE_MONITOR_TARGETS:-}" ]; then
  targets="['$(printf '%s' "$TRINE_MONITOR_TARGETS" | sed "s/,/', '/g")']"
fi
awk -v key="$key_file" -v targets="$targets" '
  targets != "" && /^      - targets:/ { print "      - targets: " targets; next }
  { print }
  key != "" && /^    metrics_path:/ { print "    authorization:"; print "      credentials_file: " key }
' cluster/prometheus.yml > "$data/prometheus.yml"

promtool check config "$data/prometheus.yml" >/dev/null
echo "Prometheus on http://$addr scraping $(grep -- '- targets:' "$data/prometheus.yml" | sed 's/.*targets: //') (data in $data)" >&2
exec prometheus \
  --config.file="$data/prometheus.yml" \
  --storage.tsdb.path="$data" \
  --web.listen-address="$addr" \
  --log.level=warn
