// Package server is the gRPC edge of the arbiter: it validates requests, converts
// between the API's messages and the engine's types, runs them through an
// arbiter.Service, and maps error kinds to status codes (errors.go). It also serves
// grpc.health.v1 and server reflection so grpcurl and ghz work without the proto file.
package server

import (
	"cmp"
	"context"
	"crypto/tls"
	"log/slog"
	"runtime"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/arbiter/speech"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// Server implements arbiterv1.ArbiterServiceServer on an arbiter.Service. Safe for
// concurrent use.
type Server struct {
	arbiterv1.UnimplementedArbiterServiceServer
	svc     *arbiter.Service
	log     *slog.Logger
	metrics *Metrics
	// closing ends when Shutdown is called: open Watch streams and waiting Decides
	// end with UNAVAILABLE (SERVER_DRAINING), new Watches are refused and new Decides
	// do not wait.
	closing  context.Context
	shutdown context.CancelFunc
}

// New returns a Server on svc, logging to log (nil: slog.Default()). Every line it
// logs carries the request's tenant, session, call and job ids, but where the line
// names the call or job it is about (the effect log, effectlog.go).
func New(svc *arbiter.Service, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	closing, shutdown := context.WithCancel(context.Background())
	return &Server{svc: svc, log: slog.New(ctxHandler{log.Handler()}), closing: closing, shutdown: shutdown}
}

// Shutdown ends every open Watch stream at once with UNAVAILABLE (the client resumes
// on another replica with after_seq set to the last seq it acted on, losing nothing)
// and refuses new ones the same way; it ends every Decide waiting for a decision
// likewise (the client asks again on another replica: a decision made is in the
// store), and a Decide that arrives later answers at once, without waiting (PENDING
// if undecided). Both carry reason SERVER_DRAINING and RetryInfo 0. Other unary RPCs
// are not affected. Call it along with grpc.Server.GracefulStop: a Watch stream lives
// as long as its session and a Decide waits up to its wait (30 s), so without it a
// graceful stop would wait for the drain timeout. Idempotent; safe for concurrent use.
func (s *Server) Shutdown() { s.shutdown() }

// Options configure NewGRPCServer. The zero value is a plaintext, unauthenticated,
// unlimited single-tenant server.
type Options struct {
	// Logger receives one line per finished RPC and every Internal error. Nil:
	// slog.Default().
	Logger *slog.Logger
	// MaxRecvMsgSize caps a request message in bytes; larger ones get
	// RESOURCE_EXHAUSTED. Zero means 1 MiB.
	MaxRecvMsgSize int
	// Metrics, when set, records gRPC and arbiter metrics.
	Metrics *Metrics
	// TracerProvider, when set, traces every RPC but health checks and reflection:
	// one span each (the otelgrpc stats handler), the child of the caller's span when
	// the request carries W3C trace context (Propagator), with the arbiter's ids,
	// decisions, holds and effects on it (tracing.go). Nil: no tracing, at no cost.
	TracerProvider trace.TracerProvider
	// Tokens, when set, requires a bearer token on every RPC but health checks and
	// reflection (UNAUTHENTICATED without a known one) and scopes sessions by its
	// tenant.
	Tokens *Tokens
	// UnauthRPS and UnauthBurst bound, per peer address (its IP; IPv6 by /64), the
	// requests that fail authentication (with Tokens only): within them such a
	// request is UNAUTHENTICATED, past them RESOURCE_EXHAUSTED. A request with a known
	// token is never limited by them. Zero means DefaultUnauthRPS (1/s) and
	// DefaultUnauthBurst (20).
	UnauthRPS   float64
	UnauthBurst int
	// UnauthLogInterval is how often the failed authentications are summed up in one
	// warn line (counts by reason and by address) instead of one access-log line each
	// (those are at debug), and the failed TLS handshakes in another (by kind: no
	// client certificate, a bad one, not TLS; handshake.go). Zero means
	// DefaultUnauthLogInterval (1 min).
	UnauthLogInterval time.Duration
	// ErrorLogRPS and ErrorLogBurst bound, per peer address (its IP; IPv6 by /64), the
	// access log's lines for failed RPCs (errlog.go): past the bucket the lines are
	// counted instead and summed up in one warn line per UnauthLogInterval. Zero means
	// DefaultErrorLogRPS (5/s) and DefaultErrorLogBurst (50).
	ErrorLogRPS   float64
	ErrorLogBurst int
	// Limiter, when set, rate-limits every RPC but health checks and reflection
	// (RESOURCE_EXHAUSTED when over), per tenant: a TenantLimiter counts in this
	// process, a SharedLimiter across every replica sharing its budget.
	Limiter ratelimit.Limiter
	// RPCTimeout bounds each unary RPC (Decide gets its long-poll cap on top). Zero
	// means 10 s.
	RPCTimeout time.Duration
	// Conn limits each connection; zero fields take DefaultConnLimits.
	Conn ConnLimits
	// TLS, when set, serves TLS (mutual TLS if it requires client certificates).
	TLS *tls.Config
	// ServerOptions are appended.
	ServerOptions []grpc.ServerOption
}

// NewGRPCServer returns a grpc.Server serving s, grpc.health.v1 (the returned
// health server; the overall status and the arbiter service start SERVING) and
// reflection, behind one interceptor chain: request ids into the log fields, logging
// (slog), metrics, errors to status codes with their google.rpc details (errors.go),
// bearer-token auth (failures limited per peer address and summed up in one warn line
// per interval) and per-tenant rate limits (both skipping health and reflection),
// undecodable requests refused as INVALID_ARGUMENT (codec.go), a per-RPC deadline,
// and panic recovery innermost (INTERNAL). The
// streaming RPC (Watch) goes through the same chain except the deadline: it is
// authenticated, scoped by tenant and rate-limited once, when it opens. To stop, start
// GracefulStop and call s.Shutdown (ends open Watch streams and waiting Decides with
// UNAVAILABLE, so that neither holds the graceful stop open).
func NewGRPCServer(s *Server, o Options) (*grpc.Server, *health.Server) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	maxRecv := o.MaxRecvMsgSize
	if maxRecv == 0 {
		maxRecv = 1 << 20
	}
	errs := newErrorLog(log, o.ErrorLogRPS, o.ErrorLogBurst, o.UnauthLogInterval)
	lg := logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		if lvl > logging.LevelDebug && isSummarized(fields) {
			lvl = logging.LevelDebug // the guard's summary counts it
		}
		if lvl > logging.LevelDebug && !allowStreamLine(errs, fields) {
			return // errs's summary counts it
		}
		log.Log(ctx, slog.Level(lvl), msg, fields...)
	})
	s.metrics = o.Metrics
	onPanic := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		s.log.ErrorContext(ctx, "panic in handler", "panic", p)
		if o.Metrics != nil {
			o.Metrics.panics.Inc()
		}
		return status.Error(codes.Internal, "internal error")
	})
	timeout := o.RPCTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	// One line per finished RPC: at debug for OK (an access log costs ~15% of a
	// RegisterCall's CPU; --log-level debug turns it on), at info for the caller's
	// errors, at warn for the arbiter's own (UNAVAILABLE, INTERNAL, ...).
	// Failed authentications are summed up by the auth guard instead (at debug here).
	// Unary RPCs go through accessLog, which costs nothing for a line not written; the
	// stream (Watch, one a session) through go-grpc-middleware's interceptor.
	logOpts := []logging.Option{logging.WithLogOnEvents(logging.FinishCall), logging.WithLevels(rpcLogLevel), logging.WithErrorFields(summarizedFields)}
	// One chain, outermost first: ids into the log fields, logging, metrics, errors
	// to status codes with details, auth, rate limit, undecodable requests refused,
	// deadline, and panic recovery innermost. Unary: the first two are one interceptor
	// (accessLog.unary calls requestFields), and so are the last three (innermost).
	unary := []grpc.UnaryServerInterceptor{accessLog{log: slog.New(ctxHandler{log.Handler()}), errs: errs}.unary}
	stream := []grpc.StreamServerInterceptor{streamRequestFields, logging.StreamServerInterceptor(lg, logOpts...)}
	if o.Metrics != nil {
		unary = append(unary, o.Metrics.grpc.UnaryServerInterceptor())
		stream = append(stream, o.Metrics.grpc.StreamServerInterceptor())
	}
	// Every error from here down becomes its status code and details once
	// (errors.go): authentication's and the rate limit's too.
	unary = append(unary, s.unaryErrorCodes)
	stream = append(stream, s.streamErrorCodes)
	// Metadata over the limit is RESOURCE_EXHAUSTED before auth reads it (conn.go).
	hl := headerLimit(cmp.Or(o.Conn.MaxHeaderSize, DefaultConnLimits.MaxHeaderSize))
	unary = append(unary, hl.unary)
	stream = append(stream, hl.stream)
	if o.Tokens != nil {
		g := newAuthGuard(o.Tokens, log, o.UnauthRPS, o.UnauthBurst, o.UnauthLogInterval)
		unary = append(unary, selector.UnaryServerInterceptor(auth.UnaryServerInterceptor(g.authenticate), selector.MatchFunc(protected)))
		stream = append(stream, selector.StreamServerInterceptor(auth.StreamServerInterceptor(g.authenticate), selector.MatchFunc(protected)))
	}
	if o.Limiter != nil {
		unary = append(unary, selector.UnaryServerInterceptor(ratelimit.UnaryServerInterceptor(o.Limiter), selector.MatchFunc(protected)))
		stream = append(stream, selector.StreamServerInterceptor(ratelimit.StreamServerInterceptor(o.Limiter), selector.MatchFunc(protected)))
	}
	// A request the codec could not decode is refused once its caller is known to be
	// allowed (codec.go). The deadline is unary only: a Watch stream lives as long as
	// its session (the client's own deadline, if any, still applies) and ends on
	// Server.Shutdown. Handlers return arbiter errors; s.unaryErrorCodes maps them.
	unary = append(unary, innermost(timeout, s.svc.MaxDecideWait(), recovery.UnaryServerInterceptor(onPanic)))
	stream = append(stream, refuseUndecodedStream, recovery.StreamServerInterceptor(onPanic))
	opts := o.Conn.serverOptions(timeout + s.svc.MaxDecideWait())
	if o.TracerProvider != nil {
		opts = append(opts, tracingOption(o.TracerProvider))
	}
	opts = append(opts,
		grpc.MaxRecvMsgSize(maxRecv),
		grpc.ForceServerCodecV2(newCodec()),
		// A pool of goroutines for streams instead of a new one (and its stack
		// growth) per RPC; see streamWorkers for the size.
		grpc.NumStreamWorkers(streamWorkers()),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
	)
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(withHandshakeLog(credentials.NewTLS(o.TLS), log, o.UnauthLogInterval)))
	}
	gs := grpc.NewServer(append(opts, o.ServerOptions...)...)
	arbiterv1.RegisterArbiterServiceServer(gs, s)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(arbiterv1.ArbiterService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	// "liveness" answers SERVING while the process serves at all, whatever the store
	// does: a liveness probe on it does not restart pods during a Redis outage, which
	// readiness (the arbiter service) already takes out of rotation.
	hs.SetServingStatus(LivenessService, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	reflection.Register(gs)
	if o.Metrics != nil {
		o.Metrics.grpc.InitializeMetrics(gs)
	}
	return gs, hs
}

// streamWorkers is the size of grpc-go's stream worker pool (grpc.NumStreamWorkers):
// 32 per CPU, at least 64. grpc-go hands a new stream to an idle worker and, when
// every worker is busy, starts a goroutine for it (server.go, serveStreams), whose
// stack starts small and grows in the handler: with NumCPU workers (2 here) and 50
// RPCs in flight nearly every RPC took that path, and the stack growth
// (runtime.newstack, first in RegisterCall's Validate and in the stream's first
// select) was 13 % of the server's CPU under ghz RegisterCall. Too many workers cost
// the same another way: the idle ones take streams in turn, and every GC shrinks an
// idle worker's stack, so with 256 workers (each serving about two RPCs between two
// GCs) nearly every RPC grew its stack again (6 %); with 64, 0.8 %. The pool should
// cover the RPCs usually in flight, long streams that hold a worker included (a Watch
// per session, waiting Decides); past it RPCs fall back to a goroutine each.
func streamWorkers() uint32 {
	return uint32(max(64, 32*runtime.NumCPU()))
}

// innermost is the end of the unary chain in one interceptor (grpc-go's chain costs a
// closure and a few frames per interceptor, per RPC): a request the codec could not
// decode refused (undecoded), the RPC's deadline (rpcLimit: timeout, plus decideCap
// for Decide), then recover, go-grpc-middleware's panic recovery, around the handler.
func innermost(timeout, decideCap time.Duration, recover grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := undecoded(req); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, rpcLimit(info, timeout, decideCap))
		defer cancel()
		return recover(ctx, req, info, h)
	}
}

