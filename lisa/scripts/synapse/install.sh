#!/usr/bin/env bash
# Installs a pinned Synapse into a cached virtualenv for Lisa's acceptance tests.
#
# Idempotent: a venv that already imports the pinned version (and carries the
# marker written after a complete install) is reused as is.
#
# Environment:
#   LISA_SYNAPSE_VENV    venv folder (default: $HOME/.cache/lisa/synapse-venv-<version>)
#   LISA_SYNAPSE_PYTHON  base interpreter used to create the venv (default: python3)
#
# Output: progress on stderr; on success two lines on stdout:
#   synapse_version=<version>
#   synapse_python=<path of the venv's python>
set -euo pipefail

SYNAPSE_VERSION="1.163.2"
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CONSTRAINTS="$SCRIPT_DIR/constraints.txt"
CACHE_HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
[[ -n "$CACHE_HOME" || -n "${LISA_SYNAPSE_VENV:-}" ]] || { echo "synapse-install: ERROR: neither HOME nor LISA_SYNAPSE_VENV is set" >&2; exit 1; }
VENV="${LISA_SYNAPSE_VENV:-$CACHE_HOME/.cache/lisa/synapse-venv-$SYNAPSE_VERSION}"
BASE_PYTHON="${LISA_SYNAPSE_PYTHON:-python3}"
VENV_PYTHON="$VENV/bin/python"
MARKER="$VENV/.lisa-synapse-installed"

say() { printf 'synapse-install: %s\n' "$*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

# The marker records the pinned version and the constraints, so a bump of either rebuilds.
expected_marker() {
  local sum
  sum="$(cksum <"$CONSTRAINTS" | cut -d' ' -f1)"
  printf '%s %s\n' "$SYNAPSE_VERSION" "$sum"
}

installed_version() {
  "$VENV_PYTHON" -c 'import synapse; print(synapse.__version__)' 2>/dev/null || true
}

is_ready() {
  [[ -x "$VENV_PYTHON" && -f "$MARKER" ]] || return 1
  [[ "$(cat "$MARKER")" == "$(expected_marker)" ]] || return 1
  [[ "$(installed_version)" == "$SYNAPSE_VERSION" ]]
}

report() {
  printf 'synapse_version=%s\n' "$SYNAPSE_VERSION"
  printf 'synapse_python=%s\n' "$VENV_PYTHON"
}

check_prerequisites() {
  command -v "$BASE_PYTHON" >/dev/null 2>&1 ||
    fail "'$BASE_PYTHON' not found. Install Python >= 3.10 (Debian/Ubuntu: apt-get install python3 python3-venv python3-pip), or set LISA_SYNAPSE_PYTHON to an interpreter."
  "$BASE_PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
    fail "$("$BASE_PYTHON" --version 2>&1) is too old: Synapse $SYNAPSE_VERSION needs Python >= 3.10."
  "$BASE_PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
    fail "Python's venv/ensurepip modules are missing. Install them (Debian/Ubuntu: apt-get install python3-venv)."
}

create_venv() {
  say "creating virtualenv in $VENV"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  "$BASE_PYTHON" -m venv "$VENV" ||
    fail "'$BASE_PYTHON -m venv' failed. Install the venv module (Debian/Ubuntu: apt-get install python3-venv)."
  "$VENV_PYTHON" -m pip --version >/dev/null 2>&1 ||
    fail "pip is missing from the new virtualenv. Install pip/ensurepip (Debian/Ubuntu: apt-get install python3-pip python3-venv)."
}

install_synapse() {
  local started elapsed
  started="$(date +%s)"
  say "installing matrix-synapse==$SYNAPSE_VERSION from wheels (first run takes a while)"
  # Wheels only: no compilers or Rust toolchain are needed, and a missing wheel fails loudly.
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV_PYTHON" -m pip install \
    --quiet --no-input --only-binary=:all: \
    --constraint "$CONSTRAINTS" \
    "matrix-synapse==$SYNAPSE_VERSION" >&2 ||
    fail "pip could not install matrix-synapse==$SYNAPSE_VERSION (see pip's output above)."
  [[ "$(installed_version)" == "$SYNAPSE_VERSION" ]] ||
    fail "installed Synapse does not import as version $SYNAPSE_VERSION."
  expected_marker >"$MARKER"
  elapsed=$(($(date +%s) - started))
  say "installed Synapse $SYNAPSE_VERSION in ${elapsed}s"
}

main() {
  if is_ready; then
    say "reusing Synapse $SYNAPSE_VERSION in $VENV"
    report
    return 0
  fi
  check_prerequisites
  mkdir -p "$(dirname "$VENV")"
  # Serialise concurrent installs (parallel test files) where flock exists.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$VENV.lock"
    flock -w 900 9 || fail "timed out waiting for another install holding $VENV.lock"
    if is_ready; then
      say "reusing Synapse $SYNAPSE_VERSION in $VENV (installed concurrently)"
      report
      return 0
    fi
  fi
  create_venv
  install_synapse
  report
}

main "$@"
