package server

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
)

// Defaults of the bound on the access log's error lines per caller (Options).
const (
	DefaultErrorLogRPS   = 5.0
	DefaultErrorLogBurst = 50
)

// errorLog bounds the access log's lines for failed RPCs per caller. The access log
// writes a line per failed RPC (info for the caller's errors, warn for the arbiter's),
// which is what an operator wants for a client that trips once, and a flood for one
// that loops on a bad request (or on UNAVAILABLE during an outage): each address (the
// peer's IP; IPv6 by its /64, as the auth guard counts) has a token bucket of lines,
// and past it the lines are not written but counted, and one warn line per interval
// sums them up by code and by address, as the failed TLS handshakes (handshake.go) and
// failed authentications (unauth.go) are. Only the log is bounded: the RPCs are
// answered as before, and metrics count every one. Safe for concurrent use.
type errorLog struct {
	log   *slog.Logger
	every time.Duration
	rps   rate.Limit
	burst int

	mu       sync.Mutex
	peers    map[string]*rate.Limiter
	overflow *rate.Limiter
	n        int // lines held back in this window
	codes    map[codes.Code]int
	byPeer   map[string]int
	lastErr  string
}

func newErrorLog(log *slog.Logger, rps float64, burst int, every time.Duration) *errorLog {
	if rps <= 0 {
		rps = DefaultErrorLogRPS
	}
	if burst <= 0 {
		burst = DefaultErrorLogBurst
	}
	if every <= 0 {
		every = DefaultUnauthLogInterval
	}
	return &errorLog{log: log, every: every, rps: rate.Limit(rps), burst: burst,
		peers: map[string]*rate.Limiter{}, overflow: rate.NewLimiter(rate.Limit(rps), burst)}
}

// allow reports whether the line of an RPC from peer (peerKey) that failed with code
// and message msg is written; when not, it is counted for the next summary.
func (e *errorLog) allow(peer string, code codes.Code, msg string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	lim, ok := e.peers[peer]
	if !ok {
		if len(e.peers) < maxUnauthPeers {
			lim = rate.NewLimiter(e.rps, e.burst)
			e.peers[peer] = lim
		} else {
			lim, peer = e.overflow, overflowPeer
		}
	}
	if lim.Allow() {
		return true
	}
	if e.n == 0 {
		e.codes, e.byPeer = map[codes.Code]int{}, map[string]int{}
		time.AfterFunc(e.every, e.summarize)
	}
	e.n++
	e.codes[code]++
	e.byPeer[peer]++
	e.lastErr = msg
	return false
}

// summarize writes the window's held-back lines as one warn line and starts a new
// window, forgetting the addresses whose bucket is full again.
func (e *errorLog) summarize() {
	e.mu.Lock()
	n, byCode, byPeer, last := e.n, e.codes, e.byPeer, e.lastErr
	e.n, e.codes, e.byPeer, e.lastErr = 0, nil, nil, ""
	now := time.Now()
	for p, lim := range e.peers {
		if lim.TokensAt(now) >= float64(e.burst) {
			delete(e.peers, p)
		}
	}
	e.mu.Unlock()
	if n == 0 {
		return
	}
	var cs []any
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if k := byCode[c]; k > 0 {
			cs = append(cs, slog.Int(codeName(c), k))
		}
	}
	e.log.Warn("failed calls not logged one by one", "interval", e.every.String(), "calls", n,
		"rate_per_address", float64(e.rps), "burst", e.burst,
		slog.Group("by_code", cs...), slog.Group("top_addresses", topAddresses(byPeer)...), "last_error", last)
}

// addressKey is peerKey for a "host:port" string (the stream's access-log field
// peer.address): its host, an IPv6 host by its /64.
func addressKey(s string) string {
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		return s
	}
	if ip := net.ParseIP(host); ip != nil {
		return addrKey(&net.TCPAddr{IP: ip})
	}
	return host
}

// allowStreamLine is errs.allow for a line of go-grpc-middleware's logging
// interceptor (the Watch stream's), from its fields: lines of OK calls and lines
// without a code always pass.
func allowStreamLine(errs *errorLog, fields []any) bool {
	var code, addr string
	for i := 0; i+1 < len(fields); i += 2 {
		switch k, _ := fields[i].(string); k {
		case "grpc.code":
			code, _ = fields[i+1].(string)
		case "peer.address":
			addr, _ = fields[i+1].(string)
		}
	}
	if code == "" || code == codes.OK.String() {
		return true
	}
	c := codes.Unknown
	for k := codes.OK; k <= codes.Unauthenticated; k++ {
		if k.String() == code {
			c = k
		}
	}
	msg := ""
	for i := 0; i+1 < len(fields); i += 2 {
		if k, _ := fields[i].(string); k == "grpc.error" {
			msg, _ = fields[i+1].(string)
		}
	}
	return errs.allow(addressKey(addr), c, msg)
}