// LivenessService is the health service name that stays SERVING as long as the
// process serves (for liveness probes); "" and "arbiter.v1.ArbiterService" follow the
// store (for readiness).
const LivenessService = "liveness"

// rpcLogLevel is the level of an RPC's access-log line by its status code.
func rpcLogLevel(c codes.Code) logging.Level {
	switch c {
	case codes.OK:
		return logging.LevelDebug
	case codes.Canceled, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.Unauthenticated, codes.FailedPrecondition, codes.OutOfRange, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		return logging.LevelInfo
	default:
		return logging.LevelWarn
	}
}

// key is the session named by id, scoped by the caller's tenant. Errors: Invalid
// naming session_id.
func (s *Server) key(ctx context.Context, id string) (arbiter.SessionKey, error) {
	if err := arbiter.CheckName("session_id", id); err != nil {
		return arbiter.SessionKey{}, err
	}
	return arbiter.SessionKey{Tenant: TenantFrom(ctx), ID: id}, nil
}

// observedAt is when the agent observed an event, the moment its request arrived
// less the age it reports (zero when it reports none), and that arrival. Both are
// taken as the request arrives, before the store is read, so an event whose step
// waits for a slow store (a frozen Redis) keeps its place on the session's timeline
// instead of taking the session clock's later time; an event without an age is one
// the engine places itself (arbiter.Engine.Step: before any commit no Decide has
// handed out yet). Errors: Invalid naming age when it is malformed, negative or
// beyond arbiter.MaxAge.
func (s *Server) observedAt(age *durationpb.Duration) (observed, arrived time.Time, err error) {
	arrived = s.svc.Clock.Now()
	if age == nil {
		return time.Time{}, arrived, nil
	}
	if err := age.CheckValid(); err != nil {
		return time.Time{}, time.Time{}, arbiter.Fieldf(arbiter.Invalid, "age", "%v", err)
	}
	d := age.AsDuration()
	if d < 0 {
		return time.Time{}, time.Time{}, arbiter.Fieldf(arbiter.Invalid, "age", "%v is negative", d)
	}
	if err := arbiter.CheckAge(d); err != nil {
		return time.Time{}, time.Time{}, err
	}
	return arrived.Add(-d), arrived, nil
}

