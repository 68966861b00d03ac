/**
 * Tool helpers for agents behind the wire guard (`arbiter serve --proxy-listen`).
 *
 * Behind the guard the agent reports nothing by hand: the guard reads the server's
 * messages off the WebSocket, registers each function call, answers the calls the
 * arbiter answers itself (duplicates, rejected calls, calls under tool choice none),
 * hands the agent only those it is to execute, and lets exactly one function response
 * per live call id reach the model, the arbiter's. What is left for the agent's code
 * is what only the tool can do: run a side effect in two phases and commit it only
 * when the arbiter says so, knowing nothing but its call's id (the id the framework
 * hands the tool: LiveKit's `ctx.toolCallId`, @google/genai's `FunctionCall.id`,
 * OpenAI's `call_id`). Read-only tools need no code at all.
 *
 * ```ts
 * const bookSlot = twoPhase(client, {
 *   callId: (_args, opts) => opts.toolCallId,           // however the framework hands it
 *   prepare: (job, args) => backend.prepare(args.slot), // the hold, reversible (job.signal aborts on CANCEL)
 *   commit: (hold) => backend.commit(hold),              // only on COMMIT; its result goes under `result`
 *   release: (hold) => backend.release(hold),            // on CANCEL
 * });
 * ```
 *
 * {@link ToolJob} is the same written out. Each step, by call id (the session found by
 * the guard's index): entering, `Decide(prepared=false, wait=0)` (tells the arbiter
 * this tool reports, so the guard holds a framework's own answer for the call, a
 * "CANCELLED" on barge-in or an error text; refuses a call that executes nothing);
 * {@link ToolJob.preparing} runs the prepare while a `Decide(prepared=false)`
 * long-poll watches for a CANCEL (then the prepare's signal aborts and
 * {@link JobCancelled} is thrown); {@link ToolJob.commit} is `Decide(prepared=true)`
 * until COMMIT or CANCEL; `committed`, `cancelled`, `failed`, `unknown` are `Complete`.
 * A Decide that keeps failing (the store down) is asked again for up to `maxElapsedMs`,
 * then the job fails closed ({@link ArbiterUnavailable}): never a commit on a decision
 * not had. The helpers never send anything to the model: the guard does.
 */
import type { ArbiterClient } from "./client.js";
/** The arbiter cancelled the job while it was being prepared. */
export declare class JobCancelled extends Error {
    constructor(message: string);
}
/**
 * The job was already told to commit before this run prepared anything: another run of
 * the same job owns it (the provider issued the call id again in the same session, as
 * a retry or after a reconnect, and the framework ran the tool again). This run must
 * not prepare or commit: the side effect would happen twice. The arbiter answers the
 * call itself.
 */
export declare class JobTaken extends Error {
    constructor(message: string);
}
/** The arbiter could not be asked for `maxElapsedMs`: the job fails closed (nothing committed). */
export declare class ArbiterUnavailable extends Error {
    constructor(message: string);
}
/** Options of {@link ToolJob} and {@link twoPhase}. */
export interface ToolJobOptions {
    /** The arbiter session, when the tool knows it (optional: the guard indexes its calls). */
    sessionId?: string;
    /** How long each Decide long-poll waits, in ms (the server caps it at 30 s); default 20000. */
    decideWaitMs?: number;
    /** How long failed Decides are asked again before the job fails closed, in ms; default 20000. */
    maxElapsedMs?: number;
}
/**
 * One side-effecting function call's job, named by its call id. Call {@link begin}
 * first; report one outcome; {@link end} (in a `finally`) reports what was left
 * unreported: cancelled after a CANCEL, else failed before a COMMIT and unknown after
 * one (the backend may have committed).
 */
