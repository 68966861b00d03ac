import type { Action } from "./actions.js";
import type { ArbiterClient } from "./client.js";
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
    voiceActivity?: {
        voiceActivityType?: string;
    };
    serverContent?: {
        modelTurn?: {
            parts?: Array<{
                inlineData?: {
                    mimeType?: string;
                };
            }>;
        };
        inputTranscription?: TranscriptionLike;
        interimInputTranscription?: TranscriptionLike;
        outputTranscription?: TranscriptionLike;
        interrupted?: boolean;
        generationComplete?: boolean;
        turnComplete?: boolean;
    };
    toolCall?: {
        functionCalls?: Array<{
            id?: string;
            name?: string;
            args?: Record<string, unknown>;
        }>;
    };
    toolCallCancellation?: {
        ids?: string[];
    };
}
/** Receives each action, in order; may return a promise (awaited). Keep it short. */
export type ActionHandler = (action: Action) => void | Promise<void>;
/** Options of {@link LiveAdapter}. */
export interface LiveAdapterOptions {
    /**
     * Each tool's `FunctionDeclaration.behavior`; tools not named use the arbiter's tool
     * policy.
     */
    behaviors?: Record<string, "BLOCKING" | "NON_BLOCKING">;
    /** How long each Decide long-poll waits, in ms (the server caps it at 30 s); default 20000. */
    decideWaitMs?: number;
    /** Where failures of background work are logged; default `console`. */
    logger?: Pick<Console, "warn" | "error">;
    /**
     * The session's language as a BCP 47 tag (`"en"`, `"es-MX"`): which stop and amend
     * phrases the arbiter listens for. Unset: the arbiter's default (English).
     */
    language?: string;
    /**
     * True when the provider honours a function response's scheduling (Gemini Live,
     * NON_BLOCKING calls): then a status note may ride on a function response
     * ({@link SendFunctionResponse.scheduling}) instead of a user turn. Default false. When
     * this or `language` is set, the adapter sends ConfigureSession once, before the
     * session's first other RPC.
     */
    responseScheduling?: boolean;
    /**
     * True (default): hold a Watch on the session (opened after the first RPC that
     * succeeds, closed by {@link LiveAdapter.close}) and act on every effect it streams,
     * the timer-made ones included. False: no stream; call {@link LiveAdapter.poll} on a
     * beat (e.g. every second, or when `GetSessionResponse.nextTimer` passes) to get those.
     */
    watch?: boolean;
}
/**
 * Drives one arbiter session from one Live session's server messages.
 *
 * Feed it every `LiveServerMessage` ({@link feed}) and handle the plain actions it hands
 * `onAction`. It owns the API choreography: RegisterCall for each function call,
 * ReportSpeech and ReportTranscript for voice activity, model output and transcription,
 * ReportToolCallCancellation, and for every side-effecting job a Decide long-poll that
 * runs while the prepare does (prepared=false: it returns early only to cancel) and
 * after it (prepared=true), then Complete. It hands out at most one function response
 * per call id and none for ids the arbiter declared dead. Given session options
 * (`language`, `responseScheduling`), it sends ConfigureSession once, before the
 * session's first other RPC.
 *
 * A status note the arbiter puts in a function response (`NOTE_VIA_FUNCTION_RESPONSE`:
 * the text is in the payload under `status_note`) is handed out as that response's
 * `scheduling`, never again as a `sendNote` user turn.
 *
 * A Decide that fails is never a commit: when the arbiter cannot be reached (after the
 * client's retries) the job is released ({@link AbortPrepare} or {@link Cancel} with
 * `error` set) and reported as failed.
 *
 * Confirm-then-act runs: a call the arbiter answers `DISPOSITION_RUN` executes nothing;
 * its prompt (what to ask the user, which confirmation tool to call) comes as a
 * `sendFunctionResponse`. The confirmation call that confirms the run comes as an
 * `execute` of the run's tool (`tool`/`args`), answered on the confirmation call's id.
 * Run state changes come as `run` actions (informational).
 *
 * Reconnects: {@link reconnect} reports a new model connection (Connect); the calls still
 * pending from the earlier one come back as `skip` (reason `connection_closed`) and their
 * outcomes as notes. Interim results ({@link progress}) come back as non-final responses
 * (`willContinue`). A commit whose outcome the backend cannot tell is reported with
 * {@link unknown}, and its truth later with {@link committed} or {@link failed}.
 *
 * Timer-made effects (a call's max_pending deadline answer, a confirm-then-act run that
 * expires, the claim check of an interrupted turn) are due when no RPC of the agent is
 * in flight. By default the adapter holds a Watch on the session (opened after its first
 * successful RPC, ended by {@link close}) and acts on what it streams, so those reach the
 * agent in a quiet session too. Every effect is acted on once per `seq`, whether it comes
 * first in a unary reply, on the Watch, or from {@link poll} (effects without a `seq`,
 * from older servers, are acted on as they come). An agent that cannot hold a stream
 * passes `watch: false` and calls {@link poll} on a beat instead.
 */
