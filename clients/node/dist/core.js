import { status } from "@grpc/grpc-js";
import { context } from "@opentelemetry/api";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterError, FailedPreconditionError, NotFoundError, SessionLostError } from "./errors.js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
const CANCELLATION_REASON = {
    withdrawn: pb.CancellationReason.CANCELLATION_REASON_WITHDRAWN,
    provider_timeout: pb.CancellationReason.CANCELLATION_REASON_PROVIDER_TIMEOUT,
};
/** The warning {@link SessionCoreOptions.transcriptWarningMs} is about, for sessionId. */
export function noTranscriptWarning(sessionId, waitedMs) {
    return (`arbiter: session ${sessionId}: the user's voice activity ended ${waitedMs} ms ago and no input transcript ` +
        `has arrived in this session. Is input transcription on (Gemini Live: config.inputAudioTranscription = {}; ` +
        `OpenAI Realtime: session.audio.input.transcription)? Without transcripts the arbiter cannot hear "stop", ` +
        `and user speech while a job is prepared cancels it after the tool policy's transcript_timeout.`);
}
/**
 * The codes on which the outbox retries an event. CANCELLED is one the core did not ask
 * for (its own cancellation rejects with the signal's reason): a server going away.
 */
export const RETRIED_CODES = new Set([status.UNAVAILABLE, status.ABORTED, status.DEADLINE_EXCEEDED, status.CANCELLED]);
/**
 * The codes on which a job's Decide and Complete are asked again by the core once the
 * service config's attempts are spent (see {@link SessionCore}): a store outage
 * (UNAVAILABLE, reason STORE_UNAVAILABLE), a deadline spent waiting for it, a server
 * going away (a CANCELLED the core did not ask for). Both RPCs are idempotent.
 */
const AGAIN_CODES = new Set([status.UNAVAILABLE, status.DEADLINE_EXCEEDED, status.CANCELLED]);
const ABORTED_ONLY = new Set([status.ABORTED]);
/** Why a job or call of a lost epoch ends as it does (SessionCore.sessionLost). */
const SESSION_LOST_REASON = "the arbiter lost this session (its store restarted without it): whether this call's action happened is unknown";
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
export const DELIVERY_STUCK_MS = 100;
/**
 * A job's Decide could not be asked: the events observed before it stayed undelivered
 * (the session closed first, or the arbiter was unreachable for the retry policy's
 * `maxElapsedMs`). Nothing is committed: the job is released and completed as failed.
 */
export class UndeliveredEventsError extends Error {
    constructor(message) {
        super(message);
        this.name = "UndeliveredEventsError";
    }
}
/**
 * The `seq` numbers acted on: every one up to `high` (the contiguous high-water mark),
 * plus those above it. Bounded: a gap that stays open while more than `limit` later
 * seqs pile up is given up (the server's log keeps only the last 256 effects).
 */
class Seqs {
    limit;
    high = 0;
    above = new Set();
    constructor(limit = 1024) {
        this.limit = limit;
    }
    has(seq) {
        return seq <= this.high || this.above.has(seq);
    }
    add(seq) {
        if (this.has(seq))
            return;
        this.above.add(seq);
        if (this.above.size > this.limit)
            this.high = Math.min(...this.above) - 1;
        while (this.above.delete(this.high + 1))
            this.high++;
    }
}
/**
 * Watch: an effect streamed is acted on after this delay (ms), and once no unary RPC of
 * the core is in flight (at most WATCH_HOLD_MAX_MS), so the reply that carries it,
 * which usually lands a moment later, hands it out in its own order.
 */
const WATCH_HOLD_MS = 50;
const WATCH_HOLD_MAX_MS = 500;
const BEHAVIOR = { BLOCKING: pb.Behavior.BEHAVIOR_BLOCKING, NON_BLOCKING: pb.Behavior.BEHAVIOR_NON_BLOCKING };
const RUN_STATE = {
    [pb.RunState.RUN_STATE_OPENED]: "opened",
    [pb.RunState.RUN_STATE_CONFIRMED]: "confirmed",
    [pb.RunState.RUN_STATE_REFUSED]: "refused",
    [pb.RunState.RUN_STATE_EXPIRED]: "expired",
    [pb.RunState.RUN_STATE_CANCELLED]: "cancelled",
};
const SCHEDULING = {
    [pb.Scheduling.SCHEDULING_WHEN_IDLE]: "WHEN_IDLE",
    [pb.Scheduling.SCHEDULING_INTERRUPT]: "INTERRUPT",
    [pb.Scheduling.SCHEDULING_SILENT]: "SILENT",
};
class Job {
    id;
    call;
    sideEffect;
    prepared = false;
    settled = false; // decided locally (commit/cancel handed out) or reported failed
    abort = new AbortController();
    loop;
    ready;
    whenPrepared = new Promise((resolve) => (this.ready = resolve));
    constructor(id, call, sideEffect) {
        this.id = id;
        this.call = call;
        this.sideEffect = sideEffect;
    }
    markPrepared() {
        this.prepared = true;
        this.ready();
    }
}
/** A promise whose rejection counts as handled: a caller who does not await it gets no unhandled rejection. */
function handled(p) {
    p.catch(() => undefined);
    return p;
}
/** How long ago `observedMs` (performance.now()) was, as a Duration. */
function ageSince(observedMs) {
    const ns = Math.max(0, Math.round((performance.now() - observedMs) * 1e6));
    return { seconds: Math.floor(ns / 1e9), nanos: ns % 1e9 };
}
/**
 * A promise that settles once all of `ps` have: rejected with the first one's error (in
 * the given order) if any rejected. For a translator whose one provider message makes
 * several events.
 */
export function together(ps) {
    if (ps.length === 1)
        return ps[0];
    return handled(Promise.allSettled(ps).then((rs) => {
        const bad = rs.find((r) => r.status === "rejected");
        if (bad)
            throw bad.reason;
    }));
}
/**
 * The events a session observed, delivered in order, one at a time, each attempt with
 * its age; see {@link SessionCore}. `observed` counts the events put so far and
 * `settled` those delivered or dropped: always a prefix, since delivery is FIFO.
 */
