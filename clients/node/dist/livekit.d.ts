import { llm, voice } from "@livekit/agents";
import type { ArbiterClient } from "./client.js";
import type { ActionHandler, SessionCore, SessionCoreOptions } from "./core.js";
import { LiveAdapter, type LiveServerMessageLike } from "./live.js";
import { RealtimeAdapter } from "./openai.js";
/**
 * The two phases of a side-effecting tool. `prepare` does the slow, reversible part
 * (hold the slot) and resolves when done; `commit` performs the side effect once Arbiter
 * says so and resolves with its result (a booking reference), which goes into the
 * function response; `release` lets go of a prepare that will not be committed (`how`:
 * `"abortPrepare"` while it still runs, its `signal` aborted too; `"cancel"` after it).
 * A prepare or commit that rejects reports the job failed (nothing was done), except a
 * commit that rejects with {@link CommitOutcomeUnknown}.
 */
export interface TwoPhase<Args = any> {
    prepare(args: Args, job: {
        jobId: string;
        callId: string;
        businessKey: string;
        signal: AbortSignal;
    }): Promise<void>;
    commit(jobId: string, args: Args): Promise<Record<string, unknown> | void>;
    release(jobId: string, how: "cancel" | "abortPrepare"): void | Promise<void>;
}
/**
 * What a {@link TwoPhase} commit rejects with when it cannot tell whether the side effect
 * happened (the backend timed out): the job is reported unknown (`core.unknown`: the
 * model is told the outcome is being confirmed), not failed. Report the real outcome
 * once the backend knows it, with `lk.core.committed(jobId, result)` or
 * `lk.core.failed(jobId, why)`.
 */
export declare class CommitOutcomeUnknown extends Error {
    constructor(message?: string);
}
/** Options of {@link LiveKitArbiter}. */
export interface LiveKitArbiterOptions extends SessionCoreOptions {
    /** Which realtime plugin the AgentSession runs: its provider's messages are tapped. */
    provider: "google" | "openai";
    /** Called with every action after the integration handled it (logs, metrics). */
    onAction?: ActionHandler;
    /**
     * The provider closed the model connection (`code`, `reason`; closes the plugin asked
     * for itself are not reported). The plugins reconnect on their own; an agent whose
     * conversation ends there calls {@link LiveKitArbiter.endRealtime} now, before they do.
     */
    onProviderClose?: (ev: {
        code: number;
        reason: string;
    }) => void;
    /** What the model is asked to do with a note (the reply's instructions); default {@link NOTE_INSTRUCTIONS}. */
    noteInstructions?: string;
}
/** The instructions a note's reply goes with. */
export declare const NOTE_INSTRUCTIONS = "Tell the user, briefly, what the system note says about their request.";
/**
 * One Arbiter session for one LiveKit AgentSession with a realtime model. Create it with
 * {@link LiveKitArbiter.create}, wrap the tools with {@link tool}, pass the model through
 * {@link model}, and {@link attach} the AgentSession before starting it.
 */
