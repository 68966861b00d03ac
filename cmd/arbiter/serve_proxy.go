package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/voicearbiter/arbiter/arbiter"
	"github.com/voicearbiter/arbiter/guard"
	"github.com/voicearbiter/arbiter/server"
)

// proxyFlags are serve's wire guard flags: a WebSocket listener beside the gRPC one,
// on the same engine and store (the embedded store is one process's: a guard in
// another process could not share it).
type proxyFlags struct {
	ProxyListen      string        `name:"proxy-listen" env:"ARBITER_PROXY_LISTEN" help:"Serve the wire guard on this address (e.g. :8080): a WebSocket proxy an agent reaches by changing its provider base URL (Gemini Live, OpenAI Realtime), which forwards everything to the model server and enforces the answer rules on the wire (docs/wire-guard.md). Empty: off."`
	ProxyGemini      string        `name:"proxy-gemini-upstream" default:"wss://generativelanguage.googleapis.com" env:"ARBITER_PROXY_GEMINI_UPSTREAM" help:"Where the guard dials Gemini Live (Gemini API paths /ws/google.ai.generativelanguage.*): ws:// or wss:// base URL, the agent's path and query appended. Empty: refused."`
	ProxyVertex      string        `name:"proxy-vertex-upstream" env:"ARBITER_PROXY_VERTEX_UPSTREAM" help:"Where the guard dials Vertex AI's Live API (paths /ws/google.cloud.aiplatform.*), e.g. wss://us-central1-aiplatform.googleapis.com. Empty: refused."`
	ProxyOpenAI      string        `name:"proxy-openai-upstream" default:"wss://api.openai.com" env:"ARBITER_PROXY_OPENAI_UPSTREAM" help:"Where the guard dials OpenAI Realtime (paths ending /realtime). Empty: refused."`
	ProxyCAFile      string        `name:"proxy-ca-file" type:"existingfile" env:"ARBITER_PROXY_CA_FILE" help:"Trust this PEM CA (instead of the system roots) for the upstream's TLS."`
	ProxyTLSCert     string        `name:"proxy-tls-cert" type:"existingfile" env:"ARBITER_PROXY_TLS_CERT" help:"Serve the guard over TLS (wss://) with this PEM certificate (needs --proxy-tls-key); some SDKs dial wss:// only."`
	ProxyTLSKey      string        `name:"proxy-tls-key" type:"existingfile" env:"ARBITER_PROXY_TLS_KEY" help:"PEM private key for --proxy-tls-cert."`
	ProxyAnswerWait  time.Duration `name:"proxy-answer-wait" default:"2s" env:"ARBITER_PROXY_ANSWER_WAIT" help:"Once the arbiter's response for a call the agent runs is due, how long the agent's own answer is waited for (to go in its place) before the guard sends it itself."`
	ProxyRegWait     time.Duration `name:"proxy-register-wait" default:"3s" env:"ARBITER_PROXY_REGISTER_WAIT" help:"How long a function call waits for the store to register it before it fails closed (answered not executed, never given to the agent)."`
	ProxyRecord      bool          `name:"proxy-record" env:"ARBITER_PROXY_RECORD" help:"Every guarded session records (its whole history kept, to export and replay it); --history-sample samples instead."`
	ProxyTranscribe  bool          `name:"proxy-add-transcription" default:"true" negatable:"" env:"ARBITER_PROXY_ADD_TRANSCRIPTION" help:"Ask the model server for the user's input transcription when the agent does not (Gemini setup, OpenAI session; without it no stop is ever heard), and keep it from the agent; an agent's own choice is never overridden."`
	ProxyWriteTimout time.Duration `name:"proxy-write-timeout" default:"10s" env:"ARBITER_PROXY_WRITE_TIMEOUT" help:"A peer that does not take a message within this ends its connection."`
	ProxyDialTimeout time.Duration `name:"proxy-dial-timeout" default:"15s" env:"ARBITER_PROXY_DIAL_TIMEOUT" help:"How long the guard waits for the model server to accept its connection (TCP, TLS and the WebSocket upgrade) before it answers the agent's handshake 502."`
}

