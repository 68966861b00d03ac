/**
 * The gRPC service config of the Arbiter API: a copy of clients/service-config.json (the
 * retry policy per method, with the codes safe to retry for each; server/retry_test.go
 * checks that file, test/config.test.ts checks this copy equals it). ArbiterClient
 * builds its channel with it, plus `loadBalancingConfig: round_robin`.
 */
export const SERVICE_CONFIG = {
  "methodConfig": [
    {
      "name": [
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "RegisterCall"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "ReportSpeech"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "ReportTranscript"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "ReportToolCallCancellation"
        }
      ],
      "retryPolicy": {
        "maxAttempts": 4,
        "initialBackoff": "0.05s",
        "maxBackoff": "0.2s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": [
          "UNAVAILABLE",
          "ABORTED"
        ]
      }
    },
    {
      "name": [
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "ReportProgress"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "Complete"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "ConfigureSession"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "Connect"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "CloseSession"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "Poll"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "GetSession"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "GetHistory"
        }
      ],
      "retryPolicy": {
        "maxAttempts": 5,
        "initialBackoff": "0.1s",
        "maxBackoff": "2s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": [
          "UNAVAILABLE",
          "ABORTED",
          "DEADLINE_EXCEEDED"
        ]
      }
    },
    {
      "name": [
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "Decide"
        },
        {
          "service": "arbiter.v1.ArbiterService",
          "method": "Watch"
        }
      ],
      "retryPolicy": {
        "maxAttempts": 5,
        "initialBackoff": "0.1s",
        "maxBackoff": "2s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": [
          "UNAVAILABLE",
          "ABORTED"
        ]
      }
    }
  ]
};
