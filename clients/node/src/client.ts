import {
  credentials,
  Metadata,
  status,
  type CallOptions,
  type ChannelCredentials,
  type ClientOptions,
  type ClientUnaryCall,
  type ServiceError,
} from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";
import { fromServiceError } from "./errors.js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
import { API_VERSION, VERSION } from "./version.js";

/** Sent as the gRPC user agent, so the server's logs show which client spoke. */
export const USER_AGENT = `arbiter-client-node/${VERSION} (${API_VERSION})`;

/**
 * Backoff for retried RPCs: the first retry waits `initialBackoffMs` (times a random
 * 0.5-1 jitter), each next one `multiplier` times longer, at most `maxBackoffMs`; no
 * retry starts after `maxElapsedMs` from the first try.
 */
export interface RetryPolicy {
  initialBackoffMs: number;
  maxBackoffMs: number;
  multiplier: number;
  maxElapsedMs: number;
}

/** The default {@link RetryPolicy}: 100 ms doubling to 1 s, for at most 20 s. */
export const DEFAULT_RETRY: RetryPolicy = { initialBackoffMs: 100, maxBackoffMs: 1000, multiplier: 2, maxElapsedMs: 20_000 };

/**
 * Per-call options of the RPCs that report what the agent observed (RegisterCall,
 * ReportSpeech, ReportTranscript, ReportToolCallCancellation) and of Connect.
 */
export interface EventCallOptions {
  /**
   * False: one attempt, sent without `waitForReady` (it fails at once with UNAVAILABLE
   * while the connection is down instead of waiting for it), for a caller that retries
   * with a fresh `age` on each attempt (the adapters' outbox, {@link SessionCore}): a
   * request that waited in the channel for a connection would go out with the age it
   * was built with, too small by the wait. Default true: the retries described on
   * {@link ArbiterClient}.
   */
  retry?: boolean;
  /** Cancels the call (it then rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** Options of {@link ArbiterClient}. */
export interface ArbiterClientOptions {
  /** Channel credentials; default plaintext (`credentials.createInsecure()`). */
  credentials?: ChannelCredentials;
  /** Extra channel options. */
  channelOptions?: Partial<ClientOptions>;
  /** Deadline of each RPC attempt in ms (Decide adds its `wait`); default 5000. */
  timeoutMs?: number;
  /** How retried RPCs back off. */
  retry?: Partial<RetryPolicy>;
  /** Where retries are logged; default `console`. */
  logger?: Pick<Console, "warn">;
}

// CANCELLED is here because we did not cancel (that throws the signal's reason): a
// server going away resets its streams.
const RETRIED_IF_IDEMPOTENT = new Set([status.UNAVAILABLE, status.ABORTED, status.DEADLINE_EXCEEDED, status.CANCELLED]);

type Req<T> = pb.DeepPartial<T>;
type Unary<Q, R> = (
  req: Q,
  md: Metadata,
  opts: Partial<CallOptions>,
  cb: (err: ServiceError | null, res: R) => void,
) => ClientUnaryCall;

/**
 * A client of `arbiter.v1.ArbiterService` on @grpc/grpc-js, with promises, typed errors
 * ({@link ArbiterError}) and retries.
 *
 * Every RPC is sent with `waitForReady`, so a request made while the connection is down
 * or reconnecting waits for it (up to the RPC's deadline) instead of failing: it has not
 * reached the server, so this is safe for every RPC. Once sent, a request whose
 * connection is lost is ambiguous. Those are retried, with exponential backoff and
 * jitter, only for the RPCs that are idempotent (by call id, job id, or by nature):
 * RegisterCall (when it carries a call id), ReportToolCallCancellation, Decide, Complete,
 * ConfigureSession, Poll, GetSession, CloseSession and Connect, on UNAVAILABLE, ABORTED,
 * DEADLINE_EXCEEDED and CANCELLED (one this client did not ask for: a server going away
 * resets its streams). ReportSpeech, ReportTranscript and ReportProgress are not
 * idempotent (an event applied twice is two events): they are retried only on ABORTED,
 * which the server returns when it changed nothing. Those RPCs and Connect also take
 * `{ retry: false }` ({@link EventCallOptions}): one attempt, failing fast, for a caller
 * that retries itself with a fresh `age`.
 *
 * Watch is a stream: {@link ArbiterClient.watch} resumes it after a lost connection
 * (UNAVAILABLE, or a CANCELLED it did not ask for) with `afterSeq` set to the last `seq`
 * it yielded, so no effect is yielded twice and none is skipped, backing off as above;
 * the budget starts again after each effect received.
 */
export class ArbiterClient {
  /** The generated @grpc/grpc-js stub, for anything this wrapper does not cover. */
  readonly stub: pb.ArbiterServiceClient;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  private readonly log: Pick<Console, "warn">;