// apply runs one event through the service and returns the engine's output with its
// effects converted for the wire, having logged and counted what it decided.
func (s *Server) apply(ctx context.Context, key arbiter.SessionKey, ev arbiter.Event, create bool) (arbiter.Output, *arbiterv1.Effects, *arbiter.Session, error) {
	out, sess, err := s.svc.Apply(ctx, key, ev, create)
	if err != nil {
		return out, nil, nil, err
	}
	eff, err := effectsPB(out.Effects)
	if err != nil {
		return out, nil, nil, err
	}
	s.record(ctx, out, sess)
	return out, eff, sess, nil
}

// Apply runs one event through the service for an in-process caller (the wire
// guard, package guard), as the RPCs do: the same store, logging, traces and metrics
// (record). Errors: those of arbiter.Service.Apply.
func (s *Server) Apply(ctx context.Context, key arbiter.SessionKey, ev arbiter.Event, create bool) (arbiter.Output, *arbiter.Session, error) {
	out, sess, err := s.svc.Apply(ctx, key, ev, create)
	if err != nil {
		return out, nil, err
	}
	s.record(ctx, out, sess)
	return out, sess, nil
}

// RegisterCall implements arbiterv1.ArbiterServiceServer.
func (s *Server) RegisterCall(ctx context.Context, req *arbiterv1.RegisterCallRequest) (*arbiterv1.RegisterCallResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	at, arrived, err := s.observedAt(req.GetAge())
	if err != nil {
		return nil, err
	}
	ev := arbiter.RegisterCall{
		CallID: req.GetCallId(), Tool: req.GetTool(), Args: req.GetArgs().AsMap(),
		ToolChoiceNone: req.GetToolChoice() == arbiterv1.ToolChoice_TOOL_CHOICE_NONE,
		BusinessKey:    req.GetBusinessKey(), ObservedAt: at, Arrived: arrived, Epoch: req.GetEpoch(), RawArgs: req.GetRawArgs(),
	}
	switch req.GetBehavior() {
	case arbiterv1.Behavior_BEHAVIOR_BLOCKING:
		ev.Behavior = arbiter.Blocking
	case arbiterv1.Behavior_BEHAVIOR_NON_BLOCKING:
		ev.Behavior = arbiter.NonBlocking
	case arbiterv1.Behavior_BEHAVIOR_UNSPECIFIED:
	default:
		return nil, arbiter.Fieldf(arbiter.Invalid, "behavior", "unknown value %d", req.GetBehavior())
	}
	switch req.GetToolChoice() {
	case arbiterv1.ToolChoice_TOOL_CHOICE_UNSPECIFIED, arbiterv1.ToolChoice_TOOL_CHOICE_AUTO, arbiterv1.ToolChoice_TOOL_CHOICE_NONE:
	default:
		return nil, arbiter.Fieldf(arbiter.Invalid, "tool_choice", "unknown value %d", req.GetToolChoice())
	}
	out, eff, _, err := s.apply(ctx, key, ev, true)
	if err != nil {
		return nil, err
	}
	c := out.Call
	resp := &arbiterv1.RegisterCallResponse{
		CallId: c.CallID, JobId: c.JobID, DuplicateOf: c.DuplicateOf, BusinessKey: c.BusinessKey,
		SideEffect: c.SideEffect, Disposition: dispositionPB(c.Disposition), Effects: eff, RunId: c.RunID,
	}
	if c.JobID != "" {
		// What the job executes: the call's own tool and args, or, for a confirmation
		// that confirmed a run, the run's tool with its merged args.
		resp.JobTool = c.Tool
		if c.Args != nil {
			if resp.JobArgs, err = structpb.NewStruct(c.Args); err != nil {
				return nil, arbiter.Wrap(arbiter.Internal, err, "encode job args")
			}
		}
	}
	return resp, nil
}

