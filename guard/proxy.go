package guard

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/voicearbiter/arbiter/arbiter"
)

// Options configure a Proxy.
type Options struct {
	// Service is the arbiter the guard reports to (the engine and its store).
	Service *arbiter.Service
	// Apply applies an event as the RPCs do (arbiter serve passes its gRPC server's,
	// which logs, traces and counts); nil: Service.Apply.
	Apply func(ctx context.Context, key arbiter.SessionKey, ev arbiter.Event, create bool) (arbiter.Output, *arbiter.Session, error)
	// Gemini, Vertex and OpenAI are the upstream base URLs (wss://host[:port][/prefix]):
	// the agent's path and query are appended. Nil: that protocol is refused (404).
	// Gemini serves the Gemini API's paths (/ws/google.ai.generativelanguage.*),
	// Vertex Vertex AI's (/ws/google.cloud.aiplatform.*), OpenAI /v1/realtime.
	Gemini, Vertex, OpenAI *url.URL
	// TLS configures the upstream connections (RootCAs for a CA file); nil: the
	// system roots.
	TLS *tls.Config
	// Tenant returns the tenant a connection's sessions belong to, from its request
	// (arbiter serve: the X-Arbiter-Token header or the arbiter_token query
	// parameter, under --auth-tokens-file); an error refuses the connection (401).
	// Nil: every session is the default tenant's.
	Tenant func(r *http.Request) (string, error)
	// Rule configures each connection's rule.
	Rule Config
	// Log receives one line per connection opened and closed (with what the guard
	// dropped and injected), and each drop, injection and refusal at debug (warn for
	// failures). Never a credential: no header, no query. Nil: slog.Default().
	Log *slog.Logger
	// ReadLimit caps one WebSocket message in bytes; zero means 32 MiB.
	ReadLimit int64
	// WriteTimeout bounds one write to either peer; a peer that does not take a
	// message within it ends the connection. Zero means 10 s.
	WriteTimeout time.Duration
	// DialTimeout bounds the upstream handshake; zero means 15 s.
	DialTimeout time.Duration
	// ReportRetry bounds how long a report the store refuses (Unavailable, Conflict)
	// is tried again before it is dropped (logged); zero means 60 s, the engine's
	// MaxEventAge (an event cannot be placed further back).
	ReportRetry time.Duration
	// Clock is the time source; nil: the wall clock.
	Clock func() time.Time
	// Metrics count connections, what the rule dropped and injected, lost reports,
	// failed dials and the frames written each way (metrics.go); nil: none.
	Metrics Metrics
}

// Proxy is the wire guard as an http.Handler: each WebSocket request on a provider
// path is dialed upstream and guarded. Safe for concurrent use.
type Proxy struct {
	o      Options
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[*conn]bool
	dialer *websocket.Dialer
	upg    *websocket.Upgrader
}

// Buffers (gorilla/websocket): each side reads through its own readBuffer bytes (a
// 24 kHz audio frame of 40 ms, 5 KB as base64 in JSON, in one read); a message is
// written from a pooled buffer, held only while it is written (an idle connection
// holds none). To the agent a message goes as one frame whatever its size; upstream
// (masked) one of up to upstreamFrame bytes goes as one frame and a longer one in
// frames of that size (RFC 6455 5.4: an intermediary may fragment).
const (
	readBuffer    = 8 << 10
	agentWrite    = 8 << 10
	upstreamFrame = 64 << 10
)