  /** @param target the server address, e.g. `"127.0.0.1:50051"`. */
  constructor(target: string, opts: ArbiterClientOptions = {}) {
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.stub = new pb.ArbiterServiceClient(target, opts.credentials ?? credentials.createInsecure(), {
      "grpc.primary_user_agent": USER_AGENT,
      // grpc-js waits 1 s, then 1.6 times longer up to 120 s, before reconnecting a lost
      // channel: after a 3 s network cut the first request could wait 5 s more, past a
      // held commit's max_hold. A conversation cannot wait that long, so the channel
      // reconnects on the retry policy's schedule instead.
      "grpc.initial_reconnect_backoff_ms": this.retry.initialBackoffMs,
      "grpc.max_reconnect_backoff_ms": this.retry.maxBackoffMs,
      ...opts.channelOptions,
    });
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.log = opts.logger ?? console;
  }

  /** Closes the channel. */
  close(): void {
    this.stub.close();
  }

  /** RegisterCall; retried only when the request carries a call id. See {@link EventCallOptions}. */
  registerCall(req: Req<pb.RegisterCallRequest>, opts: EventCallOptions = {}): Promise<pb.RegisterCallResponse> {
    const r = pb.RegisterCallRequest.fromPartial(req);
    return this.call("RegisterCall", this.stub.registerCall, r, r.callId !== "", this.timeoutMs, opts.signal, opts.retry);
  }

  /** ReportSpeech; not idempotent: retried only on ABORTED. See {@link EventCallOptions}. */
  reportSpeech(req: Req<pb.ReportSpeechRequest>, opts: EventCallOptions = {}): Promise<pb.ReportSpeechResponse> {
    const r = pb.ReportSpeechRequest.fromPartial(req);
    return this.call("ReportSpeech", this.stub.reportSpeech, r, false, this.timeoutMs, opts.signal, opts.retry);
  }

  /** ReportTranscript; not idempotent: retried only on ABORTED. See {@link EventCallOptions}. */
  reportTranscript(req: Req<pb.ReportTranscriptRequest>, opts: EventCallOptions = {}): Promise<pb.ReportTranscriptResponse> {
    const r = pb.ReportTranscriptRequest.fromPartial(req);
    return this.call("ReportTranscript", this.stub.reportTranscript, r, false, this.timeoutMs, opts.signal, opts.retry);
  }

  /** ReportToolCallCancellation; idempotent (dead ids stay dead). See {@link EventCallOptions}. */
  reportToolCallCancellation(
    req: Req<pb.ReportToolCallCancellationRequest>,
    opts: EventCallOptions = {},
  ): Promise<pb.ReportToolCallCancellationResponse> {
    const r = pb.ReportToolCallCancellationRequest.fromPartial(req);
    return this.call("ReportToolCallCancellation", this.stub.reportToolCallCancellation, r, true, this.timeoutMs, opts.signal, opts.retry);
  }

