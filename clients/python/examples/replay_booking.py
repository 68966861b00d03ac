#!/usr/bin/env python3
"""A booking agent that replays a recorded session against a running arbiter.

The trace (``testdata/traces/*.jsonl``, format ``shared/spec/trace-format.md``) is played
in real time: each event becomes the google-genai ``LiveServerMessage`` (as a dict) it
was recorded from and goes through :class:`arbiter_client.LiveAdapter`, while a fake
two-phase backend prepares (``prepare_ms`` from ``session_start``, default 4000),
commits and cancels as the adapter's actions say. It prints, one JSON object a line,
what the agent does and would send to the model::

    {"out": "execute" | "commit" | "cancel" | "abort_prepare", "t_ms", "job_id", ...}
    {"out": "response", "t_ms", "call_id", "payload"[, "scheduling"]}   # a function response
    {"out": "skip", "t_ms", "call_id", "reason"}        # never answered
    {"out": "note", "t_ms", "job_id", "text", "deliver"}
    {"out": "summary", "commits", "cancels", "double_commits", "calls", "answered", "skipped", "unanswered"}

``--response-scheduling`` configures the session so that notes may ride on function
responses (``scheduling`` is then printed with the response that carries one). The
summary has the fields of ``arbiter replay``'s. The adapter holds its Watch on the session
(the play is real time, so timer-made effects come when they are due, as in the
reference); ``--no-watch`` turns it off. Exit code 1 when a call id was left
unanswered or a business key was committed twice.

    /usr/bin/python3 examples/replay_booking.py --target 127.0.0.1:50051 ../../testdata/traces/C_on_run2.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter

try:
    import arbiter_client  # noqa: F401
except ImportError:  # not installed: run from the checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arbiter_client import (  # noqa: E402
    AbortPrepare,
    ArbiterClient,
    Cancel,
    Commit,
    Execute,
    LiveAdapter,
    SendFunctionResponse,
    SendNote,
    Skip,
)

AUDIO = {"model_turn": {"parts": [{"inline_data": {"mime_type": "audio/pcm;rate=24000", "data": b""}}]}}


def live_message(ev: dict) -> dict | None:
    """The LiveServerMessage (google-genai field names) a trace event was recorded from."""
    e = ev["event"]
    if e in ("speech_start", "speech_end"):
        kind = "ACTIVITY_START" if e == "speech_start" else "ACTIVITY_END"
        return {"voice_activity": {"voice_activity_type": kind}}
    if e == "transcript":
        return {"server_content": {"input_transcription": {"text": ev.get("text", ""), "finished": ev.get("final", True)}}}
    if e == "model_transcript":
        return {"server_content": {"output_transcription": {"text": ev.get("text", "")}}}
    if e == "model_audio_start":
        return {"server_content": AUDIO}
    if e in ("interrupted", "generation_complete", "turn_complete"):
        return {"server_content": {e: True}}
    if e == "tool_call":
        return {"tool_call": {"function_calls": [{"id": ev["call_id"], "name": ev["tool"], "args": ev.get("args", {})}]}}
    if e == "tool_call_cancellation":
        return {"tool_call_cancellation": {"ids": ev["call_ids"]}}
    return None  # session_start, end, ref_* and unknown events are not server messages


class BookingAgent:
    """The agent's side of the session: a fake two-phase backend plus the model socket
    (here: stdout)."""

    def __init__(
        self, events: list[dict], prepare_ms: int | None, speed: float, *, response_scheduling: bool = False,
        watch: bool = True,
    ) -> None:
        self.response_scheduling = response_scheduling
        self.watch = watch
        start = next((e for e in events if e["event"] == "session_start"), {})
        self.prepare_s = (prepare_ms if prepare_ms is not None else start.get("prepare_ms", 4000)) / 1000 / speed
        self.commit_result = start.get("commit_result")
        self.events, self.speed = events, speed
        self.calls = [e["call_id"] for e in events if e["event"] == "tool_call"]
        self.keys: dict[str, str] = {}
        self.prepares: dict[str, asyncio.Task] = {}
        self.tasks: set[asyncio.Task] = set()
        self.answered: set[str] = set()
        self.skipped: set[str] = set()
        self.commits: Counter[str] = Counter()
        self.cancels = 0
        self.t0 = 0.0
        self.adapter: LiveAdapter

    def out(self, kind: str, **fields) -> None:
        ms = round((asyncio.get_running_loop().time() - self.t0) * 1000 * self.speed)
        print(json.dumps({"out": kind, "t_ms": ms, **fields}), flush=True)

    def spawn(self, coro) -> None:
        t = asyncio.create_task(coro)
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    async def prepare(self, job_id: str) -> None:
        await asyncio.sleep(self.prepare_s)  # the backend holds the slot
        self.prepares.pop(job_id, None)
        await self.adapter.prepared(job_id)

    async def commit(self, job_id: str) -> None:
        self.commits[self.keys[job_id]] += 1
        n = sum(self.commits.values())
        result = self.commit_result or {"reference": f"R-{n}"}
        await self.adapter.committed(job_id, result)

    def on_action(self, a) -> None:
        """What the agent does with each action: quick, long work goes to tasks."""
        if isinstance(a, Execute):
            self.out("execute", call_id=a.call.id, job_id=a.job_id, side_effect=a.side_effect)
            self.keys[a.job_id] = a.business_key
            if a.side_effect:
                self.prepares[a.job_id] = asyncio.create_task(self.prepare(a.job_id))
            else:
                self.spawn(self.adapter.result(a.job_id, {"status": "ok"}))
        elif isinstance(a, (AbortPrepare, Cancel)):
            task = self.prepares.pop(a.job_id, None)
            if task is not None:
                task.cancel()  # abort the prepare: the backend releases the slot
            self.cancels += 1
            kind = "abort_prepare" if isinstance(a, AbortPrepare) else "cancel"
            self.out(kind, job_id=a.job_id, reason=a.reason, **({"error": str(a.error)} if a.error else {}))
        elif isinstance(a, Commit):
            self.out("commit", job_id=a.job_id, reason=a.reason)
            self.spawn(self.commit(a.job_id))
        elif isinstance(a, SendFunctionResponse):
            self.answered.add(a.id)
            sched = {"scheduling": a.scheduling} if a.scheduling else {}
            self.out("response", call_id=a.id, name=a.name, payload=a.payload, **sched)
        elif isinstance(a, Skip):
            self.skipped.add(a.id)
            self.out("skip", call_id=a.id, reason=a.reason)
        elif isinstance(a, SendNote):
            self.out("note", job_id=a.job_id, text=a.text, deliver=a.when)

    async def run(self, target: str, session_id: str) -> dict:
        async with ArbiterClient(target) as client:
            behaviors = {e["tool"]: e["behavior"] for e in self.events if e["event"] == "tool_call" and e.get("behavior")}
            self.adapter = LiveAdapter(
                client, session_id, self.on_action, behaviors=behaviors, response_scheduling=self.response_scheduling,
                watch=self.watch,
            )
            loop = asyncio.get_running_loop()
            self.t0 = loop.time()
            unanswered: list[str] | None = None
            for ev in self.events:
                await asyncio.sleep(max(0.0, self.t0 + ev["t_ms"] / 1000 / self.speed - loop.time()))
                if ev["event"] == "end":
                    unanswered = self.unanswered()
                    await self.adapter.close()
                    break
                msg = live_message(ev)
                if msg is not None:
                    # As a receive loop would: stamped and queued now, delivered in order by
                    # the adapter's outbox (not awaited: a slow delivery must not hold the
                    # next event back).
                    self.adapter.feed(msg)
            if unanswered is None:  # no `end`: let the jobs settle, then close
                for _ in range(300):
                    if not self.prepares and not self.tasks and not self.unanswered():
                        break
                    await asyncio.sleep(0.1)
                unanswered = self.unanswered()
                await self.adapter.close()
            while self.tasks:
                await asyncio.gather(*self.tasks, return_exceptions=True)
        doubles = sum(n - 1 for n in self.commits.values() if n > 1)
        summary = {
            "out": "summary", "commits": sum(self.commits.values()), "cancels": self.cancels,
            "double_commits": doubles, "calls": len(dict.fromkeys(self.calls)),
            "answered": len(self.answered), "skipped": len(self.skipped), "unanswered": unanswered,
        }
        print(json.dumps(summary), flush=True)
        return summary

    def unanswered(self) -> list[str]:
        return [c for c in dict.fromkeys(self.calls) if c not in self.answered and c not in self.skipped]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="a trace file (JSON lines)")
    ap.add_argument("--target", default="127.0.0.1:50051", help="the arbiter's address")
    ap.add_argument("--session", help="arbiter session id (default: from the trace name and pid)")
    ap.add_argument("--prepare-ms", type=int, help="fake backend prepare time (overrides the trace)")
    ap.add_argument("--speed", type=float, default=1.0, help="play this many times faster (timeouts stay real)")
    ap.add_argument("--response-scheduling", action="store_true", help="let notes ride on function responses")
    ap.add_argument("--no-watch", action="store_true", help="no Watch on the session (replies only)")
    args = ap.parse_args()
    with open(args.trace, encoding="utf-8") as f:
        events = [json.loads(line) for line in f if line.strip()]
    name = os.path.splitext(os.path.basename(args.trace))[0]
    session = args.session or f"py-{name}-{os.getpid()}"
    agent = BookingAgent(events, args.prepare_ms, args.speed, response_scheduling=args.response_scheduling,
                         watch=not args.no_watch)
    summary = asyncio.run(agent.run(args.target, session))
    return 1 if summary["unanswered"] or summary["double_commits"] else 0


if __name__ == "__main__":
    sys.exit(main())