export declare class LiveKitArbiter {
    readonly core: LiveAdapter | RealtimeAdapter;
    private readonly opts;
    private readonly calls;
    private readonly tools;
    private readonly prepares;
    private session;
    private realtime;
    private connections;
    private ended;
    private constructor();
    /**
     * Creates the integration and installs the provider tap once per process (a wrapper
     * of @google/genai's `Live.prototype.connect`, or of the OpenAI plugin's socket
     * creation), which does nothing for sessions not created through {@link model}.
     */
    static create(client: ArbiterClient, sessionId: string, opts: LiveKitArbiterOptions): Promise<LiveKitArbiter>;
    /**
     * Wraps a function tool so that Arbiter decides its execution. Declare `parameters`
     * as a JSON schema (not zod: LiveKit would answer a failed validation itself). With
     * `twoPhase` the tool is side-effecting and its own `execute` is not used; without, it
     * is read-only and its `execute` runs when Arbiter says so (its result becomes the
     * response). Either way LiveKit's call of `execute` returns the function response
     * Arbiter hands out for that call id, or throws `StopResponse` for a dead one.
     */
    tool<T extends llm.FunctionTool<any, any, any> | llm.AnonFunctionTool<any, any, any>>(name: string, tool: T, twoPhase?: TwoPhase): T;
    /**
     * Taps the model's realtime sessions (the AgentSession creates one when it starts):
     * the provider's messages go to the core; returns the model.
     */
    model<M extends llm.RealtimeModel>(model: M): M;
    /** Hooks the AgentSession: notes go through it, its close closes the arbiter session. */
    attach(session: voice.AgentSession): void;
    /**
     * Ends the realtime session at once (its plugin would reconnect otherwise): for an
     * agent whose conversation is over when the provider closes (see `onProviderClose`).
     * Then close the AgentSession.
     */
    endRealtime(): void;
    /** Closes the arbiter session (delivers what is queued, then CloseSession; see `SessionCore.close`). */
    close(timeoutMs?: number): Promise<void>;
    /** @internal A provider connection of one of this integration's sessions opened: Connect. */
    _connectionOpened(): void;
    /** @internal A Gemini server message, as it arrives. */
    _geminiMessage(m: LiveServerMessageLike): void;
    /** @internal The provider closed a connection (not one the plugin closed itself). */
    _providerClosed(code: number, reason: string): void;
    private bindRealtime;
    private state;
    /**
     * The wrapped tool's execute: LiveKit's side of one call. Waits until the call is
     * answered or dead (or LiveKit aborts it), then ends with StopResponse: the answer
     * went through the chat context.
     */
    private execute;
    /** Lets LiveKit's executes of a call end. */
    private settle;
    /** @internal The tap's guard: may a final function response for `id` go on the wire? */
    _mayAnswer(id: string): boolean;
    /**
     * @internal The OpenAI tap's guard: may this `conversation.item.create` go on a
     * connection whose model holds `held`? A `function_call_output` of a wrapped tool's
     * call: not for a dead id, not while the model holds an answer for the id. A user
     * message that is a note: not beyond the copies the integration sent. Everything
     * else goes. What goes is recorded in `held`.
     */
    _mayCreate(held: HeldItems, item: any): boolean;
    /** @internal Is `id` one of the wrapped tools' calls that Arbiter declared dead? */
    _isDead(id: string): boolean;
    /** @internal The tap's guard: is this text a note the integration sent? */
    _isNote(text: string | undefined): boolean;
    /**
     * @internal The tap's guard for a note in a context that holds `held` copies of it:
     * may one more go? As many as the integration sent (a note text Arbiter handed out
     * twice goes twice); a copy beyond that is the framework's re-send.
     */
    _mayHoldNote(text: string, held: number): boolean;
    /** @internal The Gemini context a new connection talks to: the last one when it resumes (handle), else a new one. */
    _geminiContext(resumes: boolean): Map<string, number>;
    private readonly noteCopies;
    private geminiNotes;
    private act;
    private readonly jobTools;
    private readonly jobArgs;
    private start;
    /** Arbiter's function response for `id`: sent now through the chat context. */
    private answer;
    /** A dead id: never answered; LiveKit's execute, if it waits, ends (StopResponse). */
    private kill;
    /**
     * A status note: a user message added to the agent's chat context (the plugin sends it
     * at once: a Gemini content turn, an OpenAI user message item), then a reply asked
     * for (`generateReply` with instructions). Not `generateReply({userInput})` alone: its
     * speech is queued, and an interruption before it runs drops the note. `when_idle`:
     * once the model is idle.
     */
    private note;
    private ctxChain;
    /**
     * Adds to the agent's chat context (which the plugin diffs and sends), one update at a
     * time: the plugins diff each update against the last one they finished, so two
     * concurrent updates would both send what the first added. Resolves true once sent.
     */
    private updateCtx;
    private log;
}
/**
 * What one OpenAI connection's model holds of the integration's items, by item id:
 * `add` an item under a key (an answer's call id, a note's text), `deleted` when the
 * client deletes the item, `count` the items held under a key (an item created again
 * under an id it already holds counts as held: a second copy).
 */
export declare class HeldItems {
    private readonly byItem;
    private readonly counts;
    private anon;
    /** Items held under `key`; `itemId`: the item about to be created (held already: counts as one more). */
    count(key: string, itemId?: string): number;
    add(key: string, itemId?: string): void;
    deleted(itemId: unknown): void;
}
export type { SessionCore };
