import type { Action } from "./actions.js";
import type { ArbiterClient } from "./client.js";
import { status } from "@grpc/grpc-js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
/** Receives each action, in order; may return a promise (awaited). Keep it short. */
export type ActionHandler = (action: Action) => void | Promise<void>;
/** A function's scheduling mode (Gemini `FunctionDeclaration.behavior`). */
export type Behavior = "BLOCKING" | "NON_BLOCKING";
/** A function call the model issued (Gemini `FunctionCall`, OpenAI `function_call` item). */
export interface FunctionCallLike {
    /** The call id; empty or unset: the arbiter mints one. */
    id?: string;
    /** The function's name. */
    name: string;
    /** Its arguments. */
    args?: Record<string, unknown>;
    /** BLOCKING or NON_BLOCKING; unset: {@link SessionCore.behaviors} for `name`, else the arbiter's tool policy. */
    behavior?: Behavior;
    /**
     * The argument text as the model sent it, when it could not be parsed into `args`
     * (malformed JSON from an OpenAI `function_call`): the arbiter rejects the call with an
     * error response saying its arguments could not be read (`raw_args`). Never turn such
     * text into `{}`: every unreadable call would be one business key.
     */
    rawArgs?: string;
    /**
     * The agent's own business key for the call (it resolved the request to a slot id),
     * which wins over the tool policy's key arguments; unset: the policy's.
     */
    businessKey?: string;
    /** The tool choice the model ran under when it issued this call; unset: {@link SessionCore.toolChoice}. */
    toolChoice?: "auto" | "none";
}
/** Why the provider cancelled function calls ({@link SessionCore.toolCallCancellation}). */
export type CancellationReason = "withdrawn" | "provider_timeout";
/** Options of {@link SessionCore} (and so of `LiveAdapter`). */
export interface SessionCoreOptions {
    /**
     * Each tool's behavior, for function calls reported without one (Gemini's
     * `FunctionDeclaration.behavior`); tools not named use the arbiter's tool policy.
     */
    behaviors?: Record<string, Behavior>;
    /** How long each Decide long-poll waits, in ms (the server caps it at 30 s); default 20000. */
    decideWaitMs?: number;
    /**
     * Called with each function call the adapter reports, before it is registered (it is
     * stamped then): returns the call to register. An agent that resolves its own
     * business keys, or knows the tool choice a call was made under, adds them here
     * (`businessKey`, `toolChoice`, `behavior`). Unset: the call as reported.
     */
    resolveCall?: (call: FunctionCallLike) => FunctionCallLike;
    /**
     * Your own reading of the user's words (your NLU or LLM): called with each final
     * input transcript piece the adapter reports without one (its text, and the utterance
     * id the provider named, else ""), before it is stamped; what it returns goes with the
     * piece as its `reading` (see {@link SessionCore.inputTranscript}), undefined for none.
     * Synchronous: a reader that must wait (an LLM) would hold the piece back, so it
     * reports through {@link SessionCore.inputTranscript} itself. Unset: no reading.
     */
    readTranscript?: (text: string, utteranceId: string) => pb.AgentReading | undefined;
    /** Where failures of background work and retried events are logged; default `console`. */
    logger?: Pick<Console, "warn" | "error">;
    /**
     * The session's language as a BCP 47 tag (`"en"`, `"es-MX"`): which stop and amend
     * phrases the arbiter listens for. Unset: the arbiter's default (English).
     */
    language?: string;
    /**
     * True when the provider honours a function response's scheduling (Gemini Live,
     * NON_BLOCKING calls): then a status note may ride on a function response
     * (`SendFunctionResponse.scheduling`) instead of a user turn. Default false. When
     * this, `language` or `timeZone` is set, the core sends ConfigureSession once, before
     * the session's first other RPC.
     */
    responseScheduling?: boolean;
    /**
     * The session's IANA time zone (`"Europe/Paris"`): the arbiter reads relative dates
     * ("tomorrow") and times said without an offset ("3pm", `"2026-11-05T09:30"`) in
     * business keys in it. Unset: UTC.
     */
    timeZone?: string;
    /**
     * True (default): hold a Watch on the session (opened after the first RPC that
     * succeeds, closed by {@link SessionCore.close}) and act on every effect it streams,
     * the timer-made ones included. False: no stream; call {@link SessionCore.poll} on a
     * beat (e.g. every second, or when `GetSessionResponse.nextTimer` passes) to get those.
     */
    watch?: boolean;
    /**
     * How long after the end of the user's voice activity the core waits for the
     * session's first input transcript, in ms, before it warns once (through
     * `logger.warn`) that none arrived. An agent whose model session has no input
     * transcription (Gemini Live `inputAudioTranscription`, OpenAI Realtime
     * `audio.input.transcription`) reports voice activity but never a word: the arbiter
     * then cannot hear a stop, and any user speech while a job is prepared cancels it
     * after the tool policy's `transcript_timeout` ("yes, thanks" included). Default 3000
     * (the policy's default `transcript_timeout`); 0: never warn.
     */
    transcriptWarningMs?: number;
}
/** The warning {@link SessionCoreOptions.transcriptWarningMs} is about, for sessionId. */
export declare function noTranscriptWarning(sessionId: string, waitedMs: number): string;
/**
 * The codes on which the outbox retries an event. CANCELLED is one the core did not ask
 * for (its own cancellation rejects with the signal's reason): a server going away.
 */
