package replay

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

// VirtualClock is a manual arbiter.Clock and Timebase: time moves only when AdvanceTo
// is called. Safe for concurrent use.
type VirtualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewVirtualClock returns a clock reading start.
func NewVirtualClock(start time.Time) *VirtualClock { return &VirtualClock{now: start} }

// Now implements arbiter.Clock.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements arbiter.Clock: the channel fires when the clock is advanced past
// now+d.
func (c *VirtualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	return ch
}

// AdvanceTo implements Timebase; it never moves the clock backwards.
func (c *VirtualClock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// Local is an in-process arbiter (memory store, virtual clock) served over an
// in-memory gRPC connection: the real API, no network.
type Local struct {
	Client arbiterv1.ArbiterServiceClient
	Clock  *VirtualClock
	// Service is the arbiter behind Client; its settings (HistorySample, the
	// engine's history bounds) may be changed before the first RPC.
	Service *arbiter.Service
	conn    *grpc.ClientConn
	gs      *grpc.Server
	owned   arbiter.Store // closed by Close: the store NewLocal made
}

// NewLocal starts an in-process arbiter under policy on a memory store, its clock at
// start.
func NewLocal(policy *arbiter.Policy, start time.Time) (*Local, error) {
	clock := NewVirtualClock(start)
	store := memory.New(clock.Now)
	l, err := NewLocalOn(policy, clock, store)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	l.owned = store
	return l, nil
}

// NewLocalOn starts an in-process arbiter under policy on store, running on clock.
// The store is not closed by Close.
func NewLocalOn(policy *arbiter.Policy, clock *VirtualClock, store arbiter.Store) (*Local, error) {
	svc := &arbiter.Service{
		Engine: &arbiter.Engine{Policy: policy},
		Store:  store,
		Clock:  clock,
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	gs, _ := server.NewGRPCServer(server.New(svc, quiet), server.Options{Logger: quiet})
	lis := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		gs.Stop()
		return nil, err
	}
	return &Local{Client: arbiterv1.NewArbiterServiceClient(conn), Clock: clock, Service: svc, conn: conn, gs: gs}, nil
}

// Close stops the in-process arbiter.
func (l *Local) Close() {
	_ = l.conn.Close()
	l.gs.Stop()
	if l.owned != nil {
		_ = l.owned.Close()
	}
}

// RunLocal replays events on a fresh in-process arbiter under policy, on a virtual
// clock starting at StartOf(events) (opt.Start is set to it).
func RunLocal(ctx context.Context, policy *arbiter.Policy, events []TraceEvent, opt Options, out io.Writer) (*Result, error) {
	start := StartOf(events)
	l, err := NewLocal(policy, start)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	opt.Start = start
	return Run(ctx, l.Client, l.Clock, events, opt, out)
}

// StartOf is the time of a trace's t_ms 0: its session_start's created_at when it has
// a valid one (an exported session), else Epoch.
func StartOf(events []TraceEvent) time.Time {
	if len(events) > 0 && events[0].Event == "session_start" && events[0].CreatedAt != "" {
		if t, err := time.Parse(time.RFC3339Nano, events[0].CreatedAt); err == nil {
			return t.UTC()
		}
	}
	return Epoch
}
