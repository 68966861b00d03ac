#!/usr/bin/env bash
# Soak of the arbiter's memory (issue 5: "A soak run (bounded, a few minutes) with 10,000
# sessions shows flat memory on the server and in Redis after sessions expire"); writes
# bench/SOAK.md.
#
#   bench/soak.sh                       # about 6.5 minutes on 2 cores: ~3 per store
#   SOAK_REDIS=0 bench/soak.sh          # embedded store only
#   SOAK_OUT=/tmp/s.md bench/soak.sh    # write the report elsewhere
#   SOAK_SESSIONS=2000 SOAK_IDLE_TTL=10s bench/soak.sh   # a quick look (not the issue's soak)
#
# What it does:
#   1. builds the arbiter (./cmd/arbiter) and bench/soak.
#   2. embedded store: starts `arbiter serve --listen 127.0.0.1:0 --metrics-listen
#      127.0.0.1:0 --idle-ttl 30s --tools testdata/tools/booking.yaml`, reads its
#      addresses from its log, and runs bench/soak against it: a warm-up wave and its
#      expiry (so the baseline includes what the runtime keeps after a wave), a
#      baseline, 10,000 sessions each running a whole call (50 in flight), a wait past
#      the idle TTL until they expired and the server collected its garbage, 10,000 new
#      sessions, the same wait; the server's RSS and Go heap sampled every 2 s (see
#      bench/soak/main.go).
#   3. if redis-server is installed: a redis-server of its own on a free port (no
#      persistence), a fresh arbiter with --redis-url on it and the same flags, the same
#      soak, with Redis's DBSIZE and INFO memory sampled too.
#   4. bench/soak -report writes SOAK.md from the two results (kept in a temp directory).
# Every target is on 127.0.0.1; every wait is bounded (bench/soak stops itself after
# 8 minutes, and runs under `timeout`); every process started here is stopped by its
# PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SESSIONS=${SOAK_SESSIONS:-10000}
CONC=${SOAK_CONCURRENCY:-50}
TTL=${SOAK_IDLE_TTL:-30s}
WANT_REDIS=${SOAK_REDIS:-1}
OUT=${SOAK_OUT:-$ROOT/bench/SOAK.md}
SERVER_FLAGS=(--listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --idle-ttl "$TTL" --tools testdata/tools/booking.yaml)

RAW=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-soak.XXXXXX")
BIN=$RAW/bin
mkdir -p "$BIN"
RUN=$(date +%s)
echo "== raw results in $RAW"

PIDS=()
cleanup() {
  for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]+"${PIDS[@]}"}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# stop PID: SIGTERM, wait (bounded), then SIGKILL, and forget it.
stop() {
  local pid=$1
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local keep=()
  for p in "${PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
  PIDS=("${keep[@]+"${keep[@]}"}")
}

# wait_line FILE PATTERN: until FILE has a line matching PATTERN (at most 10 s).
wait_line() {
  for _ in $(seq 1 100); do
    if grep -q "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for '$2' in $1:" >&2
  cat "$1" >&2 || true
  return 1
}

# is_exe PID BINARY: PID runs BINARY (so VmRSS is read from the right process).
is_exe() {
  local exe
  exe=$(readlink "/proc/$1/exe" 2>/dev/null || true)
  if [ "$exe" != "$2" ]; then
    echo "process $1 runs '$exe', not $2" >&2
    return 1
  fi
}

echo "== build"
# The commit the arbiter is built from (read now: another commit may land during the run).
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# Changes that can reach the binary: tracked Go module files, or new .go files, outside
# the nested modules and the packaging files.
CHANGED=$(git status --porcelain -- . ':!bench' ':!deploy' ':!Dockerfile' ':!.dockerignore' 2>/dev/null |
  grep -E '^( M|M |MM|A |D | D|R ).*|^\?\? .*\.go$' || true)
if [ -n "$CHANGED" ]; then
  COMMIT="commit $COMMIT plus uncommitted changes to: $(echo "$CHANGED" | awk '{print $2}' | head -5 | paste -sd' ')"
else
  COMMIT="commit $COMMIT"
fi
go build -o "$BIN/arbiter" ./cmd/arbiter
# -mod=mod: bench/ is its own module that replaces the main one with ../.
(cd bench && go build -mod=mod -o "$BIN/" ./soak)

