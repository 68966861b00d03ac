package server

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/voicearbiter/arbiter/arbiter"
)

// codeOf is the one map from error kinds to gRPC status codes.
var codeOf = map[arbiter.Kind]codes.Code{
	arbiter.Invalid:            codes.InvalidArgument,
	arbiter.NotFound:           codes.NotFound,
	arbiter.FailedPrecondition: codes.FailedPrecondition,
	arbiter.Conflict:           codes.Aborted,
	arbiter.Unavailable:        codes.Unavailable,
	arbiter.ResourceExhausted:  codes.ResourceExhausted,
	arbiter.Internal:           codes.Internal,
}

// status converts an error from the service into a gRPC status error. Context errors
// keep their codes; kinded errors map through codeOf with their caller-safe message;
// anything else is INTERNAL and is the only kind logged as an error.
func (s *Server) status(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return status.FromContextError(err).Err()
	}
	k := arbiter.KindOf(err)
	if k == arbiter.Unavailable && s.metrics != nil {
		method, _ := grpc.Method(ctx)
		s.metrics.storeErrs.WithLabelValues(method).Inc()
	}
	if k == arbiter.Internal {
		s.log.ErrorContext(ctx, "internal error", "err", err)
	}
	return status.Error(codeOf[k], arbiter.MessageOf(err))
}
