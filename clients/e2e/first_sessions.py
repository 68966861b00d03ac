#!/usr/bin/env python3
"""Keeps, of a fake provider's record, the first session of each trace.

    first_sessions.py REC.jsonl > FIRST.jsonl

LiveKit agents-js's plugins reconnect when the server closes the socket (the OpenAI
one at once), and the fake provider closes it at the trace's end: the reconnect, naming the
same trace, starts the trace again as a new session, which the agent leaves when its
conversation is over. That second session is not the recorded conversation; the
direct LiveKit stack closes its session before the plugin reconnects (its provider
tap), a stack at the framework's defaults (behind the wire guard) cannot, so its
record goes through this filter before `arbiter fake-provider check`. It prints how
many sessions it dropped on stderr.
"""

import json
import sys


def main() -> int:
    first = {}
    lines = []
    with open(sys.argv[1], encoding="utf-8") as f:
        for raw in f:
            if not raw.strip():
                continue
            line = json.loads(raw)
            trace, session = line.get("trace", ""), line.get("session", 0)
            if trace not in first or session < first[trace]:
                first[trace] = session
            lines.append((trace, session, raw))
    dropped = set()
    for trace, session, raw in lines:
        if session == first[trace]:
            sys.stdout.write(raw)
        else:
            dropped.add(session)
    print(f"first_sessions.py: dropped {len(dropped)} replayed session(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
