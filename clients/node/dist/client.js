import { ChannelCredentials, credentials, InterceptingCall, Metadata, status, } from "@grpc/grpc-js";
import { context, isSpanContextValid, propagation, trace } from "@opentelemetry/api";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { checkServerIdentity } from "node:tls";
import { setTimeout as sleep } from "node:timers/promises";
import { fromServiceError } from "./errors.js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
import { SERVICE_CONFIG } from "./service-config.js";
import { API_VERSION, VERSION } from "./version.js";
/** Sent as the gRPC user agent, so the server's logs show which client spoke. */
export const USER_AGENT = `arbiter-client-node/${VERSION} (${API_VERSION})`;
/** The default {@link RetryPolicy}: 100 ms doubling to 1 s, for at most 20 s. */
export const DEFAULT_RETRY = { initialBackoffMs: 100, maxBackoffMs: 1000, multiplier: 2, maxElapsedMs: 20_000 };
/**
 * The channel's service config: {@link SERVICE_CONFIG} (each method's retry policy) with
 * round-robin load balancing over every address the target resolves to (`dns:///` a
 * headless Service, or `ipv4:10.0.0.1:50051,10.0.0.2:50051`), so new replicas get
 * traffic as connections are re-resolved (the server's `--max-connection-age`).
 */
export const CHANNEL_SERVICE_CONFIG = { loadBalancingConfig: [{ round_robin: {} }], ...SERVICE_CONFIG };
/** A fresh event id: 16 random bytes, hex (the API takes 1 to 128 of [A-Za-z0-9_.:-]). */
export function newEventId() {
    return randomBytes(16).toString("hex");
}
function pem(file, text, what) {
    if (file !== undefined && text !== undefined)
        throw new Error(`tls: give ${what}File or ${what}, not both`);
    if (file !== undefined)
        return readFileSync(file);
    return text === undefined ? null : Buffer.from(text);
}
/**
 * TLS channel credentials that never set an IP address as the TLS ServerName (SNI).
 * grpc-js sets it to the target's host (or `grpc.ssl_target_name_override`), and for an
 * IP target (`127.0.0.1:50051`, `ipv4:10.0.0.1:50051,...`) Node then warns DEP0123
 * ("Setting the TLS ServerName to an IP address is not permitted by RFC 6066"): RFC 6066
 * section 3 allows only host names in server_name. This leaves the ServerName out when
 * it is an IP address (the identity check still runs: Node checks the certificate
 * against the connection's host, the IP, or against `checkServerIdentity`'s name).
 * It reads grpc-js's connector's `connectionOptions` (grpc-js 1.14.7, pinned; the TLS
 * test fails on a warning should a later grpc-js rename it).
 */
class NoIpServerNameCredentials extends ChannelCredentials {
    inner;
    constructor(inner) {
        super();
        this.inner = inner;
    }
    _isSecure() {
        return this.inner._isSecure();
    }
    _equals(other) {
        return other === this || (other instanceof NoIpServerNameCredentials && this.inner._equals(other.inner));
    }
    _createSecureConnector(...args) {
        const connector = this.inner._createSecureConnector(...args);
        const opts = connector.connectionOptions;
        if (opts && typeof opts.servername === "string" && isIP(opts.servername))
            delete opts.servername;
        return connector;
    }
}
/** The channel credentials the options ask for. */
function channelCredentials(opts) {
    if (opts.tls && opts.credentials)
        throw new Error("ArbiterClient: give tls or credentials, not both");
    let creds = opts.credentials;
    if (opts.tls) {
        const t = opts.tls === true ? {} : opts.tls;
        const key = pem(t.keyFile, t.key, "key");
        const cert = pem(t.certFile, t.cert, "cert");
        if ((key === null) !== (cert === null))
            throw new Error("tls: a client certificate needs its key, and a key its certificate");
        // A serverName that is an IP address is checked against the certificate here, not
        // through grpc.ssl_target_name_override (which would make it the TLS ServerName).
        const name = t.serverName;
        const verify = name && isIP(name) ? { checkServerIdentity: (_host, c) => checkServerIdentity(name, c) } : {};
        creds = new NoIpServerNameCredentials(credentials.createSsl(pem(t.caFile, t.ca, "ca"), key, cert, verify));
    }
    creds ??= credentials.createInsecure();
    const token = opts.token;
    if (token === undefined)
        return creds;
    if (!creds._isSecure())
        throw new Error("ArbiterClient: a token needs TLS (set tls): it would cross the network in the clear");
    const bearer = credentials.createFromMetadataGenerator((_params, cb) => {
        Promise.resolve(typeof token === "function" ? token() : token).then((t) => {
            const md = new Metadata();
            md.set("authorization", `Bearer ${t}`);
            cb(null, md);
        }, (err) => cb(err instanceof Error ? err : new Error(String(err))));
    });
    return credentials.combineChannelCredentials(creds, bearer);
}
/**
 * The interceptor that sends the W3C trace context of the context current when the RPC
 * starts: the option's `traceparent`, else the global propagator's (tracestate and
 * baggage too, when the SDK registered one), else the active span's context, formatted.
 */
