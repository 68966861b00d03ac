import { status, type ServiceError } from "@grpc/grpc-js";
import { BadRequest_FieldViolation } from "./gen/google/rpc/error_details.js";
/** The ErrorInfo domain of the errors the arbiter answers. */
export declare const ERROR_DOMAIN = "arbiter.voicearbiter.dev";
/**
 * The error details the arbiter attaches to every error it answers (`google.rpc.Status`
 * in the `grpc-status-details-bin` trailer; proto/arbiter/v1/arbiter.proto, "Error
 * details"). Errors grpc answers before the arbiter sees the request (a message over the
 * size limit, an unknown method, a lost connection) carry none: every field is empty.
 */
export interface ErrorDetails {
    /** ErrorInfo.reason (`"INVALID_FIELD"`, `"SESSION_LOST"`, ...); `""` when none came. */
    reason: string;
    /** ErrorInfo.domain: {@link ERROR_DOMAIN} for the arbiter's own; `""` when none came. */
    domain: string;
    /** ErrorInfo.metadata (the arbiter sets `field` when one request field is at fault). */
    metadata: Record<string, string>;
    /** BadRequest's field violations (INVALID_ARGUMENT), in order. */
    fieldViolations: BadRequest_FieldViolation[];
    /** RetryInfo.retry_delay in ms: the least wait before retrying the same request; undefined when none came. */
    retryDelayMs: number | undefined;
}
/**
 * Decodes the `google.rpc.Status` of a grpc-js error's trailer into {@link ErrorDetails}.
 * A trailer that is missing or does not decode gives empty details (never throws): the
 * code and message still say what failed. Unknown detail types are ignored.
 */
export declare function errorDetails(err: Pick<ServiceError, "metadata">): ErrorDetails;
/**
 * An Arbiter RPC failed. Carries the gRPC status code, the server's message and the
 * error details it attached ({@link ErrorDetails}): the ErrorInfo `reason`, the request
 * field at fault (the first BadRequest violation, else ErrorInfo's `field` metadata) and
 * RetryInfo's delay. Subclasses exist for the codes the API documents.
 */
export declare class ArbiterError extends Error {
    /** The gRPC status code (`status.INVALID_ARGUMENT`, ...). */
    readonly code: status;
    /**
     * The ErrorInfo reason (`"INVALID_FIELD"`, `"SESSION_NOT_FOUND"`, `"SESSION_LOST"`,
     * `"SERVER_DRAINING"`, ...: server/errors.go has the vocabulary); `""` when the error
     * carries no details (one grpc answered itself, or a lost connection).
     */
    readonly reason: string;
    /** The request field at fault (`"call_id"`, `"call_ids[0]"`), from the details; undefined when none is named. */
    readonly field: string | undefined;
    /** RetryInfo: the least delay in ms before retrying the same request (0 for SERVER_DRAINING); undefined when the server gave none. */
    readonly retryDelayMs: number | undefined;
    /** All the details, as decoded. */
    readonly errorDetails: ErrorDetails;
    /** The server's message (or the transport's, for a lost connection). */
    readonly details: string;
    /** The RPC that failed (`"RegisterCall"`). */
    readonly rpc: string;
    constructor(code: status, details: string, rpc?: string, errorDetails?: ErrorDetails);
    /** The code's name, e.g. `"INVALID_ARGUMENT"`. */
    get codeName(): string;
}
/** INVALID_ARGUMENT: a field is missing or malformed (see `field`). Nothing changed. */
export declare class InvalidArgumentError extends ArbiterError {
}
/** NOT_FOUND: the session or job does not exist (or expired). */
export declare class NotFoundError extends ArbiterError {
}
/** FAILED_PRECONDITION: the request does not fit the job's or session's state. */
export declare class FailedPreconditionError extends ArbiterError {
}
/** ABORTED: too many concurrent writers on one session, and retries ran out. */
export declare class AbortedError extends ArbiterError {
}
/**
 * UNAVAILABLE: the arbiter or its store could not be reached (after retries, for
 * idempotent RPCs), or the replica is shutting down (reason `SERVER_DRAINING`). Nothing
 * was decided: never treat it as a commit.
 */
export declare class UnavailableError extends ArbiterError {
}
/** DEADLINE_EXCEEDED: no answer within the RPC's timeout. */
export declare class DeadlineExceededError extends ArbiterError {
}
/** RESOURCE_EXHAUSTED: a session limit was reached (e.g. too many calls). */
export declare class ResourceExhaustedError extends ArbiterError {
}
/** UNAUTHENTICATED: no bearer token, or one the arbiter does not know (`--auth-tokens-file`). */
export declare class UnauthenticatedError extends ArbiterError {
}
/**
 * DATA_LOSS with reason `SESSION_LOST`: the request named the session's epoch (the one
 * Connect returned) and the arbiter's store no longer has that epoch (a volatile Redis
 * restarted). Nothing changed; the session was not started again. The outcome of every
 * call made in the lost epoch is unknown; Connect again (with this epoch) to go on in a
 * new one. `SessionCore` does that itself and hands out a `sessionLost` action.
 */
export declare class SessionLostError extends ArbiterError {
}
/** Converts a @grpc/grpc-js error into the matching typed {@link ArbiterError}, with its details decoded. */
export declare function fromServiceError(err: ServiceError, rpc: string): ArbiterError;
