#!/usr/bin/env bash
# Wire-level end-to-end checks: real client stacks against `arbiter fake-provider`
# (Gemini Live and OpenAI Realtime on the wire, playing a directory of traces), judged by
# `arbiter fake-provider check` (docs/fake-provider.md).
#
#     clients/e2e/wire.sh [TRACE_DIR [POLICY]]   # default: testdata/traces testdata/tools/booking.yaml
#     WIRE_STACKS="node-genai py-gemini" clients/e2e/wire.sh testdata/wire testdata/wire/tools.yaml
#
# A set is a trace directory and the tool policy (YAML) its sessions run under. For each
# configuration of the arbiter, and each stack:
#   embedded  one `arbiter serve --tools POLICY` (the embedded store)
#   replicas  three `arbiter serve --tools POLICY --redis-url` on one redis-server
#             (--appendonly yes); a stack gets all three addresses (--arbiter A,B,C) and
#             sends every RPC round-robin over them, so one session's RegisterCall,
#             Decide, Report* and Watch land on different replicas
#   stacks    node-genai (@google/genai Live, response scheduling on), node-openai-realtime
#             (openai OpenAIRealtimeWS over wss, the fake's self-signed certificate),
#             node-livekit-google and node-livekit-openai (@livekit/agents AgentSession,
#             headless), and the Python stacks py-gemini and py-openai
#             (clients/python/examples/wire_agent.py), py-genai (google-genai Live) and
#             py-openai-sdk (openai's client.realtime.connect), each in its own locked
#             environment (clients/python/examples/wire_stacks.py, stack_*.py); and,
#             when serve has the wire guard (--proxy-listen, issue 23), behind it, on the
#             sets WIRE_PY_GUARD_SETS names (wire_py_guard_checks): py-livekit-google,
#             py-livekit-openai (LiveKit Agents 1.8), py-pipecat-google, py-pipecat-openai
#             (Pipecat 1.14), py-agents (OpenAI Agents SDK 0.24): each stack gets a serve
#             of its own with --proxy-listen (TLS) in front of its fake provider, on the
#             configuration's store (the replicas' Redis: its tools' Decide/Complete by
#             call id go round-robin over it and the three replicas)
# One process per stack plays every trace of the set concurrently, one session per trace
# under its /trace/NAME base URL, against its own `arbiter fake-provider --record FILE`,
# with every tool the policy names (and every tool a trace calls) declared and wrapped,
# each trace's backend, language, time zone, per-call tool choice and business key and
# the recorded app's own readings of the user's words, and a reconnect wherever the
# provider closes before the trace's end. Then `arbiter fake-provider check --tools
# POLICY` with the record and the stack's backend log must pass, and its summary line is
# printed, with each session the fake refused (a trace its protocol cannot carry) and why:
#   STACK@CONFIG: sessions N, responses N, dead ids answered N, notes N, commits N, max decision offset Nms, skipped N
#   STACK@CONFIG skipped: session N (TRACE, PROTO): refused by the fake provider: REASON
# The stacks of one configuration run at the same time; the time per set is printed.
#
# Adding a stack: one entry in wire_run's `case` (the command that plays a directory of
# traces) and its name in the default of wire_stacks.
#
# Sourced by clients/test.sh (which defines check, die, $tmp, $root and builds the
# arbiter at $tmp/arbiter, then calls wire_checks per set); run alone it builds what it
# needs into a temporary folder and checks the set its arguments name.
#
# Then every set behind the wire guard (wire_guard_checks SET TRACES POLICY, called per
# set; WIRE_GUARD=0 skips it, WIRE_GUARD_STACKS narrows the stacks,
# WIRE_GUARD_REPLICA_SETS the sets also played on the replicas): each stack points at
# `arbiter serve --proxy-listen` (wss, a certificate made here) instead of the provider,
# whose fake is the guard's upstream over TLS (--proxy-ca-file); the frameworks at their
# defaults, no adapter; every tool the set's policy names and every tool a trace calls
# declared, with the trace's backend per call, the side-effecting ones (and the confirm
# tool of a tool that asks first) through the tool helper only (twoPhase, by call id),
# the read-only ones with no code; the recorded app's language and, where the SDK can
# say it, its tool choice none. Where a set's call ids repeat across its traces (the
# fake plays the recorded short ids, every session at once) the call index cannot find a
# call by its id alone, so the stack names its arbiter session (X-Arbiter-Session, or
# the arbiter_session query parameter) and the helper gets it, as docs/wire-guard.md
# says for short ids. Embedded (the guard's serve is the arbiter; the stacks at once)
# and on Redis (the guard's serve a fourth replica, the tools' RPCs round-robin over all
# four; one stack at a time). The record must pass the same `fake-provider check`.
# bare-genai is the no-integration run: tools with no Arbiter code at all, judged by
# clients/e2e/no_integration.py. Each check prints the summary line, the sessions the
# fake refused (skipped) and the traces the stack does not play with why
# (wire_guard_narrowed: a gap of the SDK or of the helper, reported), and what the
# guard dropped and injected (the counts of its "wire guard connection closed" lines):
#   STACK@CONFIG narrowed: TRACE: WHY
#   guard: dropped agent answer: dead id: abandoned N, injected note N, ...
# The Python frameworks behind the guard (wire_py_guard_checks TRACES POLICY) play the
# sets clients/test.sh gives them (WIRE_PY_GUARD_SETS, default traces and limits: their
# stacks do not name their arbiter session yet, so a set whose call ids repeat across
# traces would be ambiguous to the call index).
# guard-openai-realtime-untranscribed (embedded, with the traces set: one session with a
# spoken stop, testdata/traces/A_on_run1 under testdata/guard/untranscribed.yaml, whose
# unheard utterance lets the commit go; alongside the others; WIRE_GUARD_UNTRANSCRIBED=1
# runs it with a narrowed WIRE_GUARD_STACKS, 0 never): an agent that asks for no input
# transcription; the guard asks for it, so the stop is heard and the booking cancelled
# as in the reference.