export declare const RETRIED_CODES: ReadonlySet<status>;
/**
 * How long (ms) an observed event may stay undelivered while a Decide waits before the
 * core aborts that Decide (cancels the RPC): the arbiter's `arbiter.LateTimer`
 * (arbiter/completion.go, 100 ms). A delivery takes milliseconds when the arbiter and
 * its store answer; one that takes longer may be behind an outage the parked Decide
 * comes out of first, and a COMMIT it answered then would stand ahead of the event
 * (docs/rules.md, "After an outage, a late commit waits for what the agent observed").
 * The server takes back a COMMIT whose caller went away, so an aborted Decide commits
 * nothing; the core asks again once the outbox is empty.
 */
export declare const DELIVERY_STUCK_MS = 100;
/**
 * A job's Decide could not be asked: the events observed before it stayed undelivered
 * (the session closed first, or the arbiter was unreachable for the retry policy's
 * `maxElapsedMs`). Nothing is committed: the job is released and completed as failed.
 */
export declare class UndeliveredEventsError extends Error {
    constructor(message: string);
}
/**
 * A promise that settles once all of `ps` have: rejected with the first one's error (in
 * the given order) if any rejected. For a translator whose one provider message makes
 * several events.
 */
export declare function together(ps: Promise<void>[]): Promise<void>;
/**
 * Drives one arbiter session from what one realtime model session did, whatever the
 * provider.
 *
 * A provider adapter (`LiveAdapter` for Gemini Live; others for OpenAI Realtime or
 * LiveKit Agents) translates its provider's server messages into calls of the core's
 * methods, one per thing that happened: a function call ({@link functionCall}), user
 * voice activity starting or ending, barge-in ({@link interrupted}), the model starting
 * to speak, generation and turn complete, input and output transcript pieces, a
 * tool-call cancellation, a reconnect. The core owns everything else: the outbox that
 * delivers those events to the arbiter, the Decide/Complete choreography of each
 * side-effecting job, the Watch, and the plain actions it hands `onAction`, each effect
 * once per `seq`.
 *
 * **The outbox.** Each event method stamps the event with the time it is called (the
 * monotonic clock: call it as the provider's message arrives) and queues it; nothing
 * waits. The events of a session are delivered in the order observed, one at a time,
 * each attempt carrying `age` = now - observed (so the arbiter places the event where
 * it happened, however late it arrives, and a retry carries its own, larger age). An
 * attempt that fails with UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED or CANCELLED (one the
 * core did not ask for: a server going away) is retried after a backoff (the client's
 * {@link RetryPolicy}: 100 ms doubling to 1 s, with jitter; at least the error's
 * RetryInfo delay; at once for SERVER_DRAINING) until it lands or the
 * session closes; the later events wait behind it. Any other error (the arbiter refused
 * the event: INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, RESOURCE_EXHAUSTED, ...)
 * is logged and the event dropped. A function call without an id is retried only on
 * ABORTED (the arbiter would mint a second id for a repeat). Each speech, transcript and
 * cancellation event gets an `eventId` when observed, the same on every attempt, so an
 * attempt the arbiter applied but whose answer was lost comes back `repeat` (nothing
 * changed; success). Events carry the session's {@link epoch}; SESSION_LOST (the
 * arbiter's store lost the session) is handled as {@link SessionLost} says, and the
 * event is then sent again in the new epoch. The attempts carry the OpenTelemetry
 * context the event was observed in (its `traceparent`). Each event method returns
 * a promise that resolves once its event was delivered and what came back was handed
 * out: await it, or not (a receive loop should not: it would stamp the next messages
 * late; the promise never counts as an unhandled rejection); it rejects with the error
 * of a dropped event.
 *
 * **The Decide contract** (docs/agent-guide.md; docs/rules.md, "An answered COMMIT
 * stands"). A job's Decide (prepared or not) is sent only once every event observed so
 * far was delivered (or dropped): the core waits for the outbox first. While a Decide
 * waits (its long-poll), an event observed and still undelivered
 * {@link DELIVERY_STUCK_MS} (100 ms, the arbiter's LateTimer) after it was observed, or
 * an attempt to deliver one that fails, aborts that Decide (the RPC is cancelled; the
 * arbiter takes back a COMMIT whose caller went away); the core waits for the outbox
 * again and asks again. Every Decide says so (`events_delivered`), so the arbiter hands
 * out a commit decided late (after an outage, or under load) at once instead of
 * withholding it 2 s for events this core has already delivered (an event the arbiter
 * refused, dropped, will not land later either). A COMMIT received is acted on (a
 * `commit` action): the arbiter stored it before answering, and no later event
 * withdraws it (an event still
 * undelivered when it arrives is placed after the commit; a warning is logged). If the
 * session closes before the events observed are delivered, or they stay undelivered for
 * the retry policy's `maxElapsedMs` (the arbiter unreachable), no Decide is asked: the
 * job is released ({@link UndeliveredEventsError}) and completed as failed: never a
 * commit on a timeline that may miss an event. A Decide that fails is
 * never a commit either. A job's Decide and Complete that fail with UNAVAILABLE,
 * DEADLINE_EXCEEDED or CANCELLED (one the core did not ask for) after the service
 * config's attempts (5, about 1.5 s: a store outage longer than that, a replica going
 * away) are asked again, backing off as the client's {@link RetryPolicy} says (RetryInfo
 * as the least wait), until `maxElapsedMs` (default 20 s) has passed since the first
 * failure in a row; only then is the job released (`cancel` / `abortPrepare` with
 * `error`) and completed as failed. Both RPCs are idempotent (Decide changes nothing but
 * the prepared flag; Complete by job id).
 *
 * The rest: RegisterCall's dispositions become `execute` (or nothing), every
 * side-effecting job gets a Decide long-poll that runs while the prepare does
 * (prepared=false: it returns early only to cancel) and after it (prepared=true), then
 * Complete; at most one function response per call id and none for ids the arbiter
 * declared dead; ConfigureSession once, before the session's first other RPC, when
 * given `language` or `responseScheduling`; a note that rides on a function response
 * (`NOTE_VIA_FUNCTION_RESPONSE`) is handed out as that response's `scheduling`, never
 * again as a `sendNote`; timer-made effects through the Watch (or {@link poll}).
 */
