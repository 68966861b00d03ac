#!/usr/bin/env bash
# Load tests of the arbiter beside a bare gRPC echo server, on this machine, in one run;
# writes bench/RESULTS.md.
#
#   bench/run.sh                      # about 6 minutes on 2 cores (the first ghz install adds ~1.5)
#   BENCH_DURATION=30s bench/run.sh   # longer measurements
#   BENCH_REDIS=0 bench/run.sh        # embedded store only
#   BENCH_OUT=/tmp/r.md bench/run.sh  # write the report elsewhere
#
# What it does:
#   1. installs ghz (go install github.com/bojand/ghz/cmd/ghz@v0.93.0) if it is missing;
#      builds the arbiter (./cmd/arbiter) and bench/{echo,load,report,profserve}.
#   2. echo server (bench/echo): ghz on grpc.testing.TestService/UnaryCall (the
#      baseline, run again at the end to show drift), and bench/load's echo modes (one
#      UnaryCall, or six per iteration shaped like a lifecycle).
#   3. arbiter on the embedded store, a fresh process per scenario: ghz RegisterCall
#      (same date wording each call, then a new wording each call), ghz ReportSpeech,
#      bench/load RegisterCall, bench/load whole call lifecycles.
#   4. if `arbiter serve --help` lists --redis-url and redis-server is installed: a
#      redis-server of its own on a free port (flushed between scenarios), the same
#      scenarios, then two arbiters on it for the cross-replica Decide hand-off (50
#      sessions in flight, then 5); BENCH_IDLE_SESSIONS (10000) of bench/soak's calls
#      left idle, for Redis bytes per idle session (used_memory delta / sessions); then a
#      local Redis Cluster of 1 and of 3 masters (BENCH_CLUSTER=0 skips it): bench/load
#      register and lifecycle through one arbiter, with server and Redis CPU, Redis
#      commands (INFO commandstats) and round trips (redis-cli monitor, in a separate
#      counting pass) per RPC.
#   5. a CPU profile of the server under the RegisterCall load (bench/profserve) and of
#      `go test ./server -bench BenchmarkRegisterCall`, summarised with go tool pprof.
#   6. the store benchmarks (go test -bench, -benchtime 160x -count 1): record bytes,
#      encode/decode, one transition per store, round trips per RPC on Redis.
#   7. bench/report writes RESULTS.md from the raw results (kept in a temp directory),
#      copying the old file's hand-written part (from the line
#      "<!-- kept: written by hand, not by bench/run.sh -->" on), and prints issue 16's
#      goals table with its "met" column.
# Every scenario: BENCH_CONCURRENCY (50) concurrent streams, BENCH_WARMUP (2s) unmeasured,
# then BENCH_DURATION (10s) measured. Every target is on 127.0.0.1; every loop is
# bounded in time; every process started here is stopped by its PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

DUR=${BENCH_DURATION:-10s}
WARM=${BENCH_WARMUP:-2s}
CONC=${BENCH_CONCURRENCY:-50}
WANT_REDIS=${BENCH_REDIS:-1}
WANT_CLUSTER=${BENCH_CLUSTER:-1}
IDLE_N=${BENCH_IDLE_SESSIONS:-10000}
OUT=${BENCH_OUT:-$ROOT/bench/RESULTS.md}
GHZ_VERSION=v0.93.0
TOOLS=$ROOT/testdata/tools/booking.yaml
SERVER_FLAGS="--tools testdata/tools/booking.yaml --idle-ttl 10m"

RAW=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-bench.XXXXXX")
BIN=$RAW/bin
mkdir -p "$BIN"
RUN=$(date +%s)
echo "== raw results in $RAW"

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

