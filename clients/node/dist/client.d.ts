import { ChannelCredentials, type ClientOptions } from "@grpc/grpc-js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
/** Sent as the gRPC user agent, so the server's logs show which client spoke. */
export declare const USER_AGENT = "arbiter-client-node/0.1.0 (arbiter.v1)";
/**
 * Backoff of the retries this client and the adapters run themselves (the unary RPCs'
 * retries are the service config's, {@link SERVICE_CONFIG}): the outbox's redelivery of
 * observed events (each with a fresh `age`), Watch's resumption with `afterSeq`, and the
 * channel's reconnects. The first retry waits `initialBackoffMs` (times a random 0.5-1
 * jitter), each next one `multiplier` times longer, at most `maxBackoffMs`; Watch
 * resumes for at most `maxElapsedMs` from the first failure since its last effect.
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
     * False: one attempt (no service-config retry), sent without `waitForReady` (it fails
     * at once with UNAVAILABLE while the connection is down instead of waiting for it),
     * for a caller that retries with a fresh `age` on each attempt (the adapters' outbox,
     * {@link SessionCore}): a request retried by the channel, or one that waited in it for
     * a connection, would go out with the age it was built with, too small by the wait.
     * Default true: the retries described on {@link ArbiterClient}.
     */
    retry?: boolean;
    /** Cancels the call (it then rejects with the signal's reason). */
    signal?: AbortSignal;
}
/**
 * TLS for {@link ArbiterClientOptions.tls}: files are read once, when the client is
 * built (a missing file throws there). PEM text or a Buffer may be given instead of a
 * file. With neither CA option, the system's roots verify the server.
 */
export interface TlsOptions {
    /** The CA bundle (PEM) that verifies the server's certificate: a file path. */
    caFile?: string;
    /** The same as PEM (instead of `caFile`). */
    ca?: string | Buffer;
    /** Mutual TLS: this client's certificate chain (PEM), a file path; needs `keyFile` (or `key`). */
    certFile?: string;
    /** The same as PEM (instead of `certFile`). */
    cert?: string | Buffer;
    /** Mutual TLS: the client certificate's private key (PEM), a file path. */
    keyFile?: string;
    /** The same as PEM (instead of `keyFile`). */
    key?: string | Buffer;
    /**
     * The name the server's certificate must carry, when it is not the target's host
     * (e.g. `"arbiter.internal"` while dialling an IP address); sets the authority too. A
     * host name is also sent as the TLS ServerName (SNI); an IP address is only checked
     * against the certificate's IP SANs and never sent as the ServerName (RFC 6066 allows
     * host names only; Node warns DEP0123). Dialling an IP target sends no ServerName.
     */
    serverName?: string;
}
/** Options of {@link ArbiterClient}. */
export interface ArbiterClientOptions {
    /**
     * Channel credentials, for anything {@link tls} does not cover; default plaintext
     * (`credentials.createInsecure()`), or TLS when `tls` is set. Not with `tls`.
     */
    credentials?: ChannelCredentials;
    /** TLS (`--tls-cert`/`--tls-key` on the server), mutual when a client cert is given (`--tls-client-ca`). */
    tls?: TlsOptions | true;
    /**
     * A bearer token (`--auth-tokens-file`), sent as `authorization: Bearer TOKEN` with
     * every RPC (per-RPC call credentials); a function is asked before each RPC (a token
     * that rotates). Needs TLS (`tls` or TLS `credentials`): grpc-js refuses call
     * credentials on a plaintext channel, and the constructor throws. A missing or unknown
     * token is UNAUTHENTICATED ({@link UnauthenticatedError}).
     */
    token?: string | (() => string | Promise<string>);
    /**
     * The W3C `traceparent` to send with each RPC (`00-TRACEID-SPANID-FLAGS`), for an app
     * whose tracing is not OpenTelemetry; undefined from it (or no option): the current
     * OpenTelemetry context's, injected by the global propagator when one is registered,
     * else formatted from the active span's context; none without an active span (the
     * @opentelemetry/api is a no-op without an SDK). The server's spans then nest under it.
     */
    traceparent?: () => string | undefined;
    /** Extra channel options (over the client's: the service config, user agent, reconnect backoff). */
    channelOptions?: Partial<ClientOptions>;
    /** Deadline of each RPC in ms, its retries included (Decide adds its `wait`); default 5000. */
    timeoutMs?: number;
    /** How this client's own retries back off ({@link RetryPolicy}). */
    retry?: Partial<RetryPolicy>;
    /** Where retries are logged; default `console`. */
    logger?: Pick<Console, "warn">;
}
/**
 * The channel's service config: {@link SERVICE_CONFIG} (each method's retry policy) with
 * round-robin load balancing over every address the target resolves to (`dns:///` a
 * headless Service, or `ipv4:10.0.0.1:50051,10.0.0.2:50051`), so new replicas get
 * traffic as connections are re-resolved (the server's `--max-connection-age`).
 */