// New returns a Proxy for o. Errors: no Service, or no upstream at all.
func New(o Options) (*Proxy, error) {
	if o.Service == nil {
		return nil, errors.New("guard: no arbiter service")
	}
	if o.Gemini == nil && o.Vertex == nil && o.OpenAI == nil {
		return nil, errors.New("guard: no upstream (Gemini, Vertex or OpenAI)")
	}
	if o.Apply == nil {
		o.Apply = o.Service.Apply
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 32 << 20
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 15 * time.Second
	}
	if o.ReportRetry <= 0 {
		o.ReportRetry = arbiter.MaxEventAge
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Metrics == nil {
		o.Metrics = noMetrics{}
	}
	if o.Rule.Policy == nil {
		o.Rule.Policy = o.Service.Engine.Policy
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{o: o, log: o.Log, ctx: ctx, cancel: cancel, conns: map[*conn]bool{}}
	p.dialer = &websocket.Dialer{
		Proxy:           http.ProxyFromEnvironment, // as net/http's default client: HTTPS_PROXY, NO_PROXY
		TLSClientConfig: o.TLS,                     // nil: the system roots
		ReadBufferSize:  readBuffer,
		WriteBufferSize: upstreamFrame,
		WriteBufferPool: &sync.Pool{},
	}
	p.upg = &websocket.Upgrader{
		ReadBufferSize:  readBuffer,
		WriteBufferSize: agentWrite,
		WriteBufferPool: &sync.Pool{},
		CheckOrigin:     func(*http.Request) bool { return true }, // an agent, not a browser page, connects
	}
	return p, nil
}

// Close ends every connection as a provider going away would (Gemini: goAway, then
// close 1001; OpenAI: close 1001), so agents reconnect (a Gemini agent with its
// resumption handle, which names the session: the restarted guard goes on with it),
// and waits for their handlers. Idempotent.
func (p *Proxy) Close() {
	p.cancel()
	p.wg.Wait()
}

// Open returns how many connections are open.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

var (
	slashes    = regexp.MustCompile(`/{2,}`)
	geminiPath = regexp.MustCompile(`/ws/google\.ai\.generativelanguage\.[a-z0-9]+\.GenerativeService\.BidiGenerateContent(Constrained)?$`)
	vertexPath = regexp.MustCompile(`/ws/google\.cloud\.aiplatform\.[a-z0-9]+\.LlmBidiService/BidiGenerateContent$`)
	openaiPath = regexp.MustCompile(`/realtime$`)
)

// route reads a request's protocol and upstream base from its path (a prefix before
// the provider's path, such as the fake provider's /trace/NAME, goes along).
// off names the flag whose empty upstream turned r's provider path away ("" when r's
// path is no provider's).
func (p *Proxy) off(r *http.Request) string {
	path := slashes.ReplaceAllString(r.URL.Path, "/")
	switch {
	case geminiPath.MatchString(path) && p.o.Gemini == nil:
		return "--proxy-gemini-upstream"
	case vertexPath.MatchString(path) && p.o.Vertex == nil:
		return "--proxy-vertex-upstream"
	case openaiPath.MatchString(path) && p.o.OpenAI == nil:
		return "--proxy-openai-upstream"
	}
	return ""
}

func (p *Proxy) route(r *http.Request) (proto string, base *url.URL) {
	path := slashes.ReplaceAllString(r.URL.Path, "/")
	switch {
	case geminiPath.MatchString(path) && p.o.Gemini != nil:
		return "gemini", p.o.Gemini
	case vertexPath.MatchString(path) && p.o.Vertex != nil:
		return "gemini", p.o.Vertex
	case openaiPath.MatchString(path) && p.o.OpenAI != nil:
		return "openai", p.o.OpenAI
	}
	return "", nil
}

// Headers the guard reads or that belong to the WebSocket handshake itself: never
// sent upstream as they came (the handshake's are the dialer's).
var ownHeaders = map[string]bool{
	"Connection": true, "Upgrade": true, "Sec-Websocket-Key": true, "Sec-Websocket-Version": true,
	"Sec-Websocket-Extensions": true, "Sec-Websocket-Protocol": true, "Host": true, "Content-Length": true,
	"X-Arbiter-Session": true, "X-Arbiter-Token": true, "Te": true, "Trailer": true, "Transfer-Encoding": true,
	"Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authorization": true,
}

// The guard's own query parameters (removed before the query goes upstream).
const (
	sessionParam = "arbiter_session"
	tokenParam   = "arbiter_token"
)

// ServeHTTP guards one WebSocket connection: the request's path picks the protocol
// and upstream, the connection is dialed upstream with the agent's headers, query and
// subprotocols (credentials as they came), and the agent's is accepted with the
// subprotocol the server chose; an upstream that refuses the handshake has its
// status and body passed back. Any other path is 404.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	proto, base := p.route(r)
	if proto == "" {
		msg := "arbiter wire guard: not a provider path (Gemini Live BidiGenerateContent, OpenAI /v1/realtime)"
		if off := p.off(r); off != "" {
			msg = "arbiter wire guard: this provider's upstream is off here (" + off + " is empty)"
		}
		http.Error(w, msg, http.StatusNotFound)
		return
	}
	if !isUpgrade(r) {
		// Before any dial: a health check or a scanner on a provider path must not
		// open a provider session with the caller's credentials.
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		http.Error(w, "arbiter wire guard: a WebSocket upgrade request is expected on a provider path (Connection: Upgrade, Upgrade: websocket)", http.StatusUpgradeRequired)
		return
	}
	if msg, code := badHandshake(r); msg != "" {
		// Refused as the upgrade would refuse it, before the dial (as above).
		if code == http.StatusUpgradeRequired {
			w.Header().Set("Sec-WebSocket-Version", "13")
		}
		http.Error(w, "arbiter wire guard: "+msg, code)
		return
	}
	tenant := ""
	if p.o.Tenant != nil {
		t, err := p.o.Tenant(r)
		if err != nil {
			http.Error(w, "arbiter wire guard: "+err.Error(), http.StatusUnauthorized)
			return
		}
		tenant = t
	}
	q := r.URL.Query()
	session := firstOf(r.Header.Get("X-Arbiter-Session"), q.Get(sessionParam))
	named := session != ""
	if named {
		if err := arbiter.CheckName("session_id", session); err != nil {
			http.Error(w, "arbiter wire guard: X-Arbiter-Session: "+arbiter.MessageOf(err), http.StatusBadRequest)
			return
		}
	} else {
		session = "wg-" + randomID()
	}
	q.Del(sessionParam)
	q.Del(tokenParam)
	up := *base
	up.Path = strings.TrimSuffix(base.Path, "/") + slashes.ReplaceAllString(r.URL.Path, "/")
	up.RawQuery = q.Encode()
	if r.URL.RawQuery != "" && !r.URL.Query().Has(sessionParam) && !r.URL.Query().Has(tokenParam) {
		up.RawQuery = r.URL.RawQuery // as it came, byte for byte
	}
	hdr := http.Header{}
	for k, v := range r.Header {
		if !ownHeaders[http.CanonicalHeaderKey(k)] {
			hdr[k] = v
		}
	}
	var offered []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				offered = append(offered, s)
			}
		}
	}
	c := &conn{p: p, proto: proto, key: arbiter.SessionKey{Tenant: tenant, ID: session}, id: "c-" + randomID(),
		path: r.URL.Path, named: named, beta: isBeta(r)}
	log := p.log.With("proto", proto, "conn", c.id, "path", c.path)
	dctx, cancel := context.WithTimeout(p.ctx, p.o.DialTimeout)
	d := *p.dialer
	d.Subprotocols = offered
	server, resp, err := d.DialContext(dctx, up.String(), hdr)
	cancel()
	if err != nil {
		class := dialClass(resp, err)
		msg := "upstream refused the connection"
		if resp == nil {
			msg = "upstream not reached" // no HTTP answer: network, TLS, timeout (class)
		}
		log.Warn(msg, "status", statusOf(resp), "class", class, "err", redact(err, &up))
		p.o.Metrics.DialFailed(proto, class)
		passRefusal(w, resp)
		return
	}
	var chosen http.Header
	if sp := server.Subprotocol(); sp != "" {
		chosen = http.Header{"Sec-Websocket-Protocol": {sp}}
	}
	agent, err := p.upg.Upgrade(earlyDataWriter{w}, r, chosen) // answers a failed handshake itself (400)
	if err != nil {
		_ = server.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "the agent's handshake failed"), time.Now().Add(time.Second))
		_ = server.Close()
		log.Warn("agent handshake failed", "err", err)
		return
	}
	agent.SetReadLimit(p.o.ReadLimit)
	server.SetReadLimit(p.o.ReadLimit)
	agent.SetCloseHandler(echoClose(agent))
	server.SetCloseHandler(echoClose(server))
	c.agent, c.server, c.log, c.m = agent, server, log, p.o.Metrics.Opened(proto)
	p.wg.Add(1)
	defer p.wg.Done()
	p.mu.Lock()
	p.conns[c] = true
	p.mu.Unlock()
	defer func() { p.mu.Lock(); delete(p.conns, c); p.mu.Unlock() }()
	c.run()
}