wire_standalone=""
if ! declare -F check >/dev/null; then
  wire_standalone=1
  set -uo pipefail
  wire_arg_traces="${1:+$(realpath "$1")}" wire_arg_policy="${2:+$(realpath "$2")}" # before the cd
  cd "$(dirname "${BASH_SOURCE[0]}")/../.."
  root="$PWD"
  tmp="$(mktemp -d)"
  trap 'wire_stop; [ -n "${WIRE_KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
  passed=0 failed=0 checks=0
  check() {
    local name="$1" t0=$SECONDS
    shift
    checks=$((checks + 1))
    log="$tmp/check-$checks.log"
    if "$@" >"$log" 2>&1; then
      passed=$((passed + 1))
      echo "ok   $name ($((SECONDS - t0))s)"
    else
      failed=$((failed + 1))
      echo "FAIL $name ($((SECONDS - t0))s)"
      sed 's/^/    /' "$log"
    fi
  }
  die() { echo "wire.sh: $*" >&2; exit 1; }
  go build -o "$tmp/arbiter" ./cmd/arbiter || die "go build failed"
  # The Python stacks' environments, the client's wheel installed in each.
  clients/python/envs.sh --wheel "$(clients/python/envs.sh build "$tmp/py-dist")" || die "clients/python/envs.sh failed"
  (cd clients/node && npm ci --no-audit --no-fund --loglevel=error && npx tsc -p tsconfig.test.json) >"$tmp/npm.log" 2>&1 || { cat "$tmp/npm.log"; die "npm ci / build failed"; }
fi

wire_node="$root/clients/node"
wire_py_agent="$root/clients/python/examples/wire_agent.py"
wire_venvs="$root/clients/python/.venvs" # clients/python/envs.sh: one locked environment per Python stack
wire_python="${WIRE_PYTHON:-$wire_venvs/test-highest/bin/python}"
# The stacks every set is played on (a stack is this list's name plus its entry in
# wire_run's case); WIRE_STACKS narrows them.
wire_stacks="${WIRE_STACKS:-node-genai node-openai-realtime node-livekit-google node-livekit-openai py-gemini py-openai py-genai py-openai-sdk}"
# The Python stacks through their SDKs (clients/python/examples/wire_stacks.py), each in its
# own locked environment (clients/python/.venvs/STACK).
wire_py_stacks="$root/clients/python/examples/wire_stacks.py"
# The Python frameworks that answer every call themselves run behind the wire guard
# (`arbiter serve --proxy-listen`, issue 23); a serve without it cannot run them.
# They run after the other stacks (wire_py_guard_checks): on one arbiter in batches (a
# guard per stack, and LiveKit's and Pipecat's sessions are heavy for two cores at once),
# on the replicas one stack at a time (every stack plays the same traces: on one Redis
# their call ids would be the same calls of several sessions, which the guard's call
# index refuses to guess between).
wire_py_guarded_batches=("py-livekit-google py-livekit-openai py-agents" "py-pipecat-google" "py-pipecat-openai")

# wire_py_guard DIR FAKE_ADDR TARGET POLICY: starts a serve (with POLICY) whose wire guard
# (TLS, its own certificate) forwards to the fake provider at FAKE_ADDR (trusting
# DIR/cert.pem), on the configuration's store (wire_redis, else its own embedded one); sets
# guard_url (the agents' provider base URL) and guard_target (the arbiter(s) its tools ask:
# the guard's serve first, then TARGET's replicas when they share its store).
wire_py_guard() {
  local dir="$1" fake="$2" target="$3" policy="$4" port store=() grpc
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/guard.key" -out "$dir/guard.pem" -days 1 -subj /CN=127.0.0.1 \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" >/dev/null 2>&1 || return 1
  port="$(wire_free_port)"
  [ -n "$wire_redis" ] && store=(--redis-url "$wire_redis")
  "$tmp/arbiter" serve --listen 127.0.0.1:0 --tools "$policy" "${store[@]}" \
    --proxy-listen "127.0.0.1:$port" --proxy-gemini-upstream "wss://$fake" --proxy-openai-upstream "wss://$fake" \
    --proxy-ca-file "$dir/cert.pem" --proxy-tls-cert "$dir/guard.pem" --proxy-tls-key "$dir/guard.key" >"$dir/guard.log" 2>&1 &
  guard_pid=$!
  for _ in $(seq 100); do
    grpc="$(grep 'arbiter serving' "$dir/guard.log" 2>/dev/null | grep -o ' addr=[^ ]*' | head -1 | cut -d= -f2)"
    [ -n "$grpc" ] && grep -q 'wire guard serving' "$dir/guard.log" && break
    kill -0 $guard_pid 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$grpc" ] || { cat "$dir/guard.log"; return 1; }
  guard_url="https://127.0.0.1:$port"
  guard_target="$grpc"
  [ -n "$wire_redis" ] && guard_target="$grpc,$target"
  return 0
}
wire_pids=()

