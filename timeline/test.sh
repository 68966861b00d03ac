#!/usr/bin/env bash
# The timeline picture in a real browser: Debian's chromium, headless (installed
# with apt-get when missing, with fonts-dejavu-core, the font the labels are laid
# out for). scripts/test.sh runs it as one suite; run it alone from anywhere.
#
#   1. `arbiter replay --html` draws testdata/traces/C_on_run2.jsonl; Chromium loads
#      the file: no console message at all (no script error, no content security
#      policy violation: --enable-logging=stderr --v=1), and the DOM it dumps
#      (--dump-dom, after the page's script ran) shows what the replay printed:
#      every call id with its skip or response, the decision with its reason
#      beside it, in its hover title and in the decisions table, the note; and what
#      this session is known to hold: calls fc_1792165045038015411 (skipped,
#      abandoned) and fc_7334104368860656461 (answered cancelled), the job held by
#      abandonment and cancelled by the stop ("Actually, stop. Don't book it.").
#   2. The layout as Chromium drew it (timeline/testdata/layoutcheck.js, run in a
#      copy of the page): no label leaves the picture, overlaps another label of
#      its row or a shape, no label inside a span is wider than the span; for
#      C_on_run2 and every workflow (runs, reconnects, progress, unknown outcomes).
#   3. The same session on a live server: `arbiter serve --metrics-listen
#      --history-sample 1`, the trace replayed against it in real time (~15 s), and
#      its page at /debug/sessions/{id} loaded in Chromium: the same checks, and the
#      same story as the file's (call ids, dispositions and answers, the decision
#      and its reason, the hold, the utterances, the note; job ids without their
#      epoch).
#   4. Screenshots at 1400x700 of the file and of the live page, in the output
#      directory (printed at the end; TIMELINE_OUT to choose it). With
#      --update-docs the file's is copied to docs/timeline-C_on_run2.png, the one
#      the README shows.
# Exits non-zero on any failure, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."

update_docs=false
[ "${1:-}" = "--update-docs" ] && update_docs=true

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -q DejaVuSans; then
  echo "== installing chromium and fonts-dejavu-core (Debian packages)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi

OUT="${TIMELINE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/timeline.XXXXXX")}"
mkdir -p "$OUT"
CHECK=timeline/testdata/chromium_check.py
TRACE=testdata/traces/C_on_run2.jsonl
TOOLS=testdata/tools/booking.yaml
failed=0
serve_pid=""
# On exit: stop the server this script started, drop the binary and Chromium's
# profile; the pages, DOMs, logs and screenshots stay for a reviewer.
cleanup() {
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  rm -rf "$OUT/profile" "$OUT/arbiter"
}
trap cleanup EXIT

# chrome ARGS...: headless Chromium with a profile of its own (no sandbox: the pages
# are this repository's, and a container's root has none).
chrome() {
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --no-default-browser-check \
    --user-data-dir="$OUT/profile" "$@"
}

# check NAME CMD...: runs one check; a failure is counted, not fatal.
check() {
  local name="$1"
  shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; failed=$((failed + 1)); fi
}

# page_checks NAME URL REPLAY: console, DOM and screenshot of one page.
page_checks() {
  local name="$1" url="$2" replay="$3"
  chrome --enable-logging=stderr --v=1 --dump-dom "$url" >"$OUT/$name.dom.html" 2>"$OUT/$name.chromium.log" || true
  check "$name: no console message (script errors, policy violations)" python3 "$CHECK" console "$OUT/$name.chromium.log"
  check "$name: the DOM shows the replay's calls, decisions, reasons, skips, notes" \
    bash -c 'python3 "$0" dom "$1" "$2" >"$3"' "$CHECK" "$OUT/$name.dom.html" "$replay" "$OUT/$name.story"
  check "$name: the C_on_run2 call ids, skip, response, hold and cancel decision" python3 "$CHECK" expect "$OUT/$name.dom.html"
  chrome --screenshot="$OUT/timeline-$name.png" --window-size=1400,700 "$url" >/dev/null 2>&1 || true
  check "$name: screenshot $OUT/timeline-$name.png" python3 "$CHECK" png "$OUT/timeline-$name.png" 1400 700
}

echo "== building arbiter"
go build -o "$OUT/arbiter" ./cmd/arbiter

echo "== the file: arbiter replay --html"
"$OUT/arbiter" replay --tools "$TOOLS" --html "$OUT/C_on_run2.html" "$TRACE" >"$OUT/C_on_run2.replay.jsonl" 2>"$OUT/C_on_run2.replay.log"
page_checks C_on_run2 "file://$(realpath "$OUT/C_on_run2.html")" "$OUT/C_on_run2.replay.jsonl"

echo "== the layout as drawn"
layout() {
  local name="$1" html="$2"
  python3 "$CHECK" inject "$html" timeline/testdata/layoutcheck.js "$OUT/$name.layout.html"
  chrome --dump-dom "file://$(realpath "$OUT/$name.layout.html")" >"$OUT/$name.layout.dom.html" 2>/dev/null || true
  check "$name: labels within the picture, clear of each other and of shapes" python3 "$CHECK" layout "$OUT/$name.layout.dom.html"
}
layout C_on_run2 "$OUT/C_on_run2.html"
for t in testdata/workflows/*.jsonl; do
  n="$(basename "$t" .jsonl)"
  "$OUT/arbiter" replay --tools testdata/workflows/tools.yaml --html "$OUT/$n.html" "$t" >/dev/null 2>&1
  layout "$n" "$OUT/$n.html"
done

echo "== the live page: serve's /debug/sessions/{id}"
"$OUT/arbiter" serve --listen 127.0.0.1:0 --tools "$TOOLS" --metrics-listen 127.0.0.1:0 --history-sample 1 2>"$OUT/serve.log" &
serve_pid=$!
for _ in $(seq 100); do grep -q 'msg="arbiter serving"' "$OUT/serve.log" && break; sleep 0.1; done
grpc="$(sed -n 's/.*msg="arbiter serving" addr=\([^ ]*\).*/\1/p' "$OUT/serve.log")"
metrics="$(sed -n 's/.*msg="metrics serving" addr=\([^ ]*\).*/\1/p' "$OUT/serve.log")"
if [ -z "$grpc" ] || [ -z "$metrics" ]; then
  echo "FAIL serve did not start:"; cat "$OUT/serve.log"; exit 1
fi
session="timeline-C_on_run2-$$"
"$OUT/arbiter" replay --tools "$TOOLS" --target "$grpc" --session "$session" "$TRACE" >"$OUT/live.replay.jsonl" 2>"$OUT/live.replay.log"
page_checks live "http://$metrics/debug/sessions/$session" "$OUT/live.replay.jsonl"
check "the live page tells the file's story" diff -u "$OUT/C_on_run2.story" "$OUT/live.story"

if $update_docs; then
  cp "$OUT/timeline-C_on_run2.png" docs/timeline-C_on_run2.png
  echo "docs/timeline-C_on_run2.png updated"
fi
echo "screenshots: $OUT/timeline-C_on_run2.png $OUT/timeline-live.png"
if [ "$failed" -gt 0 ]; then
  echo "timeline/test.sh: $failed check(s) failed (output in $OUT)"
  exit 1
fi
echo "timeline/test.sh: every check passed"
