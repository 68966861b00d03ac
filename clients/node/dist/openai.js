import { SessionCore, together } from "./core.js";
/**
 * Drives one arbiter session from one OpenAI Realtime session's server events: a
 * translator on {@link SessionCore}, as {@link LiveAdapter} is for Gemini Live.
 *
 * {@link feed} maps each event to the core's methods:
 *
 * | server event | core |
 * |---|---|
 * | `session.created` | `reconnect(session.id)` (Connect; see `connectOnSessionCreated`) |
 * | `input_audio_buffer.speech_started` / `.speech_stopped` | `voiceActivityStart(item_id)` / `voiceActivityEnd(item_id)`: the item id names the utterance |
 * | `conversation.item.input_audio_transcription.completed` | `inputTranscript(transcript, true, item_id)` |
 * | `conversation.item.input_audio_transcription.delta` | `inputTranscript(delta, false, item_id)` (interim) |
 * | `response.output_audio.delta` (beta `response.audio.delta`) | `modelOutputStart()` (once per turn) |
 * | `response.output_audio_transcript.delta` (beta `response.audio_transcript.delta`) | `outputTranscript(delta)` |
 * | `response.function_call_arguments.done`, `response.output_item.done` with a `function_call` item | `functionCall` once per `call_id` (whichever comes first); arguments that are not a JSON object go as `rawArgs` |
 * | `response.done` `cancelled` | `interrupted()` (barge-in, or a `response.cancel`: the model's output was cut) |
 * | `response.done` otherwise | `generationComplete()`, `turnComplete()` |
 * | `conversation.item.deleted` of a `function_call` item | `toolCallCancellation([call_id])`: the call left the conversation, no output can answer it |
 *
 * {@link deliver} turns `sendFunctionResponse` into a `function_call_output` item and
 * `sendNote` into a user message item, each followed by `response.create` (sent once the
 * open response, if any, is done: the server refuses a second active response).
 */