# wire_policy_json POLICY OUT: the YAML tool policy as JSON (what the Node agents read).
wire_policy_json() {
  "$wire_python" -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])) or {}, sys.stdout)' "$1" >"$2" ||
    die "$1: not a YAML tool policy (read with $wire_python)"
}

wire_stop() {
  for p in "${wire_pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  wire_pids=()
}

# wire_addr LOG PID: waits for the "addr=HOST:PORT" a server logs; prints it.
wire_addr() {
  local a=""
  for _ in $(seq 100); do
    a="$(grep -o 'addr=[^ ]*' "$1" 2>/dev/null | head -1 | cut -d= -f2)"
    [ -n "$a" ] && break
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  echo "$a"
}

# wire_free_port: a free TCP port on 127.0.0.1.
wire_free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wire_arbiters CONFIG DIR POLICY: starts the arbiter(s) of CONFIG; sets wire_target (and
# wire_redis, the Redis URL of the replicas).
wire_arbiters() {
  local config="$1" dir="$2" policy="$3" addrs=() i
  wire_redis=""
  if [ "$config" = replicas ]; then
    command -v redis-server >/dev/null || die "redis-server is needed for the replicas configuration"
    local port
    port="$(wire_free_port)"
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly yes --appendfsync always --dir "$dir" >"$dir/redis.log" 2>&1 &
    wire_pids+=($!)
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$port" ping >/dev/null 2>&1 || { cat "$dir/redis.log"; die "redis-server did not start"; }
    wire_redis="redis://127.0.0.1:$port"
    for i in 1 2 3; do
      "$tmp/arbiter" serve --listen 127.0.0.1:0 --tools "$policy" --redis-url "redis://127.0.0.1:$port" >"$dir/serve-$i.log" 2>&1 &
      wire_pids+=($!)
      addrs+=("$(wire_addr "$dir/serve-$i.log" $!)")
      [ -n "${addrs[-1]}" ] || { cat "$dir/serve-$i.log"; die "arbiter serve replica $i did not start"; }
    done
  else
    "$tmp/arbiter" serve --listen 127.0.0.1:0 --tools "$policy" >"$dir/serve.log" 2>&1 &
    wire_pids+=($!)
    addrs+=("$(wire_addr "$dir/serve.log" $!)")
    [ -n "${addrs[0]}" ] || { cat "$dir/serve.log"; die "arbiter serve did not start"; }
  fi
  wire_target="$(IFS=,; echo "${addrs[*]}")"
}

# wire_run STACK DIR TARGET TRACES POLICY POLICY_JSON: one stack against its own fake
# provider (record DIR/rec.jsonl, backend log DIR/backend.jsonl); exit code of the
# stack's process.
wire_run() {
  local stack="$1" dir="$2" target="$3" traces="$4" policy="$5" policy_json="$6" tls=() scheme=http cmd=() fp code
  mkdir -p "$dir"
  [ "$stack" = node-openai-realtime ] && tls=(--tls-self-signed "$dir/cert.pem") && scheme=https
  # google-genai and openai dial wss:// (genai whatever the base URL says); both trust SSL_CERT_FILE.
  case "$stack" in py-genai | py-openai-sdk | py-livekit-* | py-pipecat-* | py-agents) tls=(--tls-self-signed "$dir/cert.pem") && scheme=https ;; esac
  "$tmp/arbiter" fake-provider --trace "$traces" --record "$dir/rec.jsonl" "${tls[@]}" >"$dir/fake.log" 2>&1 &
  fp=$!
  local addr
  addr="$(wire_addr "$dir/fake.log" $fp)"
  [ -n "$addr" ] || { cat "$dir/fake.log"; kill $fp 2>/dev/null; return 1; }
  local common=(--provider "$scheme://$addr" --arbiter "$target" --traces "$traces" --backend-log "$dir/backend.jsonl")
  local guard_pid="" guard_url guard_target
  case "$stack" in py-livekit-* | py-pipecat-* | py-agents)
    wire_py_guard "$dir" "$addr" "$target" "$policy" || { kill $fp 2>/dev/null; return 1; }
    common=(--provider "$guard_url" --arbiter "$guard_target" --traces "$traces" --backend-log "$dir/backend.jsonl")
    ;;
  esac
  local node=(node "$wire_node/build/examples/wire-agent.js" "${common[@]}" --tools "$policy_json")
  local py=("$wire_python" "$wire_py_agent" "${common[@]}" --tools "$policy")
  local sdk=("$wire_py_stacks" "${common[@]}" --tools "$policy")
  case "$stack" in
    node-genai) cmd=("${node[@]}" --stack genai --response-scheduling) ;;
    node-openai-realtime) cmd=(env NODE_EXTRA_CA_CERTS="$dir/cert.pem" "${node[@]}" --stack openai-realtime) ;;
    node-livekit-google) cmd=("${node[@]}" --stack livekit-google) ;;
    node-livekit-openai) cmd=("${node[@]}" --stack livekit-openai) ;;
    py-gemini) cmd=("${py[@]}" --stack gemini) ;;
    py-openai) cmd=("${py[@]}" --stack openai) ;;
    py-genai) cmd=(env SSL_CERT_FILE="$dir/cert.pem" "$wire_venvs/genai/bin/python" "${sdk[@]}" --stack genai) ;;
    py-openai-sdk) cmd=(env SSL_CERT_FILE="$dir/cert.pem" "$wire_venvs/openai/bin/python" "${sdk[@]}" --stack openai-sdk) ;;
    # Behind the wire guard: the agents trust the guard's certificate.
    py-livekit-google | py-livekit-openai) cmd=(env SSL_CERT_FILE="$dir/guard.pem" "$wire_venvs/livekit/bin/python" "${sdk[@]}" --stack "${stack#py-}") ;;
    py-pipecat-google | py-pipecat-openai) cmd=(env SSL_CERT_FILE="$dir/guard.pem" "$wire_venvs/pipecat/bin/python" "${sdk[@]}" --stack "${stack#py-}") ;;
    py-agents) cmd=(env SSL_CERT_FILE="$dir/guard.pem" "$wire_venvs/agents/bin/python" "${sdk[@]}" --stack agents) ;;
    *) echo "wire.sh: no stack named $stack" >&2; kill $fp 2>/dev/null; return 2 ;;
  esac
  (cd "$root/clients/node" && timeout 240 "${cmd[@]}") >"$dir/agent.out" 2>"$dir/agent.err"
  code=$?
  [ -n "$guard_pid" ] && kill -TERM "$guard_pid" 2>/dev/null && wait "$guard_pid" 2>/dev/null
  kill -TERM $fp 2>/dev/null
  wait $fp 2>/dev/null
  return $code
}

