package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
)

type tenantKey struct{}

// TenantFrom returns the tenant the request runs as: the one its bearer token maps to,
// or "" on a server without authentication (single tenant). Every session key is
// scoped by it, so one tenant can neither read nor decide another's sessions (it gets
// NOT_FOUND, not PERMISSION_DENIED, so session ids do not leak).
func TenantFrom(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// WithTenant returns ctx running as tenant (for tests and in-process callers).
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// Tokens maps bearer tokens to tenants. Tokens are kept only as SHA-256 digests.
// Safe for concurrent use; read-only once loaded.
type Tokens struct {
	byDigest map[[32]byte]string
}

// LoadTokens reads a YAML mapping of bearer token to tenant:
//
//	"s3cr3t-token-for-acme": acme
//	"another-token": globex
//
// Errors name the file: an unreadable file, a malformed mapping, an empty token or
// tenant, or a tenant that is not 1-64 characters from [A-Za-z0-9_.-].
func LoadTokens(path string) (*Tokens, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth tokens: %w", err)
	}
	var m map[string]string
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("auth tokens %s: %v", path, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("auth tokens %s: no tokens", path)
	}
	return NewTokens(m)
}

// NewTokens builds Tokens from a token -> tenant map.
func NewTokens(m map[string]string) (*Tokens, error) {
	t := &Tokens{byDigest: map[[32]byte]string{}}
	for tok, tenant := range m {
		if len(tok) < 8 {
			return nil, fmt.Errorf("auth tokens: a token for tenant %q is shorter than 8 characters", tenant)
		}
		if !validTenant(tenant) {
			return nil, fmt.Errorf("auth tokens: tenant %q must be 1-64 characters from [A-Za-z0-9_.-]", tenant)
		}
		t.byDigest[sha256.Sum256([]byte(tok))] = tenant
	}
	return t, nil
}

func validTenant(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Tenant returns the tenant tok maps to, if any (the wire guard's connections carry
// a token too). Safe for concurrent use.
func (t *Tokens) Tenant(tok string) (string, bool) { return t.tenant(tok) }

// tenant returns the tenant tok maps to, if any.
func (t *Tokens) tenant(tok string) (string, bool) {
	tenant, ok := t.byDigest[sha256.Sum256([]byte(tok))]
	return tenant, ok
}

// protected reports whether a call needs authentication and rate limiting: everything
// but health checks and reflection, which stay open for probes, grpcurl and ghz.
func protected(_ context.Context, c interceptors.CallMeta) bool {
	switch c.Service {
	case "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection":
		return false
	}
	return true
}

// TenantLimiter is a per-tenant token bucket (golang.org/x/time/rate) for the
// ratelimit interceptor: each tenant gets RPS requests per second with bursts of Burst.
// Safe for concurrent use.
type TenantLimiter struct {
	RPS   float64
	Burst int

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// Limit implements ratelimit.Limiter: an error (RESOURCE_EXHAUSTED at the edge) when
// the caller's tenant is over its rate.
func (l *TenantLimiter) Limit(ctx context.Context) error {
	tenant := TenantFrom(ctx)
	l.mu.Lock()
	if l.limiters == nil {
		l.limiters = map[string]*rate.Limiter{}
	}
	lim, ok := l.limiters[tenant]
	if !ok {
		lim = rate.NewLimiter(rate.Limit(l.RPS), l.Burst)
		l.limiters[tenant] = lim
	}
	l.mu.Unlock()
	if !lim.Allow() {
		return fmt.Errorf("tenant %q is over its rate limit of %g requests/s", tenant, l.RPS)
	}
	return nil
}

// rpcLimit is how long the RPC info names may take: d, plus decideCap for Decide.
func rpcLimit(info *grpc.UnaryServerInfo, d, decideCap time.Duration) time.Duration {
	if info.FullMethod == "/arbiter.v1.ArbiterService/Decide" {
		return d + decideCap
	}
	return d
}

// TLSConfig returns a server TLS configuration from PEM files. With clientCA set,
// clients must present a certificate signed by it (mutual TLS). Errors name the file.
func TLSConfig(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: load %s and %s: %w", certFile, keyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: %s holds no PEM certificate", clientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