// proxyFlagsSet names the guard's flags without a default that were given a value
// (the Gemini and OpenAI upstreams have defaults: not counted).
func (c *serveCmd) proxyFlagsSet() []string {
	var set []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"--proxy-vertex-upstream", c.ProxyVertex != ""},
		{"--proxy-ca-file", c.ProxyCAFile != ""},
		{"--proxy-tls-cert", c.ProxyTLSCert != ""},
		{"--proxy-tls-key", c.ProxyTLSKey != ""},
		{"--proxy-record", c.ProxyRecord},
	} {
		if f.on {
			set = append(set, f.name)
		}
	}
	return set
}

// redactURL is an upstream URL fit for a log line: a password in it shown as xxxxx,
// a query dropped (a key may ride there); as given when it does not parse.
func redactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return v
	}
	if u.RawQuery != "" {
		u.RawQuery = "REDACTED"
	}
	return u.Redacted()
}

// proxyValidate checks the guard's flags. Their ranges are checked with the guard off
// too (a value out of range is wrong wherever it is set, as every other flag's); the
// rest only when the guard is on (--proxy-listen: its flags may be set for replicas
// that do not serve it).
func (c *serveCmd) proxyValidate() error {
	if err := outOfRange(
		flagRange{"--proxy-answer-wait", c.ProxyAnswerWait, positive(c.ProxyAnswerWait)},
		flagRange{"--proxy-register-wait", c.ProxyRegWait, positive(c.ProxyRegWait)},
		flagRange{"--proxy-write-timeout", c.ProxyWriteTimout, positive(c.ProxyWriteTimout)},
		flagRange{"--proxy-dial-timeout", c.ProxyDialTimeout, positive(c.ProxyDialTimeout)},
	); err != nil {
		return err
	}
	if c.ProxyListen == "" {
		return nil
	}
	if (c.ProxyTLSCert == "") != (c.ProxyTLSKey == "") {
		return fmt.Errorf("--proxy-tls-cert and --proxy-tls-key go together")
	}
	if c.ProxyGemini == "" && c.ProxyVertex == "" && c.ProxyOpenAI == "" {
		return fmt.Errorf("--proxy-listen needs an upstream: --proxy-gemini-upstream, --proxy-vertex-upstream or --proxy-openai-upstream")
	}
	for _, u := range []struct{ flag, v string }{{"--proxy-gemini-upstream", c.ProxyGemini}, {"--proxy-vertex-upstream", c.ProxyVertex}, {"--proxy-openai-upstream", c.ProxyOpenAI}} {
		if u.v == "" {
			continue
		}
		if err := checkUpstream(u.v); err != nil {
			return fmt.Errorf("%s %q: %w", u.flag, redactURL(u.v), err)
		}
	}
	return nil
}

// checkUpstream checks an upstream flag's value: a ws:// or wss:// base URL with a
// host, a port (when given) from 1 to 65535, and no query, fragment or user info
// (the dial refuses a URL with user info, and the credentials are the agent's,
// passed through: an upstream that took them would fail every connection, not the
// start).
func checkUpstream(v string) error {
	const want = "a ws:// or wss:// base URL with a host, and no query, fragment or user:password@"
	p, err := url.Parse(v)
	switch {
	case err != nil || (p.Scheme != "ws" && p.Scheme != "wss") || p.Hostname() == "":
		return errors.New(want)
	case p.RawQuery != "" || p.ForceQuery:
		return fmt.Errorf("%s: it has a query (the agent's query is appended)", want)
	case p.Fragment != "" || strings.Contains(v, "#"):
		return fmt.Errorf("%s: it has a fragment", want)
	case p.User != nil:
		return fmt.Errorf("%s: it has user info (credentials come from the agent's request)", want)
	}
	if port := p.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%s: port %s is not 1-65535", want, port)
		}
	}
	return nil
}

// proxyCerts are the guard's certificates, read before anything starts: the CA the
// upstream's TLS is checked with (nil: the system roots) and the guard's own
// certificate (nil: plain ws://).
type proxyCerts struct {
	upstream *tls.Config
	serve    *tls.Certificate
}

