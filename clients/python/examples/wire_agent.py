#!/usr/bin/env python3
"""A booking agent on the raw wire: Gemini Live (BidiGenerateContent) or OpenAI
Realtime over python3-websockets, with the arbiter in its receive loop.

One model session per trace in ``--traces DIR`` (``*.jsonl``), all at once: each
connects to the model server at ``URL/trace/NAME/...`` (the fake provider plays that
trace on it: ``docs/fake-provider.md``), declares its tools (every tool of ``--tools``
and every tool the trace calls), reads every server message into the arbiter's adapter
(:class:`~arbiter_client.LiveAdapter` for Gemini, :class:`~arbiter_client.RealtimeAdapter`
for OpenAI) as it arrives, and sends the model exactly what the adapter's actions say: a
function response per live call id (Gemini ``toolResponse``, with ``scheduling`` when a
note rides on it and ``willContinue`` for an interim result; OpenAI a
``function_call_output`` item, then ``response.create``), none for a dead id, each note
once as a user turn (``"when_idle"`` ones after the model's turn). When the server closes
before the trace's end it connects again (Gemini with its resumption handle; OpenAI a new
session); a trace the fake refuses (its protocol cannot carry it: a close 1008 whose
reason starts "arbiter fake-provider: refused:") is reported skipped. A fake backend per
session does what the trace's ``backend`` says per tool and per call (prepare time,
commit ok / fail / unknown and its later resolution, a read-only result's time, value and
progress), asks Decide through the adapter, commits or cancels as decided; it writes one
JSON line per thing it did to ``--backend-log``::

    {"out": "execute" | "commit" | "resolved" | "cancel" | "abort_prepare", "job_id", "t_ms", "trace", ...}

``t_ms`` is the agent's clock since the model session started (the greeting). The trace
file is read for what the recorded app had, never for what the model does: its name,
language and backend (``session_start``), each tool's declared behavior (for Gemini: the
recorded calls', else the policy's, else NON_BLOCKING), and each call's tool choice,
business key and backend (the app's own knowledge of its calls).

    python3 clients/python/examples/wire_agent.py --stack gemini --provider ws://127.0.0.1:PORT \\
        --arbiter 127.0.0.1:50051 --traces testdata/traces --backend-log /tmp/backend.jsonl

``--arbiter`` may list several replicas (``HOST:PORT,HOST:PORT``, IPv4): every RPC is
then spread over them (gRPC round_robin). Exit code 0 once every session ended with its
trace (the server closed the socket), 1 if one failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import logging
import os
import ssl
import sys
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, List, Mapping, Optional, Set, TextIO, Tuple

try:
    import arbiter_client  # noqa: F401
except ImportError:  # not installed: run from the checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import grpc  # noqa: E402

try:
    from websockets.exceptions import ConnectionClosed  # noqa: E402
    from websockets.legacy.client import connect as ws_connect  # noqa: E402  (websockets.connect, 10.x)
except ImportError:  # pragma: no cover - a usage error, said plainly
    sys.exit("wire_agent.py: needs python3-websockets 10 (Debian: apt-get install -y python3-websockets)")

from arbiter_client import (  # noqa: E402
    USER_AGENT,
    AbortPrepare,
    Action,
    ArbiterClient,
    Cancel,
    Commit,
    Execute,
    LiveAdapter,
    RealtimeAdapter,
    SendFunctionResponse,
    SendNote,
    SessionCore,
    Skip,
)
from arbiter_client import live_wire, realtime  # noqa: E402
from arbiter_client.v1 import arbiter_pb2 as pb  # noqa: E402

log = logging.getLogger("wire_agent")

GEMINI_PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
OPENAI_PATH = "/v1/realtime"
#: How the fake provider's close reason starts when it refuses a trace its protocol
#: cannot carry (docs/fake-provider.md).
REFUSED = "arbiter fake-provider: refused:"
#: How many times a session connects again before it gives up.
MAX_RECONNECTS = 5


# --- the traces and the tools ----------------------------------------------------------


@dataclass
class Tool:
    """A function the agent declares to the model."""

    name: str
    properties: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    required: List[str] = field(default_factory=list)
    behavior: Optional[str] = None  # the policy's, if any
    # The policy marks it side-effecting, or it is the confirm tool (confirm_tool,
    # default confirm_action) of a side-effecting tool that asks first or has steps:
    # behind the wire guard such a tool runs through the helper, the others need no code.
    side_effect: bool = False

    def parameters(self) -> Dict[str, Any]:
        return {"type": "object", "properties": self.properties, "required": self.required}


@dataclass
class CallFacts:
    """What the recorded app knew about one of its calls (its ``tool_call`` line)."""

    tool: str
    tool_choice: Optional[str] = None
    business_key: Optional[str] = None
    backend: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Trace:
    """What the agent takes from a recorded session: its name, language and backend, the
    tools it calls, the behaviors the recorded app declared, and each call's facts."""

    name: str
    path: str
    prepare_ms: int = 4000
    language: Optional[str] = None
    time_zone: Optional[str] = None
    response_scheduling: bool = False
    backend: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    commit_result: Optional[Dict[str, Any]] = None
    behaviors: Dict[str, str] = field(default_factory=dict)
    tool_args: Dict[str, Dict[str, Any]] = field(default_factory=dict)  # tool -> args of a recorded call
    calls: Dict[str, CallFacts] = field(default_factory=dict)  # call id -> its facts
    readings: List[Tuple[str, Dict[str, Any]]] = field(default_factory=list)  # (text, reading) of transcript lines

    @classmethod
    def read(cls, path: str) -> "Trace":
        tr = cls(os.path.splitext(os.path.basename(path))[0], path)
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                ev = json.loads(line)
                if ev.get("event") == "session_start":
                    tr.prepare_ms = int(ev.get("prepare_ms", tr.prepare_ms))
                    tr.language = ev.get("language") or None
                    tr.time_zone = ev.get("time_zone") or None
                    tr.response_scheduling = ev.get("response_scheduling") is True
                    tr.backend = ev.get("backend") or {}
                    tr.commit_result = ev.get("commit_result")
                elif ev.get("event") == "transcript" and ev.get("reading") and ev.get("text"):
                    tr.readings.append((str(ev["text"]), dict(ev["reading"])))
                elif ev.get("event") == "tool_call":
                    tool = ev.get("tool", "")
                    if ev.get("behavior"):
                        tr.behaviors.setdefault(tool, ev["behavior"])
                    tr.tool_args.setdefault(tool, ev.get("args") or {})
                    if ev.get("call_id"):
                        tr.calls[ev["call_id"]] = CallFacts(tool, ev.get("tool_choice"), ev.get("business_key"),
                                                            ev.get("backend") or {})
        return tr

    def reader(self) -> Callable[[str, str], Optional[pb.AgentReading]]:
        """The recorded app's own reading of the user's words (the adapters'
        ``read_transcript``): a final transcript piece with the text of a ``transcript``
        line that has a ``reading`` gets that reading, each line's once, in order."""
        left = list(self.readings)

        def read(text: str, utterance_id: str) -> Optional[pb.AgentReading]:
            for i, (t, r) in enumerate(left):
                if t.strip() == text.strip():
                    del left[i]
                    return pb.AgentReading(intent=r.get("intent", ""), confidence=float(r.get("confidence", 0)),
                                           source=r.get("source", ""))
            return None

        return read


