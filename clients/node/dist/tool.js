import { status } from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterError } from "./errors.js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
/** The arbiter cancelled the job while it was being prepared. */
export class JobCancelled extends Error {
    constructor(message) {
        super(message);
        this.name = "JobCancelled";
    }
}
/**
 * The job was already told to commit before this run prepared anything: another run of
 * the same job owns it (the provider issued the call id again in the same session, as
 * a retry or after a reconnect, and the framework ran the tool again). This run must
 * not prepare or commit: the side effect would happen twice. The arbiter answers the
 * call itself.
 */
export class JobTaken extends Error {
    constructor(message) {
        super(message);
        this.name = "JobTaken";
    }
}
/** The arbiter could not be asked for `maxElapsedMs`: the job fails closed (nothing committed). */
export class ArbiterUnavailable extends Error {
    constructor(message) {
        super(message);
        this.name = "ArbiterUnavailable";
    }
}
const AGAIN = new Set([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]);
const OUTCOME_STATUS = {
    [pb.Outcome.OUTCOME_COMMITTED]: "committed",
    [pb.Outcome.OUTCOME_CANCELLED]: "cancelled",
    [pb.Outcome.OUTCOME_FAILED]: "failed",
    [pb.Outcome.OUTCOME_UNKNOWN]: "unknown",
};
/**
 * One side-effecting function call's job, named by its call id. Call {@link begin}
 * first; report one outcome; {@link end} (in a `finally`) reports what was left
 * unreported: cancelled after a CANCEL, else failed before a COMMIT and unknown after
 * one (the backend may have committed).
 */
