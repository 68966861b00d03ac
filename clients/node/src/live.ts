import type { Action, Call, RunState, Scheduling } from "./actions.js";
import type { ArbiterClient } from "./client.js";
import { ArbiterError, NotFoundError } from "./errors.js";
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
}

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
      const res = await this.client.reportToolCallCancellation({ sessionId: this.sessionId, callIds: ids });
      await this.effects(res.effects);
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
    const res = await this.client.reportProgress({ sessionId: this.sessionId, jobId, result });
    await this.effects(res.effects);
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
    const res = await this.client.connect({ sessionId: this.sessionId, connectionId });
    this.connectionId = connectionId;
    this.modelSpeaking = false; // a new connection: nothing is playing
    await this.effects(res.effects);
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
    try {
      const res = await this.client.closeSession({ sessionId: this.sessionId });
      await this.effects(res.effects);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err; // no session: nothing was reported
    }
    const loops = [...this.jobs.values()].flatMap((j) => (j.loop ? [j.loop] : []));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.all(loops), timeout]);
    clearTimeout(timer);
    for (const j of this.jobs.values()) j.abort.abort();
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
    const res = await this.client.reportSpeech({ sessionId: this.sessionId, event });
    await this.effects(res.effects);
  }

  private async transcript(role: pb.Role, text: string | undefined, interim: boolean): Promise<void> {
    if (!text || (role === pb.Role.ROLE_USER && !text.trim())) return;
    await this.configure();
    const res = await this.client.reportTranscript({ sessionId: this.sessionId, role, text, interim });
    await this.effects(res.effects);
  }

  private async register(fc: { id?: string; name?: string; args?: Record<string, unknown> }): Promise<void> {
    const name = fc.name ?? "";
    const args = { ...fc.args };
    const behavior = this.behaviors[name];
    await this.configure();
    const res = await this.client.registerCall({
      sessionId: this.sessionId,
      callId: fc.id ?? "",
      tool: name,
      args,
      behavior: behavior ? BEHAVIOR[behavior] : pb.Behavior.BEHAVIOR_UNSPECIFIED,
      toolChoice: this.toolChoice === "none" ? pb.ToolChoice.TOOL_CHOICE_NONE : pb.ToolChoice.TOOL_CHOICE_AUTO,
    });
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
    const res = await this.client.complete({ sessionId: this.sessionId, jobId, outcome, result, error });
    await this.effects(res.effects);
  }

  private async effects(e: pb.Effects | undefined): Promise<void> {
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
      await this.emit({ type: "sendFunctionResponse", id: r.callId, name: r.name, payload: r.payload ?? {}, jobId: r.jobId, scheduling, willContinue: false });
    }
    for (const s of e?.skips ?? []) {
      if (this.dead.has(s.callId) || this.answered.has(s.callId)) continue;
      this.dead.add(s.callId);
      await this.emit({ type: "skip", id: s.callId, name: s.name, reason: s.reason, jobId: s.jobId });
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
      await this.emit({ type: "sendNote", text: n.text, when, jobId: n.jobId, why: n.why });
    }
    for (const u of e?.runs ?? []) {
      const key = u.seq ? String(u.seq) : `${u.runId}\n${u.state}\n${u.callId}`;
      if (this.runs.has(key)) continue; // a retried RPC returns the same update
      this.runs.add(key);
      const state = RUN_STATE[u.state];
      if (!state) continue;
      await this.emit({ type: "run", runId: u.runId, tool: u.tool, state, callId: u.callId, jobId: u.jobId, reason: u.reason });
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
    await this.emit({ type: "sendFunctionResponse", id: r.callId, name: r.name, payload: r.payload ?? {}, jobId: r.jobId, scheduling: null, willContinue: true });
  }

  private async emit(action: Action): Promise<void> {
    await this.onAction(action);
  }
}