// ReportSpeech implements arbiterv1.ArbiterServiceServer.
func (s *Server) ReportSpeech(ctx context.Context, req *arbiterv1.ReportSpeechRequest) (*arbiterv1.ReportSpeechResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	kind, ok := speechKinds[req.GetEvent()]
	if !ok {
		return nil, arbiter.Fieldf(arbiter.Invalid, "event", "%v is not a speech event", req.GetEvent())
	}
	at, arrived, err := s.observedAt(req.GetAge())
	if err != nil {
		return nil, err
	}
	out, eff, _, err := s.apply(ctx, key, arbiter.Speech{Kind: kind, ObservedAt: at, Arrived: arrived, Epoch: req.GetEpoch(), UtteranceID: req.GetUtteranceId(), EventID: req.GetEventId()}, true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ReportSpeechResponse{Effects: eff, Repeat: out.Repeat}, nil
}

var speechKinds = map[arbiterv1.SpeechEvent]arbiter.SpeechKind{
	arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_START:       arbiter.UserActivityStart,
	arbiterv1.SpeechEvent_SPEECH_EVENT_USER_ACTIVITY_END:         arbiter.UserActivityEnd,
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START:        arbiter.ModelOutputStart,
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_GENERATION_COMPLETE: arbiter.ModelGenerationComplete,
	arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_TURN_COMPLETE:       arbiter.ModelTurnComplete,
	arbiterv1.SpeechEvent_SPEECH_EVENT_INTERRUPTED:               arbiter.Interrupted,
}

// ReportTranscript implements arbiterv1.ArbiterServiceServer.
func (s *Server) ReportTranscript(ctx context.Context, req *arbiterv1.ReportTranscriptRequest) (*arbiterv1.ReportTranscriptResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	var model bool
	switch req.GetRole() {
	case arbiterv1.Role_ROLE_UNSPECIFIED, arbiterv1.Role_ROLE_USER:
	case arbiterv1.Role_ROLE_MODEL:
		model = true
	default:
		return nil, arbiter.Fieldf(arbiter.Invalid, "role", "unknown value %d", req.GetRole())
	}
	at, arrived, err := s.observedAt(req.GetAge())
	if err != nil {
		return nil, err
	}
	ev := arbiter.Transcript{Model: model, Text: req.GetText(), Interim: req.GetInterim(), ObservedAt: at, Arrived: arrived, Epoch: req.GetEpoch(), UtteranceID: req.GetUtteranceId(), EventID: req.GetEventId()}
	if r := req.GetReading(); r != nil {
		ev.Reading = &speech.AgentReading{Intent: speech.Intent(r.GetIntent()), Confidence: r.GetConfidence(), Source: r.GetSource()}
	}
	out, eff, _, err := s.apply(ctx, key, ev, true)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ReportTranscriptResponse{Effects: eff, Intent: string(out.Intent), CancelledJobIds: out.Cancelled, Repeat: out.Repeat}, nil
}

// ReportToolCallCancellation implements arbiterv1.ArbiterServiceServer.
func (s *Server) ReportToolCallCancellation(ctx context.Context, req *arbiterv1.ReportToolCallCancellationRequest) (*arbiterv1.ReportToolCallCancellationResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	at, arrived, err := s.observedAt(req.GetAge())
	if err != nil {
		return nil, err
	}
	ev := arbiter.ToolCallCancellation{CallIDs: req.GetCallIds(), ObservedAt: at, Arrived: arrived, EventID: req.GetEventId()}
	switch req.GetReason() {
	case arbiterv1.CancellationReason_CANCELLATION_REASON_UNSPECIFIED, arbiterv1.CancellationReason_CANCELLATION_REASON_WITHDRAWN:
	case arbiterv1.CancellationReason_CANCELLATION_REASON_PROVIDER_TIMEOUT:
		ev.Reason = arbiter.CancelProviderTimeout
	default:
		return nil, arbiter.Fieldf(arbiter.Invalid, "reason", "unknown value %d", req.GetReason())
	}
	out, eff, _, err := s.apply(ctx, key, ev, false)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.ReportToolCallCancellationResponse{Effects: eff, CancelledJobIds: out.Cancelled, Repeat: out.Repeat}, nil
}

// jobKey is the session of a Decide or Complete: the one session_id names, or, with
// call_id and no session_id, the one the wire guard indexed the call under. Errors:
// Invalid naming session_id (neither given, or malformed), those of FindCall.
func (s *Server) jobKey(ctx context.Context, sessionID, callID string) (arbiter.SessionKey, error) {
	if sessionID == "" && callID != "" {
		return s.svc.FindCall(ctx, TenantFrom(ctx), callID)
	}
	return s.key(ctx, sessionID)
}

// Decide implements arbiterv1.ArbiterServiceServer.
func (s *Server) Decide(ctx context.Context, req *arbiterv1.DecideRequest) (*arbiterv1.DecideResponse, error) {
	key, err := s.jobKey(ctx, req.GetSessionId(), req.GetCallId())
	if err != nil {
		return nil, err
	}
	var wait time.Duration
	if w := req.GetWait(); w != nil {
		if err := w.CheckValid(); err != nil {
			return nil, arbiter.Fieldf(arbiter.Invalid, "wait", "%v", err)
		}
		if wait = w.AsDuration(); wait < 0 {
			return nil, arbiter.Fieldf(arbiter.Invalid, "wait", "%v is negative", wait)
		}
	}
	// Draining: a waiting Decide ends when Shutdown is called, and a new one does not
	// wait, so neither holds the drain open.
	dctx := ctx
	if s.closing.Err() != nil {
		wait = 0
	} else if wait > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.closing, cancel)()
	}
	began := time.Now()
	ev := arbiter.Decide{JobID: req.GetJobId(), CallID: req.GetCallId(), Prepared: req.GetPrepared(), Delivered: req.GetEventsDelivered()}
	d, err := s.svc.DecideBy(dctx, key, ev, wait, func(out arbiter.Output, sess *arbiter.Session) {
		s.record(ctx, out, sess) // the prepare it recorded, the decisions its steps made
	})
	if s.metrics != nil {
		s.metrics.decideWait.Observe(time.Since(began).Seconds())
	}
	if err != nil {
		if ctx.Err() == nil && dctx.Err() != nil {
			return nil, draining(decideDraining)
		}
		return nil, err
	}
	traceDecision(ctx, d)
	resp := &arbiterv1.DecideResponse{JobId: d.JobID, Reason: d.Reason, SessionId: key.ID}
	switch d.Decision {
	case arbiter.DecisionCommit:
		resp.Decision = arbiterv1.Decision_DECISION_COMMIT
	case arbiter.DecisionCancel:
		resp.Decision = arbiterv1.Decision_DECISION_CANCEL
	default:
		resp.Decision = arbiterv1.Decision_DECISION_PENDING
	}
	if !d.DecidedAt.IsZero() {
		resp.DecidedAt = timestamppb.New(d.DecidedAt)
	}
	return resp, nil
}

