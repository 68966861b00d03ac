#!/usr/bin/env python3
"""Checks that a client example's replay of a trace has the outcome of the Go reference.

    compare.py REFERENCE CLIENT [--expect-stop] [--expect-abort] [--expect-riding-note]

REFERENCE is `arbiter replay --tools ... TRACE` output, CLIENT the output of
clients/{python,node}/examples/replay-booking for the same trace against a running
arbiter (JSON lines, shared/spec/trace-format.md). Times are not compared (the client
plays in real time, the reference on a virtual clock); outcomes are: the summary counts
(commits, cancels, double commits, calls, answered, skipped, unanswered ids), each
function response's call id and payload, each skipped id and its reason, and the notes
(text and delivery). The client must also answer each id at most once and never one it
skipped. --expect-stop: the session is one where the user stopped the booking, so
beyond matching the reference the client must have committed nothing, answered every
live id exactly once, and handed out exactly one status note. --expect-abort: the
decision came during the prepare, so the client must have aborted it (abort_prepare).
--expect-riding-note: the client ran with response scheduling (the reference cannot), so
each of the reference's notes must instead ride on one of the client's function
responses: its text under "status_note" in the payload, the response printed with a
scheduling (WHEN_IDLE or INTERRUPT), and no note sent as a user turn; the payloads
otherwise match the reference's.
Exit 0 when all hold, else 1 with the differences on stdout.
"""

import json
import sys

SUMMARY_KEYS = ("commits", "cancels", "double_commits", "calls", "answered", "skipped", "unanswered")


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip().startswith("{")]


def outcome(lines, problems, who, riders=None):
    """The outcome of a run. With riders (a list), notes riding on function responses are
    moved from the payloads to riders as (text, scheduling)."""
    responses, skips, notes, summary = {}, {}, [], None
    for line in lines:
        kind = line.get("out")
        if kind == "response":
            if line["call_id"] in responses:
                problems.append(f"{who}: {line['call_id']} answered twice")
            if line["call_id"] in skips:
                problems.append(f"{who}: {line['call_id']} answered after it was skipped")
            payload = dict(line["payload"])
            if riders is not None and "status_note" in payload:
                riders.append((payload.pop("status_note"), line.get("scheduling")))
            elif line.get("scheduling"):
                problems.append(f"{who}: {line['call_id']} has scheduling {line['scheduling']} but carries no note")
            responses[line["call_id"]] = payload
        elif kind == "skip":
            if line["call_id"] in responses:
                problems.append(f"{who}: {line['call_id']} skipped after it was answered")
            skips[line["call_id"]] = line["reason"]
        elif kind == "note":
            # The text must match; the delivery (now / when_idle) follows whether the
            # model was speaking at that instant, which real-time playback can flip when
            # the trace has the two events a millisecond apart (A_on_run1: the stop's
            # transcript at 8700 ms, model audio at 8701 ms). It must be one of the two.
            if line["deliver"] not in ("now", "when_idle"):
                problems.append(f"{who}: note with delivery {line['deliver']!r}")
            notes.append(line["text"])
        elif kind == "summary":
            summary = {k: line.get(k) for k in SUMMARY_KEYS}
    if summary is None:
        problems.append(f"{who}: no summary line")
    return responses, skips, sorted(notes), summary


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__)
        return 2
    problems = []
    ref = outcome(load(args[0]), problems, "reference")
    client_lines = load(args[1])
    riding = "--expect-riding-note" in argv
    riders = [] if riding else None
    got = outcome(client_lines, problems, "client", riders)
    responses, skips, notes, summary = got
    if riding:
        if got[2]:
            problems.append(f"expected no note sent as a user turn, got {got[2]}")
        if sorted(text for text, _ in riders) != ref[2]:
            problems.append(f"notes: reference {json.dumps(ref[2])}\n       riding on responses {json.dumps(riders)}")
        bad = [sched for _, sched in riders if sched not in ("WHEN_IDLE", "INTERRUPT")]
        if bad:
            problems.append(f"expected each riding note's response scheduled WHEN_IDLE or INTERRUPT, got {bad}")
        got = (got[0], got[1], ref[2], got[3])  # the notes were checked above
    for name, want, have in zip(("responses", "skips", "notes", "summary"), ref, got):
        if want != have:
            problems.append(f"{name}: reference {json.dumps(want, sort_keys=True)}\n{' ' * len(name)}  client    {json.dumps(have, sort_keys=True)}")
    if "--expect-stop" in argv and summary is not None:
        if summary["commits"] != 0 or any(line.get("out") == "commit" for line in client_lines):
            problems.append("expected no commit")
        # Corrections of what the model claimed ("System note: correction: ...") come
        # on top of the one status note about the cancelled job.
        status = [n for n in notes if not n.startswith("System note: correction:")]
        if len(status) + len(riders or []) != 1:
            problems.append(f"expected exactly one status note, got {len(status)} plus {len(riders or [])} riding on responses")
        if summary["unanswered"] or len(responses) + len(skips) != summary["calls"]:
            problems.append(f"expected every call answered once or skipped: {summary}")
    if "--expect-abort" in argv:
        kinds = [line.get("out") for line in client_lines]
        if "abort_prepare" not in kinds or "commit" in kinds:
            problems.append(f"expected the prepare to be aborted and nothing committed; client did: {kinds}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
