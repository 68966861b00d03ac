#!/usr/bin/env bash
# Remakes the lock files of the Python client's environments (locks/*.txt) from their
# inputs (locks/*.in, and pyproject.toml's extras for the stacks) with the pinned uv.
# Needs the package index; the tests never run it (they install from the committed
# locks: envs.sh). Run it after changing an input, and commit what it writes:
#
#   clients/python/lock.sh            # every lock
#   clients/python/lock.sh livekit    # one
#
# Each lock is universal (every platform's markers and hashes, so it installs on a
# developer's Mac as on CI's Linux) for Python 3.11, the oldest pyproject.toml allows.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
locks="$here/locks"
envs_dir="${ARBITER_VENVS:-$here/.venvs}"
export UV_CACHE_DIR="$envs_dir/cache" UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1

# uv.txt first (with a uv from uv.in's pin, so the lock of uv is made by itself).
if [ ! -f "$locks/uv.txt" ]; then
  python3 -m venv "$envs_dir/uv-bootstrap"
  "$envs_dir/uv-bootstrap/bin/pip" install --quiet "$(grep -v '^#' "$locks/uv.in")"
  uv="$envs_dir/uv-bootstrap/bin/uv"
else
  uv="$envs_dir/uv/bin/uv"
  [ -x "$uv" ] || { "$here/envs.sh" generate >/dev/null; }
fi

compile() { # OUT INPUT... [uv pip compile options]
  local out="$1"
  shift
  "$uv" pip compile --quiet --universal --python-version 3.11 --generate-hashes \
    --custom-compile-command "clients/python/lock.sh" -o "$locks/$out.txt" "$@"
  echo "locks/$out.txt: $(grep -c '^[a-z0-9]' "$locks/$out.txt") packages"
}

want="${*:-uv build generate test-lowest test-highest genai openai livekit pipecat agents}"
for l in $want; do
  case "$l" in
    uv | build | generate | test-lowest | test-highest) compile "$l" "$locks/$l.in" ;;
    genai | openai | livekit | pipecat | agents) compile "$l" pyproject.toml "$locks/stack.in" --extra "$l" ;;
    *) echo "lock.sh: unknown lock $l" >&2; exit 2 ;;
  esac
done
rm -rf "$envs_dir/uv-bootstrap"