_JSON_TYPES = {str: "string", bool: "boolean", int: "number", float: "number", dict: "object", list: "array"}


def read_policy(path: str) -> Dict[str, Tool]:
    """The tools of an arbiter tool policy (YAML): names, key and step arguments as
    string parameters (required unless ``optional``), behavior."""
    try:
        import yaml  # Debian: python3-yaml
    except ImportError:
        sys.exit("wire_agent.py: --tools needs python3-yaml (Debian: apt-get install -y python3-yaml)")
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f) or {}
    tools: Dict[str, Tool] = {}
    for t in doc.get("tools") or []:
        tool = tools.get(str(t["name"])) or Tool(str(t["name"]))
        tool.behavior = t.get("behavior")
        tool.side_effect = tool.side_effect or bool(t.get("side_effect"))
        if t.get("side_effect") and (t.get("confirm") or t.get("steps")):
            confirm = str(t.get("confirm_tool") or "confirm_action")
            tools.setdefault(confirm, Tool(confirm)).side_effect = True
        for k in t.get("key") or []:
            tool.properties[str(k["arg"])] = {"type": "string"}
            if not k.get("optional"):
                tool.required.append(str(k["arg"]))
        for step in t.get("steps") or []:  # asked by the arbiter, so not required in the call
            tool.properties.setdefault(str(step["arg"]), {"type": "string"})
        tools[tool.name] = tool
    return tools


