"""Gemini Live on the raw wire: the BidiGenerateContent client messages an agent sends,
built from the adapter's actions.

For agents that speak the protocol themselves (JSON over a WebSocket, as
``examples/wire_agent.py`` does with python3-websockets) rather than through
google-genai: what the server sends goes to :meth:`LiveAdapter.feed
<arbiter_client.live.LiveAdapter.feed>` as the parsed JSON (camelCase field names are
read as they come), and what the actions say to send is built here, in the API's JSON
(camelCase, protobuf JSON):

- :func:`setup`: the first message: model, tools with their ``behavior``, input and
  output audio transcription on (the arbiter reads the user's words and the model's
  claims from them), session resumption;
- :func:`tool_response`: ``toolResponse.functionResponses`` from
  :class:`~arbiter_client.actions.SendFunctionResponse` actions: ``id``, ``name``,
  ``response``, plus ``scheduling`` when a note rides on the response (a NON_BLOCKING
  call, ``response_scheduling=True``) and ``willContinue: true`` for an interim result;
- :func:`client_content`: a note (:class:`~arbiter_client.actions.SendNote`) as a user
  turn.

The adapter hands out one response per live call id and none for a dead one
(:class:`~arbiter_client.actions.Skip`); these builders only shape them.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from .actions import SendFunctionResponse

__all__ = ["client_content", "function_declaration", "function_response", "gemini_schema", "setup", "tool_response"]


def gemini_schema(schema: Mapping[str, Any]) -> Dict[str, Any]:
    """A JSON Schema (lowercase ``type``, as OpenAI takes it) as Gemini's ``Schema``:
    the same, with ``type`` spelled as the API's enum (``OBJECT``, ``STRING``, ...)."""
    out: Dict[str, Any] = {}
    for k, v in schema.items():
        if k == "type" and isinstance(v, str):
            out[k] = v.upper()
        elif k == "properties" and isinstance(v, Mapping):
            out[k] = {p: gemini_schema(s) for p, s in v.items()}
        elif k == "items" and isinstance(v, Mapping):
            out[k] = gemini_schema(v)
        else:
            out[k] = v
    return out


def function_declaration(
    name: str,
    *,
    description: str = "",
    parameters: Optional[Mapping[str, Any]] = None,
    behavior: Optional[str] = None,
) -> Dict[str, Any]:
    """One ``FunctionDeclaration``. ``behavior`` (``"BLOCKING"``, the server's default,
    or ``"NON_BLOCKING"``) belongs to the declaration: Gemini's function calls do not
    carry it, so give the adapter the same (``behaviors={name: behavior}``)."""
    decl: Dict[str, Any] = {"name": name}
    if description:
        decl["description"] = description
    if parameters:
        decl["parameters"] = gemini_schema(parameters)
    if behavior:
        decl["behavior"] = behavior
    return decl


def setup(
    model: str,
    declarations: Sequence[Mapping[str, Any]],
    *,
    input_transcription: bool = True,
    output_transcription: bool = True,
    resumption: bool = True,
    resumption_handle: Optional[str] = None,
    modalities: Sequence[str] = ("AUDIO",),
    system_instruction: Optional[str] = None,
) -> Dict[str, Any]:
    """The ``setup`` message (the first a connection sends). ``declarations`` are
    :func:`function_declaration` results. With ``resumption`` the server sends
    ``sessionResumptionUpdate`` handles; reconnecting after a ``goAway`` with
    ``resumption_handle`` set continues the session (and the arbiter's session: call the
    adapter's ``connection_opened`` with the new connection's id)."""
    s: Dict[str, Any] = {"model": model, "generationConfig": {"responseModalities": list(modalities)}}
    if system_instruction:
        s["systemInstruction"] = {"parts": [{"text": system_instruction}]}
    if declarations:
        s["tools"] = [{"functionDeclarations": [dict(d) for d in declarations]}]
    if input_transcription:
        s["inputAudioTranscription"] = {}
    if output_transcription:
        s["outputAudioTranscription"] = {}
    if resumption or resumption_handle:
        s["sessionResumption"] = {"handle": resumption_handle} if resumption_handle else {}
    return {"setup": s}


def function_response(a: SendFunctionResponse) -> Dict[str, Any]:
    """One ``FunctionResponse`` for the action: ``scheduling`` only when it has one (a
    note rides on it), ``willContinue`` only for an interim result."""
    fr: Dict[str, Any] = {"id": a.id, "name": a.name, "response": dict(a.payload)}
    if a.scheduling:
        fr["scheduling"] = a.scheduling
    if a.will_continue:
        fr["willContinue"] = True
    return fr


def tool_response(responses: Union[SendFunctionResponse, Iterable[SendFunctionResponse]]) -> Dict[str, Any]:
    """The ``toolResponse`` message carrying these function responses (by call id)."""
    rs: List[SendFunctionResponse] = (
        [responses] if isinstance(responses, SendFunctionResponse) else list(responses)
    )
    return {"toolResponse": {"functionResponses": [function_response(a) for a in rs]}}


def client_content(text: str, *, turn_complete: bool = True) -> Dict[str, Any]:
    """A user turn with ``text`` (``clientContent``): how a note reaches the model.
    ``turn_complete=True`` makes the model answer it (and cuts a reply in progress: send
    a ``"when_idle"`` note after ``turnComplete``)."""
    return {"clientContent": {"turns": [{"role": "user", "parts": [{"text": text}]}], "turnComplete": turn_complete}}