export declare class SessionCore {
    protected readonly client: ArbiterClient;
    readonly sessionId: string;
    private readonly onAction;
    /** Each tool's behavior (see {@link SessionCoreOptions.behaviors}). */
    behaviors: Record<string, Behavior>;
    /**
     * The tool choice the model currently runs under: set `"none"` while the generation
     * runs with `toolChoice: none`, and calls that still arrive are rejected (answered).
     */
    toolChoice: "auto" | "none";
    /** The current model connection's id ({@link reconnect}); empty before the first. */
    connectionId: string;
    /**
     * The session's epoch as the last Connect returned it (`""` before the first): sent
     * with RegisterCall, ReportSpeech, ReportTranscript and ConfigureSession, so that a
     * session the arbiter's store lost is reported (SESSION_LOST) instead of being started
     * again silently: then the core Connects again and hands out a `sessionLost` action
     * (see {@link SessionLost}). Call {@link reconnect} for the first connection too, or
     * no epoch is known and a loss goes unnoticed.
     */
    epoch: string;
    protected readonly log: Pick<Console, "warn" | "error">;
    private readonly resolveCall;
    private readonly readTranscript;
    private readonly waitMs;
    private readonly jobs;
    private readonly answered;
    private readonly dead;
    private readonly notes;
    private readonly interims;
    private readonly runs;
    private speaking;
    private idleWaiters;
    private readonly transcriptWarningMs;
    private transcriptSeen;
    private transcriptWarned;
    private transcriptTimer;
    private closed;
    private readonly language;
    private readonly responseScheduling;
    private readonly timeZone;
    private configured;
    private configuring;
    private seqs;
    private readonly calls;
    private readonly eventPrefix;
    private eventCount;
    private watchIteration;
    private watchOn;
    private watchLoop;
    private readonly watchStop;
    private watchLast;
    private readonly watched;
    private flushTimer;
    private flushing;
    private inflight;
    private readonly outbox;
    /**
     * @param client the {@link ArbiterClient}.
     * @param sessionId the arbiter session id (one per model connection), 1 to 128
     *   characters from `[A-Za-z0-9_.:-]`.
     * @param onAction called with each action, in order.
     */
    constructor(client: ArbiterClient, sessionId: string, onAction: ActionHandler, opts?: SessionCoreOptions);
    /**
     * True while the model is not speaking, as far as the core saw: no model audio since
     * its last turn complete, barge-in or reconnect. For `sendNote` with `when:
     * "when_idle"`: see {@link whenIdle}.
     */
    get modelIdle(): boolean;
    /**
     * Resolves once the model is idle: at once if it is ({@link modelIdle}), else at its
     * next turn complete, barge-in or reconnect, or when the core closes. A translator
     * awaits it before sending a `when_idle` note (a user turn while the model speaks cuts
     * its reply in half).
     */
    whenIdle(): Promise<void>;
    private get modelSpeaking();
    private set modelSpeaking(value);
    /**
     * The model issued a function call: RegisterCall. What comes back: `execute`, function
     * responses, skips, notes.
     */
    functionCall(call: FunctionCallLike): Promise<void>;
    /**
     * The user started speaking (Gemini `ACTIVITY_START`, OpenAI
     * `input_audio_buffer.speech_started`): it holds due commits until the utterance's
     * transcript is in. `utteranceId`: the provider's id for the utterance, when it gives
     * one (OpenAI's `item_id`); a transcript naming the same id belongs to it.
     */
    voiceActivityStart(utteranceId?: string): Promise<void>;
    /** The user stopped speaking (`ACTIVITY_END` / `speech_stopped`); `utteranceId` as for the start. */
    voiceActivityEnd(utteranceId?: string): Promise<void>;
    /**
     * The server cut the model's output: barge-in (Gemini `interrupted`). Every BLOCKING
     * call still unanswered dies (handed out as `skip`).
     */
    interrupted(): Promise<void>;
    /** The model's audio started (call it for every audio chunk: only the first of a turn is reported). */
    modelOutputStart(): Promise<void>;
    /** The model finished generating its turn (its audio may still play). */
    generationComplete(): Promise<void>;
    /** The model's turn is over (Gemini `turnComplete`, OpenAI `response.done`): it is idle. */
    turnComplete(): Promise<void>;
    /**
     * A piece of the user's input transcription. Final pieces are appended to the
     * utterance and checked for stop intent; interim ones (`final: false`) are not. Blank
     * text is not reported. `utteranceId` names the utterance it transcribes, when the
     * provider says (OpenAI's `item_id`, as given to {@link voiceActivityStart}); unset, the
     * arbiter attributes it (the oldest ended utterance waiting for its transcript, else the
     * open one). `reading`: your own reading of the utterance (your NLU or LLM), on a final
     * piece only: `{ intent: "stop", confidence: 0.9, source: "nlu" }`, intent one of stop,
     * go_ahead, amend, other, unclear; the arbiter fuses it with its own as the tool
     * policy's `agent_intent` says. Unset on a final piece: `readTranscript`'s, if given.
     */
    inputTranscript(text: string | undefined, final?: boolean, utteranceId?: string, reading?: pb.AgentReading): Promise<void>;
    /** A piece of the model's output transcription (what it told the user). */
    outputTranscript(text: string | undefined, final?: boolean): Promise<void>;
    /**
     * The server withdrew these call ids (Gemini `toolCallCancellation`, an OpenAI
     * `function_call` item deleted): they are dead, handed out as `skip`, and an undecided
     * job of theirs is cancelled. `reason: "provider_timeout"`: the provider gave up
     * waiting for the response after its own timeout; the ids are dead too, but their job
     * is abandoned, not cancelled (a re-issue is deduplicated and answered live).
     */
    toolCallCancellation(callIds: string[], reason?: CancellationReason): Promise<void>;
    /**
     * Reports that the agent now talks to the model over a new connection (a reconnect,
     * Gemini session resumption) with id `connectionId`: Connect, in order with the events
     * (after those of the old connection, before those of the new one). Calls still
     * pending from earlier connections come back as `skip` (reason `connection_closed`):
     * never answer them on the new connection. Their jobs go on, and each outcome is
     * handed out as a `sendNote`. Call it for the first connection too, so that the calls
     * made on it are known to be its own. Resolves once it was delivered.
     */
    reconnect(connectionId: string): Promise<void>;
    /**
     * Resolves once every event observed so far was delivered (or dropped), or after
     * `timeoutMs`: true, or false if it timed out or the session closed first.
     */
    flush(timeoutMs?: number): Promise<boolean>;
    /**
     * Reports that the job's prepare finished: the core now asks Decide with
     * prepared=true (which starts the grace window) and hands out Commit or Cancel.
     */
    prepared(jobId: string): Promise<void>;
    /**
     * Reports that the side effect a `commit` asked for was performed; `result` (e.g. a
     * booking reference) goes into the function response.
     */
    committed(jobId: string, result?: Record<string, unknown>): Promise<void>;
    /** Reports a read-only tool's result, which becomes its function response. */
    result(jobId: string, result?: Record<string, unknown>): Promise<void>;
    /**
     * Reports that the side effect a `commit` asked for may or may not have happened (the
     * backend timed out): Complete OUTCOME_UNKNOWN. The job's calls are answered
     * `"unknown"` and a repeat is never executed again. Report the truth later, once
     * known, with {@link committed} or {@link failed} for the same job: that hands out the
     * authoritative note.
     */
    unknown(jobId: string, result?: Record<string, unknown>): Promise<void>;
    /**
     * Reports an interim result of a job still running (ReportProgress). When the session
     * takes response scheduling, it comes back as a non-final `sendFunctionResponse`
     * (`willContinue: true`) per live NON_BLOCKING call id of the job; otherwise the
     * arbiter drops it.
     */
    progress(jobId: string, result?: Record<string, unknown>): Promise<void>;
    /**
     * Reports that the job failed (its prepare, its commit, or a read-only tool): nothing
     * was done. `error` (at most 4 KiB) is passed to the model.
     */
    failed(jobId: string, error: string): Promise<void>;
    /**
     * Closes the arbiter session (the model connection ended): delivers the events still
     * in the outbox (for at most `timeoutMs`; the rest are dropped), then CloseSession:
     * undecided jobs are cancelled (their prepares aborted) and unanswered ids become dead.
     * Waits up to `timeoutMs` for the Decide loops to hand out their last actions.
     */
    close(timeoutMs?: number): Promise<void>;
    /**
     * Poll: steps the session's timers and acts on every effect after the highest `seq`
     * acted on without a gap (`afterSeq`), the timer-made ones included, each once. For
     * agents that run without the Watch (`watch: false`); harmless with it. Nothing happens
     * before the session exists.
     */
    poll(): Promise<void>;
    /** The next event id: stable across the event's redeliveries, so a retry the arbiter applied is answered `repeat`. */
    private nextEventId;
    /**
     * A voice activity ended: unless an input transcript arrived in this session (or the
     * warning was given), arm the one-shot warning that none did
     * ({@link SessionCoreOptions.transcriptWarningMs}); a timer already armed keeps its
     * earlier deadline.
     */
    private awaitTranscript;
    private speech;
    private transcript;
    /** What a delivered event's reply made due. */
    private handedOut;
    /** A Connect's answer (the adapter's, or the core's after SESSION_LOST): its epoch, a loss, its skips. */
    private connected;
    /**
     * An event got SESSION_LOST: Connect again with the lost epoch (the arbiter answers
     * SESSION_STATE_LOST and a new epoch), hand out the loss ({@link sessionLost}) and go
     * on in the new epoch: true, and the event is sent again. False when there is no
     * connection to Connect on, or Connect failed (the event is then dropped).
     */
    private lostEpoch;
    /**
     * The arbiter's store lost the session's epoch `old` (SESSION_LOST; the session goes
     * on in `next`). Nothing of it is known any more, so: every job not yet decided here
     * is released (`cancel` or `abortPrepare`, with the error: no commit was acted on) and
     * never completed (its job id is NOT_FOUND in the new epoch); every live call id of
     * the lost epoch (registered, not answered, not dead) gets a function response with
     * status "unknown" (the model must hear about each, and whether its action happened
     * is unknown: a job already handed out as `commit` is among them); then a
     * `sessionLost` action lists them. Effect seqs start again in the new epoch.
     */
    private sessionLost;
    private registered;
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
     * after the last seq streamed, as long as the core is open.
     */
    private runWatch;
    /**
     * One streamed effect: held a moment (WATCH_HOLD_MS), then acted on unless a unary
     * reply handed it out meanwhile.
     */
    private stream;
    /** Acts on the streamed effects held, as one Effects (in seq order per kind). */
    private flushWatched;
    /**
     * Lets the stream end (it does once the session is closed), up to `waitMs`, then
     * cancels it; acts on what it streamed.
     */
    private stopWatch;
    /**
     * ConfigureSession, once, before the session's first other RPC (only when the core was
     * given options). If it fails, the RPC that needed it is not sent (the error
     * propagates) and the next one tries again.
     */
    private configure;
    private job;
    /** The Decide loop of one side-effecting job; never rejects. */
    private drive;
    /**
     * Long-polls Decide until COMMIT or CANCEL, under the Decide contract (see
     * {@link SessionCore}). While the prepare runs it asks with prepared=false, and re-asks
     * with prepared=true the moment the app reports it. Before each Decide it waits until
     * every event observed so far was delivered ({@link awaitDelivered}); a Decide waiting
     * when an event gets stuck (the outbox's `onStuck`) is cancelled and asked again after
     * that wait. A COMMIT received is returned: it stands.
     */
    private decide;
    /**
     * Waits until every event observed so far was delivered (or dropped), before a Decide.
     * Throws {@link UndeliveredEventsError} if the session closed first, or if they are
     * still undelivered `maxElapsedMs` (the client's {@link RetryPolicy}) after `failing`
     * (when the job's Decide failures in a row began; now if none): the arbiter is
     * unreachable, as a Decide failing that long would say. Throws the job's abort reason
     * if the job is aborted (closed, lost) meanwhile.
     */
    private awaitDelivered;
    /**
     * Complete, asked again past the service config's attempts on UNAVAILABLE,
     * DEADLINE_EXCEEDED or CANCELLED (a store outage), backing off as the client's
     * {@link RetryPolicy} says (RetryInfo as the least wait) for at most `maxElapsedMs`
     * since the first failure; then the error is thrown. Complete is idempotent by job id
     * (the same report returns the same effects, handed out once per seq), so asking again
     * is safe. Any other error is thrown at once.
     */
    private complete;
    private effects;
    /**
     * A non-final response (ReportProgress): handed out with `willContinue` while its call
     * is live and unanswered; never marks the call answered.
     */
    private interim;
    private emit;
}
