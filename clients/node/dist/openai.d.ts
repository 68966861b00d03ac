import type { Action } from "./actions.js";
import type { ArbiterClient } from "./client.js";
import { SessionCore, type ActionHandler, type Behavior, type SessionCoreOptions } from "./core.js";
/**
 * An OpenAI Realtime server event as it comes off the socket (GA or beta names): a plain
 * object with `type` and the snake_case fields of that type. The openai SDK's
 * `OpenAIRealtimeWS` `"event"` emits them; so does LiveKit's OpenAI plugin
 * (`openai_server_event_received`).
 */
export interface RealtimeServerEventLike {
    type: string;
    [field: string]: any;
}
/** A client event to send on the Realtime socket (`conversation.item.create`, `response.create`). */
export type RealtimeClientEvent = {
    type: string;
    [field: string]: unknown;
};
/**
 * Options of {@link RealtimeAdapter}: those of {@link SessionCore}, with `behaviors`
 * defaulting every tool to NON_BLOCKING (`defaultBehavior`).
 */
export interface RealtimeAdapterOptions extends SessionCoreOptions {
    /**
     * The behavior reported for a call of a tool `behaviors` does not name. Default
     * `"NON_BLOCKING"`: an OpenAI Realtime function call never blocks the conversation
     * (the model keeps listening and may speak while the call is open), and a barge-in
     * cancels the response, not the call: its `function_call` item stays in the
     * conversation and a `function_call_output` for its `call_id` is still read. So an
     * interrupted OpenAI call is not dropped by the server, and must not be abandoned (a
     * BLOCKING call would be: its id declared dead, never answered). `null`: report no
     * behavior and let the arbiter's tool policy decide.
     */
    defaultBehavior?: Behavior | null;
    /**
     * Report a Connect on each `session.created` (a new connection), with the session's
     * id as the connection id. Default true.
     */
    connectOnSessionCreated?: boolean;
}
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
export declare class RealtimeAdapter extends SessionCore {
    private readonly defaultBehavior;
    private readonly connectOnCreated;
    private readonly seenCalls;
    private readonly callItems;
    private readonly itemNames;
    private responseOpen;
    private responseWanted;
    private sender;
    /**
     * @param client the `ArbiterClient`.
     * @param sessionId the arbiter session id (one per conversation).
     * @param onAction called with each action, in order.
     */
    constructor(client: ArbiterClient, sessionId: string, onAction: ActionHandler, opts?: RealtimeAdapterOptions);
    /**
     * Reports one server event (see the table on the class). Call it for each event as it
     * arrives, without awaiting; the promise resolves once its events were delivered and
     * what they made due handed out, and rejects with an event the arbiter refused.
     */
    feed(ev: RealtimeServerEventLike): Promise<void>;
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
    deliver(action: Action, send: (ev: RealtimeClientEvent) => void): Promise<boolean>;
    private respond;
    private noteItem;
    private call;
}
