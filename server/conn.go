package server

import (
	"cmp"
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// ConnLimits bound what one client connection may hold and how long it may take. Zero
// fields take DefaultConnLimits'.
type ConnLimits struct {
	// Handshake bounds a new connection's setup, from accept to the end of the HTTP/2
	// preface (TLS included): a connection that has not finished it by then is
	// closed, so half-open or silent connections do not pile up (grpc-go's own
	// default is 120 s).
	Handshake time.Duration
	// MaxStreams caps the RPCs in flight on one connection (HTTP/2
	// MAX_CONCURRENT_STREAMS). A grpc-go, grpc-python or grpc-js client past it
	// queues the RPC until one ends (up to the RPC's deadline); a client that ignores
	// the setting has the stream refused (RST_STREAM REFUSED_STREAM).
	MaxStreams uint32
	// MaxHeaderSize caps the request headers (metadata, uncompressed) in bytes, as
	// HTTP/2 counts a header list (each entry's name and value plus 32 bytes): an RPC
	// over it fails with RESOURCE_EXHAUSTED naming both sizes. The HTTP/2 layer
	// itself accepts up to transportHeaderLimit (four times this, at least 64 KiB),
	// so that a client learns the limit from a status it can read: past that, the
	// stream is reset and grpc-go clients, which check the server's SETTINGS first,
	// fail with INTERNAL without sending.
	MaxHeaderSize uint32
	// KeepaliveMinTime is the shortest interval between a client's keepalive pings;
	// a client pinging more often is sent GOAWAY (too_many_pings) after three
	// strikes. Pings are allowed without an RPC in flight (an agent keeps an idle
	// channel warm between conversations).
	KeepaliveMinTime time.Duration
	// KeepaliveTime is how long a connection may stay silent before the server
	// pings it, and KeepaliveTimeout how long it waits for the answer before closing
	// the connection: a client whose machine vanished (its Watch streams with it) is
	// found within their sum, and idle connections outlive load balancers' idle
	// timeouts (350 s on AWS NLB).
	KeepaliveTime    time.Duration
	KeepaliveTimeout time.Duration
	// MaxConnectionAge, when positive, makes each connection go away (GOAWAY) this
	// long after it opened, so clients reconnect and spread over replicas added since;
	// in-flight RPCs then have the RPC timeout plus the Decide wait cap to finish, and
	// open Watch streams end (UNAVAILABLE: the client resumes with after_seq). Zero:
	// connections live as long as the client keeps them.
	MaxConnectionAge time.Duration
}

// DefaultConnLimits are the limits of a zero ConnLimits.
//
// MaxStreams: one conversation holds at most about 8 streams at a time (a Watch, a
// Decide long-poll per job being prepared, rarely more than two, and a few unary
// RPCs from the receive loop), and an agent process usually multiplexes all its
// conversations over one channel: 1024 lets one connection carry about 128 live
// conversations, a busy agent worker, and caps what one connection can pin (a stream
// costs a goroutine and buffers). An agent with more should open more channels.
//
// MaxHeaderSize: 8 KiB, the default grpc-go is moving to; a bearer token, the
// standard gRPC headers and trace context take well under 2 KiB.
var DefaultConnLimits = ConnLimits{
	Handshake:        5 * time.Second,
	MaxStreams:       1024,
	MaxHeaderSize:    8 << 10,
	KeepaliveMinTime: 10 * time.Second,
	KeepaliveTime:    time.Minute,
	KeepaliveTimeout: 20 * time.Second,
}

// serverOptions are the grpc-go options for l, zero fields defaulted; grace is how
// long in-flight RPCs have after a MaxConnectionAge GOAWAY.
func (l ConnLimits) serverOptions(grace time.Duration) []grpc.ServerOption {
	d := DefaultConnLimits
	kp := keepalive.ServerParameters{
		Time:    cmp.Or(l.KeepaliveTime, d.KeepaliveTime),
		Timeout: cmp.Or(l.KeepaliveTimeout, d.KeepaliveTimeout),
	}
	if l.MaxConnectionAge > 0 {
		kp.MaxConnectionAge, kp.MaxConnectionAgeGrace = l.MaxConnectionAge, grace
	}
	return []grpc.ServerOption{
		grpc.ConnectionTimeout(cmp.Or(l.Handshake, d.Handshake)),
		grpc.MaxConcurrentStreams(cmp.Or(l.MaxStreams, d.MaxStreams)),
		grpc.MaxHeaderListSize(transportHeaderLimit(cmp.Or(l.MaxHeaderSize, d.MaxHeaderSize))),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{
			MinTime: cmp.Or(l.KeepaliveMinTime, d.KeepaliveMinTime), PermitWithoutStream: true,
		}),
		grpc.KeepaliveParams(kp),
	}
}

// transportHeaderLimit is the header list size the HTTP/2 layer accepts for a
// MaxHeaderSize of limit: four times it, at least 64 KiB (headerLimit refuses what
// lies between with RESOURCE_EXHAUSTED).
func transportHeaderLimit(limit uint32) uint32 {
	return max(limit*4, 64<<10)
}

// headerListSize is the size of md as HTTP/2 counts a header list: each entry's name
// and value plus 32 bytes (RFC 9113, SETTINGS_MAX_HEADER_LIST_SIZE).
func headerListSize(md metadata.MD) int {
	n := 0
	for k, vs := range md {
		for _, v := range vs {
			n += len(k) + len(v) + 32
		}
	}
	return n
}

// headerLimit refuses an RPC whose metadata is over limit bytes (headerListSize) with
// RESOURCE_EXHAUSTED naming both sizes, before anything else reads the metadata.
type headerLimit uint32

func (l headerLimit) check(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if n := headerListSize(md); n > int(l) {
		return status.Errorf(codes.ResourceExhausted, "request metadata is %d bytes, over the server's limit of %d bytes (--max-header-size): send less metadata", n, uint32(l))
	}
	return nil
}

func (l headerLimit) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := l.check(ctx); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (l headerLimit) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := l.check(ss.Context()); err != nil {
		return err
	}
	return h(srv, ss)
}