// Complete implements arbiterv1.ArbiterServiceServer.
func (s *Server) Complete(ctx context.Context, req *arbiterv1.CompleteRequest) (*arbiterv1.CompleteResponse, error) {
	key, err := s.jobKey(ctx, req.GetSessionId(), req.GetCallId())
	if err != nil {
		return nil, err
	}
	var oc arbiter.Outcome
	switch req.GetOutcome() {
	case arbiterv1.Outcome_OUTCOME_COMMITTED:
		oc = arbiter.Committed
	case arbiterv1.Outcome_OUTCOME_CANCELLED:
		oc = arbiter.Cancelled
	case arbiterv1.Outcome_OUTCOME_FAILED:
		oc = arbiter.Failed
	case arbiterv1.Outcome_OUTCOME_RESULT:
		oc = arbiter.Result
	case arbiterv1.Outcome_OUTCOME_UNKNOWN:
		oc = arbiter.Unknown
	default:
		return nil, arbiter.Fieldf(arbiter.Invalid, "outcome", "%v is not COMMITTED, CANCELLED, FAILED, RESULT or UNKNOWN", req.GetOutcome())
	}
	var result map[string]any
	if req.GetResult() != nil {
		result = req.GetResult().AsMap()
	}
	_, eff, _, err := s.apply(ctx, key, arbiter.Complete{JobID: req.GetJobId(), CallID: req.GetCallId(), Outcome: oc, Result: result, Error: req.GetError()}, false)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.CompleteResponse{Effects: eff}, nil
}