export declare const CHANNEL_SERVICE_CONFIG: {
    methodConfig: {
        name: {
            service: string;
            method: string;
        }[];
        retryPolicy: {
            maxAttempts: number;
            initialBackoff: string;
            maxBackoff: string;
            backoffMultiplier: number;
            retryableStatusCodes: string[];
        };
    }[];
    loadBalancingConfig: {
        round_robin: {};
    }[];
};
type Req<T> = pb.DeepPartial<T>;
/** A fresh event id: 16 random bytes, hex (the API takes 1 to 128 of [A-Za-z0-9_.:-]). */
export declare function newEventId(): string;
/**
 * A client of `arbiter.v1.ArbiterService` on @grpc/grpc-js, with promises, typed errors
 * ({@link ArbiterError}, with the server's error details) and retries.
 *
 * The channel runs the API's service config ({@link SERVICE_CONFIG}, a copy of
 * clients/service-config.json): each method is retried by grpc-js on the codes safe for
 * it, with the config's backoff and attempts (RegisterCall and the event RPCs: 4
 * attempts on UNAVAILABLE and ABORTED; Complete, ConfigureSession, Connect, CloseSession,
 * Poll, GetSession, GetHistory, ReportProgress: 5, also on DEADLINE_EXCEEDED; Decide: 5
 * on UNAVAILABLE and ABORTED, so a Decide a draining replica ends with SERVER_DRAINING
 * is asked again at once, on another replica), all within the RPC's one deadline; and
 * round-robin over the target's addresses ({@link CHANNEL_SERVICE_CONFIG}). Every RPC
 * is sent with `waitForReady`: a request made while the connection is down waits for
 * it (up to its deadline) instead of failing.
 *
 * The event RPCs (ReportSpeech, ReportTranscript, ReportToolCallCancellation,
 * ReportProgress) carry an `eventId` (the caller's, else one this client assigns once
 * per request, kept across its retries), so a retry the server already applied answers
 * `repeat: true` and changes nothing: that counts as success (its effects were handed out
 * by the first application: Watch or Poll with `afterSeq` has them). RegisterCall is
 * idempotent by call id: one without a call id is sent once (a retry would mint a second
 * id). Those RPCs and Connect also take `{ retry: false }` ({@link EventCallOptions}):
 * one attempt, failing fast, for a caller that retries itself with a fresh `age`.
 *
 * Watch is a stream: {@link ArbiterClient.watch} resumes it after a lost connection
 * (UNAVAILABLE, or a CANCELLED it did not ask for) with `afterSeq` set to the last `seq`
 * it yielded, so no effect is yielded twice and none is skipped, backing off as
 * {@link RetryPolicy} says; the budget starts again after each effect received.
 *
 * Safe for concurrent use: RPCs may overlap freely.
 */
