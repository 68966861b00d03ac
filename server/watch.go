package server

import (
	"context"
	"errors"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// Connect implements arbiterv1.ArbiterServiceServer: it switches the session (created
// if needed) to a new connection and returns the skips ("connection_closed") of the
// calls still pending from earlier ones. INVALID_ARGUMENT naming `session_id` or
// `connection_id`; FAILED_PRECONDITION on a closed session.
func (s *Server) Connect(ctx context.Context, req *arbiterv1.ConnectRequest) (*arbiterv1.ConnectResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	out, eff, _, err := s.apply(ctx, key, arbiter.Connect{ConnectionID: req.GetConnectionId(), Epoch: req.GetEpoch()}, true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ConnectResponse{Effects: eff, Epoch: out.Connect.Epoch, State: sessionStatePB[out.Connect.State]}, nil
}

var sessionStatePB = map[arbiter.ConnectState]arbiterv1.SessionState{
	arbiter.ConnectNew:     arbiterv1.SessionState_SESSION_STATE_NEW,
	arbiter.ConnectResumed: arbiterv1.SessionState_SESSION_STATE_RESUMED,
	arbiter.ConnectLost:    arbiterv1.SessionState_SESSION_STATE_LOST,
}

// ReportProgress implements arbiterv1.ArbiterServiceServer: it returns the interim
// responses of a running job's live NON_BLOCKING calls (none unless the session said
// its provider honours response scheduling). INVALID_ARGUMENT naming `session_id`,
// `job_id` or `result`; NOT_FOUND for an unknown session or job; FAILED_PRECONDITION
// for a completed job or a closed session.
func (s *Server) ReportProgress(ctx context.Context, req *arbiterv1.ReportProgressRequest) (*arbiterv1.ReportProgressResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	var result map[string]any
	if req.GetResult() != nil {
		result = req.GetResult().AsMap()
	}
	out, eff, _, err := s.apply(ctx, key, arbiter.Progress{JobID: req.GetJobId(), Result: result, EventID: req.GetEventId()}, false)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ReportProgressResponse{Effects: eff, Repeat: out.Repeat}, nil
}

// The messages of the UNAVAILABLE (SERVER_DRAINING) that ends Watch streams and
// waiting Decides on Shutdown.
const (
	shuttingDown   = "server shutting down: resume Watch on another replica with after_seq set to the last seq received"
	decideDraining = "server shutting down: ask Decide again on another replica (a decision made is in the store)"
)

// Watch implements arbiterv1.ArbiterServiceServer: it streams the session's effect log
// after after_seq, one WatchResponse per effect in seq order, until the session
// closes or expires (the stream then ends OK), the client goes away, or the server
// shuts down (UNAVAILABLE, reason SERVER_DRAINING: resume elsewhere with after_seq). Errors before the first
// message: INVALID_ARGUMENT naming `session_id`, NOT_FOUND naming the session,
// FAILED_PRECONDITION naming `after_seq` (beyond the last effect, or older than the
// log keeps), UNAVAILABLE (store down, or shutting down). The stream has no deadline
// of its own (the per-RPC deadline interceptor is unary only); the client's deadline,
// if any, applies.
func (s *Server) Watch(req *arbiterv1.WatchRequest, stream grpc.ServerStreamingServer[arbiterv1.WatchResponse]) error {
	ctx := stream.Context()
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return err
	}
	if s.closing.Err() != nil {
		return draining(shuttingDown)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.closing, cancel)
	defer stop()
	var sendErr error
	err = s.svc.Watch(wctx, key, req.GetAfterSeq(), func(entries []arbiter.LogEntry) error {
		for _, e := range entries {
			m, err := watchPB(e)
			if err != nil {
				return err
			}
			if err := stream.Send(m); err != nil {
				sendErr = err
				return err
			}
		}
		return nil
	}, func(out arbiter.Output, sess *arbiter.Session) {
		s.record(ctx, out, sess) // decisions the timers made while nobody else asked
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil && s.closing.Err() != nil:
		return draining(shuttingDown)
	case sendErr != nil && errors.Is(err, sendErr):
		return sendErr // the client went away; its status is already set
	}
	return err
}

// watchMethod is Watch's full method name.
const watchMethod = "/arbiter.v1.ArbiterService/Watch"

// streamRequestFields is the stream counterpart of requestFields: for Watch (server
// streaming, one request) it reads the request before the chain runs and puts its
// session id into the context's logging fields, so the access-log line of a Watch
// carries it like a unary RPC's. The handler gets the same request from RecvMsg.
func streamRequestFields(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if info.FullMethod != watchMethod {
		return h(srv, ss)
	}
	req := new(arbiterv1.WatchRequest)
	if err := ss.RecvMsg(req); err != nil {
		return err
	}
	ctx := ss.Context()
	traceRequest(ctx, req)
	if id := req.GetSessionId(); id != "" {
		ctx = logging.InjectFields(ctx, logging.Fields{"session_id", arbiter.Clip(id)})
	}
	return h(srv, &prefetched{ServerStream: ss, ctx: ctx, req: req})
}

// prefetched is a server stream whose first request was already read.
type prefetched struct {
	grpc.ServerStream
	ctx context.Context
	req proto.Message
}

func (p *prefetched) Context() context.Context { return p.ctx }

func (p *prefetched) RecvMsg(m any) error {
	if p.req == nil {
		return p.ServerStream.RecvMsg(m)
	}
	dst, ok := m.(proto.Message)
	if !ok {
		return status.Errorf(codes.Internal, "unexpected message type %T", m)
	}
	proto.Reset(dst)
	proto.Merge(dst, p.req)
	p.req = nil
	return nil
}