# wire_verdict STACK CONFIG DIR CODE TRACES POLICY: the check of one stack's run.
wire_verdict() {
  local stack="$1" config="$2" dir="$3" code="$4" traces="$5" policy="$6"
  "$tmp/arbiter" fake-provider check --record "$dir/rec.jsonl" --tools "$policy" \
    --backend-log "$dir/backend.jsonl" --stack "$stack@$config" "$traces" >"$dir/check.out" 2>&1
  local verdict=$?
  if [ "$verdict" != 0 ] || [ "$code" != 0 ]; then
    echo "stack exit code $code, checker exit code $verdict"
    cat "$dir/check.out"
    echo "--- agent stderr (last 40 lines)"
    tail -40 "$dir/agent.err"
    return 1
  fi
  grep -E "^$stack@$config: sessions |^skipped: " "$dir/check.out"
}

# wire_checks [SET TRACE_DIR POLICY]: every stack plays the set, against one arbiter and
# against three replicas; one check per stack and configuration (default set: the
# recorded sessions under booking.yaml).
wire_checks() {
  local set="${1:-traces}" traces="${2:-$root/testdata/traces}" policy="${3:-$root/testdata/tools/booking.yaml}"
  local t_all=$SECONDS config stack
  local policy_json="$tmp/wire/$set.policy.json"
  mkdir -p "$tmp/wire"
  "$wire_python" -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])) or {}, sys.stdout)' "$policy" >"$policy_json" ||
    die "$policy: not a YAML tool policy (read with $wire_python)"
  for config in embedded replicas; do
    local base="$tmp/wire/$set/$config" t0=$SECONDS
    mkdir -p "$base"
    wire_arbiters "$config" "$base" "$policy"
    echo "arbiter ($config, set $set): $wire_target"
    local run=() pids=()
    for stack in $wire_stacks; do
      wire_run "$stack" "$base/$stack" "$wire_target" "$traces" "$policy" "$policy_json" &
      pids+=($!)
      run+=("$stack")
    done
    local i codes=()
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}"
      codes[$i]=$?
    done
    echo "(set $set: ${#run[@]} stacks against the $config arbiter, $((SECONDS - t0))s)"
    for i in "${!run[@]}"; do
      stack="${run[$i]}"
      check "wire $set $stack@$config: every live id answered once, no dead id, each note once, the reference's cancels (fake-provider check)" \
        wire_verdict "$stack" "$config" "$base/$stack" "${codes[$i]}" "$traces" "$policy"
      grep -E "^$stack@$config: sessions " "$log" | sed 's/^/    /'
      grep -E "^skipped: " "$log" | sed "s/^skipped: /    $stack@$config skipped: /"
    done
    wire_stop
  done
  echo "(wire set $set: $((SECONDS - t_all))s)"
}

