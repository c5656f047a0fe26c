#!/usr/bin/env bash
# Installs redis-server, redis-cli, redis-benchmark and redis-sentinel when missing
# (Debian/Ubuntu), so the parity tests and the benchmark can compare Brook with real Redis and
# the failover tests can run Sentinel against Brook. Without them those tests skip.
set -u
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null \
    && command -v redis-sentinel >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "redis-server not found and apt-get unavailable: parity tests will be skipped" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
echo "Installing redis-server, redis-tools and redis-sentinel for the parity tests..." >&2
$SUDO apt-get update -qq >/dev/null 2>&1 || true
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools redis-sentinel >/dev/null \
  || echo "could not install redis-server: parity tests will be skipped" >&2
exit 0
