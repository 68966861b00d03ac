package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/timeline"
)

// DebugPath is where DebugHandler serves a session's timeline: DebugPath + ID.
const DebugPath = "/debug/sessions/"

// debugRealm names the credentials a browser asks for.
const debugRealm = "arbiter"

// DebugHandler serves the debug pages, for the metrics listener: GET
// /debug/sessions/{id} draws the session's timeline (package timeline: the same
// picture as `arbiter replay --html`) from its history, read in process as GetHistory
// reads it.
//
// With o.Tokens the page needs a known token, as every RPC does, and shows only the
// token's tenant's sessions (another tenant's is 404, like an unknown one). The token
// comes as `Authorization: Bearer TOKEN` (curl, a proxy that injects it), or as the
// password of HTTP Basic authentication, whatever the user name: without a token the
// answer is 401 with a Basic challenge, so a browser asks for it once and sends it
// with every page of the listener until it is closed, and the token never appears in
// a URL, a history, a log or a Referer. Failures count against the caller's address
// with the RPCs' budget settings (o.UnauthRPS, o.UnauthBurst: past it, 429) and are
// summed up in one warn line per interval; a known token is limited by o.Limiter
// like an RPC (429). The listener is plain HTTP: the token and the transcripts cross
// the network in the clear unless the listener is reached over a port-forward, a
// loopback, or a TLS-terminating proxy.
//
// Every answer says not to cache it, not to frame it, not to send a referrer, and
// carries the page's content security policy (nothing is fetched; only the page's
// own inline style and script run).
func (s *Server) DebugHandler(o Options) http.Handler {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	h := &debugPages{s: s, tokens: o.Tokens, limiter: o.Limiter, timeout: o.RPCTimeout}
	if h.timeout <= 0 {
		h.timeout = 10 * time.Second
	}
	if o.Tokens != nil {
		h.guard = newAuthGuard(o.Tokens, log.With("listener", "debug pages"), o.UnauthRPS, o.UnauthBurst, o.UnauthLogInterval)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+DebugPath+"{id}", h.session)
	mux.HandleFunc(DebugPath, func(w http.ResponseWriter, r *http.Request) {
		debugHeaders(w)
		http.Error(w, "GET /debug/sessions/SESSION_ID draws one session's timeline", http.StatusNotFound)
	})
	return mux
}

type debugPages struct {
	s       *Server
	tokens  *Tokens
	guard   *authGuard
	limiter interface{ Limit(context.Context) error }
	timeout time.Duration
}

// debugHeaders are set on every answer of the debug pages.
func debugHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", timeline.ContentSecurityPolicy+"; frame-ancestors 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")
}

func (h *debugPages) session(w http.ResponseWriter, r *http.Request) {
	debugHeaders(w)
	ctx := r.Context()
	if h.tokens != nil {
		tenant, code := h.authenticate(r)
		if code != 0 {
			if code == http.StatusUnauthorized {
				w.Header().Add("WWW-Authenticate", `Basic realm="`+debugRealm+`", charset="UTF-8"`)
				w.Header().Add("WWW-Authenticate", `Bearer realm="`+debugRealm+`"`)
				http.Error(w, "a bearer token is needed: the password of Basic authentication (any user name), or Authorization: Bearer TOKEN", code)
				return
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many unauthenticated requests from this address: retry later with a valid token", code)
			return
		}
		ctx = WithTenant(ctx, tenant)
	}
	if h.limiter != nil {
		if err := h.limiter.Limit(ctx); err != nil {
			w.Header().Set("Retry-After", "1")
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		}
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	id := r.PathValue("id")
	hist, err := h.s.GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: id})
	if err != nil {
		st := status.Convert(h.s.status(ctx, "/debug/sessions", err))
		http.Error(w, st.Message(), httpCode(st.Code()))
		return
	}
	source := "the session's history (GetHistory), as it is now: reload for what happened since"
	if t := TenantFrom(ctx); t != "" {
		source = "tenant " + t + " · " + source
	}
	var b bytes.Buffer
	if err := timeline.Render(&b, timeline.FromHistory(hist, timeline.Options{Title: "Session " + id, Source: source})); err != nil {
		h.s.log.ErrorContext(ctx, "debug page", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// authenticate returns the tenant of the request's token, or the status to answer:
// 401 without a known token, 429 past the address's budget of failures.
func (h *debugPages) authenticate(r *http.Request) (string, int) {
	tok, reason := debugToken(r)
	if reason == "" {
		if tenant, ok := h.tokens.tenant(tok); ok {
			return tenant, 0
		}
		reason = reasonUnknown
	}
	if !h.guard.fail(httpPeerKey(r.RemoteAddr), reason) {
		return "", http.StatusTooManyRequests
	}
	return "", http.StatusUnauthorized
}

// debugToken is the request's token: a Bearer token, or the password of Basic
// authentication; else why there is none (reasonMissing, reasonMalformed).
func debugToken(r *http.Request) (string, string) {
	a := r.Header.Get("Authorization")
	if a == "" {
		return "", reasonMissing
	}
	scheme, rest, ok := strings.Cut(a, " ")
	rest = strings.TrimSpace(rest)
	switch {
	case ok && strings.EqualFold(scheme, "bearer") && rest != "":
		return rest, ""
	case ok && strings.EqualFold(scheme, "basic"):
		raw, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return "", reasonMalformed
		}
		// The token is the password; a token pasted as the user name, with no
		// password, is taken too.
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok || (pass == "" && user == "") {
			return "", reasonMalformed
		}
		if pass == "" {
			return user, ""
		}
		return pass, ""
	}
	return "", reasonMalformed
}

// httpPeerKey is the address an HTTP request's failures count against, as peerKey
// for RPCs: the IP (IPv6 by its /64).
func httpPeerKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// httpCode is the HTTP status of a gRPC code, for the debug pages.
func httpCode(c codes.Code) int {
	switch c {
	case codes.InvalidArgument:
		return http.StatusBadRequest
	case codes.NotFound:
		return http.StatusNotFound
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.Canceled:
		return 499 // the client went away
	}
	return http.StatusInternalServerError
}
