import { status, type ServiceError } from "@grpc/grpc-js";
/**
 * An Arbiter RPC failed. Carries the gRPC status code, the request field at fault (the
 * server starts its messages with the field name and a colon: `call_id: "a b" must be
 * ...`) and the server's message. Subclasses exist for the codes the API documents.
 */
export declare class ArbiterError extends Error {
    /** The gRPC status code (`status.INVALID_ARGUMENT`, ...). */
    readonly code: status;
    /** The request field the server named (`"call_id"`, `"call_ids[0]"`), if any. */
    readonly field: string | undefined;
    /** The server's message (or the transport's, for a lost connection). */
    readonly details: string;
    /** The RPC that failed (`"RegisterCall"`). */
    readonly rpc: string;
    constructor(code: status, details: string, rpc?: string);
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
 * idempotent RPCs). Nothing was decided: never treat it as a commit.
 */
export declare class UnavailableError extends ArbiterError {
}
/** DEADLINE_EXCEEDED: no answer within the RPC's timeout. */
export declare class DeadlineExceededError extends ArbiterError {
}
/** RESOURCE_EXHAUSTED: a session limit was reached (e.g. too many calls). */
export declare class ResourceExhaustedError extends ArbiterError {
}
/** Converts a @grpc/grpc-js error into the matching typed {@link ArbiterError}. */
export declare function fromServiceError(err: ServiceError, rpc: string): ArbiterError;