# stop PID: SIGTERM, wait (bounded), then forget it.
stop() {
  local pid=$1
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local keep=()
  for p in "${PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
  PIDS=("${keep[@]}")
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

echo "== tools"
GOBIN=$(go env GOPATH)/bin
export PATH="$GOBIN:$PATH"
if ! go version -m "$(command -v ghz 2>/dev/null || echo /nonexistent)" 2>/dev/null | grep -q "mod[[:space:]]*github.com/bojand/ghz[[:space:]]*$GHZ_VERSION"; then
  echo "   installing ghz $GHZ_VERSION"
  go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION"
fi
echo "   ghz: $(command -v ghz)"

echo "== build"
go build -o "$BIN/arbiter" ./cmd/arbiter
# -mod=mod: bench/ is its own module that replaces the main one with ../, so a change of
# the main module's requirements may need bench/go.mod to follow.
(cd bench && go build -mod=mod -o "$BIN/" ./echo ./load ./report ./profserve)

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# cpu_ticks PID: user+system CPU clock ticks the process has used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)

# redis_ticks: user+system CPU clock ticks of the redis-server processes in REDIS_PIDS
# (space-separated; 0 when it is empty).
redis_ticks() {
  local sum=0 p
  for p in ${REDIS_PIDS:-}; do sum=$((sum + $(cpu_ticks "$p"))); done
  echo "$sum"
}

# measure NAME SERVER_PID CMD...: runs CMD under /usr/bin/time and writes
# cpu-NAME.json: wall seconds and the CPU seconds the server, the client and (with
# REDIS_PIDS set) the redis-server processes used.
measure() {
  local name=$1 spid=$2
  shift 2
  local s0 s1 t0 t1 r0 r1
  s0=$(cpu_ticks "$spid")
  r0=$(redis_ticks)
  t0=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$RAW/time-$name.txt" "$@"
  t1=$(date +%s.%N)
  s1=$(cpu_ticks "$spid")
  r1=$(redis_ticks)
  awk -v s0="$s0" -v s1="$s1" -v r0="$r0" -v r1="$r1" -v tck="$TCK" -v t0="$t0" -v t1="$t1" '{
    printf "{\"wall_s\": %.3f, \"server_cpu_s\": %.3f, \"client_cpu_s\": %.3f, \"redis_cpu_s\": %.3f}\n", t1 - t0, (s1 - s0) / tck, $1 + $2, (r1 - r0) / tck
  }' "$RAW/time-$name.txt" >"$RAW/cpu-$name.json"
}

# ghz_run NAME SERVER_PID ADDR CALL DATA: warmup (discarded), then the measured run.
ghz_run() {
  local name=$1 spid=$2 addr=$3 call=$4 data=$5
  echo "   ghz $name ($call, -c $CONC, $WARM + $DUR)"
  ghz --insecure --call "$call" -d "${data//@PHASE@/w}" -c "$CONC" -z "$WARM" \
    --connections 1 -O json -o "$RAW/ghz-$name.warmup.json" "$addr" >/dev/null
  measure "$name" "$spid" ghz --insecure --call "$call" -d "${data//@PHASE@/m}" -c "$CONC" -z "$DUR" \
    --duration-stop wait --connections 1 -O json -o "$RAW/ghz-$name.json" "$addr"
}

# Request data. Every request gets its own session and call id; the echo request
# carries a templated string of the same shape, so ghz renders the same per request.
REG_DATA='{"session_id":"rc-'$RUN'-@STORE@-@PHASE@-{{.RequestNumber}}","call_id":"fc_{{.RequestNumber}}","tool":"book_slot","args":{"slot":"tomorrow 3pm"}}'
SPEECH_DATA='{"session_id":"sp-'$RUN'-@STORE@-@PHASE@-{{.RequestNumber}}","event":"SPEECH_EVENT_USER_ACTIVITY_START"}'
# 48 bytes of payload + the templated message: about a RegisterCall request's size.
ECHO_DATA='{"payload":{"body":"'$(head -c 48 /dev/zero | base64 -w0)'"},"response_status":{"message":"rc-'$RUN'-echo-@PHASE@-{{.RequestNumber}} fc_{{.RequestNumber}}"}}'

start_echo() {
  "$BIN/echo" -listen 127.0.0.1:0 >"$RAW/echo.out" 2>&1 &
  ECHO_PID=$!
  PIDS+=("$ECHO_PID")
  wait_line "$RAW/echo.out" '^listening '
  ECHO_ADDR=$(sed -n 's/^listening //p' "$RAW/echo.out")
}

# start_arbiter NAME [flags...]: sets ARB_PID, ARB_ADDR.
start_arbiter() {
  local name=$1
  shift
  local port
  port=$("$BIN/load" -freeport)
  # shellcheck disable=SC2086
  "$BIN/arbiter" serve --listen "127.0.0.1:$port" $SERVER_FLAGS "$@" 2>"$RAW/arbiter-$name.log" &
  ARB_PID=$!
  PIDS+=("$ARB_PID")
  wait_line "$RAW/arbiter-$name.log" 'arbiter serving'
  ARB_ADDR=127.0.0.1:$port
}

