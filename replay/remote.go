package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

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

// Remote connects replays to running arbiter servers: each replay gets a connection
// of its own to every target, balanced by grpc-go's round_robin policy. Safe for
// concurrent use.
type Remote struct {
	targets []string // distinct, in the order given
	opts    []grpc.DialOption

	mu    sync.Mutex
	conns []*grpc.ClientConn
}

// ReadyTimeout bounds how long Client waits for every target to answer.
const ReadyTimeout = 10 * time.Second

// roundRobin is the service config of a Remote's connections: each RPC goes to the
// next ready target in turn.
const roundRobin = `{"loadBalancingConfig":[{"round_robin":{}}]}`

// DialRemote checks the targets (host:port each; a repeated one counts once) and
// returns a Remote that connects to them with plaintext gRPC unless opts say
// otherwise. It connects nothing yet (Client does), so it fails only on a malformed
// target or none. The caller must Close the Remote.
func DialRemote(targets []string, opts ...grpc.DialOption) (*Remote, error) {
	if len(targets) == 0 {
		return nil, errors.New("no target")
	}
	r := &Remote{opts: opts}
	seen := map[string]bool{}
	for _, t := range targets {
		if _, _, err := net.SplitHostPort(t); err != nil {
			return nil, fmt.Errorf("target %q: %w", t, err)
		}
		if !seen[t] {
			seen[t] = true
			r.targets = append(r.targets, t)
		}
	}
	if len(r.opts) == 0 {
		r.opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	return r, nil
}

// Client returns a client for one replay, on a new connection to every target that
// sends each RPC to the next target in turn (grpc-go's round_robin over a manual
// resolver holding the targets): the worst case for a shared store, since
// consecutive requests of one session land on different replicas. Each replay needs
// its own: round_robin's turn belongs to the connection, so replays sharing one would
// interleave their turns and a session could hit one replica twice in a row. Which
// target a replay starts on is random (round_robin starts its turn at a random
// target), so concurrent replays spread over every target from their first RPC.
//
// Client returns once every target has answered a health check on the connection
// (round_robin only turns over targets it is connected to, so the replay's first RPCs
// already rotate), or fails when ctx ends or ReadyTimeout passes first, saying how
// many answered. Two targets naming one server (localhost:1, 127.0.0.1:1) count as
// one answer and never all answer. The connection is closed by Close.
func (r *Remote) Client(ctx context.Context) (arbiterv1.ArbiterServiceClient, error) {
	res := manual.NewBuilderWithScheme("replay")
	var state resolver.State
	for _, t := range r.targets {
		// The operator's own targets: trusted as TLS authorities, as the target of a
		// connection of its own would be.
		state.Endpoints = append(state.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: t, ServerName: t}}})
	}
	res.InitialState(state)
	opts := append([]grpc.DialOption{grpc.WithResolvers(res), grpc.WithDefaultServiceConfig(roundRobin)}, r.opts...)
	conn, err := grpc.NewClient(res.Scheme()+":///arbiter", opts...)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.conns = append(r.conns, conn)
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	if err := awaitEvery(ctx, conn, len(r.targets)); err != nil {
		return nil, err
	}
	return arbiterv1.NewArbiterServiceClient(conn), nil
}

// awaitEvery sends health checks on conn until n different servers have answered, or
// ctx ends.
func awaitEvery(ctx context.Context, conn *grpc.ClientConn, n int) error {
	hc := healthpb.NewHealthClient(conn)
	answered := map[string]bool{}
	var lastErr error
	for len(answered) < n {
		var p peer.Peer
		_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Peer(&p))
		switch {
		case err != nil && ctx.Err() == nil:
			lastErr = err
		case err == nil && p.Addr != nil && !answered[p.Addr.String()]:
			answered[p.Addr.String()] = true
			continue // next turn, next target
		}
		// Nothing new: the others are still connecting (or down).
		select {
		case <-ctx.Done():
			if lastErr == nil {
				lastErr = ctx.Err()
			}
			return fmt.Errorf("only %d of %d targets answered a health check: %w", len(answered), n, lastErr)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Close closes every connection Client made.
func (r *Remote) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, c := range r.conns {
		errs = append(errs, c.Close())
	}
	r.conns = nil
	return errors.Join(errs...)
}
