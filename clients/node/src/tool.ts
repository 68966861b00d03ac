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
import { status } from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterError } from "./errors.js";
import * as pb from "./gen/arbiter/v1/arbiter.js";

/** The arbiter cancelled the job while it was being prepared. */
export class JobCancelled extends Error {
  constructor(message: string) {
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
  constructor(message: string) {
    super(message);
    this.name = "JobTaken";
  }
}

/** The arbiter could not be asked for `maxElapsedMs`: the job fails closed (nothing committed). */
export class ArbiterUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArbiterUnavailable";
  }
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

const AGAIN: ReadonlySet<status> = new Set([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]);

const OUTCOME_STATUS: Partial<Record<pb.Outcome, string>> = {
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
  /** The job id, once the arbiter named it. */
  jobId = "";
  /** COMMIT was decided (the backend may have committed from here on). */
  decidedCommit = false;
  /** CANCEL was decided. */
  decidedCancel = false;
  /** The payload the arbiter answered the call with, once reported. */
  payload: Record<string, unknown> | undefined;
  private reported = false;
  private readonly waitMs: number;
  private readonly maxElapsedMs: number;
  private sessionId: string;

  constructor(
    readonly client: ArbiterClient,
    readonly callId: string,
    opts: ToolJobOptions = {},
  ) {
    if (!callId) throw new Error("callId is required: the id the framework hands the tool");
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
  async begin(): Promise<void> {
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
  async preparing<T>(prepare: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    const stopWatch = new AbortController();
    const task = prepare(abort.signal);
    task.catch(() => undefined);
    const watch = this.watchCancel(stopWatch.signal);
    try {
      const first = await Promise.race([task.then((v) => ({ done: true as const, v })), watch.then((c) => ({ done: false as const, c }))]);
      if (first.done) return first.v;
      if (first.c) {
        this.decidedCancel = true;
        abort.abort(new JobCancelled(`call ${this.callId}: the arbiter cancelled the job while it was being prepared`));
        throw new JobCancelled(`call ${this.callId}: the arbiter cancelled the job while it was being prepared`);
      }
      return await task;
    } finally {
      stopWatch.abort();
    }
  }

  /** `Decide(prepared=true)` until COMMIT (true) or CANCEL (false). Throws {@link ArbiterUnavailable} to fail closed. */
  async commit(): Promise<boolean> {
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
  committed(result?: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.complete(pb.Outcome.OUTCOME_COMMITTED, result);
  }
  /** `Complete(CANCELLED)` (after a CANCEL). */
  cancelled(): Promise<Record<string, unknown>> {
    return this.complete(pb.Outcome.OUTCOME_CANCELLED);
  }
  /** `Complete(FAILED, error)`: nothing was done. */
  failed(error: string): Promise<Record<string, unknown>> {
    return this.complete(pb.Outcome.OUTCOME_FAILED, undefined, error);
  }
  /** `Complete(UNKNOWN)`: after COMMIT, the backend could not say whether it committed. */
  unknown(): Promise<Record<string, unknown>> {
    return this.complete(pb.Outcome.OUTCOME_UNKNOWN);
  }

  /** Reports what was left unreported (call it in a `finally`, with the error if one was thrown). Never throws. */
  async end(err?: unknown): Promise<void> {
    if (this.reported) return;
    try {
      if (this.decidedCancel) await this.cancelled();
      else if (err === undefined) await this.failed("the tool reported no outcome");
      else if (this.decidedCommit) await this.unknown();
      else await this.failed(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    } catch (e) {
      console.error(`arbiter: call ${this.callId}: reporting the outcome failed: ${e}`);
    }
  }

  private async decide(prepared: boolean, waitMs: number, signal?: AbortSignal): Promise<pb.DecideResponse> {
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
        if (!this.sessionId && d.sessionId) this.sessionId = d.sessionId;
        return d;
      } catch (err) {
        if (!(err instanceof ArbiterError) || !AGAIN.has(err.code) || signal?.aborted) throw err;
        if (Date.now() - start >= this.maxElapsedMs) throw new ArbiterUnavailable(`call ${this.callId}: the arbiter could not be asked: ${err.message}`);
        const pause = Math.max(delay * (0.5 + Math.random() / 2), err.retryDelayMs ?? 0);
        await sleep(pause, undefined, signal ? { signal } : undefined);
        delay = Math.min(delay * this.client.retry.multiplier, this.client.retry.maxBackoffMs);
      }
    }
  }

  /** Long-polls Decide(prepared=false) until CANCEL (true); never resolves when a Decide fails or `stop` aborts. */
  private async watchCancel(stop: AbortSignal): Promise<boolean> {
    try {
      while (!stop.aborted) {
        const d = await this.decide(false, this.waitMs, stop);
        if (d.decision === pb.Decision.DECISION_CANCEL) return true;
      }
    } catch {
      // the commit step asks again
    }
    return new Promise<boolean>(() => undefined);
  }

  private async complete(outcome: pb.Outcome, result?: Record<string, unknown>, error = ""): Promise<Record<string, unknown>> {
    const resp = await this.client.complete({ sessionId: this.sessionId, callId: this.callId, outcome, result, error });
    this.reported = true;
    for (const r of resp.effects?.responses ?? []) {
      if (r.callId === this.callId && !r.interim) this.payload = (r.payload ?? {}) as Record<string, unknown>;
    }
    // A call that died meanwhile is not answered: this only tells the framework.
    this.payload ??= { status: OUTCOME_STATUS[outcome] ?? "failed", answered: false };
    return this.payload;
  }
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
export function twoPhase<A extends unknown[], H>(client: ArbiterClient, t: TwoPhase<A, H>): (...args: A) => Promise<Record<string, unknown>> {
  return async (...args: A) => {
    const job = new ToolJob(client, t.callId(...args), t);
    const pj = (signal: AbortSignal): PhaseJob => ({ callId: job.callId, jobId: job.jobId, signal });
    const none = new AbortController().signal;
    let thrown: unknown;
    try {
      await job.begin();
      let hold: H;
      try {
        hold = await job.preparing((signal) => t.prepare(pj(signal), ...args));
      } catch (err) {
        if (err instanceof JobCancelled) {
          await t.release?.(undefined, "abortPrepare", pj(none));
          return await job.cancelled();
        }
        throw err;
      }
      let go: boolean;
      try {
        go = await job.commit();
      } catch (err) {
        await t.release?.(hold, "cancel", pj(none)); // fail closed: never commit on a decision not had
        throw err;
      }
      if (go) return await job.committed((await t.commit(hold, pj(none))) ?? undefined);
      await t.release?.(hold, "cancel", pj(none));
      return await job.cancelled();
    } catch (err) {
      thrown = err;
      if (err instanceof ArbiterUnavailable) return { status: "failed", executed: false, error: err.message };
      if (err instanceof JobTaken) return { status: "duplicate", executed: false, error: err.message }; // the arbiter answers the call
      throw err;
    } finally {
      await job.end(thrown);
    }
  };
}