export declare class ArbiterClient {
    /** The generated @grpc/grpc-js stub, for anything this wrapper does not cover (its channel retries as above). */
    readonly stub: pb.ArbiterServiceClient;
    readonly timeoutMs: number;
    readonly retry: RetryPolicy;
    private readonly log;
    private readonly makeStub;
    private onceStub;
    /**
     * @param target the server address: `"127.0.0.1:50051"`, `"dns:///arbiter.ns.svc:50051"`
     *   (every address the name resolves to, round-robin), or a list,
     *   `"ipv4:127.0.0.1:50051,127.0.0.1:50052"`.
     * @throws Error when `tls` names a file that cannot be read, or `token` comes without TLS.
     */
    constructor(target: string, opts?: ArbiterClientOptions);
    /** Closes the channels. */
    close(): void;
    /** RegisterCall; retried by the service config when the request carries a call id, else sent once. See {@link EventCallOptions}. */
    registerCall(req: Req<pb.RegisterCallRequest>, opts?: EventCallOptions): Promise<pb.RegisterCallResponse>;
    /** ReportSpeech; idempotent by `eventId` (assigned when unset). See {@link EventCallOptions}. */
    reportSpeech(req: Req<pb.ReportSpeechRequest>, opts?: EventCallOptions): Promise<pb.ReportSpeechResponse>;
    /** ReportTranscript; idempotent by `eventId` (assigned when unset). See {@link EventCallOptions}. */
    reportTranscript(req: Req<pb.ReportTranscriptRequest>, opts?: EventCallOptions): Promise<pb.ReportTranscriptResponse>;
    /** ReportToolCallCancellation; idempotent (dead ids stay dead; `eventId` assigned when unset). See {@link EventCallOptions}. */
    reportToolCallCancellation(req: Req<pb.ReportToolCallCancellationRequest>, opts?: EventCallOptions): Promise<pb.ReportToolCallCancellationResponse>;
    /**
     * Decide; idempotent. The RPC's deadline is `timeoutMs` plus `req.wait`. `signal`
     * cancels the long-poll (the promise then rejects with the signal's reason). A replica
     * shutting down ends a parked Decide with UNAVAILABLE (reason SERVER_DRAINING): the
     * channel asks again, on another replica.
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
     * Poll (steps the session's timers). Pass `afterSeq` (the highest `seq` acted on): then
     * a retry whose first reply was lost, or a Watch that fired the timers first, still
     * hands every effect back (without it, an effect is handed out to one reply only). With
     * Watch open no polling is needed.
     */
    poll(req: Req<pb.PollRequest>): Promise<pb.PollResponse>;
    /** GetSession; read-only. */
    getSession(req: Req<pb.GetSessionRequest>): Promise<pb.GetSessionResponse>;
    /**
     * GetHistory: the session's timeline, oldest first (its inputs, the decisions, the
     * holds, each at `tMs` from `createdAt`), with the bounds it is kept in; read-only, so
     * retried like GetSession. Rejects with {@link NotFoundError} (reason
     * `SESSION_NOT_FOUND`, field `session_id`) for a session unknown, expired or another
     * tenant's, {@link InvalidArgumentError} naming the field for a malformed id.
     */
    getHistory(req: Req<pb.GetHistoryRequest>): Promise<pb.GetHistoryResponse>;
    /** CloseSession; idempotent. */
    closeSession(req: Req<pb.CloseSessionRequest>): Promise<pb.CloseSessionResponse>;
    /**
     * Connect (a new model connection for the session); idempotent (connecting again with
     * the current id changes nothing). Its effects are skips with reason
     * `connection_closed`; `epoch` is the session's (send it with later requests) and
     * `state` says new, resumed, or lost (the request's `epoch` is gone: every call of it
     * has an unknown outcome). See {@link EventCallOptions}.
     */
    connect(req: Req<pb.ConnectRequest>, opts?: EventCallOptions): Promise<pb.ConnectResponse>;
    /**
     * ReportProgress (an interim result of a running job); idempotent by `eventId`
     * (assigned when unset), so retried like the rest.
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
