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
 * Options of {@link RealtimeAdapter}: those of {@link SessionCore}. An OpenAI function
 * call carries no behavior: a tool `behaviors` names reports that one, every other the
 * arbiter's tool policy's (`defaultBehavior`).
 */
export interface RealtimeAdapterOptions extends SessionCoreOptions {
    /**
     * The behavior reported for a call of a tool `behaviors` does not name. Default
     * `null`: none, the arbiter's tool policy decides (`behavior:` in the policy file;
     * NON_BLOCKING when it says nothing). What it decides is what a barge-in does to the
     * call (see the class: a BLOCKING call of a response cut off by barge-in is dead).
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
 * | `response.function_call_arguments.done`, `response.output_item.done` with a `function_call` item | `functionCall` once per `call_id` (whichever comes first); arguments that are not a JSON object go as `rawArgs`; the behavior is `behaviors`' or none (the tool policy's) |
 * | `response.done` cut off by barge-in (below) | `interrupted()` |
 * | `response.done` otherwise | `generationComplete()`, `turnComplete()` |
 * | `conversation.item.deleted` of a `function_call` item the client did not delete | `toolCallCancellation([call_id])`: the call left the conversation, no output can answer it |
 * | `session.created`, `session.updated` | `toolChoice` from the session's `tool_choice` (`"none"`: calls that come anyway are rejected) |
 *
 * **Barge-in.** A response is cut off by barge-in when its `response.done` says
 * `cancelled` with reason `turn_detected` (the server's voice activity detection), or
 * `client_cancelled` after `input_audio_buffer.speech_started` came while it was in
 * progress (the client's `response.cancel` for the user's speech, as LiveKit's plugin
 * and @openai/agents-realtime send). It is reported as `interrupted`, exactly as Gemini
 * Live's: its unanswered calls whose behavior is BLOCKING (the tool policy's, or
 * "abandon on barge-in") are dead, never answered and never run unless the model
 * issues them again; NON_BLOCKING ones stay live and are answered. The call's
 * `function_call` item stays in the conversation, but the response that issued it was
 * cut off and the user spoke over it: a side effect asked for there (an `end_call`)
 * must not run on its own. The rule is the fake provider's and its checker's too
 * (fakeprovider.OpenAIBargeIn, docs/fake-provider.md).
 *
 * **The client's own deletes.** Tell the adapter about every client event sent on the
 * socket with {@link sent} (its own {@link deliver} does): a `conversation.item.delete`
 * the client sent is not the server withdrawing a call, so the `conversation.item.deleted`
 * that echoes it is ignored (LiveKit's plugin moves items by delete + create).
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
    private readonly clientDeletes;
    private responseOpen;
    private speechDuringResponse;
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
    /**
     * A new connection (a new Realtime session): Connect (see {@link SessionCore.reconnect});
     * no response is in progress on it.
     */
    reconnect(connectionId: string): Promise<void>;
    /**
     * Tells the adapter about a client event sent on the socket (the application's own,
     * or its framework's: LiveKit's plugin deletes and re-creates items to move them).
     * Call it before the event goes out. A `conversation.item.delete` is the client's: the
     * server's `conversation.item.deleted` that echoes it is not a withdrawal. Others are
     * ignored.
     */
    sent(ev: {
        type?: string;
        item_id?: unknown;
    }): void;
    private readToolChoice;
    private respond;
    private noteItem;
    private call;
}
/**
 * Whether a `response.done` ends a response cut off by barge-in (see
 * {@link RealtimeAdapter}): `cancelled` with reason `turn_detected`, or `client_cancelled`
 * when `speechDuring` (input_audio_buffer.speech_started came while it was in progress).
 * The same rule as the fake provider's (fakeprovider.OpenAIBargeIn).
 */
export declare function bargeIn(status: unknown, reason: unknown, speechDuring: boolean): boolean;