export declare class ToolJob {
    readonly client: ArbiterClient;
    readonly callId: string;
    /** The job id, once the arbiter named it. */
    jobId: string;
    /** COMMIT was decided (the backend may have committed from here on). */
    decidedCommit: boolean;
    /** CANCEL was decided. */
    decidedCancel: boolean;
    /** The payload the arbiter answered the call with, once reported. */
    payload: Record<string, unknown> | undefined;
    private reported;
    private readonly waitMs;
    private readonly maxElapsedMs;
    private sessionId;
    constructor(client: ArbiterClient, callId: string, opts?: ToolJobOptions);
    /**
     * `Decide(prepared=false, wait=0)`: the arbiter learns this tool reports. Throws
     * {@link JobTaken} (and reports nothing at {@link end}) when the job is already
     * decided COMMIT: a commit is decided only after a prepare, so another run of the
     * job prepared it.
     */
    begin(): Promise<void>;
    /**
     * Runs `prepare` (given an AbortSignal) while a `Decide(prepared=false)` long-poll
     * watches for a CANCEL: returns what it returns; on CANCEL its signal aborts and
     * {@link JobCancelled} is thrown.
     */
    preparing<T>(prepare: (signal: AbortSignal) => Promise<T>): Promise<T>;
    /** `Decide(prepared=true)` until COMMIT (true) or CANCEL (false). Throws {@link ArbiterUnavailable} to fail closed. */
    commit(): Promise<boolean>;
    /** `Complete(COMMITTED, result)`; returns the call's payload. */
    committed(result?: Record<string, unknown>): Promise<Record<string, unknown>>;
    /** `Complete(CANCELLED)` (after a CANCEL). */
    cancelled(): Promise<Record<string, unknown>>;
    /** `Complete(FAILED, error)`: nothing was done. */
    failed(error: string): Promise<Record<string, unknown>>;
    /** `Complete(UNKNOWN)`: after COMMIT, the backend could not say whether it committed. */
    unknown(): Promise<Record<string, unknown>>;
    /** Reports what was left unreported (call it in a `finally`, with the error if one was thrown). Never throws. */
    end(err?: unknown): Promise<void>;
    private decide;
    /** Long-polls Decide(prepared=false) until CANCEL (true); never resolves when a Decide fails or `stop` aborts. */
    private watchCancel;
    private complete;
}
/** The job a {@link twoPhase} tool's phases run for. */
export interface PhaseJob {
    /** The function call's id. */
    callId: string;
    /** The arbiter's job id (for a backend that keys holds by it). */
    jobId: string;
    /** Aborts when the arbiter cancels the job while it is being prepared. */
    signal: AbortSignal;
}
/** What {@link twoPhase} runs. */
export interface TwoPhase<A extends unknown[], H> extends ToolJobOptions {
    /** The call id, from the tool's arguments (however the framework hands it). */
    callId: (...args: A) => string;
    /** Phase one: the reversible hold. */
    prepare: (job: PhaseJob, ...args: A) => Promise<H>;
    /** Phase two, only on COMMIT: the side effect; its result goes to the model under `result`. */
    commit: (hold: H, job: PhaseJob) => Promise<Record<string, unknown> | void>;
    /**
     * Lets go: `"cancel"` a hold that will not be committed (a CANCEL, or failing
     * closed), `"abortPrepare"` a prepare the arbiter cancelled while it ran (its signal
     * aborted; `hold` undefined).
     */
    release?: (hold: H | undefined, how: "cancel" | "abortPrepare", job: PhaseJob) => Promise<void> | void;
}
/**
 * Makes a two-phase tool function from its phases: `(...args) =>` the arbiter's
 * payload for the call (return it to the framework; the guard sends the arbiter's own
 * response whatever the framework makes of it). A failure to reach the arbiter gives
 * `{status: "failed", executed: false}`; a job another run of the same call id already
 * prepared ({@link JobTaken}) gives `{status: "duplicate", executed: false}` and runs
 * no phase.
 */
export declare function twoPhase<A extends unknown[], H>(client: ArbiterClient, t: TwoPhase<A, H>): (...args: A) => Promise<Record<string, unknown>>;
