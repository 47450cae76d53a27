#!/usr/bin/env bash
# Makes sure `haproxy` is on the PATH, installing Debian's `haproxy` package when it is not.
# Idempotent and instant when present; concurrent runs wait for each other (dpkg lock).
set -euo pipefail

have() { command -v haproxy >/dev/null 2>&1; }
have && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "haproxy is missing and apt-get is not available: install HAProxy 2.x so that it is on the PATH." >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "haproxy is missing: run 'apt-get update && apt-get install -y haproxy' as root (or this script with sudo)." >&2
  exit 1
fi

exec 9>"${TMPDIR:-/tmp}/trine-ensure-haproxy.lock"
flock 9
have && exit 0

echo "installing Debian's haproxy package..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends haproxy >/dev/null
# The package starts a system service where an init system runs; ours runs from cluster/.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet haproxy 2>/dev/null; then
  systemctl stop haproxy || true
fi
have || { echo "installing the haproxy package did not provide haproxy" >&2; exit 1; }
