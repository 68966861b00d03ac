/**
 * The gRPC service config of the Arbiter API: a copy of clients/service-config.json (the
 * retry policy per method, with the codes safe to retry for each; server/retry_test.go
 * checks that file, test/config.test.ts checks this copy equals it). ArbiterClient
 * builds its channel with it, plus `loadBalancingConfig: round_robin`.
 */
export declare const SERVICE_CONFIG: {
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
};
