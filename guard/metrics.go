package guard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Metrics observe the guard for an operator (arbiter serve hands it server.Metrics'
// Guard: Prometheus series arbiter_guard_*, docs/operations.md). Every argument is a
// word from a fixed set documented here, never a call id, session id or URL, so each
// may be a label value as it is. Its methods are called from every connection's
// goroutines at once: implementations are safe for concurrent use and do not block.
type Metrics interface {
	// Opened is called once a connection is guarded (its upstream dialed and the
	// agent's handshake accepted) with its protocol ("gemini" or "openai"); what the
	// connection does is counted on the returned ConnMetrics, whose Closed is called
	// once at its end.
	Opened(proto string) ConnMetrics
	// DialFailed is called when an agent's connection is refused because its
	// upstream could not be dialed (the agent got the upstream's refusal or 502);
	// class is one of the Dial* constants.
	DialFailed(proto, class string)
}

// ConnMetrics count one guarded connection (Metrics.Opened).
type ConnMetrics interface {
	// Sent is called for each frame written to a peer (to: Agent or Server; bytes:
	// the message's payload length): everything forwarded plus what the guard
	// injected. It is on the per-frame path: an atomic add or two on counters the
	// implementation resolved in Opened, no label lookup, no allocation.
	Sent(to Side, bytes int)
	// Counted is called for each thing the rule did that Rule.Counts counts, with
	// the entry's two halves (LogLine.What, LogLine.Why): e.g. "dropped agent
	// answer", "dead id: abandoned"; "injected response", "deadline"; "injected
	// note", "".
	Counted(what, why string)
	// ReportLost is called for a report to the arbiter that was not applied: event
	// is its kind (EventKind), why one of the Report* constants.
	ReportLost(event, why string)
	// Closed is called once when the connection has ended: how is one of the End*
	// constants, code the close code's class (CodeClass; "" unless how is
	// EndAgentClosed or EndProviderClosed).
	Closed(how, code string)
}

// How a connection ended (ConnMetrics.Closed): the first of these to happen ends both
// sides.
const (
	// EndAgentClosed: the agent closed its connection (any close code).
	EndAgentClosed = "agent_closed"
	// EndProviderClosed: the model server closed its connection (passed through).
	EndProviderClosed = "provider_closed"
	// EndGuardRestarting: the guard was shutting down (Proxy.Close).
	EndGuardRestarting = "guard_restarting"
	// EndWriteTimeout: a peer did not take what was sent to it: a write outlasted
	// Options.WriteTimeout, or the frames queued for it passed their bound (8 MiB).
	EndWriteTimeout = "write_timeout"
	// EndError: a connection broke without a close (a reset, a malformed WebSocket
	// frame, a message past Options.ReadLimit) or a write to it failed.
	EndError = "error"
)

// Why a report to the arbiter was lost (ConnMetrics.ReportLost).
const (
	// ReportQueueFull: the connection's reports queued past their bound (4096: the
	// store is far behind); the report was dropped unsent.
	ReportQueueFull = "queue_full"
	// ReportUnavailable: the store refused it (Unavailable, Conflict) until
	// Options.ReportRetry ran out, or the guard shut down meanwhile.
	ReportUnavailable = "unavailable"
	// ReportRefused: the arbiter refused it as invalid or too late (Invalid,
	// FailedPrecondition, NotFound: e.g. a closed session).
	ReportRefused = "refused"
	// ReportError: any other error.
	ReportError = "error"
)

// Why an upstream could not be dialed (Metrics.DialFailed).
const (
	// DialRefusedClient: the upstream answered the handshake with a 4xx (a wrong
	// API key, an unknown model), passed back to the agent.
	DialRefusedClient = "refused_4xx"
	// DialRefusedServer: the upstream answered with another status (5xx, a redirect).
	DialRefusedServer = "refused_other"
	// DialTimeout: no handshake within Options.DialTimeout.
	DialTimeout = "timeout"
	// DialTLS: the upstream's certificate was not trusted (or TLS failed otherwise).
	DialTLS = "tls"
	// DialNetwork: the upstream could not be reached (DNS, connection refused, reset).
	DialNetwork = "network"
)

// CodeClass is a WebSocket close code as a bounded label value: the code itself for
// the protocol's own codes (1000-1015: "1000" normal, "1001" going away, "1008"
// policy violation, "1011" internal error, ...), "4xxx" for an application's codes
// (4000-4999), "other" for anything else.
func CodeClass(code int) string {
	switch {
	case code >= 1000 && code <= 1015:
		return strconv.Itoa(code)
	case code >= 4000 && code <= 4999:
		return "4xxx"
	}
	return "other"
}

// dialClass classifies a failed upstream dial (Metrics.DialFailed).
func dialClass(resp *http.Response, err error) string {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var ra tls.RecordHeaderError
	switch {
	case resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500:
		return DialRefusedClient
	case resp != nil:
		return DialRefusedServer
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return DialTimeout
	case errors.As(err, &cv), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci), errors.As(err, &ra),
		strings.Contains(err.Error(), "tls: "):
		return DialTLS
	}
	return DialNetwork
}

// reportLoss classifies a report's error (ConnMetrics.ReportLost).
func reportLoss(err error) string {
	switch arbiter.KindOf(err) {
	case arbiter.Unavailable, arbiter.Conflict:
		return ReportUnavailable
	case arbiter.Invalid, arbiter.FailedPrecondition, arbiter.NotFound:
		return ReportRefused
	}
	return ReportError
}

// EventKind names a report's event as a bounded label value: speech, call, answer,
// transcript, cancellation, connect, configure, close, or event.
func EventKind(ev arbiter.Event) string {
	k, _, _ := strings.Cut(eventName(ev), ":")
	return k
}

// noMetrics is what a connection counts on without Options.Metrics.
type noMetrics struct{}

func (noMetrics) Sent(Side, int)            {}
func (noMetrics) Counted(string, string)    {}
func (noMetrics) ReportLost(string, string) {}
func (noMetrics) Closed(string, string)     {}
func (noMetrics) Opened(string) ConnMetrics { return noMetrics{} }
func (noMetrics) DialFailed(string, string) {}

// isTimeout reports a network timeout (the dial's deadline reached inside the
// handshake: "i/o timeout", not the context's error).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
