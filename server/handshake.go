package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/credentials"
)

// Failed TLS handshakes are invisible otherwise: grpc-go closes the connection and
// logs through grpclog (silent unless GRPC_GO_LOG_SEVERITY_LEVEL is set), and the client
// sees only UNAVAILABLE or DEADLINE_EXCEEDED. An operator rolling out mutual TLS needs
// to see that clients come without a certificate, or with one from another CA. Like
// the failed authentications (unauth.go), they are summed up in one warn line per
// interval, never one line per connection: a scanner or a misconfigured fleet would
// flood the log.

// The handshake failure kinds the summary counts.
const (
	handshakeNoClientCert = "no_client_certificate" // mutual TLS, the client sent none
	handshakeBadCert      = "bad_certificate"       // a certificate the CA did not sign, expired, wrong name
	handshakeNotTLS       = "not_tls"               // plaintext (or another protocol) on the TLS port
	handshakeClosed       = "closed"                // the client went away mid-handshake
	handshakeOther        = "other"
)

// handshakeLog counts failed TLS handshakes and logs a summary per interval.
// Safe for concurrent use (grpc-go runs one handshake per connection goroutine).
type handshakeLog struct {
	log   *slog.Logger
	every time.Duration

	mu      sync.Mutex
	n       int
	kinds   map[string]int
	peers   map[string]int
	lastErr string
}

// loggedCreds are TLS credentials whose failed server handshakes a handshakeLog
// counts.
type loggedCreds struct {
	credentials.TransportCredentials
	log *handshakeLog
}

// withHandshakeLog wraps creds so that failed handshakes are summed up in one warn
// line per every (DefaultUnauthLogInterval when zero) on log.
func withHandshakeLog(creds credentials.TransportCredentials, log *slog.Logger, every time.Duration) credentials.TransportCredentials {
	if every <= 0 {
		every = DefaultUnauthLogInterval
	}
	return loggedCreds{creds, &handshakeLog{log: log, every: every}}
}

func (c loggedCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		c.log.fail(conn.RemoteAddr(), err)
	}
	return out, info, err
}

func (c loggedCreds) Clone() credentials.TransportCredentials {
	return loggedCreds{c.TransportCredentials.Clone(), c.log}
}

// handshakeKind classifies a failed handshake by crypto/tls's error.
func handshakeKind(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "didn't provide a certificate"):
		return handshakeNoClientCert
	case strings.Contains(msg, "does not look like a TLS handshake"):
		return handshakeNotTLS
	case strings.Contains(msg, "certificate"):
		return handshakeBadCert
	case errors.Is(err, io.EOF) || strings.Contains(msg, "connection reset") || strings.Contains(msg, "EOF"):
		return handshakeClosed
	}
	return handshakeOther
}

// fail counts one failed handshake from addr (by addrKey, as failed authentications
// are counted).
func (h *handshakeLog) fail(addr net.Addr, err error) {
	peer := addrKey(addr)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		h.kinds, h.peers = map[string]int{}, map[string]int{}
		time.AfterFunc(h.every, h.summarize)
	}
	h.n++
	h.kinds[handshakeKind(err)]++
	if len(h.peers) < maxUnauthPeers {
		h.peers[peer]++
	}
	h.lastErr = err.Error()
}

// summarize logs the window's failures in one warn line: how many, by kind, the
// addresses with the most, and the last error's text.
func (h *handshakeLog) summarize() {
	h.mu.Lock()
	n, kinds, peers, last := h.n, h.kinds, h.peers, h.lastErr
	h.n, h.kinds, h.peers = 0, nil, nil
	h.mu.Unlock()
	if n == 0 {
		return
	}
	var byKind []any
	for _, k := range []string{handshakeNoClientCert, handshakeBadCert, handshakeNotTLS, handshakeClosed, handshakeOther} {
		if c := kinds[k]; c > 0 {
			byKind = append(byKind, slog.Int(k, c))
		}
	}
	h.log.Warn("failed TLS handshakes", "interval", h.every.String(), "handshakes", n,
		slog.Group("by_kind", byKind...), slog.Group("top_addresses", topAddresses(peers)...), "last_error", last)
}