// ConfigureSession implements arbiterv1.ArbiterServiceServer.
func (s *Server) ConfigureSession(ctx context.Context, req *arbiterv1.ConfigureSessionRequest) (*arbiterv1.ConfigureSessionResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	_, _, sess, err := s.apply(ctx, key, arbiter.Configure{Language: req.GetLanguage(), TimeZone: req.GetTimeZone(), ResponseScheduling: req.GetResponseScheduling(), Epoch: req.GetEpoch(), Record: req.GetRecord()}, true)
	if err != nil {
		return nil, err
	}
	lang := sess.Language
	if lang == "" {
		lang = speech.DefaultLanguage
	}
	return &arbiterv1.ConfigureSessionResponse{Language: lang, ResponseScheduling: sess.ResponseScheduling, Record: sess.History != nil && sess.History.Record,
		TimeZone: timeZone(sess)}, nil
}

// timeZone is the session's time zone as the API reports it: "UTC" when none was set.
func timeZone(s *arbiter.Session) string {
	if s.TimeZone == "" {
		return "UTC"
	}
	return s.TimeZone
}

// Poll implements arbiterv1.ArbiterServiceServer.
func (s *Server) Poll(ctx context.Context, req *arbiterv1.PollRequest) (*arbiterv1.PollResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	_, eff, sess, err := s.apply(ctx, key, arbiter.Tick{}, false)
	if err != nil {
		return nil, err
	}
	if req.AfterSeq != nil {
		// Every effect after the agent's cursor, whoever handed it out (a Watch may
		// have fired the timers first).
		entries, err := sess.LogAfter(req.GetAfterSeq())
		if err != nil {
			return nil, err
		}
		if eff, err = effectsPB(arbiter.EffectsOf(entries)); err != nil {
			return nil, err
		}
	}
	resp := &arbiterv1.PollResponse{Effects: eff}
	if due, ok := s.svc.Engine.NextTimer(sess); ok {
		resp.NextTimer = timestamppb.New(due)
	}
	return resp, nil
}