# wire_py_guard_counts DIR: what the guard did for a stack (its "wire guard connection
# closed" lines: answers dropped, responses and notes injected, calls kept), summed.
wire_py_guard_counts() {
  /usr/bin/python3 - "$1/guard.log" <<'PY'
import re, sys
from collections import Counter
c = Counter()
for line in open(sys.argv[1], encoding="utf-8"):
    if "wire guard connection closed" in line:
        for k, v in re.findall(r'"([a-z][^"=]*)"=(\d+)', line):
            c[k] += int(v)
print("guard: " + (", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "nothing dropped or injected"))
PY
}

# wire_py_guard_batch CONFIG STACKS TRACES POLICY POLICY_JSON: the stacks at once against
# CONFIG's arbiter(s), each behind a guard of its own (wire_run), judged as the others are.
wire_py_guard_batch() {
  local config="$1" stacks="$2" traces="$3" policy="$4" policy_json="$5" t0=$SECONDS run=() pids=() codes=() i stack base
  base="$(mktemp -d "$tmp/wire/pyguard-$config-XXXX")"
  wire_arbiters "$config" "$base" "$policy"
  for stack in $stacks; do
    wire_run "$stack" "$base/$stack" "$wire_target" "$traces" "$policy" "$policy_json" &
    pids+=($!)
    run+=("$stack")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    codes[$i]=$?
  done
  echo "(${run[*]} behind the wire guard, $config, set $(basename "$traces"), $((SECONDS - t0))s)"
  for i in "${!run[@]}"; do
    stack="${run[$i]}"
    check "wire $(basename "$traces") $stack@$config behind the wire guard: every live id answered once, no dead id, each note once, the reference's cancels (fake-provider check)" \
      wire_verdict "$stack" "$config" "$base/$stack" "${codes[$i]}" "$traces" "$policy"
    grep -E "^$stack@$config: sessions " "$log" | sed 's/^/    /'
    wire_py_guard_counts "$base/$stack" 2>/dev/null | sed 's/^/    /'
  done
  wire_stop
}

# wire_py_guard_checks [TRACES POLICY]: the Python frameworks behind the wire guard (see
# wire_py_guarded_batches) on a set (default: the recorded sessions under booking.yaml);
# only with a serve that has the guard (--proxy-listen, issue 23): otherwise says so.
wire_py_guard_checks() {
  local traces="${1:-$root/testdata/traces}" policy="${2:-$root/testdata/tools/booking.yaml}"
  if ! "$tmp/arbiter" serve --help 2>/dev/null | grep -- --proxy-listen >/dev/null; then # not -q: under pipefail its early exit fails the pipe (SIGPIPE)
    echo "wire: ${wire_py_guarded_batches[*]} wait for the wire guard (this arbiter's serve has no --proxy-listen)"
    return 0
  fi
  local t_all=$SECONDS batch stack policy_json="$tmp/wire/pyguard-$(basename "$traces").policy.json"
  mkdir -p "$tmp/wire"
  "$wire_python" -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])) or {}, sys.stdout)' "$policy" >"$policy_json" ||
    die "$policy: not a YAML tool policy (read with $wire_python)"
  for batch in "${wire_py_guarded_batches[@]}"; do
    wire_py_guard_batch embedded "$batch" "$traces" "$policy" "$policy_json"
  done
  for stack in ${wire_py_guarded_batches[*]}; do
    wire_py_guard_batch replicas "$stack" "$traces" "$policy" "$policy_json"
  done
  echo "(wire checks behind the guard, the Python frameworks, set $(basename "$traces"): $((SECONDS - t_all))s)"
}

wire_guard_stacks="${WIRE_GUARD_STACKS:-guard-genai guard-openai-realtime guard-livekit-google guard-livekit-openai bare-genai}"
# The sets the guard stacks also play on the replicas (every set plays embedded). On
# the replicas the stacks run one at a time (their call ids would be one tenant's calls
# in several sessions), so a set costs five times its length there: the recorded
# sessions and the wire set (reconnects, several tools, barge-in) by default, the CI
# time budget (issue 23: every set on both configurations added ~16 minutes on 2 cores).
wire_guard_replica_sets="${WIRE_GUARD_REPLICA_SETS:-traces wire}"

# wire_guard_cert DIR: a self-signed certificate for 127.0.0.1 (the guard's wss).
wire_guard_cert() {
  [ -f "$1/guard.pem" ] && return 0
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1/guard.key" -out "$1/guard.pem" -days 7 \
    -subj "/CN=arbiter wire guard" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -addext "basicConstraints=critical,CA:TRUE" >/dev/null 2>&1
}