export class ToolJob {
    client;
    callId;
    /** The job id, once the arbiter named it. */
    jobId = "";
    /** COMMIT was decided (the backend may have committed from here on). */
    decidedCommit = false;
    /** CANCEL was decided. */
    decidedCancel = false;
    /** The payload the arbiter answered the call with, once reported. */
    payload;
    reported = false;
    waitMs;
    maxElapsedMs;
    sessionId;
    constructor(client, callId, opts = {}) {
        this.client = client;
        this.callId = callId;
        if (!callId)
            throw new Error("callId is required: the id the framework hands the tool");
        this.waitMs = opts.decideWaitMs ?? 20000;
        this.maxElapsedMs = opts.maxElapsedMs ?? 20000;
        this.sessionId = opts.sessionId ?? "";
    }
    /**
     * `Decide(prepared=false, wait=0)`: the arbiter learns this tool reports. Throws
     * {@link JobTaken} (and reports nothing at {@link end}) when the job is already
     * decided COMMIT: a commit is decided only after a prepare, so another run of the
     * job prepared it.
     */
    async begin() {
        const d = await this.decide(false, 0);
        if (d.decision === pb.Decision.DECISION_COMMIT) {
            this.reported = true; // the other run reports
            throw new JobTaken(`call ${this.callId}: job ${d.jobId} was already told to commit (another run of it, for the same call id): not run again`);
        }
    }
    /**
     * Runs `prepare` (given an AbortSignal) while a `Decide(prepared=false)` long-poll
     * watches for a CANCEL: returns what it returns; on CANCEL its signal aborts and
     * {@link JobCancelled} is thrown.
     */
    async preparing(prepare) {
        const abort = new AbortController();
        const stopWatch = new AbortController();
        const task = prepare(abort.signal);
        task.catch(() => undefined);
        const watch = this.watchCancel(stopWatch.signal);
        try {
            const first = await Promise.race([task.then((v) => ({ done: true, v })), watch.then((c) => ({ done: false, c }))]);
            if (first.done)
                return first.v;
            if (first.c) {
                this.decidedCancel = true;
                abort.abort(new JobCancelled(`call ${this.callId}: the arbiter cancelled the job while it was being prepared`));
                throw new JobCancelled(`call ${this.callId}: the arbiter cancelled the job while it was being prepared`);
            }
            return await task;
        }
        finally {
            stopWatch.abort();
        }
    }
    /** `Decide(prepared=true)` until COMMIT (true) or CANCEL (false). Throws {@link ArbiterUnavailable} to fail closed. */
    async commit() {
        for (;;) {
            const d = await this.decide(true, this.waitMs);
            if (d.decision === pb.Decision.DECISION_COMMIT) {
                this.decidedCommit = true;
                return true;
            }
            if (d.decision === pb.Decision.DECISION_CANCEL) {
                this.decidedCancel = true;
                return false;
            }
        }
    }
    /** `Complete(COMMITTED, result)`; returns the call's payload. */
    committed(result) {
        return this.complete(pb.Outcome.OUTCOME_COMMITTED, result);
    }
    /** `Complete(CANCELLED)` (after a CANCEL). */
    cancelled() {
        return this.complete(pb.Outcome.OUTCOME_CANCELLED);
    }
    /** `Complete(FAILED, error)`: nothing was done. */
    failed(error) {
        return this.complete(pb.Outcome.OUTCOME_FAILED, undefined, error);
    }
    /** `Complete(UNKNOWN)`: after COMMIT, the backend could not say whether it committed. */
    unknown() {
        return this.complete(pb.Outcome.OUTCOME_UNKNOWN);
    }
    /** Reports what was left unreported (call it in a `finally`, with the error if one was thrown). Never throws. */
    async end(err) {
        if (this.reported)
            return;
        try {
            if (this.decidedCancel)
                await this.cancelled();
            else if (err === undefined)
                await this.failed("the tool reported no outcome");
            else if (this.decidedCommit)
                await this.unknown();
            else
                await this.failed(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
        }
        catch (e) {
            console.error(`arbiter: call ${this.callId}: reporting the outcome failed: ${e}`);
        }
    }
    async decide(prepared, waitMs, signal) {
        const wait = { seconds: Math.floor(waitMs / 1000), nanos: (waitMs % 1000) * 1e6 };
        const start = Date.now();
        let delay = this.client.retry.initialBackoffMs;
        for (;;) {
            try {
                // No eventsDelivered: the tool does not observe the session's events (the wire
                // guard does), so it cannot declare them delivered; a late commit is withheld.
                const d = await this.client.decide({ sessionId: this.sessionId, callId: this.callId, prepared, wait }, signal);
                this.jobId = d.jobId;
                // Found once by the call id, named from here on (the index may later call the
                // id ambiguous: another session reused it).
                if (!this.sessionId && d.sessionId)
                    this.sessionId = d.sessionId;
                return d;
            }
            catch (err) {
                if (!(err instanceof ArbiterError) || !AGAIN.has(err.code) || signal?.aborted)
                    throw err;
                if (Date.now() - start >= this.maxElapsedMs)
                    throw new ArbiterUnavailable(`call ${this.callId}: the arbiter could not be asked: ${err.message}`);
                const pause = Math.max(delay * (0.5 + Math.random() / 2), err.retryDelayMs ?? 0);
                await sleep(pause, undefined, signal ? { signal } : undefined);
                delay = Math.min(delay * this.client.retry.multiplier, this.client.retry.maxBackoffMs);
            }
        }
    }
    /** Long-polls Decide(prepared=false) until CANCEL (true); never resolves when a Decide fails or `stop` aborts. */
    async watchCancel(stop) {
        try {
            while (!stop.aborted) {
                const d = await this.decide(false, this.waitMs, stop);
                if (d.decision === pb.Decision.DECISION_CANCEL)
                    return true;
            }
        }
        catch {
            // the commit step asks again
        }
        return new Promise(() => undefined);
    }
    async complete(outcome, result, error = "") {
        const resp = await this.client.complete({ sessionId: this.sessionId, callId: this.callId, outcome, result, error });
        this.reported = true;
        for (const r of resp.effects?.responses ?? []) {
            if (r.callId === this.callId && !r.interim)
                this.payload = (r.payload ?? {});
        }
        // A call that died meanwhile is not answered: this only tells the framework.
        this.payload ??= { status: OUTCOME_STATUS[outcome] ?? "failed", answered: false };
        return this.payload;
    }
}
/**
 * Makes a two-phase tool function from its phases: `(...args) =>` the arbiter's
 * payload for the call (return it to the framework; the guard sends the arbiter's own
 * response whatever the framework makes of it). A failure to reach the arbiter gives
 * `{status: "failed", executed: false}`; a job another run of the same call id already
 * prepared ({@link JobTaken}) gives `{status: "duplicate", executed: false}` and runs
 * no phase.
 */
export function twoPhase(client, t) {
    return async (...args) => {
        const job = new ToolJob(client, t.callId(...args), t);
        const pj = (signal) => ({ callId: job.callId, jobId: job.jobId, signal });
        const none = new AbortController().signal;
        let thrown;
        try {
            await job.begin();
            let hold;
            try {
                hold = await job.preparing((signal) => t.prepare(pj(signal), ...args));
            }
            catch (err) {
                if (err instanceof JobCancelled) {
                    await t.release?.(undefined, "abortPrepare", pj(none));
                    return await job.cancelled();
                }
                throw err;
            }
            let go;
            try {
                go = await job.commit();
            }
            catch (err) {
                await t.release?.(hold, "cancel", pj(none)); // fail closed: never commit on a decision not had
                throw err;
            }
            if (go)
                return await job.committed((await t.commit(hold, pj(none))) ?? undefined);
            await t.release?.(hold, "cancel", pj(none));
            return await job.cancelled();
        }
        catch (err) {
            thrown = err;
            if (err instanceof ArbiterUnavailable)
                return { status: "failed", executed: false, error: err.message };
            if (err instanceof JobTaken)
                return { status: "duplicate", executed: false, error: err.message }; // the arbiter answers the call
            throw err;
        }
        finally {
            await job.end(thrown);
        }
    };
}
