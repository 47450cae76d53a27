#!/usr/bin/env bash
# Makes sure `prometheus` and `promtool` are on the PATH, installing Debian's `prometheus`
# package when they are not. Idempotent and instant when both are present; concurrent runs
# (two test files at once) wait for each other instead of fighting over the dpkg lock.
set -euo pipefail

have() { command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; }
have && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "prometheus/promtool are missing and apt-get is not available: install Prometheus 2.x so that both are on the PATH." >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "prometheus/promtool are missing: run 'apt-get update && apt-get install -y prometheus' as root (or this script with sudo)." >&2
  exit 1
fi

exec 9>"${TMPDIR:-/tmp}/trine-ensure-prometheus.lock"
flock 9
have && exit 0

echo "installing Debian's prometheus package (provides prometheus and promtool)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Only the binaries are wanted: no exporters or web assets the package merely recommends.
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
# The package starts a system service where an init system runs; it is not ours to keep.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet prometheus 2>/dev/null; then
  systemctl stop prometheus || true
fi
have || { echo "installing prometheus did not provide prometheus and promtool" >&2; exit 1; }