# wire_guard_narrowed STACK TRACES: the traces of TRACES the stack does not play behind the
# guard, one "NAME: why" line each (printed with its check). Each is a gap of the stack or
# of the tool helper, not of the guard's rules, and is reported as such (issue 23).
wire_guard_narrowed() {
  local stack="$1" traces="$2" t n
  for t in "$traces"/*.jsonl; do
    n="$(basename "$t" .jsonl)"
    case "$stack" in guard-genai | guard-livekit-google | bare-genai | bare-livekit-google)
      # Every call of the trace under tool choice none: Gemini Live reads it from the setup's
      # toolConfig, which neither SDK can send.
      if grep -q '"event": *"tool_call"' "$t" && ! grep '"event": *"tool_call"' "$t" | grep -vq '"tool_choice": *"none"'; then
        [ "$stack" = bare-livekit-google ] || echo "$n: the app runs it under tool choice none, which the Gemini SDKs cannot send (@google/genai's LiveConnectConfig has no toolConfig; LiveKit's Google plugin: \"toolChoice is not supported by the Google Realtime API\"): the guard cannot know it"
        continue
      fi ;;
    esac
    case "$stack" in guard-*)
      if grep -q '"commit": *"\(fail\|unknown\)"' "$t"; then
        echo "$n: its backend refuses a commit or learns its outcome late, which the tool helper cannot report (a commit phase that throws after COMMIT completes the job UNKNOWN, never FAILED; no way to report the outcome learned after the call was answered)"
        continue
      fi
      if grep -q '"event": *"transcript".*"reading"' "$t"; then
        echo "$n: the recorded app read the user's words itself (an agent reading), which an agent behind the guard has no way to report (the guard reports the transcripts)"
        continue
      fi
      case "$n" in photo_confirmed | photo_repeated_while_open | table_steps_together | table_steps_one_at_a_time)
        echo "$n: the confirmed run's commit is withheld for the delivery wait (the helper's Decide cannot declare the session's events delivered: the guard reports them, not the tool), so the model's recorded \"done\" comes first and the claim check's correction note goes; the guard vouching for delivery is a larger change"
        continue ;;
      esac ;;
    esac
    case "$stack:$n" in
      guard-livekit-google:readonly_progress)
        echo "$n: w1 (a read-only tool that reports progress) is never answered behind LiveKit's Google plugin; not explained yet" ;;
      guard-livekit-google:readonly_deadline_late_result)
        echo "$n: LiveKit's Google plugin never sends the tool's late result (after the guard's deadline answer), so the arbiter never learns it and its note cannot go" ;;
      guard-livekit-openai:readonly_blocking_interrupted | guard-livekit-openai:unknown_tool_passes | guard-livekit-openai:unknown_tool_rejected | guard-livekit-openai:several_tools)
        echo "$n: a live id is never answered behind LiveKit's OpenAI plugin (its restarts replay the trace on the same named session); not explained yet" ;;
    esac
  done
}

# wire_guard_run STACK DIR REDIS TARGETS TRACES TOOLS TOOLS_JSON: the stack behind its own
# guard (a serve with --proxy-listen and the policy TOOLS, on Redis when REDIS is set),
# against its own fake provider (TLS) playing TRACES; the agent declares every tool of
# TOOLS_JSON (the policy as JSON) and of the traces; its RPCs go to the guard's serve and
# TARGETS.
wire_guard_run() {
  local stack="$1" dir="$2" redis="$3" targets="$4" traces="$5" tools="$6" tools_json="$7"
  local fp sv addr guard arbiter code store=() t
  mkdir -p "$dir"
  wire_guard_narrowed "$stack" "$traces" >"$dir/narrowed.txt"
  if [ -s "$dir/narrowed.txt" ]; then # the set without them: the fake, the agent and the check read this folder
    mkdir -p "$dir/traces"
    for t in "$traces"/*.jsonl; do
      grep -q "^$(basename "$t" .jsonl): " "$dir/narrowed.txt" || ln -sf "$t" "$dir/traces/"
    done
    traces="$dir/traces"
  fi
  "$tmp/arbiter" fake-provider --trace "$traces" --record "$dir/rec.jsonl" --tls-self-signed "$dir/fake.pem" >"$dir/fake.log" 2>&1 &
  fp=$!
  addr="$(wire_addr "$dir/fake.log" $fp)"
  [ -n "$addr" ] || { cat "$dir/fake.log"; kill $fp 2>/dev/null; return 1; }
  [ -n "$redis" ] && store=(--redis-url "$redis")
  "$tmp/arbiter" serve --listen 127.0.0.1:0 --tools "$tools" "${store[@]}" --proxy-listen 127.0.0.1:0 \
    --proxy-gemini-upstream "wss://$addr" --proxy-openai-upstream "wss://$addr" --proxy-ca-file "$dir/fake.pem" \
    --proxy-tls-cert "$tmp/wire/guard.pem" --proxy-tls-key "$tmp/wire/guard.key" --log-level debug >"$dir/serve.log" 2>&1 &
  sv=$!
  for _ in $(seq 100); do
    guard="$(grep -o 'proxy_addr=[^ ]*' "$dir/serve.log" | head -1 | cut -d= -f2)"
    arbiter="$(sed -n 's/.*arbiter serving.* addr=\([^ ]*\).*/\1/p' "$dir/serve.log" | head -1)"
    [ -n "$guard" ] && [ -n "$arbiter" ] && break
    kill -0 $sv 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$guard" ] || { cat "$dir/serve.log"; kill $fp $sv 2>/dev/null; return 1; }
  cat "$tmp/wire/guard.pem" "$dir/fake.pem" >"$dir/ca.pem"
  (cd "$root/clients/node" && NODE_EXTRA_CA_CERTS="$dir/ca.pem" timeout 180 node "$wire_node/build/examples/wire-agent.js" --stack "$stack" \
    --provider "https://$guard" --arbiter "$arbiter${targets:+,$targets}" --traces "$traces" --tools "$tools_json" --backend-log "$dir/backend.jsonl") \
    >"$dir/agent.out" 2>"$dir/agent.err"
  code=$?
  kill -TERM $fp $sv 2>/dev/null
  wait $fp $sv 2>/dev/null
  return $code
}