export class RealtimeAdapter extends SessionCore {
    defaultBehavior;
    connectOnCreated;
    seenCalls = new Set(); // call ids reported
    callItems = new Map(); // function_call item id -> call id
    itemNames = new Map(); // function_call item id -> name
    responseOpen = false;
    responseWanted = false;
    sender;
    /**
     * @param client the `ArbiterClient`.
     * @param sessionId the arbiter session id (one per conversation).
     * @param onAction called with each action, in order.
     */
    constructor(client, sessionId, onAction, opts = {}) {
        super(client, sessionId, onAction, opts);
        this.defaultBehavior = opts.defaultBehavior === undefined ? "NON_BLOCKING" : opts.defaultBehavior;
        this.connectOnCreated = opts.connectOnSessionCreated ?? true;
    }
    /**
     * Reports one server event (see the table on the class). Call it for each event as it
     * arrives, without awaiting; the promise resolves once its events were delivered and
     * what they made due handed out, and rejects with an event the arbiter refused.
     */
    feed(ev) {
        const ps = [];
        switch (ev.type) {
            case "session.created":
                this.responseOpen = false;
                if (this.connectOnCreated)
                    ps.push(this.reconnect(String(ev.session?.id || "conn")));
                break;
            case "input_audio_buffer.speech_started":
                ps.push(this.voiceActivityStart(ev.item_id || undefined));
                break;
            case "input_audio_buffer.speech_stopped":
                ps.push(this.voiceActivityEnd(ev.item_id || undefined));
                break;
            case "conversation.item.input_audio_transcription.completed":
                ps.push(this.inputTranscript(ev.transcript, true, ev.item_id || undefined));
                break;
            case "conversation.item.input_audio_transcription.delta":
                ps.push(this.inputTranscript(ev.delta, false, ev.item_id || undefined));
                break;
            case "response.created":
                this.responseOpen = true;
                break;
            case "response.output_audio.delta":
            case "response.audio.delta":
                ps.push(this.modelOutputStart());
                break;
            case "response.output_audio_transcript.delta":
            case "response.audio_transcript.delta":
                ps.push(this.outputTranscript(ev.delta));
                break;
            case "response.output_item.added":
                if (ev.item?.type === "function_call")
                    this.noteItem(ev.item);
                break;
            case "response.function_call_arguments.done":
                ps.push(this.call(ev.call_id, ev.name ?? this.itemNames.get(ev.item_id), ev.arguments, ev.item_id));
                break;
            case "response.output_item.done":
                if (ev.item?.type === "function_call") {
                    this.noteItem(ev.item);
                    ps.push(this.call(ev.item.call_id, ev.item.name, ev.item.arguments, ev.item.id));
                }
                break;
            case "response.done": {
                this.responseOpen = false;
                if (ev.response?.status === "cancelled")
                    ps.push(this.interrupted());
                else {
                    ps.push(this.generationComplete());
                    ps.push(this.turnComplete());
                }
                if (this.responseWanted && this.sender) {
                    this.responseWanted = false;
                    this.sender({ type: "response.create" });
                }
                break;
            }
            case "conversation.item.deleted": {
                const callId = this.callItems.get(ev.item_id);
                if (callId)
                    ps.push(this.toolCallCancellation([callId]));
                break;
            }
        }
        return together(ps.length ? ps : [Promise.resolve()]);
    }
    /**
     * Sends what an action asks the model to be told, with `send` (the socket's, e.g.
     * `(e) => rt.send(e)`), and returns true; false for every other action (the
     * application's).
     *
     * - `sendFunctionResponse`: `conversation.item.create` with a `function_call_output`
     *   (`call_id`, `output` = the payload as JSON), then `response.create`. Interim
     *   responses (`willContinue`) have no OpenAI equivalent: nothing is sent (true).
     * - `sendNote`: `conversation.item.create` with a user `message` (`input_text`), then
     *   `response.create`; with `when: "when_idle"` once the model is idle.
     *
     * `response.create` goes at once when no response is open, else when the open one is
     * done (one for all that came meanwhile).
     */
    async deliver(action, send) {
        this.sender = send;
        if (action.type === "sendFunctionResponse") {
            if (action.willContinue)
                return true;
            send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: action.id, output: JSON.stringify(action.payload) } });
            this.respond();
            return true;
        }
        if (action.type === "sendNote") {
            const go = () => {
                send({ type: "conversation.item.create", item: { type: "message", role: "user", content: [{ type: "input_text", text: action.text }] } });
                this.respond();
            };
            if (action.when === "when_idle" && !this.modelIdle) {
                void this.whenIdle().then(go).catch((err) => this.log.error(`arbiter: sending a note: ${err}`));
            }
            else
                go();
            return true;
        }
        return false;
    }
    respond() {
        if (this.responseOpen)
            this.responseWanted = true;
        else
            this.sender?.({ type: "response.create" });
    }
    noteItem(item) {
        if (item.id && item.call_id)
            this.callItems.set(item.id, item.call_id);
        if (item.id && item.name)
            this.itemNames.set(item.id, item.name);
    }
    call(callId, name, argText, itemId) {
        if (!callId || this.seenCalls.has(callId))
            return Promise.resolve();
        if (itemId)
            this.callItems.set(itemId, callId);
        this.seenCalls.add(callId);
        const tool = name ?? "";
        let args;
        let rawArgs;
        const text = argText ?? "";
        try {
            const parsed = text.trim() === "" ? {} : JSON.parse(text);
            if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
                args = parsed;
            else
                rawArgs = text;
        }
        catch {
            rawArgs = text; // the arbiter rejects it: "its arguments could not be read"
        }
        const behavior = this.behaviors[tool] ?? this.defaultBehavior ?? undefined;
        return this.functionCall({ id: callId, name: tool, args, rawArgs, behavior });
    }
}