# arbiter_scenarios STORE [serve flags...]: each scenario against a freshly started
# arbiter (and an emptied Redis), so none inherits the sessions another one created.
arbiter_scenarios() {
  local store=$1
  shift
  local scenarios=(registercall reportspeech register lifecycle)
  if [ "$store" = memory ]; then scenarios=(registercall registercall-newwording reportspeech register lifecycle); fi
  for sc in "${scenarios[@]}"; do
    if [ "$store" = redis ]; then redis-cli -p "$REDIS_PORT" flushall >/dev/null; fi
    start_arbiter "$store-$sc" "$@"
    case $sc in
    registercall)
      ghz_run "registercall-$store" "$ARB_PID" "$ARB_ADDR" arbiter.v1.ArbiterService/RegisterCall "${REG_DATA//@STORE@/$store}" ;;
    registercall-newwording)
      # Every call words its date differently, so the server's memo of parsed dates
      # never hits: the cost of a wording it has not seen.
      local data=${REG_DATA//@STORE@/$store-nw}
      ghz_run "registercall-newwording-$store" "$ARB_PID" "$ARB_ADDR" arbiter.v1.ArbiterService/RegisterCall \
        "${data//tomorrow 3pm/in {{.RequestNumber\}\} minutes}" ;;
    reportspeech)
      ghz_run "reportspeech-$store" "$ARB_PID" "$ARB_ADDR" arbiter.v1.ArbiterService/ReportSpeech "${SPEECH_DATA//@STORE@/$store}" ;;
    register | lifecycle)
      echo "   load $sc-$store (-c $CONC, $WARM + $DUR)"
      measure "$sc-$store" "$ARB_PID" "$BIN/load" -mode "$sc" -addr "$ARB_ADDR" -c "$CONC" -warmup "$WARM" -d "$DUR" \
        -run "$RUN-$store" -o "$RAW/load-$sc-$store.json" ;;
    esac
    stop "$ARB_PID"
  done
}

# used_memory PORT: the redis-server's used_memory in bytes.
used_memory() { redis-cli -p "$1" info memory | tr -d '\r' | sed -n 's/^used_memory://p'; }

# idle_sessions: Redis bytes per idle session, as store/redisstore's
# TestHistoryCostPerSession measures it (bench/HISTORY.md): bench/soak's whole call
# (book_slot, voice activity start and end, "Stop.", Decide -> CANCEL, Complete), in
# BENCH_IDLE_SESSIONS sessions of their own through one arbiter, then idle; used_memory
# after minus before, divided by the sessions. One session first loads the script, as
# the test's warm-up does. Writes redis-idle.json.
idle_sessions() {
  local n=$IDLE_N before after keys
  redis-cli -p "$REDIS_PORT" flushall >/dev/null
  start_arbiter redis-idle --redis-url "$REDIS_URL"
  echo "   load idle sessions ($n of bench/soak's calls, then idle)"
  "$BIN/load" -mode lifecycle -stop-text "Stop." -sessions 1 -c 1 -d 30s -addr "$ARB_ADDR" -run "$RUN-idlewarm" \
    -o "$RAW/load-idle-warmup.json"
  before=$(used_memory "$REDIS_PORT")
  "$BIN/load" -mode lifecycle -stop-text "Stop." -sessions "$n" -c "$CONC" -d 300s -addr "$ARB_ADDR" -run "$RUN-idle" \
    -o "$RAW/load-idle.json"
  after=$(used_memory "$REDIS_PORT")
  keys=$(redis-cli -p "$REDIS_PORT" dbsize)
  stop "$ARB_PID"
  printf '{"sessions": %d, "used_memory_before": %d, "used_memory_after": %d, "keys": %d}\n' \
    "$n" "$before" "$after" "$keys" >"$RAW/redis-idle.json"
}