// passRefusal answers the agent's handshake with the upstream's refusal, or 502 when
// the upstream could not be reached. The refusal keeps its status, its end-to-end
// headers (a 429's Retry-After, a 401's WWW-Authenticate, the provider's request id:
// what an SDK backs off by and support asks for; hop-by-hop ones and the body's
// length not, as net/http/httputil's ReverseProxy) and its body as the dial kept it
// (gorilla/websocket keeps a refusal's first KiB: the provider's message).
func passRefusal(w http.ResponseWriter, resp *http.Response) {
	if resp == nil {
		http.Error(w, "arbiter wire guard: the model server could not be reached", http.StatusBadGateway)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	for k, v := range resp.Header {
		if !hopHeaders[http.CanonicalHeaderKey(k)] {
			w.Header()[k] = v
		}
	}
	code := resp.StatusCode
	if code < 400 {
		code = http.StatusBadGateway
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// hopHeaders are a refusal's headers not passed back (RFC 9110 section 7.6.1's
// hop-by-hop fields, the WebSocket handshake's own, and the body's framing, which
// net/http sets for the body written).
var hopHeaders = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Content-Length": true, "Sec-Websocket-Accept": true, "Sec-Websocket-Protocol": true, "Sec-Websocket-Extensions": true,
}

func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// redact returns err's text without the upstream URL's query (an API key may be in
// it): never logged.
func redact(err error, u *url.URL) string {
	s := err.Error()
	if u.RawQuery != "" {
		s = strings.ReplaceAll(s, u.RawQuery, "REDACTED")
		s = strings.ReplaceAll(s, url.QueryEscape(u.RawQuery), "REDACTED")
	}
	return s
}

// isUpgrade reports whether r asks for a WebSocket (RFC 6455 section 4.1: a GET with
// Upgrade: websocket and Connection: Upgrade among its tokens).
func isUpgrade(r *http.Request) bool {
	if r.Method != http.MethodGet || !strings.EqualFold(strings.TrimSpace(r.Header.Get("Upgrade")), "websocket") {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "upgrade") {
				return true
			}
		}
	}
	return false
}

