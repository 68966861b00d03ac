package server

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Defaults of the limits on unauthenticated requests (Options).
const (
	DefaultUnauthRPS         = 1.0
	DefaultUnauthBurst       = 20
	DefaultUnauthLogInterval = time.Minute
	// maxUnauthPeers bounds the addresses tracked at once; past it, new addresses
	// share one budget, so an attacker with many addresses cannot grow the map.
	maxUnauthPeers = 10000
	// topUnauthPeers is how many addresses a summary names.
	topUnauthPeers = 10
	// overflowPeer is the shared budget's name in a summary.
	overflowPeer = "(other addresses)"
)

// Why a request failed authentication, as a summary counts it.
const (
	reasonMissing   = "missing_token"
	reasonMalformed = "malformed_token"
	reasonUnknown   = "unknown_token"
)

// authGuard authenticates requests with its Tokens and keeps requests that fail
// authentication cheap and quiet. Each address (the peer's IP; an IPv6 address by its
// /64) has a token bucket of failures: within it a failure is UNAUTHENTICATED, past
// it RESOURCE_EXHAUSTED ("too many unauthenticated requests"). A request with a known
// token is never limited here (only by the tenant's rate limit): one misconfigured
// client behind a shared address (a NAT, a load balancer, a mesh sidecar) must not
// lock out the others, so past the bucket a failure only gets the answer that tells
// a retry loop to back off; that does not guard against guessing (long random tokens
// do). Failures are not logged one by one at info: they are counted, and one warn
// line per interval sums them up, by reason and by address. Safe for concurrent use.
type authGuard struct {
	tokens *Tokens
	log    *slog.Logger
	every  time.Duration
	rps    rate.Limit
	burst  int

	mu       sync.Mutex
	peers    map[string]*rate.Limiter
	overflow *rate.Limiter
	win      authWindow
}

// authWindow is what failed since the last summary.
type authWindow struct {
	requests, refused int
	reasons           map[string]int
	peers             map[string]int
}

func newAuthGuard(t *Tokens, log *slog.Logger, rps float64, burst int, every time.Duration) *authGuard {
	if rps <= 0 {
		rps = DefaultUnauthRPS
	}
	if burst <= 0 {
		burst = DefaultUnauthBurst
	}
	if every <= 0 {
		every = DefaultUnauthLogInterval
	}
	return &authGuard{
		tokens: t, log: log, every: every, rps: rate.Limit(rps), burst: burst,
		peers: map[string]*rate.Limiter{}, overflow: rate.NewLimiter(rate.Limit(rps), burst),
	}
}

// authenticate is the auth interceptor's AuthFunc: a known bearer token puts its
// tenant in the context; anything else is counted against the peer's address and is
// UNAUTHENTICATED, or RESOURCE_EXHAUSTED past the address's budget.
func (g *authGuard) authenticate(ctx context.Context) (context.Context, error) {
	tok, err := auth.AuthFromMD(ctx, "bearer")
	reason := reasonMalformed
	if err == nil {
		if tenant, ok := g.tokens.tenant(tok); ok {
			return logging.InjectFields(WithTenant(ctx, tenant), logging.Fields{"tenant", tenant}), nil
		}
		reason = reasonUnknown
		err = status.Error(codes.Unauthenticated, "invalid bearer token")
	} else if len(metadata.ValueFromIncomingContext(ctx, "authorization")) == 0 {
		reason = reasonMissing
	}
	if !g.fail(peerKey(ctx), reason) {
		return nil, summarized{status.New(codes.ResourceExhausted, "too many unauthenticated requests from this address: retry later with a valid bearer token")}
	}
	return nil, summarized{status.Convert(err)}
}

// fail counts one failed authentication from peer and reports whether it was within
// the peer's budget.
func (g *authGuard) fail(peer, reason string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	lim, ok := g.peers[peer]
	if !ok {
		if len(g.peers) < maxUnauthPeers {
			lim = rate.NewLimiter(g.rps, g.burst)
			g.peers[peer] = lim
		} else {
			lim, peer = g.overflow, overflowPeer
		}
	}
	allowed := lim.Allow()
	if g.win.requests == 0 {
		g.win.reasons, g.win.peers = map[string]int{}, map[string]int{}
		time.AfterFunc(g.every, g.summarize)
	}
	g.win.requests++
	g.win.reasons[reason]++
	g.win.peers[peer]++
	if !allowed {
		g.win.refused++
	}
	return allowed
}

// summarize logs the window's failures as one warn line and starts a new window,
// forgetting the addresses whose budget is full again.
func (g *authGuard) summarize() {
	g.mu.Lock()
	w := g.win
	g.win = authWindow{}
	now := time.Now()
	for p, lim := range g.peers {
		if lim.TokensAt(now) >= float64(g.burst) {
			delete(g.peers, p)
		}
	}
	g.mu.Unlock()
	if w.requests == 0 {
		return
	}
	var reasons []any
	for _, r := range []string{reasonMissing, reasonMalformed, reasonUnknown} {
		if n := w.reasons[r]; n > 0 {
			reasons = append(reasons, slog.Int(r, n))
		}
	}
	g.log.Warn("unauthenticated requests", "interval", g.every.String(), "requests", w.requests, "refused", w.refused,
		"addresses", len(w.peers), slog.Group("by_reason", reasons...), slog.Group("top_addresses", topAddresses(w.peers)...))
}

// topAddresses are the topUnauthPeers addresses of counts with the most, most first
// (ties by address), as slog attributes of a summary line.
func topAddresses(counts map[string]int) []any {
	type count struct {
		peer string
		n    int
	}
	var top []count
	for p, n := range counts {
		top = append(top, count{p, n})
	}
	slices.SortFunc(top, func(a, b count) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.peer, b.peer)) })
	var attrs []any
	for _, c := range top[:min(len(top), topUnauthPeers)] {
		attrs = append(attrs, slog.Int(c.peer, c.n))
	}
	return attrs
}

// peerKey is the address a request's failures are counted against: the peer's IP
// (IPv6 by its /64, the block one host usually holds), or the whole address when it
// is not an IP (bufconn, a unix socket).
func peerKey(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return "unknown"
	}
	return addrKey(p.Addr)
}

// addrKey is peerKey for an address (a connection's remote address); "unknown" for
// nil.
func addrKey(addr net.Addr) string {
	if addr == nil {
		return "unknown"
	}
	host := addr.String()
	if ta, ok := addr.(*net.TCPAddr); ok {
		if ip4 := ta.IP.To4(); ip4 != nil {
			return ip4.String()
		}
		return ta.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

// summarized is an authentication failure the guard's summary counts: the access log
// writes it at debug (logSummarized), not at info once per request.
type summarized struct{ st *status.Status }

func (e summarized) Error() string              { return e.st.Err().Error() }
func (e summarized) GRPCStatus() *status.Status { return e.st }

// summarizedField marks an access-log line of a summarized failure.
const summarizedField = "auth.summarized"

// summarizedFields is the logging interceptor's error-fields hook: it marks the
// failures the guard counts.
func summarizedFields(err error) logging.Fields {
	var s summarized
	if errors.As(err, &s) {
		return logging.Fields{summarizedField, true}
	}
	return nil
}

// isSummarized reports whether an access-log line's fields mark a summarized failure.
func isSummarized(fields []any) bool {
	for i := 0; i+1 < len(fields); i += 2 {
		if k, ok := fields[i].(string); ok && k == summarizedField {
			return true
		}
	}
	return false
}
