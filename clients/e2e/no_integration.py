#!/usr/bin/env python3
"""Judges a no-integration run: an agent whose tools hold no Arbiter code at all,
only its provider base URL changed to the wire guard's.

    no_integration.py --record REC.jsonl --reference-dir DIR --backend-log LOG --stack NAME

DIR holds, per trace NAME, NAME.gemini.jsonl and NAME.openai.jsonl: `arbiter replay`'s
output for the trace (the OpenAI one with every call's behavior left to the policy, as
`fake-provider check` makes it). Without the helper nothing is two-phase: the tool runs
at once and what it answers is its own word, so statuses, notes and commits are not
the reference's and are not judged. What is, per session (the first of each trace):

- every live call id (the reference answers it) was answered exactly once upstream;
- no dead id was answered once dead: after the reference's skip (a tool with no two
  phases may answer a call before the barge-in that would have killed it: then it was
  live, and is answered once), interim responses included;
- no call the reference answers as a duplicate (or rejects) ran: the tool's log (the
  backend log's `execute` lines with `call_id`) never names one;
- a call the agent never answered (the seed: a framework that drops a call) was
  answered all the same.

A call id is the trace's own: a set may reuse short ids ("c1") across its traces, so
what the tool ran is read per trace (the backend log's `trace`). A session the fake
provider refused (its trace's protocol cannot carry it: a `refused` record line) is not
judged; it is reported as `fake-provider check` reports it:
`skipped: session N (TRACE, PROTO): refused by the fake provider: REASON`.

It prints one summary line, `STACK: sessions N, responses N, dead ids answered N,
duplicates executed N, never run by the agent N, answered at the deadline N, skipped N`,
the skipped lines and MISMATCH lines; exit 1 on any mismatch.
"""

import argparse
import json
import os
import sys
from collections import defaultdict


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        for raw in f:
            raw = raw.strip()
            if raw:
                yield json.loads(raw)


def responses(line):
    """(call id, final, status) of each function response in a client message."""
    m = line.get("msg") or {}
    if not isinstance(m, dict):
        return
    tr = m.get("toolResponse") or m.get("tool_response") or {}
    for fr in tr.get("functionResponses") or tr.get("function_responses") or []:
        yield fr.get("id"), not (fr.get("willContinue") or fr.get("will_continue")), (fr.get("response") or {}).get("status")
    if m.get("type") == "conversation.item.create":
        item = m.get("item") or {}
        if item.get("type") == "function_call_output":
            try:
                status = json.loads(item.get("output") or "{}").get("status")
            except (ValueError, AttributeError):
                status = None
            yield item.get("call_id"), True, status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", required=True)
    ap.add_argument("--reference-dir", required=True)
    ap.add_argument("--backend-log", required=True)
    ap.add_argument("--stack", required=True)
    a = ap.parse_args()
    sessions = defaultdict(list)
    first = {}
    for line in read_lines(a.record):
        tr, s = line.get("trace"), line.get("session")
        if tr not in first or s < first[tr]:
            first[tr] = s
        sessions[s].append(line)
    executed = defaultdict(set)  # trace -> the call ids its tools ran
    if os.path.exists(a.backend_log):
        for line in read_lines(a.backend_log):
            if line.get("out") == "execute" and line.get("call_id"):
                executed[line.get("trace")].add(line["call_id"])
    bad, skipped = [], []
    n = answers = dead_answered = dup_ran = silent = deadline = 0
    for trace, s in sorted(first.items()):
        lines = sessions[s]
        proto = lines[0].get("proto", "gemini")
        refused = next((line for line in lines if line.get("kind") == "refused"), None)
        if refused is not None:
            skipped.append(f"session {s} ({trace}, {proto}): refused by the fake provider: {refused.get('text', '')}")
            continue
        ref_path = os.path.join(a.reference_dir, f"{trace}.{proto}.jsonl")
        live, dead, not_run = set(), {}, set()
        for r in read_lines(ref_path):
            if r.get("out") == "response" and r.get("final", True) is not False:
                live.add(r["call_id"])
            elif r.get("out") == "skip":
                dead[r["call_id"]] = r.get("t_ms", 0)
            elif r.get("out") == "call" and r.get("disposition") in ("duplicate", "reject", "run"):
                not_run.add(r["call_id"])
        for cid in live:
            dead.pop(cid, None)
        n += 1
        got = defaultdict(int)
        for line in lines:
            if line.get("kind") != "client":
                continue
            for cid, final, status in responses(line):
                if final and status == "timeout":
                    deadline += 1
                if cid in dead and line.get("t_ms", 0) < dead[cid]:
                    live.add(cid)  # answered while live: the tool answered before the barge-in
                    del dead[cid]
                if final:
                    got[cid] += 1
                if cid in dead:
                    dead_answered += 1
                    bad.append(f"{trace}: dead id {cid} answered at {line.get('t_ms')} ms, after it died at {dead[cid]} ms")
        for cid in sorted(live):
            answers += got[cid]
            if got[cid] != 1:
                bad.append(f"{trace}: live id {cid} answered {got[cid]} times, want once")
        ran = executed[trace]
        for cid in sorted(not_run & ran):
            dup_ran += 1
            bad.append(f"{trace}: {cid} ran, but the arbiter answers it itself (duplicate or rejected)")
        for cid in sorted(live - ran - not_run):
            silent += 1  # answered though the agent never ran it (the guard's deadline)
    print(f"{a.stack}: sessions {n}, responses {answers}, dead ids answered {dead_answered}, duplicates executed {dup_ran}, "
          f"never run by the agent {silent}, answered at the deadline {deadline}, skipped {len(skipped)}")
    for k in skipped:
        print("skipped: " + k)
    for b in bad:
        print("MISMATCH: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