  /**
   * Decide; idempotent. The attempt's deadline is `timeoutMs` plus `req.wait`. `signal`
   * cancels the long-poll (the promise then rejects with the signal's reason).
   */
  decide(req: Req<pb.DecideRequest>, signal?: AbortSignal): Promise<pb.DecideResponse> {
    const r = pb.DecideRequest.fromPartial(req);
    const waitMs = (r.wait?.seconds ?? 0) * 1000 + (r.wait?.nanos ?? 0) / 1e6;
    return this.call("Decide", this.stub.decide, r, true, this.timeoutMs + waitMs, signal);
  }

  /**
   * Complete; idempotent (the same report returns the same effects). `OUTCOME_UNKNOWN`
   * (after COMMIT: the backend could not say whether the side effect happened) answers
   * the job's calls "unknown"; report `OUTCOME_COMMITTED` or `OUTCOME_FAILED` for the same
   * job once the truth is known (the note then comes in that Complete's effects).
   */
  complete(req: Req<pb.CompleteRequest>): Promise<pb.CompleteResponse> {
    return this.call("Complete", this.stub.complete, pb.CompleteRequest.fromPartial(req), true);
  }

  /** ConfigureSession; idempotent (the same options again change nothing). */
  configureSession(req: Req<pb.ConfigureSessionRequest>): Promise<pb.ConfigureSessionResponse> {
    return this.call("ConfigureSession", this.stub.configureSession, pb.ConfigureSessionRequest.fromPartial(req), true);
  }

  /**
   * Poll (steps the session's timers); retried like the idempotent RPCs. Pass `afterSeq`
   * (the highest `seq` acted on): then a retry whose first reply was lost, or a Watch
   * that fired the timers first, still hands every effect back (without it, an effect is
   * handed out to one reply only). With Watch open no polling is needed.
   */
  poll(req: Req<pb.PollRequest>): Promise<pb.PollResponse> {
    return this.call("Poll", this.stub.poll, pb.PollRequest.fromPartial(req), true);
  }

  /** GetSession; read-only. */
  getSession(req: Req<pb.GetSessionRequest>): Promise<pb.GetSessionResponse> {
    return this.call("GetSession", this.stub.getSession, pb.GetSessionRequest.fromPartial(req), true);
  }

  /** CloseSession; idempotent. */
  closeSession(req: Req<pb.CloseSessionRequest>): Promise<pb.CloseSessionResponse> {
    return this.call("CloseSession", this.stub.closeSession, pb.CloseSessionRequest.fromPartial(req), true);
  }

  /**
   * Connect (a new model connection for the session); idempotent (connecting again with
   * the current id changes nothing). Its effects are skips with reason
   * `connection_closed`. See {@link EventCallOptions}.
   */
  connect(req: Req<pb.ConnectRequest>, opts: EventCallOptions = {}): Promise<pb.ConnectResponse> {
    return this.call("Connect", this.stub.connect, pb.ConnectRequest.fromPartial(req), true, this.timeoutMs, opts.signal, opts.retry);
  }

  /**
   * ReportProgress (an interim result of a running job); not idempotent (each report is
   * one more interim response): retried only on ABORTED.
   */
  reportProgress(req: Req<pb.ReportProgressRequest>): Promise<pb.ReportProgressResponse> {
    return this.call("ReportProgress", this.stub.reportProgress, pb.ReportProgressRequest.fromPartial(req), false);
  }

