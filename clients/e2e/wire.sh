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
#             (clients/python/examples/wire_agent.py)
# One process per stack plays every trace of the set concurrently, one session per trace
# under its /trace/NAME base URL, against its own `arbiter fake-provider --record FILE`,
# with every tool the policy names (and every tool a trace calls) declared and wrapped,
# each trace's backend, language and per-call tool choice, and a reconnect wherever the
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

wire_standalone=""
if ! declare -F check >/dev/null; then
  wire_standalone=1
  set -uo pipefail
  wire_arg_traces="${1:+$(realpath "$1")}" wire_arg_policy="${2:+$(realpath "$2")}" # before the cd
  cd "$(dirname "${BASH_SOURCE[0]}")/../.."
  root="$PWD"
  tmp="$(mktemp -d)"
  trap 'wire_stop; rm -rf "$tmp"' EXIT
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
  (cd clients/node && npm ci --no-audit --no-fund --loglevel=error && npx tsc -p tsconfig.test.json) >"$tmp/npm.log" 2>&1 || { cat "$tmp/npm.log"; die "npm ci / build failed"; }
fi

wire_node="$root/clients/node"
wire_py_agent="$root/clients/python/examples/wire_agent.py"
wire_python="${WIRE_PYTHON:-$([ -x "$tmp/venv/bin/python" ] && echo "$tmp/venv/bin/python" || echo /usr/bin/python3)}"
wire_stacks="${WIRE_STACKS:-node-genai node-openai-realtime node-livekit-google node-livekit-openai py-gemini py-openai}"
wire_pids=()

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

# wire_arbiters CONFIG DIR POLICY: starts the arbiter(s) of CONFIG; sets wire_target.
wire_arbiters() {
  local config="$1" dir="$2" policy="$3" addrs=() i
  if [ "$config" = replicas ]; then
    command -v redis-server >/dev/null || die "redis-server is needed for the replicas configuration"
    local port
    port="$(wire_free_port)"
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly yes --appendfsync always --dir "$dir" >"$dir/redis.log" 2>&1 &
    wire_pids+=($!)
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$port" ping >/dev/null 2>&1 || { cat "$dir/redis.log"; die "redis-server did not start"; }
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
  "$tmp/arbiter" fake-provider --trace "$traces" --record "$dir/rec.jsonl" "${tls[@]}" >"$dir/fake.log" 2>&1 &
  fp=$!
  local addr
  addr="$(wire_addr "$dir/fake.log" $fp)"
  [ -n "$addr" ] || { cat "$dir/fake.log"; kill $fp 2>/dev/null; return 1; }
  local common=(--provider "$scheme://$addr" --arbiter "$target" --traces "$traces" --backend-log "$dir/backend.jsonl")
  local node=(node "$wire_node/build/examples/wire-agent.js" "${common[@]}" --tools "$policy_json")
  local py=("$wire_python" "$wire_py_agent" "${common[@]}" --tools "$policy")
  case "$stack" in
    node-genai) cmd=("${node[@]}" --stack genai --response-scheduling) ;;
    node-openai-realtime) cmd=(env NODE_EXTRA_CA_CERTS="$dir/cert.pem" "${node[@]}" --stack openai-realtime) ;;
    node-livekit-google) cmd=("${node[@]}" --stack livekit-google) ;;
    node-livekit-openai) cmd=("${node[@]}" --stack livekit-openai) ;;
    py-gemini) cmd=("${py[@]}" --stack gemini) ;;
    py-openai) cmd=("${py[@]}" --stack openai) ;;
    *) echo "wire.sh: no stack named $stack" >&2; kill $fp 2>/dev/null; return 2 ;;
  esac
  (cd "$root/clients/node" && timeout 240 "${cmd[@]}") >"$dir/agent.out" 2>"$dir/agent.err"
  code=$?
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
  /usr/bin/python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])) or {}, sys.stdout)' "$policy" >"$policy_json" ||
    die "$policy: not a YAML tool policy (python3-yaml is needed)"
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

if [ -n "$wire_standalone" ]; then
  wire_set_dir="${wire_arg_traces:-$root/testdata/traces}"
  wire_checks "$(basename "$wire_set_dir")" "$wire_set_dir" "${wire_arg_policy:-$root/testdata/tools/booking.yaml}"
  echo "wire: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
fi
