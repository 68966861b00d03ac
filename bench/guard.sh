#!/usr/bin/env bash
# The wire guard's benchmark (issue 23): bench/guard (this module) runs N Gemini Live
# sessions streaming 16 kHz audio up and 24 kHz down in 20-40 ms chunks through
# `arbiter serve --proxy-listen` and as many straight to its echo provider, one after
# the other, and prints the per-frame latency of each path, what the guard adds (p50, p99,
# max) and the guard process's CPU per session-second. Not a test: numbers for
# bench/RESULTS.md ("The wire guard"), whose hand-written part keeps the last runs.
#
#   bench/guard.sh                 # 200 sessions, 10 s measured, three runs
#   GUARD_SESSIONS=50 GUARD_RUNS=1 bench/guard.sh
#   GUARD_PIN=1 bench/guard.sh     # the guard on the last CPU, the load and the echo
#                                  # provider on the others (taskset): the guard's own
#                                  # cost, not its share of the load generator's core
#   GUARD_PHASES=together bench/guard.sh  # the direct and the guarded sessions at once
#                                  # (default apart: the direct ones, then the guarded)
#   GUARD_FLOORS=1 bench/guard.sh  # after each run, bare relays in the guard's place:
#                                  # tcp (bytes copied), coder and gorilla (WebSocket
#                                  # messages read and written): the machine's floor
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/arbiter" ./cmd/arbiter
(cd bench && go build -o "$tmp/guard" ./guard)
for i in $(seq "${GUARD_RUNS:-3}"); do
  echo "== run $i ($(uptime | sed 's/.*load average/load average/'))"
  pin=()
  if [ -n "${GUARD_PIN:-}" ]; then
    last=$(($(nproc) - 1))
    [ "$last" -ge 1 ] || { echo "GUARD_PIN needs two CPUs or more" >&2; exit 2; }
    pin=(taskset -c "0-$((last - 1))")
    echo "(pinned: the guard on CPU $last, the load and the echo provider on CPUs 0-$((last - 1)))"
  fi
  "${pin[@]}" "$tmp/guard" -arbiter "$tmp/arbiter" ${GUARD_PIN:+-guard-cpus "$last"} -phases "${GUARD_PHASES:-apart}" -sessions "${GUARD_SESSIONS:-200}" -duration "${GUARD_DURATION:-10s}" 2>/dev/null
  if [ -n "${GUARD_FLOORS:-}" ]; then
    for relay in tcp coder gorilla; do
      "${pin[@]}" "$tmp/guard" -relay "$relay" ${GUARD_PIN:+-guard-cpus "$last"} -phases "${GUARD_PHASES:-apart}" -sessions "${GUARD_SESSIONS:-200}" -duration "${GUARD_DURATION:-10s}" 2>/dev/null | grep -E '^(added|a bare)'
    done
  fi
done