class Outbox {
    policy;
    busy;
    before;
    lost;
    log;
    observed = 0;
    settled = 0;
    closed = false;
    /** An event undelivered this long after it was observed is stuck (ms; {@link DELIVERY_STUCK_MS}). */
    stuckMs = DELIVERY_STUCK_MS;
    queue = [];
    running = false;
    waiters = [];
    stop = new AbortController();
    stuckListeners = new Set();
    constructor(policy, busy, before, // run before each attempt (ConfigureSession, once); fails like it
    lost, // SESSION_LOST: true when the event may be sent again (a new epoch)
    log) {
        this.policy = policy;
        this.busy = busy;
        this.before = before;
        this.lost = lost;
        this.log = log;
    }
    put(what, send, handle, retried = RETRIED_CODES) {
        const observed = performance.now();
        if (this.closed) {
            this.log.warn(`arbiter: ${what} observed after the session was closed: not delivered`);
            return Promise.resolve();
        }
        let resolve, reject;
        const done = handled(new Promise((res, rej) => ((resolve = res), (reject = rej))));
        this.queue.push({ index: ++this.observed, what, observed, send, handle, retried, ctx: context.active(), resolve, reject });
        if (!this.running)
            void this.run();
        return done;
    }
    /** Waits until every event up to `index` was delivered or dropped: true; false if the outbox closed first. */
    waitSettled(index) {
        if (this.settled >= index)
            return Promise.resolve(true);
        if (this.closed)
            return Promise.resolve(false);
        return new Promise((resolve) => this.waiters.push({ index, resolve }));
    }
    /** Waits (at most `ms`) until every event observed so far was delivered or dropped. */
    async drain(ms) {
        let timer;
        const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(false), ms)));
        try {
            return await Promise.race([this.waitSettled(this.observed), timeout]);
        }
        finally {
            clearTimeout(timer);
        }
    }
    /**
     * Calls `fn(why)` whenever an event is stuck: an attempt to deliver it failed (retried
     * or dropped), or it is still undelivered {@link stuckMs} after it was observed (once
     * per event). Returns the function that stops it. A waiting Decide listens, to abort.
     */
    onStuck(fn) {
        this.stuckListeners.add(fn);
        return () => void this.stuckListeners.delete(fn);
    }
    stuck(why) {
        for (const fn of [...this.stuckListeners])
            fn(why);
    }
    /** Stops delivering: the events still queued are dropped (logged); waiters learn they never will be delivered. */
    close() {
        if (this.closed)
            return;
        this.closed = true;
        this.stop.abort();
        if (this.queue.length > 0) {
            this.log.error(`arbiter: the session closed with ${this.queue.length} observed events undelivered: ${this.queue.map((e) => e.what).join(", ")}`);
        }
        for (const ev of this.queue.splice(0))
            ev.resolve();
        for (const w of this.waiters.splice(0))
            w.resolve(false);
    }
    async run() {
        this.running = true;
        try {
            while (this.queue.length > 0 && !this.closed) {
                const ev = this.queue[0];
                // The head is the oldest event undelivered: the ones behind it get their own
                // timer when they become the head (already due if they waited that long).
                const timer = setTimeout(() => this.stuck(`${ev.what} undelivered ${this.stuckMs} ms after it was observed`), Math.max(0, ev.observed + this.stuckMs - performance.now()));
                let err;
                try {
                    err = await this.deliver(ev);
                }
                finally {
                    clearTimeout(timer);
                }
                if (this.closed)
                    return; // close() settled it
                this.queue.shift();
                this.settled = ev.index;
                if (err === undefined)
                    ev.resolve();
                else
                    ev.reject(err);
                const ready = this.waiters.filter((w) => w.index <= this.settled);
                this.waiters = this.waiters.filter((w) => w.index > this.settled);
                for (const w of ready)
                    w.resolve(true);
            }
        }
        finally {
            this.running = false;
        }
    }
    /**
     * Attempts until the event lands (undefined) or is dropped (the error); handing out the
     * reply's effects is part of it (an error there is returned, not retried).
     */
    async deliver(ev) {
        const p = this.policy();
        const signal = this.stop.signal;
        let delay = p.initialBackoffMs;
        let relost = 0; // sent again after SESSION_LOST: at most twice
        for (;;) {
            const ageMs = performance.now() - ev.observed;
            let pause = 0;
            this.busy(+1);
            try {
                await this.before();
                const res = await context.with(ev.ctx, () => ev.send(ageSince(ev.observed), signal)); // the age as it leaves
                if (signal.aborted)
                    return undefined; // closed meanwhile: nothing is handed out any more
                try {
                    await context.with(ev.ctx, () => ev.handle(res));
                    return undefined;
                }
                catch (err) {
                    this.log.error(`arbiter: handing out what ${ev.what} made due: ${err}`);
                    return err;
                }
            }
            catch (err) {
                if (signal.aborted)
                    return err;
                this.stuck(`${ev.what}: ${err}`);
                if (err instanceof SessionLostError) {
                    if (relost++ < 2 && (await this.lost(err))) {
                        this.log.warn(`arbiter: ${ev.what} (observed ${Math.round(ageMs)}ms ago): the session's epoch was lost; sending it in the new one`);
                        continue; // at once: sent with the new epoch
                    }
                    this.log.error(`arbiter: ${ev.what} (observed ${Math.round(ageMs)}ms ago) dropped: ${err}`);
                    return err;
                }
                if (!(err instanceof ArbiterError && ev.retried.has(err.code))) {
                    this.log.error(`arbiter: ${ev.what} (observed ${Math.round(ageMs)}ms ago) dropped: ${err}`);
                    return err;
                }
                // RetryInfo's delay is the least wait; a replica shutting down (SERVER_DRAINING,
                // delay 0) is asked again at once: the channel picks another one.
                pause = err.reason === "SERVER_DRAINING" ? 0 : Math.max(delay * (0.5 + Math.random() / 2), err.retryDelayMs ?? 0);
                this.log.warn(`arbiter: ${ev.what} (observed ${Math.round(ageMs)}ms ago): ${err}; retrying in ${Math.round(pause)}ms`);
            }
            finally {
                this.busy(-1);
            }
            try {
                await sleep(pause, undefined, { signal });
            }
            catch {
                return undefined; // closed
            }
            delay = Math.min(delay * p.multiplier, p.maxBackoffMs);
        }
    }
}
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
export class SessionCore {
    client;
    sessionId;
    onAction;
    /** Each tool's behavior (see {@link SessionCoreOptions.behaviors}). */
    behaviors;
    /**
     * The tool choice the model currently runs under: set `"none"` while the generation
     * runs with `toolChoice: none`, and calls that still arrive are rejected (answered).
     */
    toolChoice = "auto";
    /** The current model connection's id ({@link reconnect}); empty before the first. */
    connectionId = "";
    /**
     * The session's epoch as the last Connect returned it (`""` before the first): sent
     * with RegisterCall, ReportSpeech, ReportTranscript and ConfigureSession, so that a
     * session the arbiter's store lost is reported (SESSION_LOST) instead of being started
     * again silently: then the core Connects again and hands out a `sessionLost` action
     * (see {@link SessionLost}). Call {@link reconnect} for the first connection too, or
     * no epoch is known and a loss goes unnoticed.
     */
    epoch = "";
    log;
    resolveCall;
    readTranscript;
    waitMs;
    jobs = new Map();
    answered = new Set();
    dead = new Set();
    notes = new Set();
    interims = new Set(); // seqs (or contents) of interim responses handed out
    runs = new Set(); // seqs (or contents) of run updates handed out
    speaking = false;
    idleWaiters = [];
    transcriptWarningMs;
    transcriptSeen = false; // an input transcript arrived in this session
    transcriptWarned = false;
    transcriptTimer; // armed by a voice activity end while no transcript arrived
    closed = false;
    language;
    responseScheduling;
    timeZone;
    configured;
    configuring;
    seqs = new Seqs(); // the seqs acted on (of the current epoch: a new one starts its log again)
    calls = new Map(); // call ids registered (live ones: not answered, not dead)
    eventPrefix = randomBytes(6).toString("hex"); // event ids: unique across cores of one session id
    eventCount = 0;
    watchIteration = new AbortController(); // aborted to reopen the Watch (a new epoch)
    watchOn;
    watchLoop;
    watchStop = new AbortController();
    watchLast = 0; // the highest seq the Watch streamed
    watched = new Map(); // streamed, not acted on yet
    flushTimer;
    flushing = Promise.resolve(); // flushes run one after another
    inflight = 0; // unary RPCs (with their effects) under way
    outbox;
    /**
     * @param client the {@link ArbiterClient}.
     * @param sessionId the arbiter session id (one per model connection), 1 to 128
     *   characters from `[A-Za-z0-9_.:-]`.
     * @param onAction called with each action, in order.
     */
    constructor(client, sessionId, onAction, opts = {}) {
        this.client = client;
        this.sessionId = sessionId;
        this.onAction = onAction;
        this.behaviors = { ...opts.behaviors };
        this.resolveCall = opts.resolveCall;
        this.readTranscript = opts.readTranscript;
        this.waitMs = opts.decideWaitMs ?? 20_000;
        this.log = opts.logger ?? console;
        this.language = opts.language ?? "";
        this.responseScheduling = opts.responseScheduling ?? false;
        this.timeZone = opts.timeZone ?? "";
        this.configured = !(this.language || this.responseScheduling || this.timeZone); // nothing to send
        this.watchOn = opts.watch ?? true;
        this.transcriptWarningMs = opts.transcriptWarningMs ?? 3000;
        this.outbox = new Outbox(() => this.client.retry, (n) => (this.inflight += n), () => this.configure(), (err) => this.lostEpoch(err), this.log);
    }
    /**
     * True while the model is not speaking, as far as the core saw: no model audio since
     * its last turn complete, barge-in or reconnect. For `sendNote` with `when:
     * "when_idle"`: see {@link whenIdle}.
     */
    get modelIdle() {
        return !this.modelSpeaking;
    }
    /**
     * Resolves once the model is idle: at once if it is ({@link modelIdle}), else at its
     * next turn complete, barge-in or reconnect, or when the core closes. A translator
     * awaits it before sending a `when_idle` note (a user turn while the model speaks cuts
     * its reply in half).
     */
    whenIdle() {
        if (!this.modelSpeaking || this.closed)
            return Promise.resolve();
        return new Promise((resolve) => this.idleWaiters.push(resolve));
    }
    get modelSpeaking() {
        return this.speaking;
    }
    set modelSpeaking(on) {
        this.speaking = on;
        if (!on)
            for (const w of this.idleWaiters.splice(0))
                w();
    }
    // --- what happened in the model session (stamped now, delivered in order) ---------
    /**
     * The model issued a function call: RegisterCall. What comes back: `execute`, function
     * responses, skips, notes.
     */
    functionCall(call) {
        if (this.resolveCall)
            call = this.resolveCall(call);
        const name = call.name;
        const callId = call.id ?? "";
        const args = { ...call.args };
        const behavior = call.behavior ?? this.behaviors[name];
        const rawArgs = call.rawArgs ?? "";
        const businessKey = call.businessKey ?? "";
        const toolChoice = (call.toolChoice ?? this.toolChoice) === "none" ? pb.ToolChoice.TOOL_CHOICE_NONE : pb.ToolChoice.TOOL_CHOICE_AUTO;
        return this.outbox.put(`RegisterCall(${callId || name})`, (age, signal) => this.client.registerCall({ sessionId: this.sessionId, callId, tool: name, args, rawArgs, businessKey, behavior: behavior ? BEHAVIOR[behavior] : pb.Behavior.BEHAVIOR_UNSPECIFIED, toolChoice, age, epoch: this.epoch }, { retry: false, signal }), (res) => this.registered(res, name, args), callId ? RETRIED_CODES : ABORTED_ONLY);
    }
    /**
     * The user started speaking (Gemini `ACTIVITY_START`, OpenAI
     * `input_audio_buffer.speech_started`): it holds due commits until the utterance's
     * transcript is in. `utteranceId`: the provider's id for the utterance, when it gives
     * one (OpenAI's `item_id`); a transcript naming the same id belongs to it.
     */
    voiceActivityStart(utteranceId) {
        return this.speech(pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_START, utteranceId);
    }
    /** The user stopped speaking (`ACTIVITY_END` / `speech_stopped`); `utteranceId` as for the start. */
    voiceActivityEnd(utteranceId) {
        this.awaitTranscript();
        return this.speech(pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_END, utteranceId);
    }
    /**
     * The server cut the model's output: barge-in (Gemini `interrupted`). Every BLOCKING
     * call still unanswered dies (handed out as `skip`).
     */
    interrupted() {
        this.modelSpeaking = false;
        return this.speech(pb.SpeechEvent.SPEECH_EVENT_INTERRUPTED);
    }
    /** The model's audio started (call it for every audio chunk: only the first of a turn is reported). */
    modelOutputStart() {
        if (this.modelSpeaking)
            return Promise.resolve();
        this.modelSpeaking = true;
        return this.speech(pb.SpeechEvent.SPEECH_EVENT_MODEL_OUTPUT_START);
    }
    /** The model finished generating its turn (its audio may still play). */
    generationComplete() {
        return this.speech(pb.SpeechEvent.SPEECH_EVENT_MODEL_GENERATION_COMPLETE);
    }
    /** The model's turn is over (Gemini `turnComplete`, OpenAI `response.done`): it is idle. */
    turnComplete() {
        this.modelSpeaking = false;
        return this.speech(pb.SpeechEvent.SPEECH_EVENT_MODEL_TURN_COMPLETE);
    }
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
    inputTranscript(text, final = true, utteranceId, reading) {
        if (!text || !text.trim())
            return Promise.resolve();
        if (final && reading === undefined && this.readTranscript)
            reading = this.readTranscript(text, utteranceId ?? "");
        this.transcriptSeen = true;
        clearTimeout(this.transcriptTimer);
        return this.transcript(pb.Role.ROLE_USER, text, !final, utteranceId, reading);
    }
    /** A piece of the model's output transcription (what it told the user). */
    outputTranscript(text, final = true) {
        if (!text)
            return Promise.resolve();
        return this.transcript(pb.Role.ROLE_MODEL, text, !final);
    }
    /**
     * The server withdrew these call ids (Gemini `toolCallCancellation`, an OpenAI
     * `function_call` item deleted): they are dead, handed out as `skip`, and an undecided
     * job of theirs is cancelled. `reason: "provider_timeout"`: the provider gave up
     * waiting for the response after its own timeout; the ids are dead too, but their job
     * is abandoned, not cancelled (a re-issue is deduplicated and answered live).
     */
    toolCallCancellation(callIds, reason = "withdrawn") {
        const ids = [...callIds];
        if (ids.length === 0)
            return Promise.resolve();
        const why = CANCELLATION_REASON[reason];
        const eventId = this.nextEventId();
        return this.outbox.put(`ReportToolCallCancellation(${ids.join(",")}${reason === "withdrawn" ? "" : `, ${reason}`})`, (age, signal) => this.client.reportToolCallCancellation({ sessionId: this.sessionId, callIds: ids, age, reason: why, eventId }, { retry: false, signal }), (res) => this.handedOut(res));
    }
    /**
     * Reports that the agent now talks to the model over a new connection (a reconnect,
     * Gemini session resumption) with id `connectionId`: Connect, in order with the events
     * (after those of the old connection, before those of the new one). Calls still
     * pending from earlier connections come back as `skip` (reason `connection_closed`):
     * never answer them on the new connection. Their jobs go on, and each outcome is
     * handed out as a `sendNote`. Call it for the first connection too, so that the calls
     * made on it are known to be its own. Resolves once it was delivered.
     */
    reconnect(connectionId) {
        this.modelSpeaking = false; // a new connection: nothing is playing
        return this.outbox.put(`Connect(${connectionId})`, (_age, signal) => this.client.connect({ sessionId: this.sessionId, connectionId, epoch: this.epoch }, { retry: false, signal }), async (res) => {
            this.connectionId = connectionId;
            await this.connected(res, undefined);
        });
    }
    /**
     * Resolves once every event observed so far was delivered (or dropped), or after
     * `timeoutMs`: true, or false if it timed out or the session closed first.
     */
    flush(timeoutMs) {
        return timeoutMs === undefined ? this.outbox.waitSettled(this.outbox.observed) : this.outbox.drain(timeoutMs);
    }
    // --- what the application reports --------------------------------------------------
    /**
     * Reports that the job's prepare finished: the core now asks Decide with
     * prepared=true (which starts the grace window) and hands out Commit or Cancel.
     */
    async prepared(jobId) {
        this.job(jobId).markPrepared();
    }
    /**
     * Reports that the side effect a `commit` asked for was performed; `result` (e.g. a
     * booking reference) goes into the function response.
     */
    async committed(jobId, result) {
        await this.complete(jobId, pb.Outcome.OUTCOME_COMMITTED, result);
    }
    /** Reports a read-only tool's result, which becomes its function response. */
    async result(jobId, result) {
        await this.complete(jobId, pb.Outcome.OUTCOME_RESULT, result);
    }
    /**
     * Reports that the side effect a `commit` asked for may or may not have happened (the
     * backend timed out): Complete OUTCOME_UNKNOWN. The job's calls are answered
     * `"unknown"` and a repeat is never executed again. Report the truth later, once
     * known, with {@link committed} or {@link failed} for the same job: that hands out the
     * authoritative note.
     */
    async unknown(jobId, result) {
        await this.complete(jobId, pb.Outcome.OUTCOME_UNKNOWN, result);
    }
    /**
     * Reports an interim result of a job still running (ReportProgress). When the session
     * takes response scheduling, it comes back as a non-final `sendFunctionResponse`
     * (`willContinue: true`) per live NON_BLOCKING call id of the job; otherwise the
     * arbiter drops it.
     */
    async progress(jobId, result) {
        await this.configure();
        await this.unary(() => this.client.reportProgress({ sessionId: this.sessionId, jobId, result }));
    }
    /**
     * Reports that the job failed (its prepare, its commit, or a read-only tool): nothing
     * was done. `error` (at most 4 KiB) is passed to the model.
     */
    async failed(jobId, error) {
        const job = this.job(jobId);
        job.settled = true;
        job.abort.abort();
        await this.complete(jobId, pb.Outcome.OUTCOME_FAILED, undefined, error);
    }
    /**
     * Closes the arbiter session (the model connection ended): delivers the events still
     * in the outbox (for at most `timeoutMs`; the rest are dropped), then CloseSession:
     * undecided jobs are cancelled (their prepares aborted) and unanswered ids become dead.
     * Waits up to `timeoutMs` for the Decide loops to hand out their last actions.
     */
    async close(timeoutMs = 10_000) {
        if (this.closed)
            return;
        this.closed = true;
        clearTimeout(this.transcriptTimer);
        this.modelSpeaking = false; // wakes whenIdle() waiters
        const deadline = Date.now() + timeoutMs;
        await this.outbox.drain(timeoutMs);
        this.outbox.close();
        try {
            await this.unary(() => this.client.closeSession({ sessionId: this.sessionId }));
        }
        catch (err) {
            if (!(err instanceof NotFoundError)) {
                await this.stopWatch(0);
                throw err;
            } // no session: nothing was reported
        }
        const loops = [...this.jobs.values()].flatMap((j) => (j.loop ? [j.loop] : []));
        await within(Promise.all(loops), Math.max(100, deadline - Date.now()));
        for (const j of this.jobs.values())
            j.abort.abort();
        // CloseSession ends the stream (OK) after the session's last effects.
        await this.stopWatch(Math.max(0, Math.min(2000, deadline - Date.now())));
    }
    /**
     * Poll: steps the session's timers and acts on every effect after the highest `seq`
     * acted on without a gap (`afterSeq`), the timer-made ones included, each once. For
     * agents that run without the Watch (`watch: false`); harmless with it. Nothing happens
     * before the session exists.
     */
    async poll() {
        const afterSeq = this.seqs.high;
        try {
            await this.unary(() => this.client.poll({ sessionId: this.sessionId, afterSeq }));
        }
        catch (err) {
            if (err instanceof NotFoundError)
                return; // no session yet: nothing can be due
            if (!(err instanceof FailedPreconditionError))
                throw err;
            // afterSeq older than the log keeps: what fell out of it is gone; take what this
            // step makes due.
            this.log.warn(`arbiter: Poll after seq ${afterSeq}: ${err}; polling without afterSeq`);
            await this.unary(() => this.client.poll({ sessionId: this.sessionId }));
        }
    }
    // --- internals ---------------------------------------------------------------------
    /** The next event id: stable across the event's redeliveries, so a retry the arbiter applied is answered `repeat`. */
    nextEventId() {
        return `${this.eventPrefix}.${++this.eventCount}`;
    }
    /**
     * A voice activity ended: unless an input transcript arrived in this session (or the
     * warning was given), arm the one-shot warning that none did
     * ({@link SessionCoreOptions.transcriptWarningMs}); a timer already armed keeps its
     * earlier deadline.
     */
    awaitTranscript() {
        if (this.transcriptSeen || this.transcriptWarned || this.closed || this.transcriptTimer || this.transcriptWarningMs <= 0)
            return;
        const ms = this.transcriptWarningMs;
        this.transcriptTimer = setTimeout(() => {
            if (this.transcriptSeen || this.closed)
                return;
            this.transcriptWarned = true;
            this.log.warn(noTranscriptWarning(this.sessionId, ms));
        }, ms);
        this.transcriptTimer.unref?.();
    }
    speech(event, utteranceId = "") {
        const eventId = this.nextEventId();
        return this.outbox.put(`ReportSpeech(${pb.speechEventToJSON(event)}${utteranceId ? `, ${utteranceId}` : ""})`, (age, signal) => this.client.reportSpeech({ sessionId: this.sessionId, event, utteranceId, age, eventId, epoch: this.epoch }, { retry: false, signal }), (res) => this.handedOut(res));
    }
    transcript(role, text, interim, utteranceId = "", reading) {
        const who = role === pb.Role.ROLE_USER ? "user" : "model";
        const eventId = this.nextEventId();
        return this.outbox.put(`ReportTranscript(${who}${interim ? ", interim" : ""}${utteranceId ? `, ${utteranceId}` : ""}: ${JSON.stringify(text.slice(0, 40))})`, (age, signal) => this.client.reportTranscript({ sessionId: this.sessionId, role, text, interim, utteranceId, age, eventId, epoch: this.epoch, reading }, { retry: false, signal }), (res) => this.handedOut(res));
    }
    /** What a delivered event's reply made due. */
    async handedOut(res) {
        this.startWatch();
        if (res.repeat) {
            // A retry of an event the arbiter had applied (its first answer was lost): nothing
            // changed, and what the first made due is in the effect log. The Watch streams it;
            // without one, a Poll after the last seq acted on hands it out.
            if (!this.watchOn)
                void this.poll().catch((err) => this.log.warn(`arbiter: Poll after a repeated event: ${err}`));
            return;
        }
        await this.effects(res.effects);
    }
    /** A Connect's answer (the adapter's, or the core's after SESSION_LOST): its epoch, a loss, its skips. */
    async connected(res, cause) {
        const old = this.epoch;
        if (res.state === pb.SessionState.SESSION_STATE_LOST && old !== "") {
            await this.sessionLost(old, res.epoch, cause ?? new SessionLostError(status.DATA_LOSS, `the session's epoch ${old} was lost`, "Connect"));
        }
        this.epoch = res.epoch;
        await this.handedOut(res);
    }
    /**
     * An event got SESSION_LOST: Connect again with the lost epoch (the arbiter answers
     * SESSION_STATE_LOST and a new epoch), hand out the loss ({@link sessionLost}) and go
     * on in the new epoch: true, and the event is sent again. False when there is no
     * connection to Connect on, or Connect failed (the event is then dropped).
     */
    async lostEpoch(err) {
        if (!this.connectionId)
            return false;
        try {
            const res = await this.client.connect({ sessionId: this.sessionId, connectionId: this.connectionId, epoch: this.epoch });
            await this.connected(res, err);
            return true;
        }
        catch (e) {
            this.log.error(`arbiter: Connect after ${err}: ${e}`);
            return false;
        }
    }
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
    async sessionLost(old, next, error) {
        const jobs = [...this.jobs.values()].filter((j) => !j.settled);
        const calls = [...this.calls].filter(([id]) => !this.answered.has(id) && !this.dead.has(id));
        this.log.error(`arbiter: session ${this.sessionId}: the arbiter lost epoch ${old} (${error.reason || error.codeName}); going on in ${next || "(none)"}; ` +
            `${calls.length} call(s) answered as of unknown outcome, ${jobs.length} undecided job(s) released`);
        this.seqs = new Seqs();
        this.watchLast = 0;
        this.watchIteration.abort(); // reopened from seq 0 of the new epoch
        for (const j of jobs) {
            j.settled = true;
            j.abort.abort();
            await this.emit({ type: j.prepared ? "cancel" : "abortPrepare", jobId: j.id, reason: SESSION_LOST_REASON, error });
        }
        for (const [id, c] of calls) {
            this.answered.add(id);
            await this.emit({
                type: "sendFunctionResponse", id, name: c.name, payload: { status: "unknown", reason: SESSION_LOST_REASON }, jobId: c.jobId,
                scheduling: null, willContinue: false, seq: 0,
            });
        }
        this.calls.clear();
        await this.emit({ type: "sessionLost", lostEpoch: old, epoch: next, callIds: calls.map(([id]) => id), jobIds: jobs.map((j) => j.id), error });
    }
    async registered(res, name, args) {
        this.startWatch();
        if (res.callId)
            this.calls.set(res.callId, { name, jobId: res.jobId });
        // DISPOSITION_RUN (and DUPLICATE, REJECT) executes nothing: what is due is in effects.
        // EXECUTE runs jobTool with jobArgs: the call's own, except for a confirmation call
        // that confirmed a run, which executes the run's tool.
        if (res.disposition === pb.Disposition.DISPOSITION_EXECUTE && !this.jobs.has(res.jobId)) {
            const job = new Job(res.jobId, { id: res.callId, name, args }, res.sideEffect);
            this.jobs.set(job.id, job);
            await this.emit({
                type: "execute", call: job.call, jobId: job.id, sideEffect: job.sideEffect, businessKey: res.businessKey,
                tool: res.jobTool || name, args: res.jobArgs ?? { ...args }, runId: res.runId,
            });
            if (job.sideEffect)
                job.loop = this.drive(job);
        }
        await this.effects(res.effects);
    }
    /**
     * Sends a unary RPC whose reply carries effects and acts on them (counted as in flight
     * meanwhile, see WATCH_HOLD_MS).
     */
    async unary(rpc) {
        this.inflight++;
        try {
            const res = await rpc();
            this.startWatch();
            await this.effects(res.effects);
            return res;
        }
        finally {
            this.inflight--;
        }
    }
    // --- Watch -----------------------------------------------------------------------
    /** Opens the Watch once the session exists (after an RPC that succeeded). */
    startWatch() {
        if (!this.watchOn || this.watchLoop || this.closed)
            return;
        this.watchLoop = this.runWatch().catch((err) => this.log.error(`arbiter: Watch(${this.sessionId}): ${err}`));
    }
    /**
     * Streams the session's effects until the server ends the stream (the session closed or
     * expired). The client resumes a lost stream itself; when it gives up, this reopens it
     * after the last seq streamed, as long as the core is open.
     */
    async runWatch() {
        const signal = this.watchStop.signal;
        let missing = 0; // NOT_FOUND in a row: a session not visible yet (another replica)
        let failures = 0;
        for (;;) {
            const after = Math.max(this.seqs.high, this.watchLast);
            const iteration = (this.watchIteration = new AbortController());
            const stop = AbortSignal.any([signal, iteration.signal]);
            try {
                for await (const w of this.client.watch(this.sessionId, after, stop)) {
                    missing = failures = 0;
                    this.stream(w);
                }
                return; // the server ended the stream
            }
            catch (err) {
                if (signal.aborted)
                    return;
                if (iteration.signal.aborted)
                    continue; // reopened: a new epoch
                if (err instanceof NotFoundError) {
                    if (this.closed || ++missing > 20) {
                        this.log.warn(`arbiter: Watch(${this.sessionId}): ${err}; no stream (call poll())`);
                        return;
                    }
                    await sleep(Math.min(50 * missing, 500), undefined, { signal }).catch(() => undefined);
                }
                else if (err instanceof FailedPreconditionError) {
                    // afterSeq beyond the log or older than it keeps: resynchronise.
                    if (this.closed || ++failures > 5) {
                        this.log.warn(`arbiter: Watch(${this.sessionId}): ${err}; no stream (call poll())`);
                        return;
                    }
                    const last = (await this.client.getSession({ sessionId: this.sessionId })).lastSeq;
                    this.log.error(`arbiter: Watch(${this.sessionId}) after seq ${after}: ${err}; resuming after seq ${last} (what lies between is lost)`);
                    this.watchLast = Math.max(this.watchLast, last);
                }
                else if (err instanceof ArbiterError && err.code === status.UNIMPLEMENTED) {
                    return; // the server has no Watch: poll() instead
                }
                else {
                    if (this.closed || ++failures > 5) {
                        this.log.error(`arbiter: Watch(${this.sessionId}): ${err}; giving up the stream (call poll())`);
                        return;
                    }
                    this.log.warn(`arbiter: Watch(${this.sessionId}): ${err}; reopening`);
                    await sleep(1000, undefined, { signal }).catch(() => undefined);
                }
            }
        }
    }
    /**
     * One streamed effect: held a moment (WATCH_HOLD_MS), then acted on unless a unary
     * reply handed it out meanwhile.
     */
    stream(w) {
        this.watchLast = Math.max(this.watchLast, w.seq);
        if (w.seq && this.seqs.has(w.seq))
            return;
        this.watched.set(w.seq, w);
        if (this.flushTimer)
            return;
        const start = Date.now();
        const later = () => {
            if (this.inflight > 0 && Date.now() - start < WATCH_HOLD_MAX_MS) {
                this.flushTimer = setTimeout(later, 10);
                return;
            }
            this.flushTimer = undefined;
            void this.flushWatched();
        };
        this.flushTimer = setTimeout(later, WATCH_HOLD_MS);
    }
    /** Acts on the streamed effects held, as one Effects (in seq order per kind). */
    flushWatched() {
        this.flushing = this.flushing.then(async () => {
            const held = [...this.watched.entries()].sort(([a], [b]) => a - b).map(([, w]) => w);
            this.watched.clear();
            const e = { responses: [], skips: [], notes: [], runs: [] };
            for (const w of held) {
                if (w.response)
                    e.responses.push(w.response);
                else if (w.skip)
                    e.skips.push(w.skip);
                else if (w.note)
                    e.notes.push(w.note);
                else if (w.run)
                    e.runs.push(w.run);
            }
            try {
                await this.effects(e);
            }
            catch (err) {
                this.log.error(`arbiter: acting on the Watch's effects: ${err}`);
            }
        });
        return this.flushing;
    }
    /**
     * Lets the stream end (it does once the session is closed), up to `waitMs`, then
     * cancels it; acts on what it streamed.
     */
    async stopWatch(waitMs) {
        this.watchOn = false; // never reopened
        if (this.watchLoop) {
            if (waitMs > 0)
                await within(this.watchLoop, waitMs);
            this.watchStop.abort();
            await this.watchLoop;
        }
        if (this.flushTimer)
            clearTimeout(this.flushTimer);
        this.flushTimer = undefined;
        if (this.watched.size > 0)
            await this.flushWatched();
        else
            await this.flushing;
    }
    /**
     * ConfigureSession, once, before the session's first other RPC (only when the core was
     * given options). If it fails, the RPC that needed it is not sent (the error
     * propagates) and the next one tries again.
     */
    async configure() {
        if (this.configured)
            return;
        // Concurrent callers share one request; a failed one is forgotten (the next retries).
        this.configuring ??= this.client
            .configureSession({ sessionId: this.sessionId, language: this.language, responseScheduling: this.responseScheduling, epoch: this.epoch, timeZone: this.timeZone })
            .then(() => void (this.configured = true))
            .finally(() => (this.configuring = undefined));
        await this.configuring;
    }
    job(jobId) {
        const job = this.jobs.get(jobId);
        if (!job)
            throw new Error(`job_id: ${JSON.stringify(jobId)} is not a job this adapter executed`);
        return job;
    }
    // --- Decide / Complete -------------------------------------------------------------
    /** The Decide loop of one side-effecting job; never rejects. */
    async drive(job) {
        let res;
        try {
            res = await this.decide(job);
        }
        catch (err) {
            if (job.settled || job.abort.signal.aborted)
                return;
            job.settled = true;
            const error = err instanceof ArbiterError ? err : undefined;
            const undelivered = err instanceof UndeliveredEventsError;
            const reason = undelivered ? err.message : `no decision from the arbiter: ${err}`;
            this.log.error(`arbiter: job ${job.id}: ${reason}; releasing the job (no commit)`);
            try {
                await this.emit({ type: job.prepared ? "cancel" : "abortPrepare", jobId: job.id, reason, error });
                const why = undelivered ? "the events observed could not be delivered, so no decision was asked; nothing was done" : "the arbiter could not be reached; nothing was done";
                await this.complete(job.id, pb.Outcome.OUTCOME_FAILED, undefined, why);
            }
            catch (e) {
                this.log.error(`arbiter: reporting job ${job.id} as failed: ${e}`);
            }
            return;
        }
        if (job.settled)
            return;
        job.settled = true;
        try {
            if (res.decision === pb.Decision.DECISION_COMMIT) {
                await this.emit({ type: "commit", jobId: job.id, reason: res.reason });
            }
            else {
                await this.emit({ type: job.prepared ? "cancel" : "abortPrepare", jobId: job.id, reason: res.reason });
                await this.complete(job.id, pb.Outcome.OUTCOME_CANCELLED);
            }
        }
        catch (e) {
            this.log.error(`arbiter: handing out the decision for job ${job.id}: ${e}`);
        }
    }
    /**
     * Long-polls Decide until COMMIT or CANCEL, under the Decide contract (see
     * {@link SessionCore}). While the prepare runs it asks with prepared=false, and re-asks
     * with prepared=true the moment the app reports it. Before each Decide it waits until
     * every event observed so far was delivered ({@link awaitDelivered}); a Decide waiting
     * when an event gets stuck (the outbox's `onStuck`) is cancelled and asked again after
     * that wait. A COMMIT received is returned: it stands.
     */
    async decide(job) {
        const wait = { seconds: Math.floor(this.waitMs / 1000), nanos: (this.waitMs % 1000) * 1e6 };
        await this.configure();
        let failing; // when the failures in a row began (Date.now())
        let delay = this.client.retry.initialBackoffMs;
        for (;;) {
            if (this.outbox.settled < this.outbox.observed) {
                await this.awaitDelivered(job, failing);
                continue; // more may have been observed meanwhile
            }
            // Nothing is undelivered from here until the request is sent (no await between).
            const prepared = job.prepared;
            const poll = new AbortController();
            const stop = () => poll.abort(job.abort.signal.reason);
            job.abort.signal.addEventListener("abort", stop, { once: true });
            let stuck; // why this Decide was aborted for an undelivered event
            const unlisten = this.outbox.onStuck((why) => {
                if (stuck !== undefined || poll.signal.aborted)
                    return;
                stuck = why;
                poll.abort(new Error(`aborted: ${why}`));
            });
            let res;
            try {
                // eventsDelivered: this core follows the delivery contract (above), so the
                // arbiter need not withhold a late commit from it (DecideRequest.events_delivered).
                const decide = this.client.decide({ sessionId: this.sessionId, jobId: job.id, prepared, wait, eventsDelivered: true }, poll.signal);
                if (prepared) {
                    res = await decide;
                }
                else {
                    const first = await Promise.race([decide, job.whenPrepared.then(() => undefined)]);
                    if (first === undefined) {
                        poll.abort(); // prepared meanwhile: ask again with prepared=true
                        await decide.catch(() => undefined);
                        continue;
                    }
                    res = first;
                }
            }
            catch (err) {
                if (stuck !== undefined && !job.abort.signal.aborted) {
                    // The answer did not arrive before the abort: nothing stands. Deliver, ask again.
                    this.log.warn(`arbiter: job ${job.id}: Decide aborted (${stuck}); asking again once the events observed are delivered`);
                    continue;
                }
                // The service config's attempts (5, about 1.5 s) are spent, or a server going away
                // reset the long-poll with a CANCELLED the core did not ask for (its own
                // cancellation rejects with the signal's reason): Decide changes nothing but the
                // prepared flag, so it is asked again, for at most the retry policy's
                // maxElapsedMs since the first failure in a row (a store outage a little longer
                // than the config's attempts must not release a job the user wanted).
                if (!(err instanceof ArbiterError && AGAIN_CODES.has(err.code)) || job.abort.signal.aborted)
                    throw err;
                failing ??= Date.now();
                const pause = Math.max(delay * (0.5 + Math.random() / 2), err.retryDelayMs ?? 0); // RetryInfo is the least wait
                if (Date.now() - failing + pause > this.client.retry.maxElapsedMs)
                    throw err;
                this.log.warn(`arbiter: job ${job.id}: Decide: ${err}; asking again in ${Math.round(pause)}ms`);
                await sleep(pause, undefined, { signal: job.abort.signal }).catch(() => undefined);
                delay = Math.min(delay * this.client.retry.multiplier, this.client.retry.maxBackoffMs);
                if (job.abort.signal.aborted)
                    throw err; // closed (or lost) meanwhile: drive() hands out nothing
                continue;
            }
            finally {
                unlisten();
                job.abort.signal.removeEventListener("abort", stop);
            }
            failing = undefined;
            delay = this.client.retry.initialBackoffMs;
            if (res.decision === pb.Decision.DECISION_COMMIT) {
                const late = this.outbox.observed - this.outbox.settled;
                if (late > 0) {
                    this.log.warn(`arbiter: job ${job.id}: acting on COMMIT; ${late} event(s) observed while its Decide was open were not delivered yet: the arbiter places them after the commit`);
                }
                return res;
            }
            if (res.decision === pb.Decision.DECISION_CANCEL)
                return res;
        }
    }
    /**
     * Waits until every event observed so far was delivered (or dropped), before a Decide.
     * Throws {@link UndeliveredEventsError} if the session closed first, or if they are
     * still undelivered `maxElapsedMs` (the client's {@link RetryPolicy}) after `failing`
     * (when the job's Decide failures in a row began; now if none): the arbiter is
     * unreachable, as a Decide failing that long would say. Throws the job's abort reason
     * if the job is aborted (closed, lost) meanwhile.
     */
    async awaitDelivered(job, failing) {
        const maxMs = this.client.retry.maxElapsedMs;
        const left = Math.max(0, maxMs - (Date.now() - (failing ?? Date.now())));
        let timer;
        let onAbort;
        try {
            const outcome = await Promise.race([
                this.outbox.waitSettled(this.outbox.observed).then((ok) => (ok ? "delivered" : "closed")),
                new Promise((resolve) => (timer = setTimeout(() => resolve("late"), left))),
                new Promise((resolve) => {
                    onAbort = () => resolve("aborted");
                    if (job.abort.signal.aborted)
                        onAbort();
                    else
                        job.abort.signal.addEventListener("abort", onAbort, { once: true });
                }),
            ]);
            if (outcome === "aborted")
                job.abort.signal.throwIfAborted();
            if (outcome === "closed")
                throw new UndeliveredEventsError("the session closed before the events observed were delivered; no Decide was asked");
            if (outcome === "late") {
                throw new UndeliveredEventsError(`the events observed were still undelivered after ${maxMs} ms (the retry policy's maxElapsedMs); no Decide was asked`);
            }
        }
        finally {
            clearTimeout(timer);
            if (onAbort)
                job.abort.signal.removeEventListener("abort", onAbort);
        }
    }
    /**
     * Complete, asked again past the service config's attempts on UNAVAILABLE,
     * DEADLINE_EXCEEDED or CANCELLED (a store outage), backing off as the client's
     * {@link RetryPolicy} says (RetryInfo as the least wait) for at most `maxElapsedMs`
     * since the first failure; then the error is thrown. Complete is idempotent by job id
     * (the same report returns the same effects, handed out once per seq), so asking again
     * is safe. Any other error is thrown at once.
     */
    async complete(jobId, outcome, result, error = "") {
        await this.configure();
        const p = this.client.retry;
        let failing;
        let delay = p.initialBackoffMs;
        for (;;) {
            try {
                await this.unary(() => this.client.complete({ sessionId: this.sessionId, jobId, outcome, result, error }));
                return;
            }
            catch (err) {
                if (!(err instanceof ArbiterError && AGAIN_CODES.has(err.code)))
                    throw err;
                failing ??= Date.now();
                const pause = Math.max(delay * (0.5 + Math.random() / 2), err.retryDelayMs ?? 0);
                if (Date.now() - failing + pause > p.maxElapsedMs)
                    throw err;
                this.log.warn(`arbiter: job ${jobId}: Complete: ${err}; asking again in ${Math.round(pause)}ms`);
                await sleep(pause);
                delay = Math.min(delay * p.multiplier, p.maxBackoffMs);
            }
        }
    }
    // --- effects -> actions ------------------------------------------------------------
    async effects(all) {
        // Each effect is acted on once per seq, wherever it came from (a unary reply, a
        // retried one, the Watch, a Poll): claim the new ones before acting on any, so that a
        // concurrent path skips them. Effects without a seq (older servers) pass.
        const fresh = (items) => (items ?? []).filter((m) => {
            if (!m.seq)
                return true;
            if (this.seqs.has(m.seq))
                return false;
            this.seqs.add(m.seq);
            return true;
        });
        const e = { responses: fresh(all?.responses), skips: fresh(all?.skips), notes: fresh(all?.notes), runs: fresh(all?.runs) };
        // A note via FUNCTION_RESPONSE is already in the payload (`status_note`) of its call's
        // response in these same effects: that response carries its scheduling, and the note
        // is not sent again as a user turn.
        const riders = new Map();
        for (const n of e.notes) {
            if (n.via === pb.NoteVia.NOTE_VIA_FUNCTION_RESPONSE && n.callId && !riders.has(n.callId))
                riders.set(n.callId, n);
        }
        const carried = new Set(); // call ids whose response went out carrying a note
        for (const r of e.responses) {
            if (r.interim) {
                await this.interim(r);
                continue;
            }
            if (this.dead.has(r.callId)) {
                this.log.warn(`arbiter: dropping a response for dead call ${r.callId}`);
                continue;
            }
            if (this.answered.has(r.callId))
                continue; // a retried RPC returns the same answer: send it once
            this.answered.add(r.callId);
            const rider = riders.get(r.callId);
            if (rider)
                carried.add(r.callId);
            const scheduling = (rider && SCHEDULING[rider.scheduling]) ?? null;
            await this.emit({ type: "sendFunctionResponse", id: r.callId, name: r.name, payload: r.payload ?? {}, jobId: r.jobId, scheduling, willContinue: false, seq: r.seq });
        }
        for (const s of e.skips) {
            if (this.dead.has(s.callId) || this.answered.has(s.callId))
                continue;
            this.dead.add(s.callId);
            await this.emit({ type: "skip", id: s.callId, name: s.name, reason: s.reason, jobId: s.jobId, seq: s.seq });
        }
        for (const n of e.notes) {
            const key = `${n.jobId}\n${n.runId}\n${n.text}`;
            if (this.notes.has(key))
                continue;
            this.notes.add(key);
            if (n.via === pb.NoteVia.NOTE_VIA_FUNCTION_RESPONSE) {
                if (carried.has(n.callId))
                    continue; // it rode on that function response
                // Its response was not handed out here (dead, or answered before): the model would
                // never see it, so it goes as a user turn, as `deliver` says.
                this.log.warn(`arbiter: the note for job ${n.jobId} rides on call ${n.callId}, whose response was not handed out: sending it as a user turn`);
            }
            const when = n.deliver === pb.Delivery.DELIVERY_WHEN_IDLE ? "when_idle" : "now";
            await this.emit({ type: "sendNote", text: n.text, when, jobId: n.jobId, why: n.why, seq: n.seq });
        }
        for (const u of e.runs) {
            const key = u.seq ? String(u.seq) : `${u.runId}\n${u.state}\n${u.callId}`;
            if (this.runs.has(key))
                continue; // a retried RPC returns the same update
            this.runs.add(key);
            const state = RUN_STATE[u.state];
            if (!state)
                continue;
            await this.emit({ type: "run", runId: u.runId, tool: u.tool, state, callId: u.callId, jobId: u.jobId, reason: u.reason, seq: u.seq });
        }
    }
    /**
     * A non-final response (ReportProgress): handed out with `willContinue` while its call
     * is live and unanswered; never marks the call answered.
     */
    async interim(r) {
        if (this.dead.has(r.callId) || this.answered.has(r.callId))
            return;
        const key = r.seq ? String(r.seq) : `${r.callId}\n${JSON.stringify(r.payload)}`;
        if (this.interims.has(key))
            return; // a retried RPC returns the same interim response
        this.interims.add(key);
        await this.emit({ type: "sendFunctionResponse", id: r.callId, name: r.name, payload: r.payload ?? {}, jobId: r.jobId, scheduling: null, willContinue: true, seq: r.seq });
    }
    async emit(action) {
        await this.onAction(action);
    }
}
/** Waits for `p`, at most `ms`. */
async function within(p, ms) {
    let timer;
    const timeout = new Promise((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([p, timeout]);
    clearTimeout(timer);
}
