"""py-pipecat-google / py-pipecat-openai: Pipecat (1.14) ``GeminiLiveLLMService`` or
``OpenAIRealtimeLLMService`` in a pipeline without a transport (context aggregators
around the service, no audio in or out: the fake provider sends events, never user
audio), for one recorded session played by the fake provider (``wire_stacks.py --stack
pipecat-google|pipecat-openai`` runs it).

What Pipecat does on its own (read in its source, seen on the wire with
``--on-its-own``): every function call is answered: a handler's result, an error text
for a handler that raised, an unknown tool or a timeout, and "CANCELLED" for a call
whose tool it cancelled on interruption (``cancel_on_interruption``); it ignores
Gemini's ``toolCallCancellation`` and ``goAway``, takes every close of the socket (1000
at a session's end included) for a connection error and reconnects with the resumption
handle, and re-sends earlier tool results after a reconnect. So its answers are held to
one per live call id only behind the wire guard (issue 23); its tools ask Decide/Complete
by the call id it hands them (``params.tool_call_id``), registered with
``cancel_on_interruption`` true only for a BLOCKING tool (which Pipecat then declares as
such to Gemini): a NON_BLOCKING job is the arbiter's to cancel on a stop, not Pipecat's on
any barge-in (with Pipecat's default the tool's task was cancelled mid-job behind the
guard, and the job failed: "failed" where the reference cancels).

The pipeline is ended (EndFrame) past the trace's end: Pipecat has no event for the
provider's close (it logs it and reconnects). Pipecat 1.14 does not load NLTK (its
sentence splitting no longer needs it): nothing is downloaded at run time.
"""

from __future__ import annotations

import asyncio
from typing import Any, List

from google.genai.types import HttpOptions
from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.frames.frames import EndFrame, LLMRunFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService
from pipecat.services.llm_service import FunctionCallParams
from pipecat.services.openai.realtime import events
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService
from pipecat.workers.runner import WorkerRunner
from wire_stacks import StackSession


def tools(s: StackSession) -> ToolsSchema:
    return ToolsSchema(standard_tools=[
        FunctionSchema(name=t.name, description=f"{t.name} (booking agent)", properties=t.properties, required=t.required)
        for t in s.tools.values()
    ])


async def run(s: StackSession) -> bool:
    schema = tools(s)
    llm: Any
    if s.args.stack.endswith("google"):
        llm = GeminiLiveLLMService(
            api_key="fake-key", http_options=HttpOptions(base_url=s.base_url),
            settings=GeminiLiveLLMService.Settings(model="gemini-3.8-live"),  # input transcription is on by default
        )
    else:
        llm = OpenAIRealtimeLLMService(
            api_key="fake-key", base_url="ws" + f"{s.base_url}/v1/realtime".removeprefix("http"),  # wss://: not https://
            settings=OpenAIRealtimeLLMService.Settings(model="gpt-realtime"),
            session_properties=events.SessionProperties(audio=events.AudioConfiguration(
                input=events.AudioInput(transcription=events.InputAudioTranscription()))),  # the user's words
        )

    async def call(params: FunctionCallParams) -> None:
        await params.result_callback(await s.book(params.function_name, params.tool_call_id))

    google = s.args.stack.endswith("google")
    for t, tool in s.tools.items():
        # Pipecat cancels a running tool on a barge-in (cancel_on_interruption, its default)
        # and declares the tool NON_BLOCKING to Gemini exactly when it does not. A
        # BLOCKING call dies at a barge-in (the arbiter abandons its job too); a
        # NON_BLOCKING one is the arbiter's to decide (a stop cancels it, a question does
        # not), so its tool must run on.
        behavior = s.behavior(t) if google else (tool.behavior or "NON_BLOCKING")  # OpenAI: the policy's
        if s.args.on_its_own:
            llm.register_function(t, call)  # Pipecat's defaults
        else:
            llm.register_function(t, call, cancel_on_interruption=behavior == "BLOCKING")
    context = LLMContext(tools=schema)
    aggregators = LLMContextAggregatorPair(context)
    worker = PipelineWorker(Pipeline([aggregators.user(), llm, aggregators.assistant()]), idle_timeout_secs=None)
    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    await worker.queue_frame(LLMRunFrame())
    s.clock.start()

    async def end_past_the_trace() -> None:
        await asyncio.sleep(s.end_ms() / 1000 + 5)  # from before the first connection: a margin for its setup
        await worker.queue_frame(EndFrame())

    ender = asyncio.ensure_future(end_past_the_trace())
    try:
        await runner.run()
    finally:
        ender.cancel()
    await s.finish(None)
    return True


__all__: List[str] = ["run"]