# start_arbiter NAME [flags...]: sets ARB_PID, ARB_ADDR, ARB_METRICS.
start_arbiter() {
  local name=$1 log=$RAW/arbiter-$1.log
  shift
  "$BIN/arbiter" serve "${SERVER_FLAGS[@]}" "$@" 2>"$log" &
  ARB_PID=$!
  PIDS+=("$ARB_PID")
  wait_line "$log" 'msg="arbiter serving"'
  is_exe "$ARB_PID" "$BIN/arbiter"
  ARB_ADDR=$(sed -n 's/.*msg="arbiter serving" addr=\([^ ]*\).*/\1/p' "$log" | head -1)
  ARB_METRICS=$(sed -n 's/.*msg="metrics serving" addr=\([^ ]*\).*/\1/p' "$log" | head -1)
  if [ -z "$ARB_ADDR" ] || [ -z "$ARB_METRICS" ]; then
    echo "no addresses in $log:" >&2
    cat "$log" >&2
    return 1
  fi
  echo "   arbiter $name: pid $ARB_PID, gRPC $ARB_ADDR, metrics $ARB_METRICS"
}

# soak NAME [soak flags...]: one soak against the running arbiter.
soak() {
  local name=$1
  shift
  echo "   soak $name: $SESSIONS sessions x 2 waves, -c $CONC, idle TTL $TTL (about 3 minutes)"
  timeout 10m "$BIN/soak" -addr "$ARB_ADDR" -metrics "$ARB_METRICS" -pid "$ARB_PID" -store "$name" \
    -sessions "$SESSIONS" -c "$CONC" -idle-ttl "$TTL" -run "$RUN" -o "$RAW/$name.json" "$@"
}

RESULTS=()
echo "== arbiter, embedded store"
start_arbiter memory
soak memory
stop "$ARB_PID"
RESULTS+=("$RAW/memory.json")

REDIS_VERSION=""
if [ "$WANT_REDIS" != 1 ]; then
  echo "== Redis skipped (SOAK_REDIS=$WANT_REDIS)"
elif ! command -v redis-server >/dev/null; then
  echo "== Redis skipped: redis-server is not installed (apt-get install redis-server)" >&2
else
  echo "== arbiter, Redis store"
  REDIS_BIN=$(readlink -f "$(command -v redis-server)")
  REDIS_PORT=$("$BIN/soak" -freeport)
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --daemonize no \
    --logfile "$RAW/redis.log" &
  REDIS_PID=$!
  PIDS+=("$REDIS_PID")
  up=0
  for _ in $(seq 1 100); do
    if [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; then up=1; break; fi
    sleep 0.1
  done
  [ "$up" = 1 ] || { echo "redis-server did not answer on 127.0.0.1:$REDIS_PORT" >&2; cat "$RAW/redis.log" >&2; exit 1; }
  is_exe "$REDIS_PID" "$REDIS_BIN"
  REDIS_VERSION="$(redis-server --version | cut -d' ' -f1-3)"
  # A throwaway Redis without persistence, on purpose: serve refuses a volatile
  # Redis unless told (an older arbiter ignores the variable).
  export ARBITER_ALLOW_VOLATILE_STORE=true
  start_arbiter redis --redis-url "redis://127.0.0.1:$REDIS_PORT/0"
  soak redis -redis "127.0.0.1:$REDIS_PORT"
  stop "$ARB_PID"
  stop "$REDIS_PID"
  RESULTS+=("$RAW/redis.json")
fi

echo "== report"
CMD="bench/soak.sh"
[ "$SESSIONS" != 10000 ] && CMD="SOAK_SESSIONS=$SESSIONS $CMD"
[ "$CONC" != 50 ] && CMD="SOAK_CONCURRENCY=$CONC $CMD"
[ "$TTL" != 30s ] && CMD="SOAK_IDLE_TTL=$TTL $CMD"
[ "$WANT_REDIS" != 1 ] && CMD="SOAK_REDIS=$WANT_REDIS $CMD"
"$BIN/soak" -report -command "$CMD" -redis-version "$REDIS_VERSION" -commit "$COMMIT" -o "$OUT" "${RESULTS[@]}"
echo "== wrote $OUT (raw results: $RAW)"