def declared_tools(traces: List[Trace], policy: Dict[str, Tool]) -> Dict[str, Tool]:
    """The policy's tools, plus every tool a trace calls (its parameters from the
    recorded arguments)."""
    tools = {n: Tool(t.name, dict(t.properties), list(t.required), t.behavior, t.side_effect) for n, t in policy.items()}
    for tr in traces:
        for name, args in tr.tool_args.items():
            tool = tools.setdefault(name, Tool(name))
            for arg, value in args.items():
                tool.properties.setdefault(arg, {"type": _JSON_TYPES.get(type(value), "string")})
    return tools


# --- the fake two-phase backend ----------------------------------------------------------


class Backend:
    """One session's backend: prepares, commits and cancels side-effecting jobs as the
    adapter's actions say, answers read-only ones, and logs what it did."""

    def __init__(self, trace: Trace, out: TextIO, clock: "Clock") -> None:
        self.trace = trace
        self.out = out
        self.clock = clock
        self.adapter: SessionCore
        self.prepares: Dict[str, asyncio.Task] = {}
        self.specs: Dict[str, Dict[str, Any]] = {}  # job id -> its backend
        self.tasks: Set[asyncio.Task] = set()
        self.commits = 0

    def log(self, kind: str, job_id: str, **fields: Any) -> None:
        line = {"out": kind, "job_id": job_id, "t_ms": self.clock.ms(), "trace": self.trace.name, **fields}
        self.out.write(json.dumps(line) + "\n")
        self.out.flush()

    def spec(self, tool: str, call_id: str = "") -> Dict[str, Any]:
        """The backend of a job of ``tool`` that call ``call_id`` opened: the tool's,
        with the call's over it (none given: the tool's)."""
        facts = self.trace.calls.get(call_id)
        return {**(self.trace.backend.get(tool) or {}), **(facts.backend if facts else {})}

    def spawn(self, coro: Awaitable[None], name: str) -> asyncio.Task:
        t = asyncio.ensure_future(coro)
        t.set_name(name)
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)
        return t

    def execute(self, a: Execute) -> None:
        self.log("execute", a.job_id, call_id=a.call.id, tool=a.tool, side_effect=a.side_effect)
        self.specs[a.job_id] = self.spec(a.tool, a.call.id)
        if a.side_effect:
            self.prepares[a.job_id] = self.spawn(self.prepare(a.job_id), f"prepare-{a.job_id}")
        else:
            self.spawn(self.run(a.job_id), f"run-{a.job_id}")

    async def prepare(self, job_id: str) -> None:
        ms = self.specs[job_id].get("prepare_ms", self.trace.prepare_ms)
        await asyncio.sleep(ms / 1000)  # the backend holds the slot: reversible
        self.prepares.pop(job_id, None)
        await self.adapter.prepared(job_id)

    def release(self, a: Any) -> None:
        task = self.prepares.pop(a.job_id, None)
        if task is not None:
            task.cancel()  # the prepare stops and releases what it held
        kind = "abort_prepare" if isinstance(a, AbortPrepare) else "cancel"
        self.log(kind, a.job_id, reason=a.reason, **({"error": str(a.error)} if a.error else {}))

    def commit(self, a: Commit) -> None:
        spec = self.specs.get(a.job_id, {})
        how = spec.get("commit", "ok")
        self.log("commit", a.job_id, **({"outcome": {"fail": "failed", "unknown": "unknown"}[how]} if how != "ok" else {}))
        self.spawn(self.commit_outcome(a.job_id, spec), f"commit-{a.job_id}")

    async def commit_outcome(self, job_id: str, spec: Mapping[str, Any]) -> None:
        how = spec.get("commit", "ok")
        if how == "fail":
            await self.adapter.failed(job_id, "the backend refused the commit")
        elif how == "unknown":
            await self.adapter.unknown(job_id)
            if spec.get("resolves_to"):
                await asyncio.sleep(int(spec.get("resolves_after_ms", 0)) / 1000)
                self.log("resolved", job_id, outcome=spec["resolves_to"])
                if spec["resolves_to"] == "committed":
                    await self.adapter.committed(job_id, self.result(spec))
                else:
                    await self.adapter.failed(job_id, "the backend reports the commit did not happen")
        else:
            await self.adapter.committed(job_id, self.result(spec))

    def result(self, spec: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """What a commit returns: the job's ``commit_result``, else the trace's, else a
        reference ``R-n``."""
        self.commits += 1
        if spec and spec.get("commit_result") is not None:
            return dict(spec["commit_result"])
        return dict(self.trace.commit_result) if self.trace.commit_result else {"reference": f"R-{self.commits}"}

    async def run(self, job_id: str) -> None:
        """A read-only tool: progress reports at ``progress_ms``, the result at
        ``result_ms`` (null: never)."""
        spec = self.specs[job_id]
        result_ms = spec.get("result_ms", 0)
        progress = list(spec.get("progress_ms") or [])
        start = asyncio.get_running_loop().time()
        for i, ms in enumerate(progress, 1):
            if result_ms is not None and ms >= result_ms:
                break
            await asyncio.sleep(max(0.0, start + ms / 1000 - asyncio.get_running_loop().time()))
            await self.adapter.progress(job_id, {"progress": f"{i}/{len(progress)}"})
        if result_ms is None:
            return
        await asyncio.sleep(max(0.0, start + result_ms / 1000 - asyncio.get_running_loop().time()))
        await self.adapter.result(job_id, spec.get("result") or {"status": "ok"})


class Clock:
    """The agent's time since its model session started (the greeting arrived)."""

    def __init__(self) -> None:
        self.t0: Optional[float] = None

    def start(self) -> None:
        if self.t0 is None:
            self.t0 = time.monotonic()

    def ms(self) -> int:
        return 0 if self.t0 is None else round((time.monotonic() - self.t0) * 1000)


# --- one model session ---------------------------------------------------------------


class Session:
    """One model session and its arbiter session; the provider-specific parts are
    :class:`GeminiSession` and :class:`OpenAISession`."""

    stack = ""

    def __init__(self, trace: Trace, tools: Dict[str, Tool], args: argparse.Namespace, client: ArbiterClient,
                 backend_log: TextIO) -> None:
        self.trace = trace
        self.tools = tools
        self.args = args
        self.clock = Clock()
        self.backend = Backend(trace, backend_log, self.clock)
        self.client = client
        self.session_id = f"py-{self.stack}-{trace.name}-{os.getpid()}"
        self.ws: Any = None  # the open connection
        self.conn = 0
        self.answered: Set[str] = set()
        self.dead: Set[str] = set()
        self.idle_notes: List[SendNote] = []
        self.waiting_notes: List[SendNote] = []  # due while no connection was up
        self.sent = {"responses": 0, "interim": 0, "notes": 0}
        self.ending = ""  # "end": the server closed at the trace's end; "refused": it refused the trace
        self.adapter: SessionCore = self.make_adapter()
        self.backend.adapter = self.adapter

    def make_adapter(self) -> SessionCore:
        raise NotImplementedError

    def url(self) -> str:
        base = self.args.provider.rstrip("/")
        if base.startswith("http"):
            base = "ws" + base[len("http"):]
        return f"{base}/trace/{self.trace.name}"

    def ssl(self) -> Optional[ssl.SSLContext]:
        if not self.args.provider.startswith(("wss:", "https:")):
            return None
        return ssl.create_default_context(cafile=self.args.ca_file)

    async def send(self, msg: Mapping[str, Any]) -> bool:
        """Sends one client message on the open connection; False (logged) when there
        is none any more (the server closed it: the trace ended, or a goAway)."""
        if self.ws is None:
            log.warning("%s: not sent, no connection: %s", self.trace.name, json.dumps(msg)[:200])
            return False
        try:
            await self.ws.send(json.dumps(msg))
            return True
        except ConnectionClosed:
            log.warning("%s: not sent, the connection closed: %s", self.trace.name, json.dumps(msg)[:200])
            return False

    async def on_action(self, a: Action) -> None:
        """Every action of the adapter, in order: quick; the backend's work goes to
        tasks."""
        if isinstance(a, Execute):
            self.backend.execute(a)
        elif isinstance(a, (AbortPrepare, Cancel)):
            self.backend.release(a)
        elif isinstance(a, Commit):
            self.backend.commit(a)
        elif isinstance(a, Skip):
            self.dead.add(a.id)  # never answered, ever
        elif isinstance(a, SendFunctionResponse):
            # The adapter hands out one final response per live id and none for a dead
            # one; this is the agent's own guard on the wire.
            if self.ws is None:
                # Between connections: the call was the closed connection's (the arbiter
                # declares it dead at the next Connect); the model holds none of it.
                log.warning("%s: a response for %s while no connection is up: not sent", self.trace.name, a.id)
                return
            if a.id in self.dead or a.id in self.answered:
                log.error("%s: a response for %s, which is %s: not sent", self.trace.name, a.id,
                          "dead" if a.id in self.dead else "answered already")
                return
            if not a.will_continue:
                self.answered.add(a.id)
            if await self.send_response(a):
                self.sent["interim" if a.will_continue else "responses"] += 1
        elif isinstance(a, SendNote):
            if self.ws is None:
                self.waiting_notes.append(a)  # sent once the next connection is set up
            elif a.when == "when_idle" and not self.idle():
                self.idle_notes.append(a)  # after the model's turn: a user turn now would cut it
            elif await self.send_note(a.text):
                self.sent["notes"] += 1

    async def flush_idle_notes(self) -> None:
        notes, self.idle_notes = self.idle_notes, []
        for n in notes:
            if await self.send_note(n.text):
                self.sent["notes"] += 1

    async def connected(self) -> None:
        """The connection's session is set up: the notes due meanwhile go now."""
        notes, self.waiting_notes = self.waiting_notes, []
        for n in notes:
            await self.on_action(n)

    def closed(self, code: Optional[int], reason: Optional[str]) -> bool:
        """The connection closed: True to connect again (the trace goes on), False when
        the session is over (its end, or a refusal: ``self.ending``)."""
        if code == 1000 and reason == "end of trace":
            self.ending = "end"
        elif code == 1008 and (reason or "").startswith(REFUSED):
            self.ending = "refused"
        elif self.conn <= MAX_RECONNECTS:
            return True
        return False

    def idle(self) -> bool:
        raise NotImplementedError

    async def send_response(self, a: SendFunctionResponse) -> bool:
        raise NotImplementedError

    async def send_note(self, text: str) -> bool:
        raise NotImplementedError

    async def run(self) -> str:
        """Plays the session; returns how it ended: "end", "refused", or "" (failed)."""
        try:
            await self.play()
        except Exception:  # noqa: BLE001 - reported, and the session counts as failed
            log.exception("%s: the session failed", self.trace.name)
            self.ending = ""
        finally:
            self.ws = None
            await self.finish()
        print(json.dumps({"out": "session", "stack": self.stack, "trace": self.trace.name, "ended": self.ending,
                          "connections": self.conn, **self.sent, "dead": len(self.dead)}), flush=True)
        return self.ending

    async def play(self) -> None:
        raise NotImplementedError

    async def finish(self) -> None:
        """The model session is over: lets commits in flight report (up to 5 s),
        closes the arbiter session (undecided jobs are cancelled), then stops what is
        left of the backend."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while any(not t.get_name().startswith("prepare-") for t in self.backend.tasks) and loop.time() < deadline:
            await asyncio.sleep(0.05)
        await self.adapter.close()
        for t in list(self.backend.tasks):
            t.cancel()
        await asyncio.gather(*self.backend.tasks, return_exceptions=True)


async def messages(ws: Any) -> AsyncIterator[Any]:
    """The connection's messages until it closes, however it closes (websockets raises
    for a close other than 1000/1001, such as the fake's 1008 refusal: the caller reads
    the close code and reason)."""
    try:
        async for raw in ws:
            yield raw
    except ConnectionClosed:
        return


class TraceCalls:
    """Mixin for an adapter: each call is registered with what the recorded app knew of
    it (its tool choice, its own business key)."""

    trace_calls: Optional[Dict[str, CallFacts]] = None  # call id -> its facts (Trace.calls)

    def function_call(self, call_id: str, name: str, args: Optional[Mapping[str, Any]] = None, **kw: Any) -> Any:
        facts = (self.trace_calls or {}).get(call_id)
        if facts is not None:
            kw.setdefault("tool_choice", facts.tool_choice)
            kw.setdefault("business_key", facts.business_key)
        return super().function_call(call_id, name, args, **kw)  # type: ignore[misc]


class AgentLiveAdapter(TraceCalls, LiveAdapter):
    pass


class AgentRealtimeAdapter(TraceCalls, RealtimeAdapter):
    pass


class GeminiSession(Session):
    """Gemini Live, BidiGenerateContent: JSON messages (the server's in binary frames)."""

    stack = "gemini"

    def make_adapter(self) -> SessionCore:
        # Gemini's calls do not carry their behavior: the adapter is told what the
        # setup declares (the recorded calls', else the policy's, else NON_BLOCKING).
        self.behaviors = {
            name: self.trace.behaviors.get(name) or tool.behavior or "NON_BLOCKING" for name, tool in self.tools.items()
        }
        self.speaking = False
        self.live = AgentLiveAdapter(self.client, self.session_id, self.on_action, behaviors=self.behaviors,
                                     response_scheduling=not self.args.no_response_scheduling or self.trace.response_scheduling,
                                     language=self.trace.language, time_zone=self.trace.time_zone,
                                     read_transcript=self.trace.reader())
        self.live.trace_calls = self.trace.calls
        return self.live

    def setup(self, handle: Optional[str]) -> Dict[str, Any]:
        decls = [live_wire.function_declaration(t.name, parameters=t.parameters(), behavior=self.behaviors[t.name])
                 for t in self.tools.values()]
        return live_wire.setup(self.args.model or "models/gemini-3.8-live", decls, resumption_handle=handle)

    def idle(self) -> bool:
        return not self.speaking

    async def send_response(self, a: SendFunctionResponse) -> bool:
        return await self.send(live_wire.tool_response(a))

    async def send_note(self, text: str) -> bool:
        return await self.send(live_wire.client_content(text))

    async def play(self) -> None:
        handle: Optional[str] = None
        while True:
            self.conn += 1
            url = f"{self.url()}{GEMINI_PATH}?key={self.args.api_key}"
            async with ws_connect(url, max_size=None, ssl=self.ssl()) as ws:
                # Connect is queued before the connection's first message is read: the
                # calls it makes are its own, and those of an earlier one die.
                self.adapter.connection_opened(f"{self.session_id}-c{self.conn}")
                await ws.send(json.dumps(self.setup(handle)))
                async for raw in messages(ws):
                    m = json.loads(raw)
                    self.live.feed(m)  # stamped and queued now; not awaited
                    if "setupComplete" in m:
                        self.clock.start()
                        self.ws = ws
                        await self.connected()
                    sru = m.get("sessionResumptionUpdate")
                    if sru and sru.get("resumable") and sru.get("newHandle"):
                        handle = sru["newHandle"]  # resume with it after a goAway
                    sc = m.get("serverContent") or {}
                    if sc.get("modelTurn") or sc.get("outputTranscription"):
                        self.speaking = True
                    if sc.get("turnComplete") or sc.get("interrupted"):
                        self.speaking = False
                        await self.flush_idle_notes()
                self.ws = None
                code, reason = ws.close_code, ws.close_reason
            log.info("%s: connection %d closed %s %r", self.trace.name, self.conn, code, reason)
            self.speaking = False
            if not self.closed(code, reason):
                return


class OpenAISession(Session):
    """OpenAI Realtime: JSON events in text frames."""

    stack = "openai"

    def make_adapter(self) -> SessionCore:
        # OpenAI calls carry no behavior: the tool policy's decides what a barge-in does
        # to a call (see arbiter_client.realtime).
        self.want_response = False
        self.rt = AgentRealtimeAdapter(self.client, self.session_id, self.on_action, language=self.trace.language,
                                       time_zone=self.trace.time_zone, read_transcript=self.trace.reader())
        self.rt.trace_calls = self.trace.calls
        return self.rt

    def idle(self) -> bool:
        return not self.rt.response_active

    async def respond(self) -> None:
        """Asks the model to answer what was added: now if no response is in progress,
        else once it is done (the server refuses a second one)."""
        if self.rt.response_active:
            self.want_response = True
        else:
            self.want_response = False
            await self.send(realtime.response_create())

    async def send(self, msg: Mapping[str, Any]) -> bool:
        self.rt.sent(msg)  # the adapter knows the client's own deletes
        return await super().send(msg)

    async def send_response(self, a: SendFunctionResponse) -> bool:
        ok = await self.send(realtime.function_call_output(a.id, a.payload))
        if ok:
            await self.respond()
        return ok

    async def send_note(self, text: str) -> bool:
        ok = await self.send(realtime.user_message(text))
        if ok:
            await self.respond()
        return ok

    async def play(self) -> None:
        model = self.args.model or "gpt-realtime"
        url = f"{self.url()}{OPENAI_PATH}?model={model}"
        headers = {"Authorization": f"Bearer {self.args.api_key}"}
        if self.args.openai_beta:
            headers["OpenAI-Beta"] = "realtime=v1"
        tools = [{"name": t.name, "parameters": t.parameters()} for t in self.tools.values()]
        while True:
            self.conn += 1
            async with ws_connect(url, max_size=None, ssl=self.ssl(), extra_headers=headers) as ws:
                # OpenAI has no resumption: each connection is a new Realtime session.
                self.adapter.connection_opened(f"{self.session_id}-c{self.conn}")
                async for raw in messages(ws):
                    ev = json.loads(raw)
                    self.rt.feed(ev)  # stamped and queued now; not awaited
                    typ = ev.get("type")
                    if typ == "session.created":
                        self.clock.start()
                        self.ws = ws
                        self.want_response = False
                        await self.send(realtime.session_update(tools, beta=self.args.openai_beta, language=self.trace.language))
                        await self.connected()
                    elif typ == "response.done":
                        await self.flush_idle_notes()
                        if self.want_response:
                            await self.respond()
                self.ws = None
                code, reason = ws.close_code, ws.close_reason
            log.info("%s: connection %d closed %s %r", self.trace.name, self.conn, code, reason)
            if not self.closed(code, reason):
                return


# --- main --------------------------------------------------------------------------------


def make_client(addrs: str) -> ArbiterClient:
    """One client for every session: one address, or several replicas with every RPC
    spread over them (round_robin)."""
    targets = [a.strip() for a in addrs.split(",") if a.strip()]
    opts = [("grpc.primary_user_agent", USER_AGENT)]
    if len(targets) == 1:
        return ArbiterClient(channel=grpc.aio.insecure_channel(targets[0], options=opts))
    channel = grpc.aio.insecure_channel("ipv4:" + ",".join(targets), options=opts + [("grpc.lb_policy_name", "round_robin")])
    return ArbiterClient(channel=channel)


async def run_all(args: argparse.Namespace, traces: List[Trace], tools: Dict[str, Tool]) -> int:
    kind = GeminiSession if args.stack == "gemini" else OpenAISession
    with open(args.backend_log, "w", encoding="utf-8") as out:
        async with make_client(args.arbiter) as client:
            sessions = [kind(tr, tools, args, client, out) for tr in traces]
            endings = await asyncio.gather(*(s.run() for s in sessions))
    failed = [s.trace.name for s, e in zip(sessions, endings) if not e]
    refused = [s.trace.name for s, e in zip(sessions, endings) if e == "refused"]
    print(json.dumps({"out": "summary", "stack": args.stack, "sessions": len(sessions),
                      "ended": len(sessions) - len(failed) - len(refused), "refused": refused, "failed": failed}), flush=True)
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stack", required=True, choices=["gemini", "openai"])
    ap.add_argument("--provider", required=True, help="the model server's base URL (ws://, wss://, http://, https://)")
    ap.add_argument("--arbiter", required=True, help="the arbiter's address, or several replicas: HOST:PORT,HOST:PORT")
    ap.add_argument("--traces", required=True, help="a directory of traces (*.jsonl): one model session each")
    ap.add_argument("--backend-log", required=True, help="where the backend writes what it did (JSON lines)")
    ap.add_argument("--tools", help="the arbiter's tool policy (YAML): its tools are declared to the model too")
    ap.add_argument("--model", help="model name (default models/gemini-3.8-live, gpt-realtime)")
    ap.add_argument("--api-key", default=os.environ.get("API_KEY", "x"), help="sent as the provider wants it (the fake ignores it)")
    ap.add_argument("--ca-file", help="trust this certificate for wss:// (fake-provider --tls-self-signed CERT)")
    ap.add_argument("--openai-beta", action="store_true", help="OpenAI beta protocol (OpenAI-Beta: realtime=v1)")
    ap.add_argument("--no-response-scheduling", action="store_true",
                    help="Gemini: do not let notes ride on NON_BLOCKING function responses")
    ap.add_argument("-v", "--verbose", action="store_true", help="log the connections and the adapter's retries")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    paths = sorted(glob.glob(os.path.join(args.traces, "*.jsonl"))) if os.path.isdir(args.traces) else [args.traces]
    if not paths:
        print(f"wire_agent.py: no traces (*.jsonl) in {args.traces}", file=sys.stderr)
        return 2
    traces = [Trace.read(p) for p in paths]
    tools = declared_tools(traces, read_policy(args.tools) if args.tools else {})
    return asyncio.run(run_all(args, traces, tools))


if __name__ == "__main__":
    sys.exit(main())
