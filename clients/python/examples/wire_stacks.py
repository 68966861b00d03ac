#!/usr/bin/env python3
"""The wire checks' runner for the Python stacks that speak through a real SDK or
framework: one model session per trace, all at once, each played by ``arbiter
fake-provider`` under ``PROVIDER/trace/NAME`` and driven by the stack's own file:

    --stack genai        stack_genai.py: google-genai's Live client, LiveAdapter in
                         ``session.receive()``'s loop
    --stack openai-sdk   stack_openai.py: openai's ``client.realtime.connect``,
                         RealtimeAdapter in its event loop

Each stack file has ``run(s: StackSession) -> bool`` (True once the model session ended
with its trace: the server closed with 1000 "end of trace", or refused a trace its
protocol cannot carry: 1008, see :meth:`StackSession.closed`; the stacks that reconnect
connect again on any other close). What the harness gives it
(:class:`StackSession`) is the trace's name and tools, the arbiter client, the session
id, the provider's base URL and the fake two-phase backend of ``wire_agent.py`` (the
same backend, clock and backend log as the raw-wire agent, so ``arbiter fake-provider
check`` judges every stack alike).

    python clients/python/examples/wire_stacks.py --stack genai --provider https://127.0.0.1:PORT \\
        --arbiter 127.0.0.1:50051 --traces testdata/traces --backend-log /tmp/backend.jsonl

``--arbiter`` may list replicas (``HOST:PORT,HOST:PORT``). TLS: the SDKs dial
``wss://``; trust the fake's certificate with ``SSL_CERT_FILE`` (google-genai, httpx and
websockets read it through the stack files). Exit code 0 once every session ended with
its trace, 1 if one failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import importlib
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Optional, TextIO

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # wire_agent.py and the stack files beside this one

from arbiter_client import AbortPrepare, Action, ArbiterClient, Cancel, Commit, Execute, SessionCore  # noqa: E402
from arbiter_client.tool import Cancelled, JobTaken, ToolJob  # noqa: E402
from wire_agent import (  # noqa: E402
    MAX_RECONNECTS,
    REFUSED,
    AgentLiveAdapter,
    AgentRealtimeAdapter,
    Backend,
    Clock,
    Tool,
    Trace,
    declared_tools,
    make_client,
    read_policy,
)

log = logging.getLogger("wire_stacks")

STACKS = {
    "genai": "stack_genai",
    "openai-sdk": "stack_openai",
    "livekit-google": "stack_livekit",
    "livekit-openai": "stack_livekit",
    "pipecat-google": "stack_pipecat",
    "pipecat-openai": "stack_pipecat",
    "agents": "stack_agents",
}


@dataclass
class StackSession:
    """What one stack session gets from the harness."""

    trace: Trace
    tools: Dict[str, Tool]
    client: ArbiterClient
    session_id: str
    base_url: str  # the provider's base URL for this trace (``.../trace/NAME``)
    backend: Backend
    clock: Clock
    args: argparse.Namespace
    sent: Dict[str, int] = field(default_factory=lambda: {"responses": 0, "interim": 0, "notes": 0})
    jobs: int = 0
    conn: int = 0  # the connections opened so far (the stack files that reconnect count them)
    ending: str = ""  # "end": the server closed at the trace's end; "refused": it refused the trace

    def closed(self, code: Optional[int], reason: Optional[str]) -> bool:
        """The model connection closed with ``code`` and ``reason``: True to connect
        again (the trace goes on: a goAway, a reconnect the trace asks for), False when
        the session is over (``ending`` says how: its end, or a refusal of a trace the
        protocol cannot carry, both of which the run counts as done)."""
        if code == 1000 and reason == "end of trace":
            self.ending = "end"
        elif code == 1008 and (reason or "").startswith(REFUSED):
            self.ending = "refused"
        elif self.conn <= MAX_RECONNECTS:
            return True
        return False

    def live_adapter(self, on_action: Callable[[Action], Awaitable[None]], **kw: Any) -> AgentLiveAdapter:
        """A ``LiveAdapter`` that registers each call with what the recorded app knew of
        it (its tool choice and business key: the trace's ``tool_call`` line), in the
        trace's time zone, with the recorded app's own readings of the user's words."""
        kw.setdefault("time_zone", self.trace.time_zone)
        kw.setdefault("read_transcript", self.trace.reader())
        a = AgentLiveAdapter(self.client, self.session_id, on_action, **kw)
        a.trace_calls = self.trace.calls
        return a

    def realtime_adapter(self, on_action: Callable[[Action], Awaitable[None]], **kw: Any) -> AgentRealtimeAdapter:
        """A ``RealtimeAdapter`` likewise (see :meth:`live_adapter`)."""
        kw.setdefault("time_zone", self.trace.time_zone)
        kw.setdefault("read_transcript", self.trace.reader())
        a = AgentRealtimeAdapter(self.client, self.session_id, on_action, **kw)
        a.trace_calls = self.trace.calls
        return a

    def end_ms(self) -> int:
        """The trace's ``end`` (ms after the greeting): when the fake provider closes
        the session. For the frameworks that take every close for an error and
        reconnect, with no event for it (Pipecat): the harness ends them past it."""
        end = 0
        with open(self.trace.path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    ev = json.loads(line)
                    if ev.get("event") == "end":
                        end = int(ev.get("t_ms", 0))
        return end

    def behavior(self, tool: str) -> str:
        """The behavior the recorded app declared for ``tool`` (else the policy's, else
        BLOCKING, Gemini's default)."""
        t = self.tools.get(tool)
        return self.trace.behaviors.get(tool) or (t.behavior if t and t.behavior else None) or "BLOCKING"

    def attach(self, adapter: SessionCore) -> None:
        """The adapter the backend reports to (prepared, committed, result, ...)."""
        self.backend.adapter = adapter

    def backend_action(self, a: Action) -> bool:
        """Hands the backend's actions (Execute, Commit, Cancel, AbortPrepare) to the fake
        backend; False for the others (what the model is sent)."""
        if isinstance(a, Execute):
            self.backend.execute(a)
        elif isinstance(a, (AbortPrepare, Cancel)):
            self.backend.release(a)
        elif isinstance(a, Commit):
            self.backend.commit(a)
        else:
            return False
        return True

    async def book_on_its_own(self, tool: str, call_id: str) -> Dict[str, Any]:
        """A tool with no arbiter in it, as a framework's own tool would run: it
        prepares (the trace's ``prepare_ms``) and commits at once, and returns the
        result. For the runs that show what a framework does on its own
        (``--on-its-own``); the backend log says what it executed."""
        self.jobs += 1
        job_id = f"job-{self.jobs}"
        self.backend.log("execute", job_id, call_id=call_id, tool=tool, side_effect=True)
        await asyncio.sleep(self.backend.spec(tool).get("prepare_ms", self.trace.prepare_ms) / 1000)
        self.backend.log("commit", job_id)
        return {"status": "committed", "result": self.backend.result()}

    async def book_through_arbiter(self, tool: str, call_id: str) -> Dict[str, Any]:
        """A two-phase tool behind the wire guard (issue 23): the job is the arbiter's,
        named by the call id the framework hands the tool (:class:`ToolJob`): prepare
        (the trace's ``prepare_ms``) while a CANCEL may abort it, commit only on COMMIT,
        release on CANCEL; returns the arbiter's payload for the call (the guard sends
        the arbiter's own answer upstream whatever the framework makes of it)."""
        try:
            return await self._two_phases(tool, call_id)
        except JobTaken as err:  # the call id again, its job another run's: nothing runs
            return {"status": "duplicate", "executed": False, "error": str(err)}

    async def _two_phases(self, tool: str, call_id: str) -> Dict[str, Any]:
        spec = self.backend.spec(tool, call_id)  # the trace's backend, per tool and per call
        async with ToolJob(self.client, call_id) as job:
            self.backend.log("execute", job.job_id, call_id=call_id, tool=tool, side_effect=True)
            try:
                await job.preparing(asyncio.sleep(spec.get("prepare_ms", self.trace.prepare_ms) / 1000))
            except Cancelled:
                self.backend.log("abort_prepare", job.job_id, reason="cancelled while preparing")
                return await job.cancelled()
            if await job.commit():
                self.backend.log("commit", job.job_id)
                return await job.committed(self.backend.result(spec))
            self.backend.log("cancel", job.job_id, reason="cancelled")
            return await job.cancelled()

    async def read_only(self, tool: str, call_id: str) -> Dict[str, Any]:
        """A read-only tool behind the wire guard: no arbiter code at all (the guard
        takes its answer as its result); it answers when the trace's backend says
        (``result_ms``; null: never, and the guard answers the call at its deadline)."""
        spec = self.backend.spec(tool, call_id)
        self.backend.log("execute", f"read-{call_id}", call_id=call_id, tool=tool, side_effect=False)
        if spec.get("result_ms", 0) is None:
            await asyncio.Event().wait()  # its result never comes
        await asyncio.sleep((spec.get("result_ms") or 0) / 1000)
        return dict(spec.get("result") or {"status": "ok"})

    async def book(self, tool: str, call_id: str) -> Dict[str, Any]:
        """The frameworks' tool body: through the arbiter for a side-effecting tool (a
        read-only one has no arbiter code), or ``--on-its-own``."""
        if self.args.on_its_own:
            return await self.book_on_its_own(tool, call_id)
        t = self.tools.get(tool)
        if t is not None and not t.side_effect:
            return await self.read_only(tool, call_id)
        return await self.book_through_arbiter(tool, call_id)

    async def finish(self, adapter: Optional[SessionCore]) -> None:
        """The model session is over: lets the commits in flight report (up to 5 s),
        closes the arbiter session, stops what is left of the backend."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while any(not t.get_name().startswith("prepare-") for t in self.backend.tasks) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        if adapter is not None:
            await adapter.close()
        for t in list(self.backend.tasks):
            t.cancel()
        await asyncio.gather(*self.backend.tasks, return_exceptions=True)


async def run_all(args: argparse.Namespace, run: Callable[[StackSession], Awaitable[bool]], traces: List[Trace],
                  tools: Dict[str, Tool]) -> int:
    async def one(tr: Trace, client: ArbiterClient, out: TextIO) -> bool:
        clock = Clock()
        s = StackSession(tr, tools, client, f"py-{args.stack}-{tr.name}-{os.getpid()}",
                         f"{args.provider.rstrip('/')}/trace/{tr.name}", Backend(tr, out, clock), clock, args)
        try:
            ok = await run(s)
        except Exception:
            log.exception("%s: the session failed", tr.name)
            ok = False
        print(json.dumps({"out": "session", "stack": args.stack, "trace": tr.name, "ended": s.ending or ok,
                          "connections": s.conn, **s.sent}), flush=True)
        return ok

    with open(args.backend_log, "w", encoding="utf-8") as out:
        async with make_client(args.arbiter) as client:
            ok = await asyncio.gather(*(one(tr, client, out) for tr in traces))
    failed = [tr.name for tr, good in zip(traces, ok, strict=True) if not good]
    print(json.dumps({"out": "summary", "stack": args.stack, "sessions": len(traces), "ended": len(traces) - len(failed),
                      "failed": failed}), flush=True)
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--stack", required=True, choices=sorted(STACKS))
    ap.add_argument("--provider", required=True, help="the model server's base URL (https:// for the SDKs)")
    ap.add_argument("--arbiter", required=True, help="the arbiter's address, or several replicas: HOST:PORT,HOST:PORT")
    ap.add_argument("--traces", required=True, help="a directory of traces (*.jsonl): one model session each")
    ap.add_argument("--backend-log", required=True, help="where the backend writes what it did (JSON lines)")
    ap.add_argument("--tools", help="the arbiter's tool policy (YAML): its tools are declared to the model too")
    ap.add_argument("--no-response-scheduling", action="store_true",
                    help="Gemini: do not let notes ride on NON_BLOCKING function responses")
    ap.add_argument("--on-its-own", action="store_true",
                    help="frameworks: tools with no arbiter in them (prepare, then commit at once): what the framework "
                         "does on its own")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    paths = sorted(glob.glob(os.path.join(args.traces, "*.jsonl"))) if os.path.isdir(args.traces) else [args.traces]
    if not paths:
        print(f"wire_stacks.py: no traces (*.jsonl) in {args.traces}", file=sys.stderr)
        return 2
    traces = [Trace.read(p) for p in paths]
    tools = declared_tools(traces, read_policy(args.tools) if args.tools else {})
    module: Any = importlib.import_module(STACKS[args.stack])
    return asyncio.run(run_all(args, module.run, traces, tools))


if __name__ == "__main__":
    sys.exit(main())