# start_cluster N: a local Redis Cluster of N masters on free ports (no replicas, no
# persistence), as internal/redistest's StartCluster: for 3 or more `redis-cli --cluster
# create`, for 1 (which that refuses) the one node takes all 16384 slots; waits for
# cluster_state:ok on every node. Sets CL_PORTS, CL_PIDS and CL_URL (the seed list in
# the form `serve --redis-url` documents; ?cluster=true makes one seed a cluster).
start_cluster() {
  local n=$1 i port dir addrs=()
  CL_PORTS=() CL_PIDS=()
  for i in $(seq 1 "$n"); do
    port=$("$BIN/load" -freeport)
    dir=$RAW/cluster$n-$i
    mkdir -p "$dir"
    redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no --daemonize no \
      --dir "$dir" --logfile "$dir/redis.log" --cluster-enabled yes \
      --cluster-config-file "$dir/nodes.conf" --cluster-node-timeout 2000 &
    CL_PIDS+=($!)
    PIDS+=($!)
    CL_PORTS+=("$port")
    addrs+=("127.0.0.1:$port")
  done
  for port in "${CL_PORTS[@]}"; do
    for _ in $(seq 1 100); do
      [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
      sleep 0.1
    done
  done
  if [ "$n" -ge 3 ]; then
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$RAW/cluster$n-create.txt" 2>&1
  else
    redis-cli -p "${CL_PORTS[0]}" cluster addslotsrange 0 16383 >"$RAW/cluster$n-create.txt" 2>&1
  fi
  for port in "${CL_PORTS[@]}"; do
    local ok=""
    for _ in $(seq 1 200); do
      if redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; then ok=1; break; fi
      sleep 0.1
    done
    [ -n "$ok" ] || { echo "cluster node $port not ok after 20 s" >&2; cat "$RAW/cluster$n-create.txt" >&2; return 1; }
  done
  CL_URL="redis://${addrs[0]}?cluster=true"
  for a in "${addrs[@]:1}"; do CL_URL="$CL_URL&addr=$a"; done
  echo "   cluster of $n master(s): ${addrs[*]}"
}

stop_cluster() {
  local p
  for p in "${CL_PIDS[@]}"; do stop "$p"; done
}

# cluster_scenarios N: bench/load register and lifecycle through one arbiter on the
# cluster CL_URL. For each: the timed run (server and Redis CPU, cpu-clusterN-SC.json),
# every master's INFO commandstats before and after it (commands Redis executed, those
# its scripts run included), then a counting pass: a known number of iterations while
# `redis-cli monitor` on each master logs what the clients sent (a line per command a
# client sent; commands a script ran are marked [... lua] and not round trips).
cluster_scenarios() {
  local n=$1 sc port count mons=()
  for sc in register lifecycle; do
    for port in "${CL_PORTS[@]}"; do
      redis-cli -p "$port" flushall >/dev/null
    done
    start_arbiter "cluster$n-$sc" --redis-url "$CL_URL"
    for port in "${CL_PORTS[@]}"; do
      redis-cli -p "$port" info commandstats | tr -d '\r' >"$RAW/cmdstats-cluster$n-$sc-$port.before.txt"
    done
    echo "   load $sc, cluster of $n (-c $CONC, $WARM + $DUR)"
    REDIS_PIDS="${CL_PIDS[*]}" measure "cluster$n-$sc" "$ARB_PID" "$BIN/load" -mode "$sc" -addr "$ARB_ADDR" -c "$CONC" \
      -warmup "$WARM" -d "$DUR" -run "$RUN-cl$n" -o "$RAW/load-cluster$n-$sc.json"
    for port in "${CL_PORTS[@]}"; do
      redis-cli -p "$port" info commandstats | tr -d '\r' >"$RAW/cmdstats-cluster$n-$sc-$port.after.txt"
    done
    count=2000
    [ "$sc" = lifecycle ] && count=300
    mons=()
    for port in "${CL_PORTS[@]}"; do
      redis-cli -p "$port" monitor >"$RAW/monitor-cluster$n-$sc-$port.txt" 2>&1 &
      mons+=($!)
      PIDS+=($!)
    done
    sleep 0.3
    "$BIN/load" -mode "$sc" -addr "$ARB_ADDR" -c "$CONC" -sessions "$count" -d 60s -run "$RUN-cl$n-count" \
      -o "$RAW/load-cluster$n-$sc-count.json"
    sleep 0.3
    for p in "${mons[@]}"; do stop "$p"; done
    stop "$ARB_PID"
  done
  printf '{"masters": %d, "ports": [%s]}\n' "$n" "$(IFS=,; echo "${CL_PORTS[*]}")" >"$RAW/cluster$n.json"
}

echo "== echo server: baseline"
start_echo
ghz_run echo-1 "$ECHO_PID" "$ECHO_ADDR" grpc.testing.TestService/UnaryCall "$ECHO_DATA"
echo "   load echo (-c $CONC, $WARM + $DUR)"
measure load-echo "$ECHO_PID" "$BIN/load" -mode echo -addr "$ECHO_ADDR" -c "$CONC" -warmup "$WARM" -d "$DUR" -o "$RAW/load-echo.json"
echo "   load echo1 (-c $CONC, $WARM + $DUR)"
measure load-echo1 "$ECHO_PID" "$BIN/load" -mode echo1 -addr "$ECHO_ADDR" -c "$CONC" -warmup "$WARM" -d "$DUR" -o "$RAW/load-echo1.json"
stop "$ECHO_PID"

echo "== arbiter, embedded store"
arbiter_scenarios memory

NOTES=()
REDIS_VERSION="Redis: not used"
if [ "$WANT_REDIS" != 1 ]; then
  NOTES+=("Redis scenarios skipped (BENCH_REDIS=$WANT_REDIS).")
elif ! [[ "$("$BIN/arbiter" serve --help 2>&1)" == *--redis-url* ]]; then
  NOTES+=("Redis scenarios skipped: this arbiter's serve has no --redis-url.")
elif ! command -v redis-server >/dev/null; then
  NOTES+=("Redis scenarios skipped: redis-server is not installed (apt-get install redis-server).")
else
  echo "== arbiter, Redis store"
  REDIS_PORT=$("$BIN/load" -freeport)
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --daemonize no \
    --logfile "$RAW/redis.log" &
  REDIS_PID=$!
  PIDS+=("$REDIS_PID")
  for _ in $(seq 1 100); do
    [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ] && break
    sleep 0.1
  done
  REDIS_VERSION="$(redis-server --version | cut -d' ' -f1-3), its own instance on 127.0.0.1 (no persistence)"
  REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
  # A throwaway Redis without persistence, on purpose: serve refuses a volatile
  # Redis unless told (an older arbiter ignores the variable).
  export ARBITER_ALLOW_VOLATILE_STORE=true
  REDIS_PIDS=$REDIS_PID arbiter_scenarios redis --redis-url "$REDIS_URL"
  # Two replicas on the one Redis: a Decide parked on B, the deciding transcript on A;
  # at full concurrency, then with few sessions (the hand-off itself, CPU to spare).
  for hc in "$CONC" 5; do
    redis-cli -p "$REDIS_PORT" flushall >/dev/null
    start_arbiter "redis-a-$hc" --redis-url "$REDIS_URL"
    A_PID=$ARB_PID A_ADDR=$ARB_ADDR
    start_arbiter "redis-b-$hc" --redis-url "$REDIS_URL"
    B_PID=$ARB_PID B_ADDR=$ARB_ADDR
    name=handoff-redis
    [ "$hc" = "$CONC" ] || name=handoff-redis-c$hc
    echo "   load $name (A=$A_ADDR, B=$B_ADDR, -c $hc, $WARM + $DUR)"
    "$BIN/load" -mode handoff -addr "$A_ADDR" -addr2 "$B_ADDR" -c "$hc" -warmup "$WARM" -d "$DUR" -run "$RUN-$hc" \
      -o "$RAW/load-$name.json"
    stop "$B_PID"
    stop "$A_PID"
  done
  redis-cli -p "$REDIS_PORT" info memory | grep -E '^used_memory_human' >"$RAW/redis-memory.txt" || true
  idle_sessions
  stop "$REDIS_PID"
  if [ "$WANT_CLUSTER" = 1 ]; then
    echo "== arbiter, Redis Cluster: 1 vs 3 masters"
    for n in 1 3; do
      if start_cluster "$n"; then
        cluster_scenarios "$n"
      else
        NOTES+=("The Redis Cluster of $n master(s) did not form (cluster_state not ok); its scenarios are missing.")
      fi
      stop_cluster
    done
  else
    NOTES+=("Redis Cluster scenarios skipped (BENCH_CLUSTER=$WANT_CLUSTER).")
  fi
fi

echo "== echo server: baseline again"
start_echo
ghz_run echo-2 "$ECHO_PID" "$ECHO_ADDR" grpc.testing.TestService/UnaryCall "$ECHO_DATA"
stop "$ECHO_PID"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

echo "== CPU profiles"
"$BIN/profserve" -listen 127.0.0.1:0 -tools "$TOOLS" -cpuprofile "$RAW/server.cpu.prof" -log "$RAW/profserve.log" \
  >"$RAW/profserve.out" 2>&1 &
PROF_PID=$!
PIDS+=("$PROF_PID")
wait_line "$RAW/profserve.out" '^listening '
PROF_ADDR=$(sed -n 's/^listening //p' "$RAW/profserve.out")
ghz_run registercall-profiled "$PROF_PID" "$PROF_ADDR" arbiter.v1.ArbiterService/RegisterCall "${REG_DATA//@STORE@/prof}"
stop "$PROF_PID"
go tool pprof -top -nodecount=25 "$BIN/profserve" "$RAW/server.cpu.prof" >"$RAW/pprof-server-flat.txt" 2>/dev/null
go tool pprof -top -cum -nodecount=100000 "$BIN/profserve" "$RAW/server.cpu.prof" >"$RAW/pprof-server-cum-all.txt" 2>/dev/null
# The in-repo benchmark (client and server in one process over bufconn).
if go test -run '^$' -bench 'BenchmarkRegisterCall/calls_per_session=1$' -benchtime 3s -count 1 \
  -cpuprofile "$RAW/bench.cpu.prof" -o "$RAW/server.test" ./server >"$RAW/bench.txt" 2>&1; then
  cat "$RAW/bench.txt"
  go tool pprof -top -nodecount=25 "$RAW/server.test" "$RAW/bench.cpu.prof" >"$RAW/pprof-bench-flat.txt" 2>/dev/null
else
  cat "$RAW/bench.txt" >&2
  NOTES+=("go test ./server -bench BenchmarkRegisterCall did not run (the working tree's server package did not build at that moment); its profile is missing.")
fi

echo "== store benchmarks (go test -bench, once each)"
# Counts (record bytes, Redis round trips per RPC) are exact at any -benchtime; 160 is
# a multiple of BenchmarkHotPath/RegisterCall's 16 calls a session.
if go test -run '^$' -bench 'BenchmarkEncode|BenchmarkDecode|BenchmarkTransition|BenchmarkHotPath' -benchtime 160x -count 1 \
  ./store/sessioncodec ./store/memory ./store/redisstore >"$RAW/gobench-store.txt" 2>&1; then
  grep -E '^Benchmark' "$RAW/gobench-store.txt" || true
else
  cat "$RAW/gobench-store.txt" >&2
  NOTES+=("The store benchmarks (go test -bench ./store/...) did not run; their section is missing or partial.")
fi

echo "== report"
json_str() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=""
# Changes that can reach the binary: tracked Go module files, or new .go files, outside
# the nested modules and the packaging files.
CHANGED=$(git status --porcelain -- . ':!bench' ':!deploy' ':!Dockerfile' ':!.dockerignore' 2>/dev/null |
  grep -E '^( M|M |MM|A |D | D|R ).*|^\?\? .*\.go$' || true)
if [ -n "$CHANGED" ]; then
  DIRTY=" plus uncommitted changes to: $(echo "$CHANGED" | awk '{print $2}' | head -5 | paste -sd' ')"
fi
CMD="bench/run.sh"
[ "$DUR" != 10s ] && CMD="BENCH_DURATION=$DUR $CMD"
[ "$WARM" != 2s ] && CMD="BENCH_WARMUP=$WARM $CMD"
[ "$CONC" != 50 ] && CMD="BENCH_CONCURRENCY=$CONC $CMD"
[ "$WANT_REDIS" != 1 ] && CMD="BENCH_REDIS=$WANT_REDIS $CMD"
[ "$WANT_CLUSTER" != 1 ] && CMD="BENCH_CLUSTER=$WANT_CLUSTER $CMD"
[ "$IDLE_N" != 10000 ] && CMD="BENCH_IDLE_SESSIONS=$IDLE_N $CMD"
NOTES_JSON=""
for n in "${NOTES[@]+"${NOTES[@]}"}"; do
  NOTES_JSON="$NOTES_JSON${NOTES_JSON:+,}\"$(json_str "$n")\""
done
cat >"$RAW/meta.json" <<EOF
{
  "command": "$(json_str "$CMD")",
  "date": "$(date -u '+%Y-%m-%d %H:%M UTC')",
  "nproc": "$(nproc)",
  "cpu": "$(json_str "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')")",
  "memory": "$(free -h | awk '/^Mem:/ {print $2}')",
  "kernel": "$(uname -r)",
  "go": "$(go version | cut -d' ' -f3-)",
  "ghz": "$GHZ_VERSION",
  "redis": "$(json_str "$REDIS_VERSION")",
  "commit": "$COMMIT",
  "dirty": "$DIRTY",
  "loadavg_before": "$LOAD_BEFORE",
  "loadavg_after": "$LOAD_AFTER",
  "concurrency": $CONC,
  "duration": "$DUR",
  "warmup": "$WARM",
  "server_flags": "$(json_str "$SERVER_FLAGS")",
  "notes": [$NOTES_JSON]
}
EOF
echo "== goals"
"$BIN/report" -dir "$RAW" -o "$OUT"
echo "== wrote $OUT (raw results: $RAW) in $((SECONDS / 60)) min $((SECONDS % 60)) s"
