package fakeprovider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Options configure a Server.
type Options struct {
	// Traces are played one per new session, in order (a connection may also name
	// one). At least one is required.
	Traces []Trace
	// Record, when not nil, receives the record: one JSON line (RecordLine) per client
	// message, server message, open, close and warning. Writes are serialized.
	Record io.Writer
	// KeepAudio keeps base64 audio in recorded messages; by default strings of 256 or
	// more base64 characters under "data", "audio" or "delta" are elided.
	KeepAudio bool
	// Log receives one line per session start and end, per warning, and per refused
	// connection; nil: slog.Default().
	Log *slog.Logger
	// SetupTimeout bounds how long a Gemini connection may take to send its setup
	// message; zero: 30 s.
	SetupTimeout time.Duration
}

// Server serves the fake providers over HTTP (an http.Handler): Gemini Live at
// /ws/google.ai.generativelanguage.{v1alpha,v1beta,v1}.GenerativeService.BidiGenerateContent
// (and ...Constrained) and OpenAI Realtime at /v1/realtime (and /realtime), each
// optionally under /trace/NAME/ to pick a trace. Safe for concurrent use; Close ends
// the sessions.
type Server struct {
	opts   Options
	rec    *recorder
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	byName   map[string]int
	queue    []int               // indexes of traces not played yet, in order
	pending  []*session          // sessions waiting for their next connection, oldest first
	open     map[*session]bool   // sessions playing on a connection
	refused  map[string]*session // by trace name: sessions whose trace was refused (Refusal)
	changed  chan struct{}       // closed (and replaced) when a session is released
	sessions int
	conns    int
	done     chan struct{}
	isDone   bool
}

// New returns a server for opts. Errors: no traces.
func New(opts Options) (*Server, error) {
	if len(opts.Traces) == 0 {
		return nil, errors.New("fakeprovider: no trace to play")
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.SetupTimeout <= 0 {
		opts.SetupTimeout = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, rec: newRecorder(opts.Record, opts.KeepAudio), log: opts.Log, ctx: ctx, cancel: cancel,
		byName: map[string]int{}, open: map[*session]bool{}, refused: map[string]*session{}, changed: make(chan struct{}), done: make(chan struct{})}
	for i, t := range opts.Traces {
		s.byName[t.Name] = i
		s.queue = append(s.queue, i)
	}
	return s, nil
}

// Done is closed once every trace of Options.Traces has been played and no session is
// open or waiting for a reconnect (a session whose client left before its end waits
// for the next connection, so Done waits too).
func (s *Server) Done() <-chan struct{} { return s.done }

// Close ends every open session (close code 1001, going away) and waits for their
// handlers to return. The record's last error, if any, is returned.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	return s.rec.Err()
}

// RecordErr returns the first error writing the record.
func (s *Server) RecordErr() error { return s.rec.Err() }

var (
	slashes    = regexp.MustCompile(`/{2,}`)
	tracePath  = regexp.MustCompile(`^/trace/([^/]+)(/.*)?$`)
	geminiPath = regexp.MustCompile(`^/ws/google\.ai\.generativelanguage\.(v1alpha|v1beta|v1)\.GenerativeService\.BidiGenerateContent(Constrained)?$`)
)

// route reads a request's path: the protocol it asks for and the trace it names ("":
// none). The SDKs build paths by appending to a base URL, so runs of slashes are one
// (@google/genai turns the base URL "http://host:port" into "ws://host:port//ws/...").
func route(r *http.Request) (proto, name string) {
	p := slashes.ReplaceAllString(r.URL.Path, "/")
	if m := tracePath.FindStringSubmatch(p); m != nil {
		name, p = m[1], m[2]
	}
	if q := r.URL.Query().Get("trace"); q != "" {
		name = q
	}
	switch {
	case geminiPath.MatchString(p):
		return ProtoGemini, name
	case p == "/v1/realtime" || p == "/realtime":
		return ProtoOpenAI, name
	}
	return "", name
}

const usage = `arbiter fake-provider: nothing here. WebSocket endpoints:
  Gemini Live:     /ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent (v1alpha, v1 too)
  OpenAI Realtime: /v1/realtime?model=...
Prefix either with /trace/NAME to play that trace.
`

// ServeHTTP upgrades a request on one of the provider paths to a WebSocket and plays
// a session on it; anything else is 404 (an unknown trace name too). Once every
// trace has been played, a connection gets an idle session (see connState.idle).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	proto, name := route(r)
	if proto == "" {
		http.Error(w, usage, http.StatusNotFound)
		return
	}
	if _, ok := s.byName[name]; name != "" && !ok {
		http.Error(w, fmt.Sprintf("arbiter fake-provider: no trace named %q", name), http.StatusNotFound)
		return
	}
	opts := &websocket.AcceptOptions{
		// Browsers send an Origin; the fake serves local tests, so any origin may connect.
		InsecureSkipVerify: true,
	}
	if proto == ProtoOpenAI {
		// Browsers and the openai SDK offer "realtime" (plus openai-insecure-api-key.KEY,
		// ignored); `ws` fails a handshake that selects none of those offered.
		opts.Subprotocols = []string{"realtime"}
	}
	c, err := websocket.Accept(w, r, opts)
	if err != nil {
		return // Accept has answered the request
	}
	c.SetReadLimit(64 << 20)
	s.wg.Add(1)
	defer s.wg.Done()
	s.mu.Lock()
	s.conns++
	conn := s.conns
	s.mu.Unlock()
	cs := &connState{srv: s, c: c, conn: conn, proto: proto, path: r.URL.Path}
	if proto == ProtoGemini {
		cs.frame = websocket.MessageBinary // the real server sends JSON in binary frames
		cs.serveGemini(name)
	} else {
		cs.frame = websocket.MessageText
		cs.beta = isBeta(r)
		cs.model = r.URL.Query().Get("model")
		cs.serveOpenAI(name)
	}
}

