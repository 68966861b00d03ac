import type { ArbiterClient } from "./client.js";
import type { Action } from "./actions.js";
import { SessionCore, together, type ActionHandler, type SessionCoreOptions } from "./core.js";

export type { ActionHandler } from "./core.js";

/** A transcription piece (`Transcription`). */
export interface TranscriptionLike {
  text?: string;
  finished?: boolean;
}

/**
 * The fields of @google/genai's `LiveServerMessage` the adapter reads: a real
 * `LiveServerMessage` is one, and so is a plain object with the same camelCase fields.
 */
export interface LiveServerMessageLike {
  /** `type` on the wire (the Gemini Developer API's messages, which @google/genai passes
   * through unconverted); `voiceActivityType` once converted (its Vertex AI path). */
  voiceActivity?: { voiceActivityType?: string; type?: string };
  serverContent?: {
    modelTurn?: { parts?: Array<{ inlineData?: { mimeType?: string } }> };
    inputTranscription?: TranscriptionLike;
    interimInputTranscription?: TranscriptionLike;
    outputTranscription?: TranscriptionLike;
    interrupted?: boolean;
    generationComplete?: boolean;
    turnComplete?: boolean;
  };
  toolCall?: { functionCalls?: Array<{ id?: string; name?: string; args?: Record<string, unknown> }> };
  toolCallCancellation?: { ids?: string[] };
}

/**
 * Options of {@link LiveAdapter}: those of {@link SessionCore}; `behaviors` gives each
 * tool's `FunctionDeclaration.behavior` (Gemini's function calls do not carry it).
 */
export interface LiveAdapterOptions extends SessionCoreOptions {}

/**
 * What {@link LiveAdapter.deliver} sends on: @google/genai's Live `Session` is one (its
 * `sendToolResponse` and `sendClientContent`), and so is anything with the same two
 * methods taking the same camelCase objects.
 */
export interface LiveSessionLike {
  sendToolResponse(params: {
    functionResponses: Array<{ id?: string; name?: string; response?: Record<string, unknown>; scheduling?: any; willContinue?: boolean }>;
  }): void;
  sendClientContent(params: { turns?: any; turnComplete?: boolean }): void;
}

/**
 * Drives one arbiter session from one Gemini Live session's server messages: a thin
 * translator on {@link SessionCore}.
 *
 * {@link feed} maps each `LiveServerMessage`'s fields to the core's methods:
 * `voiceActivity` ACTIVITY_START / ACTIVITY_END to `voiceActivityStart` /
 * `voiceActivityEnd` (the kind is `voiceActivity.type` on the wire, as google-genai's
 * converters read it, python-genai `_VoiceActivity_from_mldev`: @google/genai passes the
 * Developer API's message through as it came, and names it `voiceActivityType` only on
 * its Vertex AI path; either is read); `serverContent`'s `interimInputTranscription` and
 * `inputTranscription` to `inputTranscript` (interim and final pieces), the first audio
 * `modelTurn` part of a turn to `modelOutputStart`, `outputTranscription` to
 * `outputTranscript`, `interrupted` (barge-in), `generationComplete`, `turnComplete`;
 * `toolCall.functionCalls` to `functionCall` (the behavior from `behaviors`);
 * `toolCallCancellation.ids` to `toolCallCancellation`.
 *
 * Everything else is the core's: the outbox that stamps each event and delivers it in
 * order with its `age`, the Decide contract, the Decide/Complete choreography of each job,
 * the Watch, the actions handed to `onAction` (each effect once per `seq`), and the rest
 * of the API (`prepared`, `committed`, `result`, `failed`, `unknown`, `progress`,
 * `reconnect`, `poll`, `flush`, `close`).
 */
export class LiveAdapter extends SessionCore {
  /**
   * @param client the `ArbiterClient`.
   * @param sessionId the arbiter session id (one per model connection), 1 to 128
   *   characters from `[A-Za-z0-9_.:-]`.
   * @param onAction called with each action, in order.
   */
  constructor(client: ArbiterClient, sessionId: string, onAction: ActionHandler, opts: LiveAdapterOptions = {}) {
    super(client, sessionId, onAction, opts);
  }

