#!/usr/bin/env bash
# Brings Redis's own test suite: Debian's `redis` source package, unpacked into DEST
# (default .redis-suite/), through apt with a private state: deb-src lines made from the
# system's own deb lines, package lists and downloads under DEST/apt. Nothing in the system's
# apt configuration changes. Installs what unpacking and running the suite need (dpkg-dev,
# tcl) when they are missing. Prints the unpacked tree's path; any failure is an error.
set -euo pipefail
DEST="${1:-.redis-suite}"
mkdir -p "$DEST"
DEST="$(cd "$DEST" && pwd)"
APT="$DEST/apt"

found="$(find "$DEST" -maxdepth 2 -name runtest -path '*/redis-*/runtest' 2>/dev/null | head -1)"
if [ -n "$found" ]; then
  dirname "$found"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
missing=()
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
command -v tclsh >/dev/null || missing+=(tcl)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "Installing ${missing[*]} for Redis's test suite..." >&2
  $SUDO apt-get update -qq >/dev/null 2>&1 || true
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

rm -rf "$APT"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/sources"
# deb822 files (Types: deb) and one-line lists (deb URI SUITE...), source lines made from each.
for file in /etc/apt/sources.list.d/*.sources; do
  [ -e "$file" ] || continue
  sed -E 's/^Types:.*$/Types: deb-src/' "$file" > "$APT/sources/$(basename "$file")"
done
for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ -e "$file" ] || continue
  sed -nE 's/^deb (.*)$/deb-src \1/p' "$file" > "$APT/sources/$(basename "$file")"
done
OPTIONS=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$APT/sources"
         -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o "Debug::NoLocking=1"
         -o "APT::Sandbox::User=root")
if ! apt-get "${OPTIONS[@]}" update -qq >"$APT/update.log" 2>&1; then
  echo "error: apt-get update of the source lists failed (see $APT/update.log)" >&2
  exit 1
fi
if ! (cd "$DEST" && apt-get "${OPTIONS[@]}" source -qq redis >"$APT/source.log" 2>&1); then
  echo "error: Debian's redis source package could not be had (see $APT/source.log)" >&2
  exit 1
fi
found="$(find "$DEST" -maxdepth 2 -name runtest -path '*/redis-*/runtest' | head -1)"
if [ -z "$found" ]; then
  echo "error: the redis source package holds no runtest" >&2
  exit 1
fi
dirname "$found"