// isBeta reports whether an OpenAI client asked for the beta protocol: the
// `OpenAI-Beta: realtime=v1` header, or its subprotocol spelling in browsers.
func isBeta(r *http.Request) bool {
	if strings.Contains(r.Header.Get("OpenAI-Beta"), "realtime=v1") {
		return true
	}
	for _, p := range r.Header.Values("Sec-WebSocket-Protocol") {
		if strings.Contains(p, "openai-beta.realtime-v1") {
			return true
		}
	}
	return false
}

// errNoTrace: every trace has been played.
var errNoTrace = errors.New("no trace left to play")

// settle is how long a new connection that names nothing waits, while another
// session's connection is open, for that session to come back (its client may have
// just closed it to reconnect: LiveKit restarts its session when its tools change).
// A resumption handle whose session is still closing is waited for up to
// resumeWait.
const (
	settle     = 100 * time.Millisecond
	resumeWait = 2 * time.Second
)

// assign gives a new connection its session: the pending session its Gemini
// resumption handle names; else the trace it names (a pending session of it first);
// else the oldest pending session; else the next trace not played yet. When the
// session it would take may still be closing, it waits (settle, resumeWait).
func (s *Server) assign(name, handle string) (*session, error) {
	wait := settle
	if handle != "" {
		wait = resumeWait
	}
	deadline := time.Now().Add(wait)
	for {
		s.mu.Lock()
		st, retry, err := s.tryAssign(name, handle, time.Now().After(deadline))
		changed := s.changed
		s.mu.Unlock()
		if !retry {
			return st, err
		}
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
		case <-s.ctx.Done():
			return nil, errors.New("server shutting down")
		}
	}
}

// tryAssign is one attempt of assign; s.mu is held. retry asks to wait for a release
// (never when late).
func (s *Server) tryAssign(name, handle string, late bool) (st *session, retry bool, err error) {
	take := func(i int) *session {
		st := s.pending[i]
		s.pending = append(s.pending[:i], s.pending[i+1:]...)
		s.open[st] = true
		return st
	}
	if handle != "" {
		for i, st := range s.pending {
			if st.handle() == handle {
				return take(i), false, nil
			}
		}
		for st := range s.open {
			if st.handle() == handle && !late {
				return nil, true, nil
			}
		}
		return nil, false, fmt.Errorf("session resumption handle %q names no session waiting for a reconnect", handle)
	}
	if name != "" {
		if st := s.refused[name]; st != nil {
			s.open[st] = true // refused again, under the same session
			return st, false, nil
		}
		for i, st := range s.pending {
			if st.trace.Name == name {
				return take(i), false, nil
			}
		}
		for st := range s.open {
			if st.trace.Name == name && !late {
				return nil, true, nil
			}
		}
		idx := s.byName[name]
		for i, q := range s.queue {
			if q == idx {
				s.queue = append(s.queue[:i], s.queue[i+1:]...)
				break
			}
		}
		return s.start(idx), false, nil
	}
	if len(s.pending) > 0 {
		return take(0), false, nil
	}
	if len(s.open) > 0 && !late {
		return nil, true, nil
	}
	if len(s.queue) == 0 {
		return nil, false, fmt.Errorf("%w (%d played)", errNoTrace, len(s.opts.Traces))
	}
	idx := s.queue[0]
	s.queue = s.queue[1:]
	return s.start(idx), false, nil
}

// start opens a new session of trace idx; s.mu is held.
func (s *Server) start(idx int) *session {
	s.sessions++
	st := &session{num: s.sessions, trace: &s.opts.Traces[idx], ids: &ids{session: s.sessions}}
	s.open[st] = true
	return st
}

// markRefused remembers a session whose trace was refused, for later connections that
// name its trace.
func (s *Server) markRefused(st *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[st.trace.Name] = st
}

// release returns a session whose connection closed: it waits for its next
// connection when resume is set, else it is over.
func (s *Server) release(st *session, resume bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, st)
	if resume {
		s.pending = append(s.pending, st)
	}
	close(s.changed)
	s.changed = make(chan struct{})
	if !s.isDone && len(s.open) == 0 && len(s.pending) == 0 && len(s.queue) == 0 {
		s.isDone = true
		close(s.done)
	}
}