# wire_guard_counts DIR: what the guard dropped and injected, summed over its connections.
wire_guard_counts() {
  /usr/bin/python3 - "$1/serve.log" <<'PY'
import re, sys
from collections import Counter
c = Counter()
for line in open(sys.argv[1], encoding="utf-8"):
    if "wire guard connection closed" in line:
        for k, v in re.findall(r'"([a-z][^"=]*)"=(\d+)', line):
            c[k] += int(v)
print("guard: " + (", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "nothing dropped or injected"))
PY
}

# wire_guard_verdict STACK CONFIG DIR CODE TRACES TOOLS: the check of one stack's run
# behind the guard (its summary line, the sessions the fake refused, the guard's counts).
wire_guard_verdict() {
  local stack="$1" config="$2" dir="$3" code="$4" traces="$5" tools="$6" rec="$3/rec.jsonl" verdict
  [ -d "$dir/traces" ] && traces="$dir/traces" # narrowed (wire_guard_narrowed)
  if [[ "$stack" == *livekit* ]]; then
    /usr/bin/python3 "$root/clients/e2e/first_sessions.py" "$dir/rec.jsonl" >"$dir/rec.first.jsonl" 2>>"$dir/check.out"
    rec="$dir/rec.first.jsonl"
  fi
  if [[ "$stack" == bare-* ]]; then
    mkdir -p "$dir/ref"
    local t n
    for t in "$traces"/*.jsonl; do
      n="$(basename "$t" .jsonl)"
      "$tmp/arbiter" replay --tools "$tools" "$t" >"$dir/ref/$n.gemini.jsonl" 2>/dev/null
      /usr/bin/python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l); e.pop("behavior",None) if e.get("event")=="tool_call" else None; print(json.dumps(e))' "$t" >"$dir/ref/$n.stripped.jsonl"
      "$tmp/arbiter" replay --tools "$tools" "$dir/ref/$n.stripped.jsonl" >"$dir/ref/$n.openai.jsonl" 2>/dev/null
    done
    /usr/bin/python3 "$root/clients/e2e/no_integration.py" --record "$rec" --reference-dir "$dir/ref" --backend-log "$dir/backend.jsonl" \
      --stack "$stack@$config" >>"$dir/check.out" 2>&1
  else
    "$tmp/arbiter" fake-provider check --record "$rec" --tools "$tools" \
      --backend-log "$dir/backend.jsonl" --stack "$stack@$config" "$traces" >>"$dir/check.out" 2>&1
  fi
  verdict=$?
  wire_guard_counts "$dir" >"$dir/counts.out"
  if [ "$verdict" != 0 ] || [ "$code" != 0 ]; then
    echo "stack exit code $code, checker exit code $verdict"
    cat "$dir/check.out"
    echo "--- agent stderr (last 40 lines)"
    tail -40 "$dir/agent.err"
    return 1
  fi
  grep -E "^$stack@$config: sessions |^skipped: " "$dir/check.out"
  sed 's/^/narrowed: /' "$dir/narrowed.txt"
  cat "$dir/counts.out"
}

# wire_guard_untranscribed_verdict CONFIG DIR CODE TRACES TOOLS: the check of
# guard-openai-realtime-untranscribed. `fake-provider check` judges the arbiter against
# what the wire carried (a session without transcription carries no words, and its
# reference commits too), so the run must also show the words went: the fake provider
# sent the user's transcripts (no "no input audio transcription" warning in its record)
# and the backend never committed (the user said stop).
wire_guard_untranscribed_verdict() {
  local config="$1" dir="$2"
  wire_guard_verdict guard-openai-realtime-untranscribed "$@" || return 1
  if grep -q "no input audio transcription" "$dir/rec.jsonl"; then
    echo "the provider sent no input transcription: the guard did not ask for it (the stop went unheard)"
    return 1
  fi
  if grep -q '"out": *"commit"' "$dir/backend.jsonl"; then
    echo "the backend committed the booking the user cancelled aloud:"
    grep '"out": *"commit"' "$dir/backend.jsonl"
    return 1
  fi
}

# wire_guard_checks [SET TRACES POLICY]: the Node stacks behind the guard (wire_guard_stacks)
# play the set (default: the recorded sessions under booking.yaml), embedded (all at once)
# and on the replicas (wire_guard_replica_sets: one stack at a time); with the traces set,
# the first seed (testdata/guard) too.
wire_guard_checks() {
  local set="${1:-traces}" traces="${2:-$root/testdata/traces}" policy="${3:-$root/testdata/tools/booking.yaml}"
  local t_all=$SECONDS config stack policy_json="$tmp/wire/guard-$set.policy.json" seed_json="$tmp/wire/guard-seed.policy.json"
  mkdir -p "$tmp/wire"
  wire_guard_cert "$tmp/wire" || die "openssl could not make the guard's certificate"
  wire_policy_json "$policy" "$policy_json"
  for config in embedded replicas; do
    if [ "$config" = replicas ] && [[ " $wire_guard_replica_sets " != *" $set "* ]]; then
      echo "wire guard set $set: replicas not played (WIRE_GUARD_REPLICA_SETS=\"$wire_guard_replica_sets\": the CI time budget, see the top of wire.sh)"
      continue
    fi
    local base="$tmp/wire/guard-$set-$config" t0=$SECONDS redis="" targets=""
    mkdir -p "$base"
    if [ "$config" = replicas ]; then
      wire_arbiters replicas "$base" "$policy"
      targets="$wire_target"
      redis="$wire_redis"
    fi
    echo "wire guard ($config, set $set)${targets:+: replicas $targets}"
    local run=() pids=() i codes=()
    for stack in $wire_guard_stacks; do
      run+=("$stack")
      if [ "$config" = embedded ]; then
        wire_guard_run "$stack" "$base/$stack" "" "" "$traces" "$policy" "$policy_json" &
        pids+=($!)
      else
        # One stack at a time on the shared Redis: every stack plays the same
        # traces, whose call ids would be one tenant's calls in several sessions,
        # which the call index refuses to guess between (ambiguous).
        wire_guard_run "$stack" "$base/$stack" "$redis" "$targets" "$traces" "$policy" "$policy_json"
        codes+=($?)
        local port="${redis##*:}" # the call index is the next stack's: its call ids are these again
        redis-cli -p "$port" --scan --pattern 'arb:c:*' | xargs -r redis-cli -p "$port" DEL >/dev/null
      fi
    done
    local seed_pid="" deaf_pid="" deaf_traces="$base/untranscribed-traces" deaf_json="$tmp/wire/guard-untranscribed.policy.json"
    if [ "$config" = embedded ] && [ "$set" = traces ] && { [ "${WIRE_GUARD_UNTRANSCRIBED:-}" = 1 ] || { [ -z "${WIRE_GUARD_STACKS:-}" ] && [ "${WIRE_GUARD_UNTRANSCRIBED:-}" != 0 ]; }; }; then
      # The agent asks for no transcription: the guard must, or the stop goes unheard.
      mkdir -p "$deaf_traces"
      ln -sf "$root/testdata/traces/A_on_run1.jsonl" "$root/testdata/traces/A_on_run1.golden" "$deaf_traces/"
      wire_policy_json "$root/testdata/guard/untranscribed.yaml" "$deaf_json"
      wire_guard_run guard-openai-realtime-untranscribed "$base/untranscribed" "" "" "$deaf_traces" "$root/testdata/guard/untranscribed.yaml" "$deaf_json" &
      deaf_pid=$!
    fi
    if [ "$config" = embedded ] && [ "$set" = traces ] && [ -z "${WIRE_GUARD_STACKS:-}" ]; then
      # The first seed: LiveKit drops a call it got on a toolChoice 'none' turn.
      wire_policy_json "$root/testdata/guard/seed_2249.yaml" "$seed_json"
      wire_guard_run bare-livekit-google "$base/seed" "" "" "$root/testdata/guard" "$root/testdata/guard/seed_2249.yaml" "$seed_json" &
      seed_pid=$!
    fi
    for i in "${!pids[@]}"; do
      wait "${pids[$i]}"
      codes[$i]=$?
    done
    local seed_code=0
    [ -n "$seed_pid" ] && { wait "$seed_pid"; seed_code=$?; }
    local deaf_code=0
    [ -n "$deaf_pid" ] && { wait "$deaf_pid"; deaf_code=$?; }
    echo "(set $set: ${#run[@]} stacks behind the guard, $config, $((SECONDS - t0))s)"
    if [ -n "$seed_pid" ]; then
      check "wire guard seed #2249@$config: LiveKit drops a toolChoice 'none' call; the guard answers it by its deadline, no Arbiter code" \
        wire_guard_verdict bare-livekit-google "$config" "$base/seed" "$seed_code" "$root/testdata/guard" "$root/testdata/guard/seed_2249.yaml"
      grep -E "^(bare-livekit-google@$config: sessions |guard: )" "$log" | sed 's/^/    /'
    fi
    if [ -n "$deaf_pid" ]; then
      check "wire guard guard-openai-realtime-untranscribed@$config: no input transcription asked for by the agent; the guard's is, and the stop is heard" \
        wire_guard_untranscribed_verdict "$config" "$base/untranscribed" "$deaf_code" "$deaf_traces" "$root/testdata/guard/untranscribed.yaml"
      grep -E "^(guard-openai-realtime-untranscribed@$config: sessions |guard: )" "$log" | sed 's/^/    /'
    fi
    for i in "${!run[@]}"; do
      stack="${run[$i]}"
      check "wire guard $set $stack@$config: one answer per live id upstream, no dead id, each note once, the reference's cancels" \
        wire_guard_verdict "$stack" "$config" "$base/$stack" "${codes[$i]}" "$traces" "$policy"
      grep -E "^($stack@$config: sessions |guard: )" "$log" | sed 's/^/    /'
      grep -E "^skipped: " "$log" | sed "s/^skipped: /    $stack@$config skipped: /"
      grep -E "^narrowed: " "$log" | sed "s/^narrowed: /    $stack@$config narrowed: /"
    done
    wire_stop
  done
  echo "(wire guard set $set: $((SECONDS - t_all))s)"
}

if [ -n "$wire_standalone" ]; then
  wire_set_dir="${wire_arg_traces:-$root/testdata/traces}"
  wire_set_policy="${wire_arg_policy:-$root/testdata/tools/booking.yaml}"
  [ -n "${WIRE_ONLY_GUARD:-}" ] || wire_checks "$(basename "$wire_set_dir")" "$wire_set_dir" "$wire_set_policy"
  [ -n "${WIRE_STACKS:-}" ] || [ -n "${WIRE_ONLY_GUARD:-}" ] || wire_py_guard_checks "$wire_set_dir" "$wire_set_policy"
  [ "${WIRE_GUARD:-1}" = 0 ] || wire_guard_checks "$(basename "$wire_set_dir")" "$wire_set_dir" "$wire_set_policy"
  echo "wire: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
fi