export declare class LiveAdapter {
    private readonly client;
    readonly sessionId: string;
    private readonly onAction;
    /** Each tool's behavior (see {@link LiveAdapterOptions.behaviors}). */
    behaviors: Record<string, "BLOCKING" | "NON_BLOCKING">;
    /**
     * The tool choice the model currently runs under: set `"none"` while the generation
     * runs with `toolChoice: none`, and calls that still arrive are rejected (answered).
     */
    toolChoice: "auto" | "none";
    private readonly waitMs;
    private readonly log;
    private readonly jobs;
    private readonly answered;
    private readonly dead;
    private readonly notes;
    private readonly interims;
    private readonly runs;
    /** The current model connection's id ({@link reconnect}); empty before the first. */
    connectionId: string;
    private modelSpeaking;
    private closed;
    private readonly language;
    private readonly responseScheduling;
    private configured;
    private configuring;
    private readonly seqs;
    private watchOn;
    private watchLoop;
    private readonly watchStop;
    private watchLast;
    private readonly watched;
    private flushTimer;
    private flushing;
    private inflight;
    /**
     * @param client the {@link ArbiterClient}.
     * @param sessionId the arbiter session id (one per model connection), 1 to 128
     *   characters from `[A-Za-z0-9_.:-]`.
     * @param onAction called with each action, in order.
     */
    constructor(client: ArbiterClient, sessionId: string, onAction: ActionHandler, opts?: LiveAdapterOptions);
    /**
     * Reports one Live server message to the arbiter and hands out what it made due. Feed
     * messages in the order they arrive, one at a time (await each). Rejects with an
     * {@link ArbiterError} when an RPC fails (the rest of that message is not reported);
     * the adapter stays usable.
     */
    feed(msg: LiveServerMessageLike): Promise<void>;
    /**
     * Reports that the job's prepare finished: the adapter now asks Decide with
     * prepared=true (which starts the grace window) and hands out Commit or Cancel.
     */
    prepared(jobId: string): Promise<void>;
    /**
     * Reports that the side effect a {@link Commit} asked for was performed; `result` (e.g.
     * a booking reference) goes into the function response.
     */
    committed(jobId: string, result?: Record<string, unknown>): Promise<void>;
    /** Reports a read-only tool's result, which becomes its function response. */
    result(jobId: string, result?: Record<string, unknown>): Promise<void>;
    /**
     * Reports that the side effect a {@link Commit} asked for may or may not have happened
     * (the backend timed out): Complete OUTCOME_UNKNOWN. The job's calls are answered
     * `"unknown"` and a repeat is never executed again. Report the truth later, once known,
     * with {@link committed} or {@link failed} for the same job: that hands out the
     * authoritative note.
     */
    unknown(jobId: string, result?: Record<string, unknown>): Promise<void>;
    /**
     * Reports an interim result of a job still running (ReportProgress). When the session
     * takes response scheduling, it comes back as a non-final `sendFunctionResponse`
     * (`willContinue: true`) per live NON_BLOCKING call id of the job; otherwise the arbiter
     * drops it.
     */
    progress(jobId: string, result?: Record<string, unknown>): Promise<void>;
    /**
     * Reports that the agent now talks to the model over a new connection (a reconnect,
     * Gemini session resumption) with id `connectionId`: Connect. Calls still pending from
     * earlier connections come back as `skip` (reason `connection_closed`): never answer
     * them on the new connection. Their jobs go on, and each outcome is handed out as a
     * `sendNote`. Call it for the first connection too, so that the calls made on it are
     * known to be its own.
     */
    reconnect(connectionId: string): Promise<void>;
    /**
     * Reports that the job failed (its prepare, its commit, or a read-only tool): nothing
     * was done. `error` (at most 4 KiB) is passed to the model.
     */
    failed(jobId: string, error: string): Promise<void>;
    /**
     * Closes the arbiter session (the model connection ended): undecided jobs are cancelled
     * (their prepares aborted) and unanswered ids become dead. Waits up to `timeoutMs` for
     * the Decide loops to hand out their last actions.
     */
    close(timeoutMs?: number): Promise<void>;
    /**
     * Poll: steps the session's timers and acts on every effect after the highest `seq`
     * acted on without a gap (`afterSeq`), the timer-made ones included, each once. For
     * agents that run without the Watch (`watch: false`); harmless with it. Nothing happens
     * before the session exists.
     */
    poll(): Promise<void>;
    /**
     * Sends a unary RPC whose reply carries effects and acts on them (counted as in flight
     * meanwhile, see WATCH_HOLD_MS).
     */
    private unary;
    /** Opens the Watch once the session exists (after an RPC that succeeded). */
    private startWatch;
    /**
     * Streams the session's effects until the server ends the stream (the session closed or
     * expired). The client resumes a lost stream itself; when it gives up, this reopens it
     * after the last seq streamed, as long as the adapter is open.
     */
    private runWatch;
    /**
     * One streamed effect: held a moment (WATCH_HOLD_MS), then acted on unless a unary
     * reply handed it out meanwhile.
     */
    private stream;
    /** Acts on the streamed effects held, as one Effects (in seq order per kind). */
    private flush;
    /**
     * Lets the stream end (it does once the session is closed), up to `waitMs`, then
     * cancels it; acts on what it streamed.
     */
    private stopWatch;
    /**
     * ConfigureSession, once, before the session's first other RPC (only when the adapter
     * was given options). If it fails, the RPC that needed it is not sent (the error
     * propagates) and the next one tries again.
     */
    private configure;
    private job;
    private speech;
    private transcript;
    private register;
    private registerCall;
    /** The Decide loop of one side-effecting job; never rejects. */
    private drive;
    /**
     * Long-polls Decide until COMMIT or CANCEL. While the prepare runs it asks with
     * prepared=false, and re-asks with prepared=true the moment the app reports it.
     */
    private decide;
    private complete;
    private effects;
    /**
     * A non-final response (ReportProgress): handed out with `willContinue` while its call
     * is live and unanswered; never marks the call answered.
     */
    private interim;
    private emit;
}