function traceInterceptor(supplied) {
    return (options, nextCall) => new InterceptingCall(nextCall(options), {
        start(metadata, listener, next) {
            const own = supplied?.();
            if (own) {
                metadata.set("traceparent", own);
            }
            else {
                const ctx = context.active();
                propagation.inject(ctx, metadata, { set: (md, k, v) => md.set(k, v) });
                const sc = trace.getSpanContext(ctx);
                if (metadata.get("traceparent").length === 0 && sc && isSpanContextValid(sc)) {
                    metadata.set("traceparent", `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`);
                }
            }
            next(metadata, listener);
        },
    });
}
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
export class ArbiterClient {
    /** The generated @grpc/grpc-js stub, for anything this wrapper does not cover (its channel retries as above). */
    stub;
    timeoutMs;
    retry;
    log;
    makeStub;
    onceStub;
    /**
     * @param target the server address: `"127.0.0.1:50051"`, `"dns:///arbiter.ns.svc:50051"`
     *   (every address the name resolves to, round-robin), or a list,
     *   `"ipv4:127.0.0.1:50051,127.0.0.1:50052"`.
     * @throws Error when `tls` names a file that cannot be read, or `token` comes without TLS.
     */
    constructor(target, opts = {}) {
        this.retry = { ...DEFAULT_RETRY, ...opts.retry };
        const creds = channelCredentials(opts);
        const serverName = opts.tls && opts.tls !== true ? opts.tls.serverName : undefined;
        const base = {
            "grpc.primary_user_agent": USER_AGENT,
            "grpc.service_config": JSON.stringify(CHANNEL_SERVICE_CONFIG),
            "grpc.service_config_disable_resolution": 1, // no TXT lookups: this config is the API's
            "grpc.enable_retries": 1,
            // grpc-js waits 1 s, then 1.6 times longer up to 120 s, before reconnecting a lost
            // channel: after a 3 s network cut the first request could wait 5 s more, past a
            // held commit's max_hold. A conversation cannot wait that long, so the channel
            // reconnects on the retry policy's schedule instead.
            "grpc.initial_reconnect_backoff_ms": this.retry.initialBackoffMs,
            "grpc.max_reconnect_backoff_ms": this.retry.maxBackoffMs,
            // A host name is the TLS ServerName and the name checked; an IP address only the
            // name checked (channelCredentials), never the ServerName (RFC 6066, DEP0123).
            ...(serverName && !isIP(serverName) ? { "grpc.ssl_target_name_override": serverName } : {}),
            ...(serverName ? { "grpc.default_authority": serverName } : {}),
            ...opts.channelOptions,
            interceptors: [traceInterceptor(opts.traceparent), ...(opts.channelOptions?.interceptors ?? [])],
        };
        this.makeStub = (extra) => new pb.ArbiterServiceClient(target, creds, { ...base, ...extra });
        this.stub = this.makeStub({});
        this.timeoutMs = opts.timeoutMs ?? 5000;
        this.log = opts.logger ?? console;
    }
    /** Closes the channels. */
    close() {
        this.stub.close();
        this.onceStub?.close();
    }
    /** RegisterCall; retried by the service config when the request carries a call id, else sent once. See {@link EventCallOptions}. */
    registerCall(req, opts = {}) {
        const r = pb.RegisterCallRequest.fromPartial(req);
        return this.call("RegisterCall", "registerCall", r, this.timeoutMs, opts.signal, (opts.retry ?? true) && r.callId !== "");
    }
    /** ReportSpeech; idempotent by `eventId` (assigned when unset). See {@link EventCallOptions}. */
    reportSpeech(req, opts = {}) {
        const r = pb.ReportSpeechRequest.fromPartial(req);
        r.eventId ||= newEventId();
        return this.call("ReportSpeech", "reportSpeech", r, this.timeoutMs, opts.signal, opts.retry);
    }
    /** ReportTranscript; idempotent by `eventId` (assigned when unset). See {@link EventCallOptions}. */
    reportTranscript(req, opts = {}) {
        const r = pb.ReportTranscriptRequest.fromPartial(req);
        r.eventId ||= newEventId();
        return this.call("ReportTranscript", "reportTranscript", r, this.timeoutMs, opts.signal, opts.retry);
    }
    /** ReportToolCallCancellation; idempotent (dead ids stay dead; `eventId` assigned when unset). See {@link EventCallOptions}. */
    reportToolCallCancellation(req, opts = {}) {
        const r = pb.ReportToolCallCancellationRequest.fromPartial(req);
        r.eventId ||= newEventId();
        return this.call("ReportToolCallCancellation", "reportToolCallCancellation", r, this.timeoutMs, opts.signal, opts.retry);
    }
    /**
     * Decide; idempotent. The RPC's deadline is `timeoutMs` plus `req.wait`. `signal`
     * cancels the long-poll (the promise then rejects with the signal's reason). A replica
     * shutting down ends a parked Decide with UNAVAILABLE (reason SERVER_DRAINING): the
     * channel asks again, on another replica.
     */
    decide(req, signal) {
        const r = pb.DecideRequest.fromPartial(req);
        const waitMs = (r.wait?.seconds ?? 0) * 1000 + (r.wait?.nanos ?? 0) / 1e6;
        return this.call("Decide", "decide", r, this.timeoutMs + waitMs, signal);
    }
    /**
     * Complete; idempotent (the same report returns the same effects). `OUTCOME_UNKNOWN`
     * (after COMMIT: the backend could not say whether the side effect happened) answers
     * the job's calls "unknown"; report `OUTCOME_COMMITTED` or `OUTCOME_FAILED` for the same
     * job once the truth is known (the note then comes in that Complete's effects).
     */
    complete(req) {
        return this.call("Complete", "complete", pb.CompleteRequest.fromPartial(req));
    }
    /** ConfigureSession; idempotent (the same options again change nothing). */
    configureSession(req) {
        return this.call("ConfigureSession", "configureSession", pb.ConfigureSessionRequest.fromPartial(req));
    }
    /**
     * Poll (steps the session's timers). Pass `afterSeq` (the highest `seq` acted on): then
     * a retry whose first reply was lost, or a Watch that fired the timers first, still
     * hands every effect back (without it, an effect is handed out to one reply only). With
     * Watch open no polling is needed.
     */
    poll(req) {
        return this.call("Poll", "poll", pb.PollRequest.fromPartial(req));
    }
    /** GetSession; read-only. */
    getSession(req) {
        return this.call("GetSession", "getSession", pb.GetSessionRequest.fromPartial(req));
    }
    /**
     * GetHistory: the session's timeline, oldest first (its inputs, the decisions, the
     * holds, each at `tMs` from `createdAt`), with the bounds it is kept in; read-only, so
     * retried like GetSession. Rejects with {@link NotFoundError} (reason
     * `SESSION_NOT_FOUND`, field `session_id`) for a session unknown, expired or another
     * tenant's, {@link InvalidArgumentError} naming the field for a malformed id.
     */
    getHistory(req) {
        return this.call("GetHistory", "getHistory", pb.GetHistoryRequest.fromPartial(req));
    }
    /** CloseSession; idempotent. */
    closeSession(req) {
        return this.call("CloseSession", "closeSession", pb.CloseSessionRequest.fromPartial(req));
    }
    /**
     * Connect (a new model connection for the session); idempotent (connecting again with
     * the current id changes nothing). Its effects are skips with reason
     * `connection_closed`; `epoch` is the session's (send it with later requests) and
     * `state` says new, resumed, or lost (the request's `epoch` is gone: every call of it
     * has an unknown outcome). See {@link EventCallOptions}.
     */
    connect(req, opts = {}) {
        return this.call("Connect", "connect", pb.ConnectRequest.fromPartial(req), this.timeoutMs, opts.signal, opts.retry);
    }
    /**
     * ReportProgress (an interim result of a running job); idempotent by `eventId`
     * (assigned when unset), so retried like the rest.
     */
    reportProgress(req) {
        const r = pb.ReportProgressRequest.fromPartial(req);
        r.eventId ||= newEventId();
        return this.call("ReportProgress", "reportProgress", r);
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
    async *watch(sessionId, afterSeq = 0, signal) {
        let last = afterSeq;
        let start; // first failure since the last effect received
        let delay = this.retry.initialBackoffMs;
        for (;;) {
            signal?.throwIfAborted();
            const stream = this.stub.watch(pb.WatchRequest.fromPartial({ sessionId, afterSeq: last }), new Metadata({ waitForReady: true }));
            const onAbort = () => stream.cancel();
            signal?.addEventListener("abort", onAbort, { once: true });
            try {
                for await (const res of stream) {
                    if (res.seq && res.seq <= last)
                        continue; // a replica that resent what was delivered: never twice
                    last = res.seq || last;
                    start = undefined;
                    delay = this.retry.initialBackoffMs;
                    yield res;
                }
                return; // the server ended the stream
            }
            catch (err) {
                signal?.throwIfAborted();
                const e = err;
                start ??= Date.now();
                const pause = delay * (0.5 + Math.random() / 2);
                const retried = e.code === status.UNAVAILABLE || e.code === status.CANCELLED;
                if (!retried || Date.now() - start + pause > this.retry.maxElapsedMs)
                    throw fromServiceError(e, "Watch");
                this.log.warn(`arbiter Watch: ${status[e.code]} (${e.details}), resuming after seq ${last} in ${Math.round(pause)}ms`);
                await sleep(pause, undefined, { signal });
                delay = Math.min(delay * this.retry.multiplier, this.retry.maxBackoffMs);
            }
            finally {
                signal?.removeEventListener("abort", onAbort);
                stream.cancel(); // a no-op once it ended
            }
        }
    }
    async call(name, method, req, timeoutMs = this.timeoutMs, signal, retry = true) {
        // retry=false: one attempt, failing fast, on a channel without retries (the caller
        // retries with a fresh request).
        const stub = retry ? this.stub : (this.onceStub ??= this.makeStub({ "grpc.enable_retries": 0 }));
        try {
            return await this.once(stub, stub[method], req, timeoutMs, signal, retry);
        }
        catch (err) {
            signal?.throwIfAborted();
            throw fromServiceError(err, name);
        }
    }
    once(stub, method, req, timeoutMs, signal, waitForReady) {
        return new Promise((resolve, reject) => {
            signal?.throwIfAborted();
            const onAbort = () => call.cancel();
            const call = method.call(stub, req, new Metadata({ waitForReady }), { deadline: Date.now() + timeoutMs }, (err, res) => {
                signal?.removeEventListener("abort", onAbort);
                if (err)
                    reject(err);
                else
                    resolve(res);
            });
            signal?.addEventListener("abort", onAbort, { once: true });
        });
    }
}
