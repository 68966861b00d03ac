import type { Action, Call, RunState, Scheduling } from "./actions.js";
import type { ArbiterClient } from "./client.js";
import { status } from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";
import { ArbiterError, FailedPreconditionError, NotFoundError } from "./errors.js";
import * as pb from "./gen/arbiter/v1/arbiter.js";

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
  voiceActivity?: { voiceActivityType?: string };
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
 * The `seq` numbers acted on: every one up to `high` (the contiguous high-water mark),
 * plus those above it. Bounded: a gap that stays open while more than `limit` later
 * seqs pile up is given up (the server's log keeps only the last 256 effects).
 */
class Seqs {
  high = 0;
  private readonly above = new Set<number>();
  constructor(private readonly limit = 1024) {}
  has(seq: number): boolean {
    return seq <= this.high || this.above.has(seq);
  }
  add(seq: number): void {
    if (this.has(seq)) return;
    this.above.add(seq);
    if (this.above.size > this.limit) this.high = Math.min(...this.above) - 1;
    while (this.above.delete(this.high + 1)) this.high++;
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

const RUN_STATE: Partial<Record<pb.RunState, RunState>> = {
  [pb.RunState.RUN_STATE_OPENED]: "opened",
  [pb.RunState.RUN_STATE_CONFIRMED]: "confirmed",
  [pb.RunState.RUN_STATE_REFUSED]: "refused",
  [pb.RunState.RUN_STATE_EXPIRED]: "expired",
  [pb.RunState.RUN_STATE_CANCELLED]: "cancelled",
};

const SCHEDULING: Partial<Record<pb.Scheduling, Scheduling>> = {
  [pb.Scheduling.SCHEDULING_WHEN_IDLE]: "WHEN_IDLE",
  [pb.Scheduling.SCHEDULING_INTERRUPT]: "INTERRUPT",
  [pb.Scheduling.SCHEDULING_SILENT]: "SILENT",
};

class Job {
  prepared = false;
  settled = false; // decided locally (commit/cancel handed out) or reported failed
  abort = new AbortController();
  loop: Promise<void> | undefined;
  private ready!: () => void;
  readonly whenPrepared = new Promise<void>((resolve) => (this.ready = resolve));
  constructor(
    readonly id: string,
    readonly call: Call,
    readonly sideEffect: boolean,
  ) {}
  markPrepared(): void {
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
  /** Each tool's behavior (see {@link LiveAdapterOptions.behaviors}). */
  behaviors: Record<string, "BLOCKING" | "NON_BLOCKING">;
  /**
   * The tool choice the model currently runs under: set `"none"` while the generation
   * runs with `toolChoice: none`, and calls that still arrive are rejected (answered).
   */
  toolChoice: "auto" | "none" = "auto";

  private readonly waitMs: number;
  private readonly log: Pick<Console, "warn" | "error">;
  private readonly jobs = new Map<string, Job>();
  private readonly answered = new Set<string>();
  private readonly dead = new Set<string>();
  private readonly notes = new Set<string>();
  private readonly interims = new Set<string>(); // seqs (or contents) of interim responses handed out
  private readonly runs = new Set<string>(); // seqs (or contents) of run updates handed out
  /** The current model connection's id ({@link reconnect}); empty before the first. */
  connectionId = "";
  private modelSpeaking = false;
  private closed = false;
  private readonly language: string;
  private readonly responseScheduling: boolean;
  private configured: boolean;
  private configuring: Promise<void> | undefined;
  private readonly seqs = new Seqs(); // the seqs acted on
  private watchOn: boolean;
  private watchLoop: Promise<void> | undefined;
  private readonly watchStop = new AbortController();
  private watchLast = 0; // the highest seq the Watch streamed
  private readonly watched = new Map<number, pb.WatchResponse>(); // streamed, not acted on yet
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve(); // flushes run one after another
  private inflight = 0; // unary RPCs (with their effects) under way

  /**
   * @param client the {@link ArbiterClient}.
   * @param sessionId the arbiter session id (one per model connection), 1 to 128
   *   characters from `[A-Za-z0-9_.:-]`.
   * @param onAction called with each action, in order.
   */
  constructor(
    private readonly client: ArbiterClient,
    readonly sessionId: string,
    private readonly onAction: ActionHandler,
    opts: LiveAdapterOptions = {},
  ) {
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
  async feed(msg: LiveServerMessageLike): Promise<void> {
    const kind = msg.voiceActivity?.voiceActivityType;
    if (kind === "ACTIVITY_START") await this.speech(pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_START);
    else if (kind === "ACTIVITY_END") await this.speech(pb.SpeechEvent.SPEECH_EVENT_USER_ACTIVITY_END);
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
      if (sc.generationComplete) await this.speech(pb.SpeechEvent.SPEECH_EVENT_MODEL_GENERATION_COMPLETE);
      if (sc.turnComplete) {
        this.modelSpeaking = false;
        await this.speech(pb.SpeechEvent.SPEECH_EVENT_MODEL_TURN_COMPLETE);
      }
    }
    for (const fc of msg.toolCall?.functionCalls ?? []) await this.register(fc);
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
  async prepared(jobId: string): Promise<void> {
    this.job(jobId).markPrepared();
  }

  /**
   * Reports that the side effect a {@link Commit} asked for was performed; `result` (e.g.
   * a booking reference) goes into the function response.
   */
  async committed(jobId: string, result?: Record<string, unknown>): Promise<void> {
    await this.complete(jobId, pb.Outcome.OUTCOME_COMMITTED, result);
  }

  /** Reports a read-only tool's result, which becomes its function response. */
  async result(jobId: string, result?: Record<string, unknown>): Promise<void> {
    await this.complete(jobId, pb.Outcome.OUTCOME_RESULT, result);
  }

  /**
   * Reports that the side effect a {@link Commit} asked for may or may not have happened
   * (the backend timed out): Complete OUTCOME_UNKNOWN. The job's calls are answered
   * `"unknown"` and a repeat is never executed again. Report the truth later, once known,
   * with {@link committed} or {@link failed} for the same job: that hands out the
   * authoritative note.
   */
  async unknown(jobId: string, result?: Record<string, unknown>): Promise<void> {
    await this.complete(jobId, pb.Outcome.OUTCOME_UNKNOWN, result);
  }

  /**
   * Reports an interim result of a job still running (ReportProgress). When the session
   * takes response scheduling, it comes back as a non-final `sendFunctionResponse`
   * (`willContinue: true`) per live NON_BLOCKING call id of the job; otherwise the arbiter
   * drops it.
   */
  async progress(jobId: string, result?: Record<string, unknown>): Promise<void> {
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
  async reconnect(connectionId: string): Promise<void> {
    await this.configure();
    await this.unary(
      () => this.client.connect({ sessionId: this.sessionId, connectionId }),
      () => {
        this.connectionId = connectionId;
        this.modelSpeaking = false; // a new connection: nothing is playing
      },
    );
  }

  /**
   * Reports that the job failed (its prepare, its commit, or a read-only tool): nothing
   * was done. `error` (at most 4 KiB) is passed to the model.
   */
  async failed(jobId: string, error: string): Promise<void> {
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
  async close(timeoutMs = 10_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const deadline = Date.now() + timeoutMs;
    try {
      await this.unary(() => this.client.closeSession({ sessionId: this.sessionId }));
    } catch (err) {
      if (!(err instanceof NotFoundError)) {
        await this.stopWatch(0);
        throw err;
      } // no session: nothing was reported
    }
    const loops = [...this.jobs.values()].flatMap((j) => (j.loop ? [j.loop] : []));
    await within(Promise.all(loops), timeoutMs);
    for (const j of this.jobs.values()) j.abort.abort();
    // CloseSession ends the stream (OK) after the session's last effects.
    await this.stopWatch(Math.max(0, Math.min(2000, deadline - Date.now())));
  }

  /**
   * Poll: steps the session's timers and acts on every effect after the highest `seq`
   * acted on without a gap (`afterSeq`), the timer-made ones included, each once. For
   * agents that run without the Watch (`watch: false`); harmless with it. Nothing happens
   * before the session exists.
   */
  async poll(): Promise<void> {
    const afterSeq = this.seqs.high;
    try {
      await this.unary(() => this.client.poll({ sessionId: this.sessionId, afterSeq }));
    } catch (err) {
      if (err instanceof NotFoundError) return; // no session yet: nothing can be due
      if (!(err instanceof FailedPreconditionError)) throw err;
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
  private async unary<R extends { effects?: pb.Effects | undefined }>(rpc: () => Promise<R>, then?: (res: R) => void): Promise<R> {
    this.inflight++;
    try {
      const res = await rpc();
      then?.(res);
      this.startWatch();
      await this.effects(res.effects);
      return res;
    } finally {
      this.inflight--;
    }
  }

  /** Opens the Watch once the session exists (after an RPC that succeeded). */
  private startWatch(): void {
    if (!this.watchOn || this.watchLoop || this.closed) return;
    this.watchLoop = this.runWatch().catch((err) => this.log.error(`arbiter: Watch(${this.sessionId}): ${err}`));
  }

  /**
   * Streams the session's effects until the server ends the stream (the session closed or
   * expired). The client resumes a lost stream itself; when it gives up, this reopens it
   * after the last seq streamed, as long as the adapter is open.
   */
  private async runWatch(): Promise<void> {
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
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof NotFoundError) {
          if (this.closed || ++missing > 20) {
            this.log.warn(`arbiter: Watch(${this.sessionId}): ${err}; no stream (call poll())`);
            return;
          }
          await sleep(Math.min(50 * missing, 500), undefined, { signal }).catch(() => undefined);
        } else if (err instanceof FailedPreconditionError) {
          // afterSeq beyond the log or older than it keeps: resynchronise.
          if (this.closed || ++failures > 5) {
            this.log.warn(`arbiter: Watch(${this.sessionId}): ${err}; no stream (call poll())`);
            return;
          }
          const last = (await this.client.getSession({ sessionId: this.sessionId })).lastSeq;
          this.log.error(`arbiter: Watch(${this.sessionId}) after seq ${after}: ${err}; resuming after seq ${last} (what lies between is lost)`);
          this.watchLast = Math.max(this.watchLast, last);
        } else if (err instanceof ArbiterError && err.code === status.UNIMPLEMENTED) {
          return; // the server has no Watch: poll() instead
        } else {
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
  private stream(w: pb.WatchResponse): void {
    this.watchLast = Math.max(this.watchLast, w.seq);
    if (w.seq && this.seqs.has(w.seq)) return;
    this.watched.set(w.seq, w);
    if (this.flushTimer) return;
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
  private flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const held = [...this.watched.entries()].sort(([a], [b]) => a - b).map(([, w]) => w);
      this.watched.clear();
      const e: pb.Effects = { responses: [], skips: [], notes: [], runs: [] };
      for (const w of held) {
        if (w.response) e.responses.push(w.response);
        else if (w.skip) e.skips.push(w.skip);
        else if (w.note) e.notes.push(w.note);
        else if (w.run) e.runs.push(w.run);
      }
      try {
        await this.effects(e);
      } catch (err) {
        this.log.error(`arbiter: acting on the Watch's effects: ${err}`);
      }
    });
    return this.flushing;
  }

  /**
   * Lets the stream end (it does once the session is closed), up to `waitMs`, then
   * cancels it; acts on what it streamed.
   */
  private async stopWatch(waitMs: number): Promise<void> {
    this.watchOn = false; // never reopened
    if (this.watchLoop) {
      if (waitMs > 0) await within(this.watchLoop, waitMs);
      this.watchStop.abort();
      await this.watchLoop;
    }
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.watched.size > 0) await this.flush();
    else await this.flushing;
  }

  /**
   * ConfigureSession, once, before the session's first other RPC (only when the adapter
   * was given options). If it fails, the RPC that needed it is not sent (the error
   * propagates) and the next one tries again.
   */
  private async configure(): Promise<void> {
    if (this.configured) return;
    // Concurrent callers share one request; a failed one is forgotten (the next retries).
    this.configuring ??= this.client
      .configureSession({ sessionId: this.sessionId, language: this.language, responseScheduling: this.responseScheduling })
      .then(() => void (this.configured = true))
      .finally(() => (this.configuring = undefined));
    await this.configuring;
  }

  private job(jobId: string): Job {
    const job = this.jobs.get(jobId);
    if (!job) throw new Error(`job_id: ${JSON.stringify(jobId)} is not a job this adapter executed`);
    return job;
  }

  private async speech(event: pb.SpeechEvent): Promise<void> {
    await this.configure();
    await this.unary(() => this.client.reportSpeech({ sessionId: this.sessionId, event }));
  }

  private async transcript(role: pb.Role, text: string | undefined, interim: boolean): Promise<void> {
    if (!text || (role === pb.Role.ROLE_USER && !text.trim())) return;
    await this.configure();
    await this.unary(() => this.client.reportTranscript({ sessionId: this.sessionId, role, text, interim }));
  }

  private async register(fc: { id?: string; name?: string; args?: Record<string, unknown> }): Promise<void> {
    const name = fc.name ?? "";
    const args = { ...fc.args };
    const behavior = this.behaviors[name];
    await this.configure();
    this.inflight++;
    try {
      await this.registerCall(fc, name, args, behavior);
    } finally {
      this.inflight--;
    }
  }

  private async registerCall(
    fc: { id?: string },
    name: string,
    args: Record<string, unknown>,
    behavior: "BLOCKING" | "NON_BLOCKING" | undefined,
  ): Promise<void> {
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
      if (job.sideEffect) job.loop = this.drive(job);
    }
    await this.effects(res.effects);
  }

  /** The Decide loop of one side-effecting job; never rejects. */
  private async drive(job: Job): Promise<void> {
    let res: pb.DecideResponse;
    try {
      res = await this.decide(job);
    } catch (err) {
      if (job.settled || job.abort.signal.aborted) return;
      job.settled = true;
      const error = err instanceof ArbiterError ? err : undefined;
      this.log.error(`arbiter: Decide(${job.id}) failed, releasing the job (no commit): ${err}`);
      const reason = `no decision from the arbiter: ${err}`;
      try {
        await this.emit({ type: job.prepared ? "cancel" : "abortPrepare", jobId: job.id, reason, error });
        await this.complete(job.id, pb.Outcome.OUTCOME_FAILED, undefined, "the arbiter could not be reached; nothing was done");
      } catch (e) {
        this.log.error(`arbiter: reporting job ${job.id} as failed: ${e}`);
      }
      return;
    }
    if (job.settled) return;
    job.settled = true;
    try {
      if (res.decision === pb.Decision.DECISION_COMMIT) {
        await this.emit({ type: "commit", jobId: job.id, reason: res.reason });
      } else {
        await this.emit({ type: job.prepared ? "cancel" : "abortPrepare", jobId: job.id, reason: res.reason });
        await this.complete(job.id, pb.Outcome.OUTCOME_CANCELLED);
      }
    } catch (e) {
      this.log.error(`arbiter: handing out the decision for job ${job.id}: ${e}`);
    }
  }

  /**
   * Long-polls Decide until COMMIT or CANCEL. While the prepare runs it asks with
   * prepared=false, and re-asks with prepared=true the moment the app reports it.
   */
  private async decide(job: Job): Promise<pb.DecideResponse> {
    const wait = { seconds: Math.floor(this.waitMs / 1000), nanos: (this.waitMs % 1000) * 1e6 };
    await this.configure();
    for (;;) {
      const prepared = job.prepared;
      const poll = new AbortController();
      const stop = () => poll.abort(job.abort.signal.reason);
      job.abort.signal.addEventListener("abort", stop, { once: true });
      try {
        const decide = this.client.decide({ sessionId: this.sessionId, jobId: job.id, prepared, wait }, poll.signal);
        let res: pb.DecideResponse;
        if (prepared) {
          res = await decide;
        } else {
          const first = await Promise.race([decide, job.whenPrepared.then(() => undefined)]);
          if (first === undefined) {
            poll.abort(); // prepared meanwhile: ask again with prepared=true
            await decide.catch(() => undefined);
            continue;
          }
          res = first;
        }
        if (res.decision === pb.Decision.DECISION_COMMIT || res.decision === pb.Decision.DECISION_CANCEL) return res;
      } finally {
        job.abort.signal.removeEventListener("abort", stop);
      }
    }
  }

  private async complete(jobId: string, outcome: pb.Outcome, result?: Record<string, unknown>, error = ""): Promise<void> {
    await this.configure();
    await this.unary(() => this.client.complete({ sessionId: this.sessionId, jobId, outcome, result, error }));
  }

  private async effects(all: pb.Effects | undefined): Promise<void> {
    // Each effect is acted on once per seq, wherever it came from (a unary reply, a
    // retried one, the Watch, a Poll): claim the new ones before acting on any, so that a
    // concurrent path skips them. Effects without a seq (older servers) pass.
    const fresh = <T extends { seq: number }>(items: T[] | undefined): T[] =>
      (items ?? []).filter((m) => {
        if (!m.seq) return true;
        if (this.seqs.has(m.seq)) return false;
        this.seqs.add(m.seq);
        return true;
      });
    const e = { responses: fresh(all?.responses), skips: fresh(all?.skips), notes: fresh(all?.notes), runs: fresh(all?.runs) };
    // A note via FUNCTION_RESPONSE is already in the payload (`status_note`) of its call's
    // response in these same effects: that response carries its scheduling, and the note
    // is not sent again as a user turn.
    const riders = new Map<string, pb.Note>();
    for (const n of e?.notes ?? []) {
      if (n.via === pb.NoteVia.NOTE_VIA_FUNCTION_RESPONSE && n.callId && !riders.has(n.callId)) riders.set(n.callId, n);
    }
    const carried = new Set<string>(); // call ids whose response went out carrying a note
    for (const r of e?.responses ?? []) {
      if (r.interim) {
        await this.interim(r);
        continue;
      }
      if (this.dead.has(r.callId)) {
        this.log.warn(`arbiter: dropping a response for dead call ${r.callId}`);
        continue;
      }
      if (this.answered.has(r.callId)) continue; // a retried RPC returns the same answer: send it once
      this.answered.add(r.callId);
      const rider = riders.get(r.callId);
      if (rider) carried.add(r.callId);
      const scheduling = (rider && SCHEDULING[rider.scheduling]) ?? null;
      await this.emit({ type: "sendFunctionResponse", id: r.callId, name: r.name, payload: r.payload ?? {}, jobId: r.jobId, scheduling, willContinue: false, seq: r.seq });
    }
    for (const s of e?.skips ?? []) {
      if (this.dead.has(s.callId) || this.answered.has(s.callId)) continue;
      this.dead.add(s.callId);
      await this.emit({ type: "skip", id: s.callId, name: s.name, reason: s.reason, jobId: s.jobId, seq: s.seq });
    }
    for (const n of e?.notes ?? []) {
      const key = `${n.jobId}\n${n.runId}\n${n.text}`;
      if (this.notes.has(key)) continue;
      this.notes.add(key);
      if (n.via === pb.NoteVia.NOTE_VIA_FUNCTION_RESPONSE) {
        if (carried.has(n.callId)) continue; // it rode on that function response
        // Its response was not handed out here (dead, or answered before): the model would
        // never see it, so it goes as a user turn, as `deliver` says.
        this.log.warn(`arbiter: the note for job ${n.jobId} rides on call ${n.callId}, whose response was not handed out: sending it as a user turn`);
      }
      const when = n.deliver === pb.Delivery.DELIVERY_WHEN_IDLE ? "when_idle" : "now";
      await this.emit({ type: "sendNote", text: n.text, when, jobId: n.jobId, why: n.why, seq: n.seq });
    }
    for (const u of e?.runs ?? []) {
      const key = u.seq ? String(u.seq) : `${u.runId}\n${u.state}\n${u.callId}`;
      if (this.runs.has(key)) continue; // a retried RPC returns the same update
      this.runs.add(key);
      const state = RUN_STATE[u.state];
      if (!state) continue;
      await this.emit({ type: "run", runId: u.runId, tool: u.tool, state, callId: u.callId, jobId: u.jobId, reason: u.reason, seq: u.seq });
    }
  }

  /**
   * A non-final response (ReportProgress): handed out with `willContinue` while its call
   * is live and unanswered; never marks the call answered.
   */
  private async interim(r: pb.FunctionResponse): Promise<void> {
    if (this.dead.has(r.callId) || this.answered.has(r.callId)) return;
    const key = r.seq ? String(r.seq) : `${r.callId}\n${JSON.stringify(r.payload)}`;
    if (this.interims.has(key)) return; // a retried RPC returns the same interim response
    this.interims.add(key);
    await this.emit({ type: "sendFunctionResponse", id: r.callId, name: r.name, payload: r.payload ?? {}, jobId: r.jobId, scheduling: null, willContinue: true, seq: r.seq });
  }

  private async emit(action: Action): Promise<void> {
    await this.onAction(action);
  }
}

/** Waits for `p`, at most `ms`. */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([p, timeout]);
  clearTimeout(timer);
}