// GetSession implements arbiterv1.ArbiterServiceServer.
func (s *Server) GetSession(ctx context.Context, req *arbiterv1.GetSessionRequest) (*arbiterv1.GetSessionResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	ss, err := s.svc.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	resp := &arbiterv1.GetSessionResponse{
		SessionId: ss.Key.ID, UtteranceOpen: ss.UtteranceOpen(), ModelSpeaking: ss.ModelSpeaking,
		Closed: ss.Closed, Version: ss.Version, ConnectionId: ss.Connection, LastSeq: ss.LogSeq,
		Language: cmp.Or(ss.Language, speech.DefaultLanguage), ResponseScheduling: ss.ResponseScheduling,
		Epoch: ss.Epoch, TimeZone: timeZone(ss),
	}
	if due, ok := s.svc.Engine.NextTimer(ss); ok {
		resp.NextTimer = timestamppb.New(due)
	}
	for _, c := range ss.PendingCalls() {
		resp.PendingCalls = append(resp.PendingCalls, &arbiterv1.PendingCall{
			CallId: c.ID, Tool: c.Tool, JobId: c.JobID, Age: durationpb.New(ss.Now.Sub(c.RegisteredAt)),
			Behavior: behaviorPB(c.Behavior),
		})
	}
	for _, j := range ss.Jobs {
		resp.Jobs = append(resp.Jobs, jobPB(j))
	}
	for _, r := range ss.Runs {
		resp.Runs = append(resp.Runs, &arbiterv1.Run{
			RunId: r.ID, Tool: r.Tool, State: runStatePB(r.State), CallIds: r.CallIDs, JobId: r.JobID,
			Reason: r.Reason, OpenedAt: timestamppb.New(r.OpenedAt),
		})
	}
	return resp, nil
}

