#!/usr/bin/env bash
# Creates the Python client's locked environments from the committed lock files, before
# any test runs (clients/test.sh calls it; nothing is downloaded after it).
#
#   clients/python/envs.sh [--wheel WHEEL] ENV...
#   clients/python/envs.sh build OUT_DIR      # the client's wheel and sdist; prints the wheel
#
# Each ENV is clients/python/.venvs/ENV, made by uv from locks/ENV.txt (exact versions,
# hashes required; packages the lock does not name are removed), on Debian's Python 3.11
# (ARBITER_PYTHON overrides it); WHEEL (the client, built from the checkout) is then
# installed into it without its dependencies, and `uv pip check` must find them all in
# the lock. The environments:
#   generate       grpcio-tools for generate.sh
#   test-lowest    the client's tests on its lowest grpcio / protobuf (protobuf 5)
#   test-highest   the same on the highest (protobuf 7), with mypy, ruff and the stubs
#   genai openai livekit pipecat agents
#                  one per stack: pyproject.toml's extra of that name (the wire checks'
#                  example agents run there)
#
# uv itself (locks/uv.txt) is installed with pip into .venvs/uv; its cache is
# .venvs/cache, inside the checkout, so a clean clone downloads what it needs once and a
# second run downloads nothing. Prints, per environment, the seconds it took and its size.
set -euo pipefail

envs_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
envs_dir="${ARBITER_VENVS:-$envs_here/.venvs}"
envs_python="${ARBITER_PYTHON:-/usr/bin/python3}"
export UV_CACHE_DIR="$envs_dir/cache"
export UV_PYTHON_DOWNLOADS=never # the interpreter is the machine's, never fetched
export UV_NO_CONFIG=1            # a developer's uv.toml does not change what is installed

# envs_uv: prints the path of the pinned uv, installing it first when missing.
envs_uv() {
  local uv="$envs_dir/uv/bin/uv" want
  want="$(sed -n 's/^uv==\([^ ]*\).*/\1/p' "$envs_here/locks/uv.txt")"
  if [ ! -x "$uv" ] || [ "$("$uv" --version 2>/dev/null | cut -d' ' -f2)" != "$want" ]; then
    rm -rf "$envs_dir/uv"
    "$envs_python" -m venv "$envs_dir/uv" >&2
    "$envs_dir/uv/bin/pip" install --quiet --no-input --require-hashes -r "$envs_here/locks/uv.txt" >&2
  fi
  echo "$uv"
}

# envs_build OUT_DIR: builds the client's wheel (and sdist) into OUT_DIR with the pinned
# backend; prints the wheel's path.
envs_build() {
  local uv out="$1"
  uv="$(envs_uv)"
  "$uv" build --quiet --python "$envs_python" --build-constraints "$envs_here/locks/build.txt" --require-hashes \
    --out-dir "$out" "$envs_here" >&2
  ls "$out"/voicearbiter_client-*.whl
}

# envs_make ENV [WHEEL]: creates or updates .venvs/ENV from locks/ENV.txt; installs WHEEL.
envs_make() {
  local env="$1" wheel="${2:-}" uv lock="$envs_here/locks/$1.txt" venv="$envs_dir/$1" t0=$SECONDS
  [ -f "$lock" ] || { echo "envs.sh: no lock file $lock" >&2; return 2; }
  uv="$(envs_uv)"
  if [ ! -x "$venv/bin/python" ]; then
    "$uv" venv --quiet --python "$envs_python" "$venv"
  fi
  "$uv" pip sync --quiet --python "$venv/bin/python" --require-hashes "$lock"
  if [ -n "$wheel" ]; then
    "$uv" pip install --quiet --python "$venv/bin/python" --no-deps --reinstall "$wheel"
    "$uv" pip check --quiet --python "$venv/bin/python"
  fi
  echo "$env: $((SECONDS - t0))s, $(du -sm "$venv" | cut -f1) MB"
}

mkdir -p "$envs_dir"
if [ "${1:-}" = build ]; then
  envs_build "$2"
  exit
fi
wheel=""
if [ "${1:-}" = --wheel ]; then
  wheel="$2"
  shift 2
fi
[ $# -gt 0 ] || set -- generate test-lowest test-highest genai openai livekit pipecat agents
for e in "$@"; do
  case "$e" in generate) envs_make "$e" ;; *) envs_make "$e" "$wheel" ;; esac
done
