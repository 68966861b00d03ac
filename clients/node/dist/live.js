import { status } from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterError, FailedPreconditionError, NotFoundError } from "./errors.js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
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
 * the adapter is in flight (at most WATCH_HOLD_MAX_MS), so the reply that carries it,
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
export class LiveAdapter {
    client;
    sessionId;
    onAction;
    /** Each tool's behavior (see {@link LiveAdapterOptions.behaviors}). */
    behaviors;
    /**
     * The tool choice the model currently runs under: set `"none"` while the generation
     * runs with `toolChoice: none`, and calls that still arrive are rejected (answered).
     */
    toolChoice = "auto";
    waitMs;
    log;
    jobs = new Map();
    answered = new Set();
    dead = new Set();
    notes = new Set();
    interims = new Set(); // seqs (or contents) of interim responses handed out
    runs = new Set(); // seqs (or contents) of run updates handed out
    /** The current model connection's id ({@link reconnect}); empty before the first. */
    connectionId = "";
    modelSpeaking = false;
    closed = false;
    language;
    responseScheduling;
    configured;
    configuring;
    seqs = new Seqs(); // the seqs acted on
    watchOn;
    watchLoop;
    watchStop = new AbortController();
    watchLast = 0; // the highest seq the Watch streamed
    watched = new Map(); // streamed, not acted on yet
    flushTimer;
    flushing = Promise.resolve(); // flushes run one after another
    inflight = 0; // unary RPCs (with their effects) under way
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
        this.waitMs = opts.decideWaitMs ?? 20_000;
        this.log = opts.logger ?? console;
        this.language = opts.language ?? "";
        this.responseScheduling = opts.responseScheduling ?? false;
        this.configured = !(this.language || this.responseScheduling); // nothing to send
        this.watchOn = opts.watch ?? true;
    }
    /**
     * Reports one Live server message to the arbiter and hands out what it made due. Feed
     * messages in the order they arrive, one at a time (await each). Rejects with an
     * {@link ArbiterError} when an RPC fails (the rest of that message is not reported);
     * the adapter stays usable.
     */
    async feed(msg) {
        const kind = msg.voiceActivity?.voiceActivityType;
        if (kind === "ACTIVITY_START")
            await this.speech(pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_START);
        else if (kind === "ACTIVITY_END")
            await this.speech(pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_END);
        const sc = msg.serverContent;
        if (sc) {
            // Gemini's input transcription arrives as pieces the arbiter appends to the
            // utterance: each is final (checked for stop intent); interim ones are not.
            await this.transcript(pb.Role.ROLE_USER, sc.interimInputTranscription?.text, true);
            await this.transcript(pb.Role.ROLE_USER, sc.inputTranscription?.text, false);
            if (!this.modelSpeaking && sc.modelTurn?.parts?.some((p) => p.inlineData && (p.inlineData.mimeType ?? "audio").startsWith("audio"))) {
                this.modelSpeaking = true;
                await this.speech(pb.SpeechEvent.SPEECH_EVENT_MODEL_OUTPUT_START);
            }
            await this.transcript(pb.Role.ROLE_MODEL, sc.outputTranscription?.text, false);
            if (sc.interrupted) {
                this.modelSpeaking = false;
                await this.speech(pb.SpeechEvent.SPEECH_EVENT_INTERRUPTED);
            }
            if (sc.generationComplete)
                await this.speech(pb.SpeechEvent.SPEECH_EVENT_MODEL_GENERATION_COMPLETE);
            if (sc.turnComplete) {
                this.modelSpeaking = false;
                await this.speech(pb.SpeechEvent.SPEECH_EVENT_MODEL_TURN_COMPLETE);
            }
        }
        for (const fc of msg.toolCall?.functionCalls ?? [])
            await this.register(fc);
        const ids = msg.toolCallCancellation?.ids ?? [];
        if (ids.length > 0) {
            await this.configure();
            await this.unary(() => this.client.reportToolCallCancellation({ sessionId: this.sessionId, callIds: ids }));
        }
    }
    /**
     * Reports that the job's prepare finished: the adapter now asks Decide with
     * prepared=true (which starts the grace window) and hands out Commit or Cancel.
     */
    async prepared(jobId) {
        this.job(jobId).markPrepared();
    }
    /**
     * Reports that the side effect a {@link Commit} asked for was performed; `result` (e.g.
     * a booking reference) goes into the function response.
     */
    async committed(jobId, result) {
        await this.complete(jobId, pb.Outcome.OUTCOME_COMMITTED, result);
    }
    /** Reports a read-only tool's result, which becomes its function response. */
    async result(jobId, result) {
        await this.complete(jobId, pb.Outcome.OUTCOME_RESULT, result);
    }
    /**
     * Reports that the side effect a {@link Commit} asked for may or may not have happened
     * (the backend timed out): Complete OUTCOME_UNKNOWN. The job's calls are answered
     * `"unknown"` and a repeat is never executed again. Report the truth later, once known,
     * with {@link committed} or {@link failed} for the same job: that hands out the
     * authoritative note.
     */
    async unknown(jobId, result) {
        await this.complete(jobId, pb.Outcome.OUTCOME_UNKNOWN, result);
    }
    /**
     * Reports an interim result of a job still running (ReportProgress). When the session
     * takes response scheduling, it comes back as a non-final `sendFunctionResponse`
     * (`willContinue: true`) per live NON_BLOCKING call id of the job; otherwise the arbiter
     * drops it.
     */
    async progress(jobId, result) {
        await this.configure();
        await this.unary(() => this.client.reportProgress({ sessionId: this.sessionId, jobId, result }));
    }
    /**
     * Reports that the agent now talks to the model over a new connection (a reconnect,
     * Gemini session resumption) with id `connectionId`: Connect. Calls still pending from
     * earlier connections come back as `skip` (reason `connection_closed`): never answer
     * them on the new connection. Their jobs go on, and each outcome is handed out as a
     * `sendNote`. Call it for the first connection too, so that the calls made on it are
     * known to be its own.
     */
    async reconnect(connectionId) {
        await this.configure();
        await this.unary(() => this.client.connect({ sessionId: this.sessionId, connectionId }), () => {
            this.connectionId = connectionId;
            this.modelSpeaking = false; // a new connection: nothing is playing
        });
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
     * Closes the arbiter session (the model connection ended): undecided jobs are cancelled
     * (their prepares aborted) and unanswered ids become dead. Waits up to `timeoutMs` for
     * the Decide loops to hand out their last actions.
     */
    async close(timeoutMs = 10_000) {
        if (this.closed)
            return;
        this.closed = true;
        const deadline = Date.now() + timeoutMs;
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
        await within(Promise.all(loops), timeoutMs);
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
    /**
     * Sends a unary RPC whose reply carries effects and acts on them (counted as in flight
     * meanwhile, see WATCH_HOLD_MS).
     */
    async unary(rpc, then) {
        this.inflight++;
        try {
            const res = await rpc();
            then?.(res);
            this.startWatch();
            await this.effects(res.effects);
            return res;
        }
        finally {
            this.inflight--;
        }
    }
    /** Opens the Watch once the session exists (after an RPC that succeeded). */
    startWatch() {
        if (!this.watchOn || this.watchLoop || this.closed)
            return;
        this.watchLoop = this.runWatch().catch((err) => this.log.error(`arbiter: Watch(${this.sessionId}): ${err}`));
    }
    /**
     * Streams the session's effects until the server ends the stream (the session closed or
     * expired). The client resumes a lost stream itself; when it gives up, this reopens it
     * after the last seq streamed, as long as the adapter is open.
     */
    async runWatch() {
        const signal = this.watchStop.signal;
        let missing = 0; // NOT_FOUND in a row: a session not visible yet (another replica)
        let failures = 0;
        for (;;) {
            const after = Math.max(this.seqs.high, this.watchLast);
            try {
                for await (const w of this.client.watch(this.sessionId, after, signal)) {
                    missing = failures = 0;
                    this.stream(w);
                }
                return; // the server ended the stream
            }
            catch (err) {
                if (signal.aborted)
                    return;
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
            void this.flush();
        };
        this.flushTimer = setTimeout(later, WATCH_HOLD_MS);
    }
    /** Acts on the streamed effects held, as one Effects (in seq order per kind). */
    flush() {
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
            await this.flush();
        else
            await this.flushing;
    }
    /**
     * ConfigureSession, once, before the session's first other RPC (only when the adapter
     * was given options). If it fails, the RPC that needed it is not sent (the error
     * propagates) and the next one tries again.
     */
    async configure() {
        if (this.configured)
            return;
        // Concurrent callers share one request; a failed one is forgotten (the next retries).
        this.configuring ??= this.client
            .configureSession({ sessionId: this.sessionId, language: this.language, responseScheduling: this.responseScheduling })
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
    async speech(event) {
        await this.configure();
        await this.unary(() => this.client.reportSpeech({ sessionId: this.sessionId, event }));
    }
    async transcript(role, text, interim) {
        if (!text || (role === pb.Role.ROLE_USER && !text.trim()))
            return;
        await this.configure();
        await this.unary(() => this.client.reportTranscript({ sessionId: this.sessionId, role, text, interim }));
    }
    async register(fc) {
        const name = fc.name ?? "";
        const args = { ...fc.args };
        const behavior = this.behaviors[name];
        await this.configure();
        this.inflight++;
        try {
            await this.registerCall(fc, name, args, behavior);
        }
        finally {
            this.inflight--;
        }
    }
    async registerCall(fc, name, args, behavior) {
        const res = await this.client.registerCall({
            sessionId: this.sessionId,
            callId: fc.id ?? "",
            tool: name,
            args,
            behavior: behavior ? BEHAVIOR[behavior] : pb.Behavior.BEHAVIOR_UNSPECIFIED,
            toolChoice: this.toolChoice === "none" ? pb.ToolChoice.TOOL_CHOICE_NONE : pb.ToolChoice.TOOL_CHOICE_AUTO,
        });
        this.startWatch();
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
            this.log.error(`arbiter: Decide(${job.id}) failed, releasing the job (no commit): ${err}`);
            const reason = `no decision from the arbiter: ${err}`;
            try {
                await this.emit({ type: job.prepared ? "cancel" : "abortPrepare", jobId: job.id, reason, error });
                await this.complete(job.id, pb.Outcome.OUTCOME_FAILED, undefined, "the arbiter could not be reached; nothing was done");
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
     * Long-polls Decide until COMMIT or CANCEL. While the prepare runs it asks with
     * prepared=false, and re-asks with prepared=true the moment the app reports it.
     */
    async decide(job) {
        const wait = { seconds: Math.floor(this.waitMs / 1000), nanos: (this.waitMs % 1000) * 1e6 };
        await this.configure();
        for (;;) {
            const prepared = job.prepared;
            const poll = new AbortController();
            const stop = () => poll.abort(job.abort.signal.reason);
            job.abort.signal.addEventListener("abort", stop, { once: true });
            try {
                const decide = this.client.decide({ sessionId: this.sessionId, jobId: job.id, prepared, wait }, poll.signal);
                let res;
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
                if (res.decision === pb.Decision.DECISION_COMMIT || res.decision === pb.Decision.DECISION_CANCEL)
                    return res;
            }
            finally {
                job.abort.signal.removeEventListener("abort", stop);
            }
        }
    }
    async complete(jobId, outcome, result, error = "") {
        await this.configure();
        await this.unary(() => this.client.complete({ sessionId: this.sessionId, jobId, outcome, result, error }));
    }
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
        for (const n of e?.notes ?? []) {
            if (n.via === pb.NoteVia.NOTE_VIA_FUNCTION_RESPONSE && n.callId && !riders.has(n.callId))
                riders.set(n.callId, n);
        }
        const carried = new Set(); // call ids whose response went out carrying a note
        for (const r of e?.responses ?? []) {
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
        for (const s of e?.skips ?? []) {
            if (this.dead.has(s.callId) || this.answered.has(s.callId))
                continue;
            this.dead.add(s.callId);
            await this.emit({ type: "skip", id: s.callId, name: s.name, reason: s.reason, jobId: s.jobId, seq: s.seq });
        }
        for (const n of e?.notes ?? []) {
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
        for (const u of e?.runs ?? []) {
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
