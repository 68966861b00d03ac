package replay

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// RealClock is the Timebase of a replay against running servers: the wall clock.
// AdvanceTo sleeps until the wall clock reads t, so a trace plays at its recorded
// pace. Safe for concurrent use.
type RealClock struct {
	ctx context.Context
}

// NewRealClock returns a wall-clock Timebase; a sleep in AdvanceTo ends early when
// ctx ends (the replay's next RPC then fails with ctx's error).
func NewRealClock(ctx context.Context) *RealClock { return &RealClock{ctx: ctx} }

// Now implements Timebase: time.Now().
func (c *RealClock) Now() time.Time { return time.Now() }

// AdvanceTo implements Timebase: it sleeps until t (no sleep when t has passed).
func (c *RealClock) AdvanceTo(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-c.ctx.Done():
	}
}

// Remote is a set of gRPC connections to running arbiter servers.
type Remote struct {
	conns []*grpc.ClientConn
	// Clients holds one client per target, in the order given.
	Clients []arbiterv1.ArbiterServiceClient
}

// DialRemote connects to each target (host:port) with plaintext gRPC unless opts say
// otherwise. Connections are made lazily, so it fails only on a malformed target.
// The caller must Close the Remote.
func DialRemote(targets []string, opts ...grpc.DialOption) (*Remote, error) {
	if len(targets) == 0 {
		return nil, errors.New("no target")
	}
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	r := &Remote{}
	for _, t := range targets {
		conn, err := grpc.NewClient(t, opts...)
		if err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("target %q: %w", t, err)
		}
		r.conns = append(r.conns, conn)
		r.Clients = append(r.Clients, arbiterv1.NewArbiterServiceClient(conn))
	}
	return r, nil
}

// RoundRobin returns a client that sends each RPC to the next target in turn,
// starting with target number first (modulo their count). Each call returns a client
// with its own turn counter, so concurrent replays each spread over every target.
func (r *Remote) RoundRobin(first int) *RoundRobin {
	rr := NewRoundRobin(r.Clients...)
	rr.next.Store(uint64(first))
	return rr
}

// Close closes every connection.
func (r *Remote) Close() error {
	var errs []error
	for _, c := range r.conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// RoundRobin is an arbiterv1.ArbiterServiceClient that sends each RPC to the next of
// its clients in turn: the worst case for a shared store, since consecutive requests
// of one session land on different replicas. Safe for concurrent use.
type RoundRobin struct {
	clients []arbiterv1.ArbiterServiceClient
	next    atomic.Uint64
}

// NewRoundRobin returns a round-robin client over clients (at least one).
func NewRoundRobin(clients ...arbiterv1.ArbiterServiceClient) *RoundRobin {
	if len(clients) == 0 {
		panic("replay.NewRoundRobin: no clients")
	}
	return &RoundRobin{clients: clients}
}

func (rr *RoundRobin) pick() arbiterv1.ArbiterServiceClient {
	n := rr.next.Add(1) - 1
	return rr.clients[n%uint64(len(rr.clients))]
}

var _ arbiterv1.ArbiterServiceClient = (*RoundRobin)(nil)

// RegisterCall implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) RegisterCall(ctx context.Context, in *arbiterv1.RegisterCallRequest, opts ...grpc.CallOption) (*arbiterv1.RegisterCallResponse, error) {
	return rr.pick().RegisterCall(ctx, in, opts...)
}

// ReportSpeech implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) ReportSpeech(ctx context.Context, in *arbiterv1.ReportSpeechRequest, opts ...grpc.CallOption) (*arbiterv1.ReportSpeechResponse, error) {
	return rr.pick().ReportSpeech(ctx, in, opts...)
}

// ReportTranscript implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) ReportTranscript(ctx context.Context, in *arbiterv1.ReportTranscriptRequest, opts ...grpc.CallOption) (*arbiterv1.ReportTranscriptResponse, error) {
	return rr.pick().ReportTranscript(ctx, in, opts...)
}

// ReportToolCallCancellation implements arbiterv1.ArbiterServiceClient on the next
// client.
func (rr *RoundRobin) ReportToolCallCancellation(ctx context.Context, in *arbiterv1.ReportToolCallCancellationRequest, opts ...grpc.CallOption) (*arbiterv1.ReportToolCallCancellationResponse, error) {
	return rr.pick().ReportToolCallCancellation(ctx, in, opts...)
}

// Decide implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) Decide(ctx context.Context, in *arbiterv1.DecideRequest, opts ...grpc.CallOption) (*arbiterv1.DecideResponse, error) {
	return rr.pick().Decide(ctx, in, opts...)
}

// Complete implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) Complete(ctx context.Context, in *arbiterv1.CompleteRequest, opts ...grpc.CallOption) (*arbiterv1.CompleteResponse, error) {
	return rr.pick().Complete(ctx, in, opts...)
}

// GetSession implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) GetSession(ctx context.Context, in *arbiterv1.GetSessionRequest, opts ...grpc.CallOption) (*arbiterv1.GetSessionResponse, error) {
	return rr.pick().GetSession(ctx, in, opts...)
}

// CloseSession implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) CloseSession(ctx context.Context, in *arbiterv1.CloseSessionRequest, opts ...grpc.CallOption) (*arbiterv1.CloseSessionResponse, error) {
	return rr.pick().CloseSession(ctx, in, opts...)
}

// ConfigureSession implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) ConfigureSession(ctx context.Context, in *arbiterv1.ConfigureSessionRequest, opts ...grpc.CallOption) (*arbiterv1.ConfigureSessionResponse, error) {
	return rr.pick().ConfigureSession(ctx, in, opts...)
}

// Poll implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) Poll(ctx context.Context, in *arbiterv1.PollRequest, opts ...grpc.CallOption) (*arbiterv1.PollResponse, error) {
	return rr.pick().Poll(ctx, in, opts...)
}

// Connect implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) Connect(ctx context.Context, in *arbiterv1.ConnectRequest, opts ...grpc.CallOption) (*arbiterv1.ConnectResponse, error) {
	return rr.pick().Connect(ctx, in, opts...)
}

// ReportProgress implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) ReportProgress(ctx context.Context, in *arbiterv1.ReportProgressRequest, opts ...grpc.CallOption) (*arbiterv1.ReportProgressResponse, error) {
	return rr.pick().ReportProgress(ctx, in, opts...)
}

// Watch implements arbiterv1.ArbiterServiceClient on the next client.
func (rr *RoundRobin) Watch(ctx context.Context, in *arbiterv1.WatchRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[arbiterv1.WatchResponse], error) {
	return rr.pick().Watch(ctx, in, opts...)
}
