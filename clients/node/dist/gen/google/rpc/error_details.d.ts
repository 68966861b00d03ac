import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { Duration } from "../protobuf/duration.js";
export declare const protobufPackage = "google.rpc";
export declare const protobufFileName = "google/rpc/error_details.proto";
export interface ErrorInfo {
    reason: string;
    domain: string;
    metadata: {
        [key: string]: string;
    };
}
export interface ErrorInfo_MetadataEntry {
    key: string;
    value: string;
}
export interface RetryInfo {
    retryDelay: Duration | undefined;
}
export interface DebugInfo {
    stackEntries: string[];
    detail: string;
}
export interface QuotaFailure {
    violations: QuotaFailure_Violation[];
}
export interface QuotaFailure_Violation {
    subject: string;
    description: string;
    apiService: string;
    quotaMetric: string;
    quotaId: string;
    quotaDimensions: {
        [key: string]: string;
    };
    quotaValue: number;
    futureQuotaValue?: number | undefined;
}
export interface QuotaFailure_Violation_QuotaDimensionsEntry {
    key: string;
    value: string;
}
export interface PreconditionFailure {
    violations: PreconditionFailure_Violation[];
}
export interface PreconditionFailure_Violation {
    type: string;
    subject: string;
    description: string;
}
export interface BadRequest {
    fieldViolations: BadRequest_FieldViolation[];
}
export interface BadRequest_FieldViolation {
    field: string;
    description: string;
    reason: string;
    localizedMessage: LocalizedMessage | undefined;
}
export interface RequestInfo {
    requestId: string;
    servingData: string;
}
export interface ResourceInfo {
    resourceType: string;
    resourceName: string;
    owner: string;
    description: string;
}
export interface Help {
    links: Help_Link[];
}
export interface Help_Link {
    description: string;
    url: string;
}
export interface LocalizedMessage {
    locale: string;
    message: string;
}
export declare const ErrorInfo: MessageFns<ErrorInfo>;
export declare const ErrorInfo_MetadataEntry: MessageFns<ErrorInfo_MetadataEntry>;
export declare const RetryInfo: MessageFns<RetryInfo>;
export declare const DebugInfo: MessageFns<DebugInfo>;
export declare const QuotaFailure: MessageFns<QuotaFailure>;
export declare const QuotaFailure_Violation: MessageFns<QuotaFailure_Violation>;
export declare const QuotaFailure_Violation_QuotaDimensionsEntry: MessageFns<QuotaFailure_Violation_QuotaDimensionsEntry>;
export declare const PreconditionFailure: MessageFns<PreconditionFailure>;
export declare const PreconditionFailure_Violation: MessageFns<PreconditionFailure_Violation>;
export declare const BadRequest: MessageFns<BadRequest>;
export declare const BadRequest_FieldViolation: MessageFns<BadRequest_FieldViolation>;
export declare const RequestInfo: MessageFns<RequestInfo>;
export declare const ResourceInfo: MessageFns<ResourceInfo>;
export declare const Help: MessageFns<Help>;
export declare const Help_Link: MessageFns<Help_Link>;
export declare const LocalizedMessage: MessageFns<LocalizedMessage>;
type Builtin = Date | Function | Uint8Array | string | number | boolean | undefined;
export type DeepPartial<T> = T extends Builtin ? T : T extends globalThis.Array<infer U> ? globalThis.Array<DeepPartial<U>> : T extends ReadonlyArray<infer U> ? ReadonlyArray<DeepPartial<U>> : T extends {} ? {
    [K in keyof T]?: DeepPartial<T[K]>;
} : Partial<T>;
type KeysOfUnion<T> = T extends T ? keyof T : never;
export type Exact<P, I extends P> = P extends Builtin ? P : P & {
    [K in keyof P]: Exact<P[K], I[K]>;
} & {
    [K in Exclude<keyof I, KeysOfUnion<P>>]: never;
};
export interface MessageFns<T> {
    encode(message: T, writer?: BinaryWriter): BinaryWriter;
    decode(input: BinaryReader | Uint8Array, length?: number): T;
    fromJSON(object: any): T;
    toJSON(message: T): unknown;
    create<I extends Exact<DeepPartial<T>, I>>(base?: I): T;
    fromPartial<I extends Exact<DeepPartial<T>, I>>(object: I): T;
}
export {};