// loadProxyCerts reads --proxy-ca-file, --proxy-tls-cert and --proxy-tls-key (nothing
// without --proxy-listen). An error names the flag whose file cannot be used (unread,
// no PEM certificate, no PEM private key, a key that is not the certificate's): serve
// makes it a usage error (exit 2) before it listens, as kong's for a missing file.
func (c *serveCmd) loadProxyCerts() (proxyCerts, error) {
	var pc proxyCerts
	if c.ProxyListen == "" {
		return pc, nil
	}
	if c.ProxyCAFile != "" {
		b, err := os.ReadFile(c.ProxyCAFile)
		if err != nil {
			return pc, fmt.Errorf("--proxy-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return pc, fmt.Errorf("--proxy-ca-file %s: holds no PEM certificate", c.ProxyCAFile)
		}
		pc.upstream = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if c.ProxyTLSCert != "" {
		certPEM, err := readPEM("--proxy-tls-cert", c.ProxyTLSCert, "certificate", func(t string) bool { return t == "CERTIFICATE" })
		if err != nil {
			return pc, err
		}
		keyPEM, err := readPEM("--proxy-tls-key", c.ProxyTLSKey, "private key", func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") })
		if err != nil {
			return pc, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return pc, fmt.Errorf("--proxy-tls-cert %s and --proxy-tls-key %s: %w", c.ProxyTLSCert, c.ProxyTLSKey, err)
		}
		pc.serve = &cert
	}
	return pc, nil
}

// readPEM reads file (flag's) and checks it holds a PEM block whose type is what
// (isWhat); an error names the flag and the file (never the file's content).
func readPEM(flag, file, what string, isWhat func(blockType string) bool) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	for rest := b; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			return nil, fmt.Errorf("%s %s: holds no PEM %s", flag, file, what)
		}
		if isWhat(blk.Type) {
			return b, nil
		}
	}
}

// startProxy serves the wire guard on --proxy-listen until the returned stop is
// called (stop ends every guarded connection as a provider going away would, so
// agents reconnect; nil without --proxy-listen), with the certificates certs
// (loadProxyCerts). With --metrics-listen the guard's arbiter_guard_* series are on
// opts.Metrics.
func (c *serveCmd) startProxy(svc *arbiter.Service, srv *server.Server, opts server.Options, certs proxyCerts, log *slog.Logger) (addr string, stop func(), err error) {
	if c.ProxyListen == "" {
		if set := c.proxyFlagsSet(); len(set) > 0 {
			// A warning, not a usage error: the guard's variables may be set for every
			// replica (ARBITER_PROXY_*) where only some serve the guard.
			log.Warn("wire guard flags without --proxy-listen: the guard is off", "flags", strings.Join(set, " "))
		}
		return "", func() {}, nil
	}
	o := guard.Options{
		Service: svc, Apply: srv.Apply, Log: log.With("component", "wire_guard"), WriteTimeout: c.ProxyWriteTimout, DialTimeout: c.ProxyDialTimeout,
		Metrics: opts.Metrics.Guard(), Rule: guard.Config{AnswerWait: c.ProxyAnswerWait, RegisterWait: c.ProxyRegWait, Record: c.ProxyRecord, AddTranscription: c.ProxyTranscribe},
	}
	for _, u := range []struct {
		v   string
		dst **url.URL
	}{{c.ProxyGemini, &o.Gemini}, {c.ProxyVertex, &o.Vertex}, {c.ProxyOpenAI, &o.OpenAI}} {
		if u.v != "" {
			*u.dst, _ = url.Parse(u.v)
		}
	}
	o.TLS = certs.upstream
	if opts.Tokens != nil {
		o.Tenant = guard.TenantFromTokens(opts.Tokens.Tenant)
	}
	p, err := guard.New(o)
	if err != nil {
		return "", nil, err
	}
	lis, err := net.Listen("tcp", c.ProxyListen)
	if err != nil {
		return "", nil, fmt.Errorf("--proxy-listen: %w", err)
	}
	// net/http's own errors (a TLS handshake a plain ws:// client failed) go to the
	// structured log, not to the standard logger's unformatted lines.
	hs := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.With("component", "wire_guard").Handler(), slog.LevelInfo)}
	scheme := "ws"
	if certs.serve != nil {
		lis = tls.NewListener(lis, &tls.Config{Certificates: []tls.Certificate{*certs.serve}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
		scheme = "wss"
	}
	go func() { _ = hs.Serve(lis) }()
	addr = lis.Addr().String()
	log.Info("wire guard serving", "proxy_addr", addr, "scheme", scheme, "gemini", redactURL(c.ProxyGemini), "vertex", redactURL(c.ProxyVertex), "openai", redactURL(c.ProxyOpenAI))
	return addr, func() {
		_ = hs.Close() // the listener and idle requests; the WebSockets are hijacked: the proxy ends them
		p.Close()
	}, nil
}
