#!/usr/bin/env bash
# Builds a pinned Dendrite from the Go module proxy into Lisa's cache folder for
# the acceptance tests (the second real homeserver beside Synapse).
#
# Idempotent: a folder whose marker names the pinned version and whose binaries
# are all present is reused as is. Concurrent installs serialise on a lock.
#
# Environment:
#   LISA_DENDRITE_DIR  binary folder (default: $HOME/.cache/lisa/dendrite-<version>)
#   LISA_GO            Go toolchain (default: go on PATH, else /usr/local/go/bin/go)
#
# Output: progress on stderr; on success two lines on stdout:
#   dendrite_version=<version>
#   dendrite_bin=<folder holding dendrite, generate-config, generate-keys, create-account>
set -euo pipefail

DENDRITE_VERSION="v0.13.8"
# The module is published under matrix-org; the element-hq path is refused by the proxy.
DENDRITE_MODULE="github.com/matrix-org/dendrite"
NEEDED_BINARIES=(dendrite generate-config generate-keys create-account)
CACHE_HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
[[ -n "$CACHE_HOME" || -n "${LISA_DENDRITE_DIR:-}" ]] || { echo "dendrite-install: ERROR: neither HOME nor LISA_DENDRITE_DIR is set" >&2; exit 1; }
BIN_DIR="${LISA_DENDRITE_DIR:-$CACHE_HOME/.cache/lisa/dendrite-$DENDRITE_VERSION}"
MARKER="$BIN_DIR/.lisa-dendrite-installed"

say() { printf 'dendrite-install: %s\n' "$*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

find_go() {
  if [[ -n "${LISA_GO:-}" ]]; then printf '%s\n' "$LISA_GO"; return; fi
  if command -v go >/dev/null 2>&1; then command -v go; return; fi
  if [[ -x /usr/local/go/bin/go ]]; then printf '%s\n' /usr/local/go/bin/go; return; fi
  return 1
}

is_ready() {
  [[ -f "$MARKER" && "$(cat "$MARKER")" == "$DENDRITE_VERSION" ]] || return 1
  local name
  for name in "${NEEDED_BINARIES[@]}"; do [[ -x "$BIN_DIR/$name" ]] || return 1; done
}

report() {
  printf 'dendrite_version=%s\n' "$DENDRITE_VERSION"
  printf 'dendrite_bin=%s\n' "$BIN_DIR"
}

build() {
  local go_bin started elapsed ticker
  go_bin="$(find_go)" || fail "Go not found. Install Go >= 1.21 (or set LISA_GO to the go binary)."
  command -v cc >/dev/null 2>&1 || fail "a C compiler is needed for Dendrite's SQLite driver (Debian/Ubuntu: apt-get install gcc)."
  started="$(date +%s)"
  say "building $DENDRITE_MODULE/cmd/...@$DENDRITE_VERSION with $("$go_bin" version) into $BIN_DIR (first run compiles for several minutes)"
  rm -rf "$BIN_DIR.partial"
  mkdir -p "$BIN_DIR.partial"
  # A heartbeat so a long compile on a busy host shows progress instead of silence.
  ( while sleep 30; do say "still compiling ($(($(date +%s) - started))s)"; done ) &
  ticker=$!
  if ! GOBIN="$BIN_DIR.partial" GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=1 \
    "$go_bin" install "$DENDRITE_MODULE/cmd/...@$DENDRITE_VERSION" >&2; then
    kill "$ticker" 2>/dev/null || true
    fail "go install $DENDRITE_MODULE/cmd/...@$DENDRITE_VERSION failed (see Go's output above)."
  fi
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  local name
  for name in "${NEEDED_BINARIES[@]}"; do
    [[ -x "$BIN_DIR.partial/$name" ]] || fail "the build did not produce $name."
  done
  printf '%s\n' "$DENDRITE_VERSION" >"$BIN_DIR.partial/.lisa-dendrite-installed"
  rm -rf "$BIN_DIR"
  mv "$BIN_DIR.partial" "$BIN_DIR"
  elapsed=$(($(date +%s) - started))
  say "installed Dendrite $DENDRITE_VERSION in ${elapsed}s"
}

main() {
  if is_ready; then
    say "reusing Dendrite $DENDRITE_VERSION in $BIN_DIR"
    report
    return 0
  fi
  mkdir -p "$(dirname "$BIN_DIR")"
  command -v flock >/dev/null 2>&1 || fail "flock is needed to serialise installs (Debian/Ubuntu: apt-get install util-linux)."
  exec 9>"$BIN_DIR.lock"
  flock -w 1800 9 || fail "timed out waiting for another install holding $BIN_DIR.lock"
  if is_ready; then
    say "reusing Dendrite $DENDRITE_VERSION in $BIN_DIR (installed concurrently)"
    report
    return 0
  fi
  build
  report
}

main "$@"
