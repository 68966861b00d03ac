import { type ChannelCredentials, type ClientOptions } from "@grpc/grpc-js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
/** Sent as the gRPC user agent, so the server's logs show which client spoke. */
export declare const USER_AGENT = "arbiter-client-node/0.1.0 (arbiter.v1)";
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
export declare const DEFAULT_RETRY: RetryPolicy;
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
type Req<T> = pb.DeepPartial<T>;
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
export declare class ArbiterClient {
    /** The generated @grpc/grpc-js stub, for anything this wrapper does not cover. */
    readonly stub: pb.ArbiterServiceClient;
    readonly timeoutMs: number;
    readonly retry: RetryPolicy;
    private readonly log;
    /** @param target the server address, e.g. `"127.0.0.1:50051"`. */
    constructor(target: string, opts?: ArbiterClientOptions);
    /** Closes the channel. */
    close(): void;
    /** RegisterCall; retried only when the request carries a call id. See {@link EventCallOptions}. */
    registerCall(req: Req<pb.RegisterCallRequest>, opts?: EventCallOptions): Promise<pb.RegisterCallResponse>;
    /** ReportSpeech; not idempotent: retried only on ABORTED. See {@link EventCallOptions}. */
    reportSpeech(req: Req<pb.ReportSpeechRequest>, opts?: EventCallOptions): Promise<pb.ReportSpeechResponse>;
    /** ReportTranscript; not idempotent: retried only on ABORTED. See {@link EventCallOptions}. */
    reportTranscript(req: Req<pb.ReportTranscriptRequest>, opts?: EventCallOptions): Promise<pb.ReportTranscriptResponse>;
    /** ReportToolCallCancellation; idempotent (dead ids stay dead). See {@link EventCallOptions}. */
    reportToolCallCancellation(req: Req<pb.ReportToolCallCancellationRequest>, opts?: EventCallOptions): Promise<pb.ReportToolCallCancellationResponse>;
    /**
     * Decide; idempotent. The attempt's deadline is `timeoutMs` plus `req.wait`. `signal`
     * cancels the long-poll (the promise then rejects with the signal's reason).
     */
    decide(req: Req<pb.DecideRequest>, signal?: AbortSignal): Promise<pb.DecideResponse>;
    /**
     * Complete; idempotent (the same report returns the same effects). `OUTCOME_UNKNOWN`
     * (after COMMIT: the backend could not say whether the side effect happened) answers
     * the job's calls "unknown"; report `OUTCOME_COMMITTED` or `OUTCOME_FAILED` for the same
     * job once the truth is known (the note then comes in that Complete's effects).
     */
    complete(req: Req<pb.CompleteRequest>): Promise<pb.CompleteResponse>;
    /** ConfigureSession; idempotent (the same options again change nothing). */
    configureSession(req: Req<pb.ConfigureSessionRequest>): Promise<pb.ConfigureSessionResponse>;
    /**
     * Poll (steps the session's timers); retried like the idempotent RPCs. Pass `afterSeq`
     * (the highest `seq` acted on): then a retry whose first reply was lost, or a Watch
     * that fired the timers first, still hands every effect back (without it, an effect is
     * handed out to one reply only). With Watch open no polling is needed.
     */
    poll(req: Req<pb.PollRequest>): Promise<pb.PollResponse>;
    /** GetSession; read-only. */
    getSession(req: Req<pb.GetSessionRequest>): Promise<pb.GetSessionResponse>;
    /** CloseSession; idempotent. */
    closeSession(req: Req<pb.CloseSessionRequest>): Promise<pb.CloseSessionResponse>;
    /**
     * Connect (a new model connection for the session); idempotent (connecting again with
     * the current id changes nothing). Its effects are skips with reason
     * `connection_closed`. See {@link EventCallOptions}.
     */
    connect(req: Req<pb.ConnectRequest>, opts?: EventCallOptions): Promise<pb.ConnectResponse>;
    /**
     * ReportProgress (an interim result of a running job); not idempotent (each report is
     * one more interim response): retried only on ABORTED.
     */
    reportProgress(req: Req<pb.ReportProgressRequest>): Promise<pb.ReportProgressResponse>;
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
    watch(sessionId: string, afterSeq?: number, signal?: AbortSignal): AsyncGenerator<pb.WatchResponse, void, undefined>;
    private call;
    private once;
}
export {};