// CloseSession implements arbiterv1.ArbiterServiceServer.
func (s *Server) CloseSession(ctx context.Context, req *arbiterv1.CloseSessionRequest) (*arbiterv1.CloseSessionResponse, error) {
	key, err := s.key(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	out, eff, _, err := s.apply(ctx, key, arbiter.Close{}, false)
	if err != nil {
		return nil, err
	}
	return &arbiterv1.CloseSessionResponse{Effects: eff, CancelledJobIds: out.Cancelled}, nil
}

// record logs (effectlog.go), traces (tracing.go) and counts (observe.go) what one
// stored step did; sess is the session after it.
func (s *Server) record(ctx context.Context, out arbiter.Output, sess *arbiter.Session) {
	s.logStep(ctx, out, sess)
	traceStep(ctx, out, sess)
	s.metrics.observe(out, sess, s.toolLabel)
}

// toolLabel bounds a tool name for a metric label: the tools of the policy (and their
// confirmation tools) by name, any other name as "other".
func (s *Server) toolLabel(name string) string {
	p := s.svc.Engine.Policy
	if _, ok := p.Tools[name]; ok || p.IsConfirmTool(name) {
		return name
	}
	return "other"
}

func dispositionPB(d arbiter.Disposition) arbiterv1.Disposition {
	switch d {
	case arbiter.Execute:
		return arbiterv1.Disposition_DISPOSITION_EXECUTE
	case arbiter.Duplicate:
		return arbiterv1.Disposition_DISPOSITION_DUPLICATE
	case arbiter.Reject:
		return arbiterv1.Disposition_DISPOSITION_REJECT
	case arbiter.RunStep:
		return arbiterv1.Disposition_DISPOSITION_RUN
	}
	return arbiterv1.Disposition_DISPOSITION_UNSPECIFIED
}

func behaviorPB(b arbiter.Behavior) arbiterv1.Behavior {
	switch b {
	case arbiter.Blocking:
		return arbiterv1.Behavior_BEHAVIOR_BLOCKING
	case arbiter.NonBlocking:
		return arbiterv1.Behavior_BEHAVIOR_NON_BLOCKING
	}
	return arbiterv1.Behavior_BEHAVIOR_UNSPECIFIED
}

func jobPB(j *arbiter.Job) *arbiterv1.Job {
	pj := &arbiterv1.Job{
		JobId: j.ID, Tool: j.Tool, BusinessKey: j.Key, Reason: j.Reason, CallIds: j.CallIDs,
		Abandoned: j.Abandoned, SideEffect: j.SideEffect, CreatedAt: timestamppb.New(j.CreatedAt),
	}
	switch j.Decision {
	case arbiter.DecisionCommit:
		pj.Decision = arbiterv1.Decision_DECISION_COMMIT
	case arbiter.DecisionCancel:
		pj.Decision = arbiterv1.Decision_DECISION_CANCEL
	default:
		if j.SideEffect {
			pj.Decision = arbiterv1.Decision_DECISION_PENDING
		}
	}
	switch j.Outcome {
	case arbiter.Committed:
		pj.Outcome = arbiterv1.Outcome_OUTCOME_COMMITTED
	case arbiter.Cancelled:
		pj.Outcome = arbiterv1.Outcome_OUTCOME_CANCELLED
	case arbiter.Failed:
		pj.Outcome = arbiterv1.Outcome_OUTCOME_FAILED
	case arbiter.Result:
		pj.Outcome = arbiterv1.Outcome_OUTCOME_RESULT
	case arbiter.Unknown:
		pj.Outcome = arbiterv1.Outcome_OUTCOME_UNKNOWN
	}
	switch {
	case j.Outcome == arbiter.Unknown:
		// Committing, outcome not known yet: not done until Committed or Failed.
		pj.State = arbiterv1.JobState_JOB_STATE_DECIDED
	case j.Outcome != arbiter.NotCompleted:
		pj.State = arbiterv1.JobState_JOB_STATE_DONE
	case !j.SideEffect:
		pj.State = arbiterv1.JobState_JOB_STATE_RUNNING
	case j.Decision != arbiter.Undecided:
		pj.State = arbiterv1.JobState_JOB_STATE_DECIDED
	case j.PreparedAt.IsZero():
		pj.State = arbiterv1.JobState_JOB_STATE_PREPARING
	default:
		pj.State = arbiterv1.JobState_JOB_STATE_PREPARED
	}
	return pj
}

// effectsPB converts one step's effects for the wire, each with its log seq.
func effectsPB(e arbiter.Effects) (*arbiterv1.Effects, error) {
	out := &arbiterv1.Effects{}
	for _, r := range e.Responses {
		p, err := responsePB(r)
		if err != nil {
			return nil, err
		}
		out.Responses = append(out.Responses, p)
	}
	for _, sk := range e.Skips {
		out.Skips = append(out.Skips, skipPB(sk))
	}
	for _, n := range e.Notes {
		out.Notes = append(out.Notes, notePB(n))
	}
	for _, u := range e.Runs {
		out.Runs = append(out.Runs, runUpdatePB(u))
	}
	return out, nil
}

// watchPB converts one log entry into a Watch message. Errors: Internal for a
// payload that does not encode or an entry with no effect.
func watchPB(e arbiter.LogEntry) (*arbiterv1.WatchResponse, error) {
	m := &arbiterv1.WatchResponse{Seq: e.Seq, At: timestamppb.New(e.At)}
	switch {
	case e.Response != nil:
		r, err := responsePB(*e.Response)
		if err != nil {
			return nil, err
		}
		m.Effect = &arbiterv1.WatchResponse_Response{Response: r}
	case e.Skip != nil:
		m.Effect = &arbiterv1.WatchResponse_Skip{Skip: skipPB(*e.Skip)}
	case e.Note != nil:
		m.Effect = &arbiterv1.WatchResponse_Note{Note: notePB(*e.Note)}
	case e.Run != nil:
		m.Effect = &arbiterv1.WatchResponse_Run{Run: runUpdatePB(*e.Run)}
	default:
		return nil, arbiter.Errorf(arbiter.Internal, "log entry %d holds no effect", e.Seq)
	}
	return m, nil
}

func responsePB(r arbiter.Response) (*arbiterv1.FunctionResponse, error) {
	p, err := structpb.NewStruct(r.Payload)
	if err != nil {
		return nil, arbiter.Wrap(arbiter.Internal, err, "encode payload")
	}
	return &arbiterv1.FunctionResponse{CallId: r.CallID, Name: r.Name, Payload: p, JobId: r.JobID, Interim: r.Interim, Seq: r.Seq}, nil
}

func skipPB(sk arbiter.Skip) *arbiterv1.Skip {
	return &arbiterv1.Skip{CallId: sk.CallID, Name: sk.Name, Reason: string(sk.Reason), JobId: sk.JobID, Seq: sk.Seq}
}

func notePB(n arbiter.Note) *arbiterv1.Note {
	d := arbiterv1.Delivery_DELIVERY_NOW
	if n.Deliver == arbiter.DeliverWhenIdle {
		d = arbiterv1.Delivery_DELIVERY_WHEN_IDLE
	}
	pn := &arbiterv1.Note{JobId: n.JobID, Text: n.Text, Deliver: d, Via: arbiterv1.NoteVia_NOTE_VIA_USER_TURN, Why: n.Why, RunId: n.RunID, Seq: n.Seq}
	if n.Via == arbiter.ViaFunctionResponse {
		pn.Via, pn.CallId = arbiterv1.NoteVia_NOTE_VIA_FUNCTION_RESPONSE, n.CallID
		pn.Scheduling = schedulingPB(n.Scheduling)
	}
	return pn
}

func schedulingPB(sc arbiter.Scheduling) arbiterv1.Scheduling {
	switch sc {
	case arbiter.SchedulingWhenIdle:
		return arbiterv1.Scheduling_SCHEDULING_WHEN_IDLE
	case arbiter.SchedulingInterrupt:
		return arbiterv1.Scheduling_SCHEDULING_INTERRUPT
	}
	return arbiterv1.Scheduling_SCHEDULING_UNSPECIFIED
}

func runUpdatePB(u arbiter.RunUpdate) *arbiterv1.RunUpdate {
	return &arbiterv1.RunUpdate{RunId: u.RunID, Tool: u.Tool, State: runStatePB(u.State), CallId: u.CallID, JobId: u.JobID, Reason: u.Reason, Seq: u.Seq}
}

func runStatePB(st arbiter.RunState) arbiterv1.RunState {
	switch st {
	case arbiter.RunOpened:
		return arbiterv1.RunState_RUN_STATE_OPENED
	case arbiter.RunConfirmed:
		return arbiterv1.RunState_RUN_STATE_CONFIRMED
	case arbiter.RunRefused:
		return arbiterv1.RunState_RUN_STATE_REFUSED
	case arbiter.RunExpired:
		return arbiterv1.RunState_RUN_STATE_EXPIRED
	case arbiter.RunCancelled:
		return arbiterv1.RunState_RUN_STATE_CANCELLED
	}
	return arbiterv1.RunState_RUN_STATE_UNSPECIFIED
}
