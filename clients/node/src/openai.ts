import type { Action } from "./actions.js";
import type { ArbiterClient } from "./client.js";
import { SessionCore, together, type ActionHandler, type Behavior, type SessionCoreOptions } from "./core.js";

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
export type RealtimeClientEvent = { type: string; [field: string]: unknown };

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
export class RealtimeAdapter extends SessionCore {
  private readonly defaultBehavior: Behavior | null;
  private readonly connectOnCreated: boolean;
  private readonly seenCalls = new Set<string>(); // call ids reported
  private readonly callItems = new Map<string, string>(); // function_call item id -> call id
  private readonly itemNames = new Map<string, string>(); // function_call item id -> name
  private readonly clientDeletes = new Set<string>(); // item ids the client asked to delete
  private responseOpen = false;
  private speechDuringResponse = false; // speech_started while the response was in progress
  private responseWanted = false;
  private sender: ((ev: RealtimeClientEvent) => void) | undefined;

  /**
   * @param client the `ArbiterClient`.
   * @param sessionId the arbiter session id (one per conversation).
   * @param onAction called with each action, in order.
   */
  constructor(client: ArbiterClient, sessionId: string, onAction: ActionHandler, opts: RealtimeAdapterOptions = {}) {
    super(client, sessionId, onAction, opts);
    this.defaultBehavior = opts.defaultBehavior ?? null;
    this.connectOnCreated = opts.connectOnSessionCreated ?? true;
  }

  /**
   * Reports one server event (see the table on the class). Call it for each event as it
   * arrives, without awaiting; the promise resolves once its events were delivered and
   * what they made due handed out, and rejects with an event the arbiter refused.
   */
  feed(ev: RealtimeServerEventLike): Promise<void> {
    const ps: Promise<void>[] = [];
    switch (ev.type) {
      case "session.created":
        this.readToolChoice(ev.session);
        if (this.connectOnCreated) ps.push(this.reconnect(String(ev.session?.id || "conn")));
        break;
      case "session.updated":
        this.readToolChoice(ev.session);
        break;
      case "input_audio_buffer.speech_started":
        if (this.responseOpen) this.speechDuringResponse = true;
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
        this.speechDuringResponse = false;
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
        if (ev.item?.type === "function_call") this.noteItem(ev.item);
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
        const speech = this.speechDuringResponse;
        this.responseOpen = false;
        this.speechDuringResponse = false;
        if (bargeIn(ev.response?.status, ev.response?.status_details?.reason, speech)) ps.push(this.interrupted());
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
        if (this.clientDeletes.delete(ev.item_id)) break; // the client's own delete (a move): not a withdrawal
        const callId = this.callItems.get(ev.item_id);
        if (callId) ps.push(this.toolCallCancellation([callId]));
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
  async deliver(action: Action, send: (ev: RealtimeClientEvent) => void): Promise<boolean> {
    const raw = send;
    send = (ev) => {
      this.sent(ev);
      raw(ev);
    };
    this.sender = send;
    if (action.type === "sendFunctionResponse") {
      if (action.willContinue) return true;
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
      } else go();
      return true;
    }
    return false;
  }

  /**
   * A new connection (a new Realtime session): Connect (see {@link SessionCore.reconnect});
   * no response is in progress on it.
   */
  override reconnect(connectionId: string): Promise<void> {
    this.responseOpen = false;
    this.speechDuringResponse = false;
    this.responseWanted = false;
    return super.reconnect(connectionId);
  }

  /**
   * Tells the adapter about a client event sent on the socket (the application's own,
   * or its framework's: LiveKit's plugin deletes and re-creates items to move them).
   * Call it before the event goes out. A `conversation.item.delete` is the client's: the
   * server's `conversation.item.deleted` that echoes it is not a withdrawal. Others are
   * ignored.
   */
  sent(ev: { type?: string; item_id?: unknown }): void {
    if (ev.type === "conversation.item.delete" && typeof ev.item_id === "string") this.clientDeletes.add(ev.item_id);
  }

  private readToolChoice(session: { tool_choice?: unknown } | undefined): void {
    const choice = session?.tool_choice;
    if (choice !== undefined) this.toolChoice = choice === "none" ? "none" : "auto";
  }

  private respond(): void {
    if (this.responseOpen) this.responseWanted = true;
    else this.sender?.({ type: "response.create" });
  }

  private noteItem(item: { id?: string; call_id?: string; name?: string }): void {
    if (item.id && item.call_id) this.callItems.set(item.id, item.call_id);
    if (item.id && item.name) this.itemNames.set(item.id, item.name);
  }

  private call(callId: string | undefined, name: string | undefined, argText: string | undefined, itemId?: string): Promise<void> {
    if (!callId || this.seenCalls.has(callId)) return Promise.resolve();
    if (itemId) this.callItems.set(itemId, callId);
    this.seenCalls.add(callId);
    const tool = name ?? "";
    let args: Record<string, unknown> | undefined;
    let rawArgs: string | undefined;
    const text = argText ?? "";
    try {
      const parsed = text.trim() === "" ? {} : JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed;
      else rawArgs = text;
    } catch {
      rawArgs = text; // the arbiter rejects it: "its arguments could not be read"
    }
    const behavior = this.behaviors[tool] ?? this.defaultBehavior ?? undefined;
    return this.functionCall({ id: callId, name: tool, args, rawArgs, behavior });
  }
}

/**
 * Whether a `response.done` ends a response cut off by barge-in (see
 * {@link RealtimeAdapter}): `cancelled` with reason `turn_detected`, or `client_cancelled`
 * when `speechDuring` (input_audio_buffer.speech_started came while it was in progress).
 * The same rule as the fake provider's (fakeprovider.OpenAIBargeIn).
 */
export function bargeIn(status: unknown, reason: unknown, speechDuring: boolean): boolean {
  if (status !== "cancelled") return false;
  if (reason === "turn_detected") return true;
  return reason === "client_cancelled" && speechDuring;
}
