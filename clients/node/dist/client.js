import { credentials, Metadata, status, } from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";
import { fromServiceError } from "./errors.js";
import * as pb from "./gen/arbiter/v1/arbiter.js";
import { API_VERSION, VERSION } from "./version.js";
/** Sent as the gRPC user agent, so the server's logs show which client spoke. */
export const USER_AGENT = `arbiter-client-node/${VERSION} (${API_VERSION})`;
/** The default {@link RetryPolicy}: 100 ms doubling to 2 s, for at most 20 s. */
export const DEFAULT_RETRY = { initialBackoffMs: 100, maxBackoffMs: 2000, multiplier: 2, maxElapsedMs: 20_000 };
// CANCELLED is here because we did not cancel (that throws the signal's reason): a
// server going away resets its streams.
const RETRIED_IF_IDEMPOTENT = new Set([status.UNAVAILABLE, status.ABORTED, status.DEADLINE_EXCEEDED, status.CANCELLED]);
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
 * ConfigureSession, GetSession and CloseSession, on UNAVAILABLE, ABORTED,
 * DEADLINE_EXCEEDED and CANCELLED (one this client did not ask for: a server going away
 * resets its streams). ReportSpeech and
 * ReportTranscript are not idempotent (an event applied twice is two events): they are
 * retried only on ABORTED, which the server returns when it changed nothing.
 */
export class ArbiterClient {
    /** The generated @grpc/grpc-js stub, for anything this wrapper does not cover. */
    stub;
    timeoutMs;
    retry;
    log;
    /** @param target the server address, e.g. `"127.0.0.1:50051"`. */
    constructor(target, opts = {}) {
        this.stub = new pb.ArbiterServiceClient(target, opts.credentials ?? credentials.createInsecure(), {
            "grpc.primary_user_agent": USER_AGENT,
            ...opts.channelOptions,
        });
        this.timeoutMs = opts.timeoutMs ?? 5000;
        this.retry = { ...DEFAULT_RETRY, ...opts.retry };
        this.log = opts.logger ?? console;
    }
    /** Closes the channel. */
    close() {
        this.stub.close();
    }
    /** RegisterCall; retried only when the request carries a call id. */
    registerCall(req) {
        const r = pb.RegisterCallRequest.fromPartial(req);
        return this.call("RegisterCall", this.stub.registerCall, r, r.callId !== "");
    }
    /** ReportSpeech; not idempotent: retried only on ABORTED. */
    reportSpeech(req) {
        return this.call("ReportSpeech", this.stub.reportSpeech, pb.ReportSpeechRequest.fromPartial(req), false);
    }
    /** ReportTranscript; not idempotent: retried only on ABORTED. */
    reportTranscript(req) {
        return this.call("ReportTranscript", this.stub.reportTranscript, pb.ReportTranscriptRequest.fromPartial(req), false);
    }
    /** ReportToolCallCancellation; idempotent (dead ids stay dead). */
    reportToolCallCancellation(req) {
        const r = pb.ReportToolCallCancellationRequest.fromPartial(req);
        return this.call("ReportToolCallCancellation", this.stub.reportToolCallCancellation, r, true);
    }
    /**
     * Decide; idempotent. The attempt's deadline is `timeoutMs` plus `req.wait`. `signal`
     * cancels the long-poll (the promise then rejects with the signal's reason).
     */
    decide(req, signal) {
        const r = pb.DecideRequest.fromPartial(req);
        const waitMs = (r.wait?.seconds ?? 0) * 1000 + (r.wait?.nanos ?? 0) / 1e6;
        return this.call("Decide", this.stub.decide, r, true, this.timeoutMs + waitMs, signal);
    }
    /** Complete; idempotent (the same report returns the same effects). */
    complete(req) {
        return this.call("Complete", this.stub.complete, pb.CompleteRequest.fromPartial(req), true);
    }
    /** ConfigureSession; idempotent (the same options again change nothing). */
    configureSession(req) {
        return this.call("ConfigureSession", this.stub.configureSession, pb.ConfigureSessionRequest.fromPartial(req), true);
    }
    /** GetSession; read-only. */
    getSession(req) {
        return this.call("GetSession", this.stub.getSession, pb.GetSessionRequest.fromPartial(req), true);
    }
    /** CloseSession; idempotent. */
    closeSession(req) {
        return this.call("CloseSession", this.stub.closeSession, pb.CloseSessionRequest.fromPartial(req), true);
    }
    async call(name, method, req, idempotent, timeoutMs = this.timeoutMs, signal) {
        const start = Date.now();
        let delay = this.retry.initialBackoffMs;
        for (;;) {
            try {
                return await this.once(method, req, timeoutMs, signal);
            }
            catch (err) {
                signal?.throwIfAborted();
                const e = err;
                const retried = e.code === status.ABORTED || (idempotent && RETRIED_IF_IDEMPOTENT.has(e.code));
                const pause = delay * (0.5 + Math.random() / 2);
                if (!retried || Date.now() - start + pause > this.retry.maxElapsedMs)
                    throw fromServiceError(e, name);
                this.log.warn(`arbiter ${name}: ${status[e.code]} (${e.details}), retrying in ${Math.round(pause)}ms`);
                await sleep(pause, undefined, { signal });
                delay = Math.min(delay * this.retry.multiplier, this.retry.maxBackoffMs);
            }
        }
    }
    once(method, req, timeoutMs, signal) {
        return new Promise((resolve, reject) => {
            signal?.throwIfAborted();
            const onAbort = () => call.cancel();
            const call = method.call(this.stub, req, new Metadata({ waitForReady: true }), { deadline: Date.now() + timeoutMs }, (err, res) => {
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