  /**
   * Watch: yields every effect of the session (`WatchResponse`, one effect each,
   * ascending `seq`) as it becomes due, from the one after `afterSeq`.
   *
   * A stream lost to UNAVAILABLE (or a CANCELLED this client did not ask for) is reopened
   * with `afterSeq` set to the last `seq` yielded, so nothing is yielded twice and nothing
   * is skipped; retries back off as {@link RetryPolicy} says, the budget counting from the
   * first failure since the last effect received. The iterator ends when the server ends
   * the stream (the session closed or expired). Other errors (NOT_FOUND,
   * FAILED_PRECONDITION when `afterSeq` is beyond the log or older than it keeps) throw an
   * {@link ArbiterError}. Stop early with `break` or `signal`: the stream is cancelled.
   */
  async *watch(sessionId: string, afterSeq = 0, signal?: AbortSignal): AsyncGenerator<pb.WatchResponse, void, undefined> {
    let last = afterSeq;
    let start: number | undefined; // first failure since the last effect received
    let delay = this.retry.initialBackoffMs;
    for (;;) {
      signal?.throwIfAborted();
      const stream = this.stub.watch(pb.WatchRequest.fromPartial({ sessionId, afterSeq: last }), new Metadata({ waitForReady: true }));
      const onAbort = () => stream.cancel();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        for await (const res of stream as AsyncIterable<pb.WatchResponse>) {
          if (res.seq && res.seq <= last) continue; // a replica that resent what was delivered: never twice
          last = res.seq || last;
          start = undefined;
          delay = this.retry.initialBackoffMs;
          yield res;
        }
        return; // the server ended the stream
      } catch (err) {
        signal?.throwIfAborted();
        const e = err as ServiceError;
        start ??= Date.now();
        const pause = delay * (0.5 + Math.random() / 2);
        const retried = e.code === status.UNAVAILABLE || e.code === status.CANCELLED;
        if (!retried || Date.now() - start + pause > this.retry.maxElapsedMs) throw fromServiceError(e, "Watch");
        this.log.warn(`arbiter Watch: ${status[e.code]} (${e.details}), resuming after seq ${last} in ${Math.round(pause)}ms`);
        await sleep(pause, undefined, { signal });
        delay = Math.min(delay * this.retry.multiplier, this.retry.maxBackoffMs);
      } finally {
        signal?.removeEventListener("abort", onAbort);
        stream.cancel(); // a no-op once it ended
      }
    }
  }

  private async call<Q, R>(
    name: string,
    method: unknown,
    req: Q,
    idempotent: boolean,
    timeoutMs = this.timeoutMs,
    signal?: AbortSignal,
    retry = true,
  ): Promise<R> {
    if (!retry) {
      // One attempt, failing fast: the caller retries with a fresh request.
      try {
        return await this.once(method as Unary<Q, R>, req, timeoutMs, signal, false);
      } catch (err) {
        signal?.throwIfAborted();
        throw fromServiceError(err as ServiceError, name);
      }
    }
    const start = Date.now();
    let delay = this.retry.initialBackoffMs;
    for (;;) {
      try {
        return await this.once(method as Unary<Q, R>, req, timeoutMs, signal);
      } catch (err) {
        signal?.throwIfAborted();
        const e = err as ServiceError;
        const retried = e.code === status.ABORTED || (idempotent && RETRIED_IF_IDEMPOTENT.has(e.code));
        const pause = delay * (0.5 + Math.random() / 2);
        if (!retried || Date.now() - start + pause > this.retry.maxElapsedMs) throw fromServiceError(e, name);
        this.log.warn(`arbiter ${name}: ${status[e.code]} (${e.details}), retrying in ${Math.round(pause)}ms`);
        await sleep(pause, undefined, { signal });
        delay = Math.min(delay * this.retry.multiplier, this.retry.maxBackoffMs);
      }
    }
  }

  private once<Q, R>(method: Unary<Q, R>, req: Q, timeoutMs: number, signal?: AbortSignal, waitForReady = true): Promise<R> {
    return new Promise((resolve, reject) => {
      signal?.throwIfAborted();
      const onAbort = () => call.cancel();
      const call = method.call(this.stub, req, new Metadata({ waitForReady }), { deadline: Date.now() + timeoutMs }, (err, res) => {
        signal?.removeEventListener("abort", onAbort);
        if (err) reject(err);
        else resolve(res);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
