package server

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Handlers return arbiter errors (an *arbiter.Error of some Kind, a context error,
// or anything else, which is a bug); the errorCodes interceptors turn them into gRPC
// status errors in one place, inside the logging and metrics interceptors so those see
// the final code.

// codeOf is the one map from error kinds to gRPC status codes.
var codeOf = map[arbiter.Kind]codes.Code{
	arbiter.Invalid:            codes.InvalidArgument,
	arbiter.NotFound:           codes.NotFound,
	arbiter.FailedPrecondition: codes.FailedPrecondition,
	arbiter.Conflict:           codes.Aborted,
	arbiter.Unavailable:        codes.Unavailable,
	arbiter.ResourceExhausted:  codes.ResourceExhausted,
	arbiter.DataLoss:           codes.DataLoss,
	arbiter.Internal:           codes.Internal,
}

// status converts an error from a handler into a gRPC status error. A status error
// (from grpc-go or an interceptor) is kept; context errors keep their codes; kinded
// errors map through codeOf with their caller-safe message; anything else is INTERNAL
// and is the only kind logged as an error. method names the RPC for the store-error
// counter.
func (s *Server) status(ctx context.Context, method string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return status.FromContextError(err).Err()
	}
	k := arbiter.KindOf(err)
	if k == arbiter.Unavailable && s.metrics != nil {
		s.metrics.storeErrs.WithLabelValues(method).Inc()
	}
	if k == arbiter.Internal {
		s.log.ErrorContext(ctx, "internal error", "err", err)
	}
	return status.Error(codeOf[k], arbiter.MessageOf(err))
}

// unaryErrorCodes maps a unary handler's error to its status (status above).
func (s *Server) unaryErrorCodes(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil {
		return nil, s.status(ctx, info.FullMethod, err)
	}
	return resp, nil
}

// streamErrorCodes maps a streaming handler's error to its status (status above).
func (s *Server) streamErrorCodes(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return s.status(ss.Context(), info.FullMethod, h(srv, ss))
}
