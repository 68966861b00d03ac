"""py-agents: the OpenAI Agents SDK (openai-agents 0.24) ``RealtimeAgent`` run by a
``RealtimeRunner`` over its own WebSocket model, in its own environment (it wants
openai >= 3), for one recorded session played by the fake provider (``wire_stacks.py
--stack agents`` runs it).

What the Agents SDK does on its own (read in its source, seen on the wire with
``--on-its-own``): it runs each function call's tool and sends the tool's output as the
call's ``function_call_output``, followed by a ``response.create``; an error the tool
raises is sent as the output text. So behind the wire guard (issue 23) its tools ask
Decide/Complete by the call id it hands them (``ToolContext.tool_call_id``).

The session is closed past the trace's end (the SDK keeps the session open after the
server closes its socket). The model's URL is given whole (``model_config={"url": ...}``); websockets' default SSL
context trusts ``SSL_CERT_FILE`` (the fake's self-signed certificate).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, List

from agents import FunctionTool
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.tool_context import ToolContext
from wire_stacks import StackSession


def tools(s: StackSession) -> List[FunctionTool]:
    def make(name: str, parameters: Any) -> FunctionTool:
        async def invoke(ctx: ToolContext[Any], args: str) -> str:
            return json.dumps(await s.book(name, ctx.tool_call_id))

        return FunctionTool(name=name, description=f"{name} (booking agent)", params_json_schema=parameters,
                            on_invoke_tool=invoke, strict_json_schema=False)

    return [make(t.name, t.parameters()) for t in s.tools.values()]


async def run(s: StackSession) -> bool:
    agent = RealtimeAgent(name="booking", instructions="You book appointment slots.", tools=tools(s))
    runner = RealtimeRunner(starting_agent=agent)
    url = "wss" + f"{s.base_url}/v1/realtime?model=gpt-realtime".removeprefix("https")
    session = await runner.run(model_config={
        "api_key": "fake-key", "url": url,
        # the user's words: without them no stop can be read
        "initial_model_settings": {"input_audio_transcription": {"model": "gpt-4o-transcribe"}},
    })
    s.clock.start()
    async with session:
        async def end_past_the_trace() -> None:
            await asyncio.sleep(s.end_ms() / 1000 + 5)  # from before the first connection: a margin for its setup
            await session.close()

        ender = asyncio.ensure_future(end_past_the_trace())
        try:
            async for _event in session:  # the SDK runs the tools and sends their outputs itself
                pass
        finally:
            ender.cancel()
    await s.finish(None)
    return True
