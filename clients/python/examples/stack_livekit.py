"""py-livekit-google / py-livekit-openai: a LiveKit Agents (Python, 1.8) ``AgentSession``
with the Google or OpenAI ``RealtimeModel`` plugin, run without a room (``vad=None``,
the realtime model's own turn detection, no audio I/O: the fake provider sends events,
never user audio), for one recorded session played by the fake provider
(``wire_stacks.py --stack livekit-google|livekit-openai`` runs it).

What LiveKit does on its own (read in its source, seen on the wire with
``--on-its-own``): it answers every function call, on purpose. A tool's return value
or raised error goes to the model as the call's output, ``StopResponse`` still sends an
empty one, an unknown tool is answered with an error text, and a call whose speech was
interrupted is answered anyway; Gemini's ``toolCallCancellation`` is only logged. Its
OpenAI plugin moves items by ``conversation.item.delete`` + ``create``. So behind the
wire guard (issue 23), and only there, are its answers held to one per live call id:
the guard drops what it must and sends the arbiter's answer. Its tools only ask
Decide/Complete by the call id LiveKit hands them (``ctx.function_call.call_id``).

Traps met here: the Google plugin takes a close of the socket, 1000 at the trace's end
included, for an error and reconnects (0.1 s later), so the session is closed on the
first such error; the OpenAI plugin appends ``/realtime`` only to a base URL whose path
is empty, ``/v1``, ``/openai`` or ``/openai/v1``: under the fake's ``/trace/NAME`` prefix
the URL is given whole (``.../v1/realtime``); the OpenAI plugin, too, reconnects when
the server closes (it reports only "connection closed unexpectedly"), and OpenAI has no
session resumption, so that ends the session as well.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Dict, List

from google.genai import types
from livekit.agents import Agent, AgentSession, APIConnectionError, RunContext, function_tool
from livekit.agents.llm import RealtimeModelError
from livekit.plugins import google, openai
from wire_stacks import StackSession

log = logging.getLogger("stack_livekit")


def tools(s: StackSession) -> List[Any]:
    """Every tool the harness declares, as a LiveKit raw function tool."""

    def make(name: str, parameters: Dict[str, Any]) -> Any:
        async def call(raw_arguments: Dict[str, object], ctx: RunContext) -> Any:
            return await s.book(name, ctx.function_call.call_id)  # the call id LiveKit hands the tool

        return function_tool(call, raw_schema={"name": name, "description": f"{name} (booking agent)",
                                               "parameters": parameters})

    return [make(t.name, t.parameters()) for t in s.tools.values()]


async def run(s: StackSession) -> bool:
    provider = "google" if s.args.stack.endswith("google") else "openai"
    ended = asyncio.Event()
    code: List[int] = []

    model: Any
    if provider == "google":
        model = google.realtime.RealtimeModel(
            api_key="fake-key", model="gemini-3.8-live", http_options=types.HttpOptions(base_url=s.base_url),
            input_audio_transcription=types.AudioTranscriptionConfig(),  # the user's words: without them no stop is read
            output_audio_transcription=types.AudioTranscriptionConfig(),
            tool_behavior=types.Behavior(s.behavior("book_slot")),
        )
    else:
        model = openai.realtime.RealtimeModel(api_key="fake-key", model="gpt-realtime",
                                              base_url=f"{s.base_url}/v1/realtime")  # whole: see the module doc
    session = AgentSession(llm=model, vad=None, turn_handling={"turn_detection": "realtime_llm"})  # no room, no VAD

    def on_error(ev: Any) -> None:
        err = getattr(ev, "error", None)
        if not isinstance(err, RealtimeModelError):
            return
        inner = err.error
        if getattr(inner, "code", None) == 1000:  # google-genai raises the close as APIError(code)
            code.append(1000)
            ended.set()
        elif isinstance(inner, APIConnectionError) and "closed" in str(inner):
            # The OpenAI plugin says only "connection closed unexpectedly" (1000 included)
            # and reconnects: a new socket is a new conversation, the session is over.
            code.append(1000)
            ended.set()
        elif not err.recoverable:
            ended.set()

    session.on("error", on_error)
    session.on("close", lambda _ev: ended.set())
    s.clock.start()
    await session.start(agent=Agent(instructions="You book appointment slots.", tools=tools(s)), record=False)
    await ended.wait()
    await session.aclose()
    await s.finish(None)
    return bool(code)