  /**
   * Reports one Live server message: each event in it is stamped now and queued for
   * delivery, in order (see {@link SessionCore}). Returns a promise that resolves once
   * they were delivered and what they made due was handed out; it rejects with an
   * `ArbiterError` if the arbiter refused one of them (the others are still delivered).
   * Retryable failures (UNAVAILABLE, a lost connection) are retried, not thrown.
   *
   * Call it for each message as it arrives (`onmessage: (m) => void arbiter.feed(m)`),
   * without chaining or awaiting there: waiting would hold the next messages back while
   * the arbiter is unreachable, and they would be stamped late. Not awaiting is safe: the
   * promise never counts as an unhandled rejection. Await it where waiting is wanted
   * (tests, a replay).
   */
  feed(msg: LiveServerMessageLike): Promise<void> {
    const ps: Promise<void>[] = [];
    const kind = msg.voiceActivity?.voiceActivityType ?? msg.voiceActivity?.type;
    if (kind === "ACTIVITY_START") ps.push(this.voiceActivityStart());
    else if (kind === "ACTIVITY_END") ps.push(this.voiceActivityEnd());
    const sc = msg.serverContent;
    if (sc) {
      // Gemini's input transcription arrives as pieces the arbiter appends to the
      // utterance: each is final (checked for stop intent); interim ones are not.
      ps.push(this.inputTranscript(sc.interimInputTranscription?.text, false));
      ps.push(this.inputTranscript(sc.inputTranscription?.text, true));
      if (sc.modelTurn?.parts?.some((p) => p.inlineData && (p.inlineData.mimeType ?? "audio").startsWith("audio"))) {
        ps.push(this.modelOutputStart());
      }
      ps.push(this.outputTranscript(sc.outputTranscription?.text));
      if (sc.interrupted) ps.push(this.interrupted());
      if (sc.generationComplete) ps.push(this.generationComplete());
      if (sc.turnComplete) ps.push(this.turnComplete());
    }
    for (const fc of msg.toolCall?.functionCalls ?? []) ps.push(this.functionCall({ id: fc.id, name: fc.name ?? "", args: fc.args }));
    const ids = msg.toolCallCancellation?.ids ?? [];
    if (ids.length > 0) ps.push(this.toolCallCancellation(ids));
    return together(ps);
  }

  /**
   * Sends what an action asks the model to be told, on the Live session, and returns true;
   * false for every other action (execute, commit, cancel, abortPrepare, skip, run: the
   * application's).
   *
   * - `sendFunctionResponse`: `sendToolResponse` with one function response (`id`, `name`,
   *   `response` = the payload; `scheduling` when a note rides on it; `willContinue:
   *   true` only for an interim one). At most one final response per id reaches here, and
   *   none for a dead id: the core sees to that.
   * - `sendNote`: a user turn, `sendClientContent({turns: [{role: "user", parts: [{text}]}],
   *   turnComplete: true})`; with `when: "when_idle"` only once the model is idle
   *   ({@link SessionCore.whenIdle}: its turn complete or a barge-in), so it never cuts a
   *   reply in half; the promise does not wait for that.
   *
   * Call it from `onAction` (`if (await arbiter.deliver(a, session)) return;`).
   */
  async deliver(action: Action, session: LiveSessionLike): Promise<boolean> {
    if (action.type === "sendFunctionResponse") {
      const fr: { id: string; name: string; response: Record<string, unknown>; scheduling?: string; willContinue?: boolean } = {
        id: action.id,
        name: action.name,
        response: action.payload,
      };
      if (action.scheduling) fr.scheduling = action.scheduling;
      if (action.willContinue) fr.willContinue = true;
      session.sendToolResponse({ functionResponses: [fr] });
      return true;
    }
    if (action.type === "sendNote") {
      const send = () => session.sendClientContent({ turns: [{ role: "user", parts: [{ text: action.text }] }], turnComplete: true });
      if (action.when === "when_idle" && !this.modelIdle) {
        // Not awaited: the actions after this one (and the outbox) must not wait for the turn.
        void this.whenIdle().then(send).catch((err) => this.log.error(`arbiter: sending a note: ${err}`));
      } else send();
      return true;
    }
    return false;
  }
}