// badHandshake says what is wrong with an upgrade request's WebSocket fields (RFC 6455
// 4.2.1: Sec-WebSocket-Version 13, a Sec-WebSocket-Key of 16 bytes in base64), and the
// status it gets (426 for a version, 400 for a key); "" when nothing is.
func badHandshake(r *http.Request) (string, int) {
	if v := r.Header.Get("Sec-WebSocket-Version"); strings.TrimSpace(v) != "13" {
		return fmt.Sprintf("Sec-WebSocket-Version %q: this server speaks 13 (RFC 6455)", v), http.StatusUpgradeRequired
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(r.Header.Get("Sec-WebSocket-Key"))); err != nil || len(k) != 16 {
		return "Sec-WebSocket-Key: 16 bytes in base64 are expected (RFC 6455 4.1)", http.StatusBadRequest
	}
	return "", 0
}

// earlyDataWriter is an http.ResponseWriter whose hijacked connection keeps what the
// agent sent before it read the 101 (its first message, pipelined after the upgrade
// request): net/http has buffered it, and gorilla/websocket refuses a hijack with
// buffered bytes ("client sent data before handshake is complete"); they are read
// first from the connection it is given.
type earlyDataWriter struct{ http.ResponseWriter }

func (w earlyDataWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("http.ResponseWriter does not implement http.Hijacker")
	}
	c, brw, err := hj.Hijack()
	if err != nil || brw.Reader.Buffered() == 0 {
		return c, brw, err
	}
	early, _ := brw.Reader.Peek(brw.Reader.Buffered())
	ec := &earlyConn{Conn: c, r: io.MultiReader(bytes.NewReader(bytes.Clone(early)), c)}
	return ec, bufio.NewReadWriter(bufio.NewReader(ec), brw.Writer), nil
}

// earlyConn reads its early bytes, then the connection.
type earlyConn struct {
	net.Conn
	r io.Reader
}

func (c *earlyConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// isBeta reports whether an OpenAI client asked for the beta protocol (the header,
// or its subprotocol spelling).
func isBeta(r *http.Request) bool {
	if strings.Contains(r.Header.Get("OpenAI-Beta"), "realtime=v1") {
		return true
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		if strings.Contains(v, "openai-beta.realtime-v1") {
			return true
		}
	}
	return false
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// TenantFromTokens returns an Options.Tenant that takes a bearer token from the
// X-Arbiter-Token header or the arbiter_token query parameter and looks it up;
// lookup's error refuses the connection.
func TenantFromTokens(lookup func(token string) (string, bool)) func(*http.Request) (string, error) {
	return func(r *http.Request) (string, error) {
		tok := firstOf(r.Header.Get("X-Arbiter-Token"), r.URL.Query().Get(tokenParam))
		if tok == "" {
			return "", fmt.Errorf("an arbiter token is required: the X-Arbiter-Token header or the %s query parameter", tokenParam)
		}
		t, ok := lookup(tok)
		if !ok {
			return "", errors.New("unknown arbiter token")
		}
		return t, nil
	}
}
