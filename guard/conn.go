package guard

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/voicearbiter/arbiter/arbiter"
)

// conn is one guarded connection: the agent's WebSocket, the server's, the rule, and
// the goroutines that carry it out (style item 16: one reader per direction, the
// first to end closes both sides with the peer's close code):
//
//   - two readers: each message in steps the rule (under mu);
//   - two writers: the frames the rule sends, in order, one per destination, each
//     write bounded by Options.WriteTimeout;
//   - the outbox: the rule's reports, applied in order, each retried while the store
//     refuses it (Unavailable, Conflict) up to Options.ReportRetry; what the arbiter
//     answers steps the rule;
//   - the watch: the session's effect log (what other RPCs, the tool helpers' Decide
//     and Complete among them, and timers made due) steps the rule;
//   - the timer: the rule's next deadline steps it (Tick).
type conn struct {
	p      *Proxy
	proto  string
	key    arbiter.SessionKey
	id     string
	path   string
	named  bool
	beta   bool
	agent  *websocket.Conn
	server *websocket.Conn
	// agentRead and serverRead are closed when the reader of that side ends (its
	// peer's close came, or its socket closed): a close the guard sends waits for it.
	agentRead, serverRead chan struct{}
	log                   *slog.Logger
	m                     ConnMetrics

	mu    sync.Mutex
	rule  *Rule
	inBuf *[]byte // the stepping frame's pooled buffer (read), taken by its Through send
	timer *time.Timer
	armed time.Time // the deadline timer is set for (zero: none pending)

	toAgent, toServer *outq
	reports           reportq
	abandoned         sync.Map // tags abandoned by the rule
	// ctx lives as long as the connection's work (the outbox's last reports
	// included); io as long as its sockets.
	ctx, io         context.Context
	cancel, ioClose context.CancelFunc
	// connected is closed once the Connect is applied; startSeq is the session's log
	// position then (the watch starts after it).
	connected chan struct{}
	startSeq  uint64
	closeOnce sync.Once
	done      chan struct{}
	// ended and endCode say how the connection ended (ConnMetrics.Closed), set once
	// by end; timedOut: the watchdog closed a socket whose peer did not read.
	ended, endCode string
	timedOut       atomic.Bool
}

// frameOut is what a writer takes: a frame, or (close set) the close of its side
// once every frame before it is written.
type frameOut struct {
	f      Frame
	pooled *[]byte // f.Data's buffer, back to framePool once written (Action.Through)
	close  bool
	now    bool // close without the close handshake (the side is gone)
	code   int  // a WebSocket close code (RFC 6455 7.4)
	reason string
}

// Bounds: bytes of frames waiting for a destination that does not take them (past it
// the connection ends), reports waiting for the store.
const (
	frameQueueBytes = 8 << 20
	reportQueue     = 4096
)

// reportq is the outbox's queue: the rule's reports in order, at most reportQueue
// waiting (past it a report is dropped, logged). A slice that grows as reports wait,
// not a channel of reportQueue actions made per connection: that was 330 KB a
// connection, live and scanned by every garbage collection (65 MB of the guard's
// 80 MB heap at 200 sessions), where a few reports wait at a time.
type reportq struct {
	mu     sync.Mutex
	q      []Action
	closed bool
	wake   chan struct{} // capacity 1: a report or the close is there to take
}

// put queues a; false when reportQueue wait already (a is dropped) or the queue is
// closed.
func (r *reportq) put(a Action) bool {
	r.mu.Lock()
	ok := !r.closed && len(r.q) < reportQueue
	if ok {
		r.q = append(r.q, a)
	}
	r.mu.Unlock()
	if ok {
		r.signal()
	}
	return ok
}

// close lets next return false once what waits is taken.
func (r *reportq) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.signal()
}

func (r *reportq) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// next takes the oldest report, waiting for one; false once closed and empty.
func (r *reportq) next() (Action, bool) {
	for {
		r.mu.Lock()
		if len(r.q) > 0 {
			a := r.q[0]
			r.q[0] = Action{}
			r.q = r.q[1:]
			if len(r.q) == 0 {
				r.q = nil // let a burst's backing array go
			}
			r.mu.Unlock()
			return a, true
		}
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return Action{}, false
		}
		<-r.wake
	}
}

// outq is one destination's frames, written in order, one writer at a time, by
// whoever has just queued some (the goroutine that read the frame, the outbox, the
// timer) unless a write is in progress, whose writer then takes them too: no
// goroutine hand-off per frame (each is a scheduler wake-up, most of a forwarded
// frame's latency on a busy machine). A write that does not finish within
// WriteTimeout (the peer does not read) closes the socket (conn.watchdog).
type outq struct {
	c       *conn
	to      Side
	ws      *websocket.Conn
	read    <-chan struct{} // closed when ws's reader ends
	mu      sync.Mutex
	frames  []frameOut
	size    int
	busy    bool
	closed  bool
	started atomic.Int64 // unix ns of the write in progress; 0 between writes
	// stalled: the watchdog closed ws (a write outlasted WriteTimeout), so its reader's
	// end is the peer not reading, not a broken connection.
	stalled atomic.Bool
}

// put queues x (under the connection's lock, in the rule's order). A destination
// already holding more than frameQueueBytes besides x ends the connection: one message
// of any size up to the read limit is taken (a peer that reads is never called one
// that does not because a message was large).
func (q *outq) put(x frameOut) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	over := q.size > frameQueueBytes
	q.frames = append(q.frames, x)
	q.size += len(x.f.Data)
	q.mu.Unlock()
	if over {
		q.c.log.Warn("a peer does not take what is sent to it: closing the connection", "queued_bytes", q.size)
		go q.c.end(EndWriteTimeout, websocket.ClosePolicyViolation, "the "+q.to.String()+" does not read", nil)
	}
}

// pending reports whether frames wait.
func (q *outq) pending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.frames) > 0
}

// drain writes what is queued, unless another goroutine is writing (it will).
func (q *outq) drain() {
	q.mu.Lock()
	if q.busy || len(q.frames) == 0 {
		q.mu.Unlock()
		return
	}
	q.busy = true
	for len(q.frames) > 0 {
		x := q.frames[0]
		q.frames[0] = frameOut{}
		q.frames = q.frames[1:]
		q.size -= len(x.f.Data)
		q.mu.Unlock()
		if !q.write(x) {
			q.mu.Lock()
			q.closed, q.frames, q.busy = true, nil, false
			q.mu.Unlock()
			return
		}
		q.mu.Lock()
	}
	q.busy = false
	q.mu.Unlock()
}

// closeWait bounds how long a close the guard sends waits for the peer's (the close
// handshake, RFC 6455 7.1.1) before the socket is closed.
const closeWait = 5 * time.Second

// write writes one frame, or closes the side; false once the side is done. A close
// (not now) is the close handshake: the close frame, then the peer's close or its
// socket's end (at most closeWait), then the socket; closing it at once would reset
// a peer whose frames are still unread, and the peer could lose the close frame.
func (q *outq) write(x frameOut) bool {
	if x.close {
		if !x.now {
			q.started.Store(time.Now().UnixNano())
			err := q.ws.WriteControl(websocket.CloseMessage, closeMessage(x.code, x.reason), time.Now().Add(q.c.p.o.WriteTimeout))
			q.started.Store(0)
			if err == nil {
				select {
				case <-q.read:
				case <-time.After(closeWait):
				}
			}
		}
		_ = q.ws.Close()
		return false
	}
	typ := websocket.TextMessage
	if x.f.Binary {
		typ = websocket.BinaryMessage
	}
	q.started.Store(time.Now().UnixNano())
	err := q.ws.WriteMessage(typ, x.f.Data)
	q.started.Store(0)
	if x.pooled != nil { // gorilla/websocket keeps nothing of it once WriteMessage returns
		framePool.Put(x.pooled)
	}
	if errors.Is(err, websocket.ErrCloseSent) {
		// The side's peer closed and its close was answered (echoClose): the reader of
		// that side ends the connection with the peer's code; this frame had nowhere to
		// go.
		return false
	}
	if err != nil {
		if q.c.io.Err() == nil {
			q.c.log.Info("write failed", "err", err.Error())
		}
		go q.c.end(EndError, websocket.CloseInternalServerErr, "a write failed", q.ws)
		return false
	}
	q.c.m.Sent(q.to, len(x.f.Data))
	return true
}

func (c *conn) run() {
	o := c.p.o
	c.ctx, c.cancel = context.WithCancel(context.Background())
	defer c.cancel()
	c.io, c.ioClose = context.WithCancel(context.Background()) // ended by the close (end), not by the proxy's
	defer c.ioClose()
	c.agentRead, c.serverRead = make(chan struct{}), make(chan struct{})
	c.toAgent = &outq{c: c, to: Agent, ws: c.agent, read: c.agentRead}
	c.toServer = &outq{c: c, to: Server, ws: c.server, read: c.serverRead}
	c.reports.wake = make(chan struct{}, 1)
	c.connected, c.done = make(chan struct{}), make(chan struct{})
	c.rule = NewRule(o.Rule, c.proto, c.beta, c.key.ID, c.id, c.named)
	c.log.Info("wire guard connection opened")
	var io, work sync.WaitGroup
	io.Add(2)
	go c.watchdog()
	go func() { defer io.Done(); defer close(c.agentRead); c.read(c.agent, Agent) }()
	go func() { defer io.Done(); defer close(c.serverRead); c.read(c.server, Server) }()
	work.Add(1)
	go func() { defer work.Done(); c.outbox() }()
	go c.watch() // ends with ctx
	c.step(func(r *Rule, now time.Time) []Action { return r.Start(now) })
	select {
	case <-c.done:
	case <-c.p.ctx.Done():
		c.goingAway()
		c.end(EndGuardRestarting, websocket.CloseGoingAway, "the wire guard is restarting: reconnect", nil)
	}
	// The queues send what they hold and close their sides; the readers end with the
	// sockets.
	waited := make(chan struct{})
	go func() { io.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(c.p.o.WriteTimeout + closeWait + time.Second):
		_ = c.agent.Close()
		_ = c.server.Close()
		<-waited
	}
	// Both readers have ended: each socket is closed here too, whatever its queue did
	// (a queue whose write failed, or whose peer's close was already answered, closes
	// nothing itself). A second Close is harmless.
	_ = c.agent.Close()
	_ = c.server.Close()
	// The session goes on elsewhere, or is closed (End): its last reports are applied
	// before the connection's work stops.
	c.step(func(r *Rule, now time.Time) []Action { return r.End(now) })
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	counts, pending, session := c.rule.Counts(), c.rule.Pending(), c.rule.Session()
	c.mu.Unlock()
	c.reports.close()
	finished := make(chan struct{})
	go func() { work.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		c.log.Warn("wire guard connection: reports still undelivered at the end (the store is slow): given up")
	}
	c.cancel()
	attrs := []any{"session", session, "pending_at_close", len(pending)}
	for k, v := range counts {
		attrs = append(attrs, k, v)
	}
	c.log.Info("wire guard connection closed", append(attrs, "ended", c.ended, "code", c.endCode)...)
	c.m.Closed(c.ended, c.endCode)
}

// end ends the connection once: each side other than from (the side that closed or
// broke) is closed with code and reason after the frames queued for it; from is
// dropped. how is why (an End* constant; write_timeout whatever it says once the
// watchdog closed a socket).
func (c *conn) end(how string, code int, reason string, from *websocket.Conn) {
	c.closeOnce.Do(func() {
		c.ended = how
		if c.timedOut.Load() {
			c.ended = EndWriteTimeout
		}
		if c.ended == EndAgentClosed || c.ended == EndProviderClosed {
			c.endCode = CodeClass(code)
		}
		reason = cutReason(reason)
		for _, q := range []*outq{c.toAgent, c.toServer} {
			q.put(frameOut{close: true, now: q.ws == from, code: code, reason: reason})
			go q.drain()
		}
		close(c.done)
	})
}

// queueTo is the queue of the frames written to side's socket.
func (c *conn) queueTo(side Side) *outq {
	if side == Agent {
		return c.toAgent
	}
	return c.toServer
}

// watchdog closes a socket whose write has not finished within WriteTimeout (its
// peer does not read), until the connection's io ends.
func (c *conn) watchdog() {
	t := time.NewTicker(c.p.o.WriteTimeout / 4)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			for _, q := range []*outq{c.toAgent, c.toServer} {
				if s := q.started.Load(); s != 0 && time.Since(time.Unix(0, s)) > c.p.o.WriteTimeout {
					c.log.Info("a write took longer than the write timeout: the peer does not read", "side", q.to.String(), "timeout", c.p.o.WriteTimeout)
					c.timedOut.Store(true)
					q.stalled.Store(true)
					_ = q.ws.Close()
				}
			}
		case <-c.io.Done():
			return
		}
	}
}

// goingAway tells a Gemini agent the connection will end (goAway), as the server
// does before it closes one, so that it resumes.
func (c *conn) goingAway() {
	if c.proto != "gemini" {
		return
	}
	c.toAgent.put(frameOut{f: Frame{Data: []byte(`{"goAway":{"timeLeft":"0s"}}`), Binary: true}})
	c.toAgent.drain()
}

// read steps the rule with each message from one side until the connection ends;
// then ends it with the peer's close code (1011 to the other side when it broke).
func (c *conn) read(ws *websocket.Conn, from Side) {
	for {
		typ, b, pooled, err := readMessage(ws)
		if err != nil {
			code, reason, how := websocket.CloseAbnormalClosure, "", EndAgentClosed
			if from == Server {
				how = EndProviderClosed
			}
			// A close frame is a *CloseError (1005 when it had no code); the socket's
			// end without one is 1006 (gorilla/websocket), any other error a broken
			// read (a reset, a frame past the read limit, a protocol error).
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				code, reason = ce.Code, ce.Text
			}
			switch {
			case c.io.Err() != nil:
				code = websocket.CloseGoingAway
			case code == websocket.CloseAbnormalClosure && c.queueTo(from).stalled.Load():
				// The watchdog closed this socket: the other side hears why, as when
				// the frames queued for a peer pass their bound (put).
				code, reason, how = websocket.ClosePolicyViolation, "the "+from.String()+" does not read", EndWriteTimeout
			case code == websocket.CloseAbnormalClosure:
				c.log.Info("connection broke", "side", from.String(), "err", err.Error())
				code, reason, how = websocket.CloseInternalServerErr, "the "+from.String()+"'s connection broke", EndError
			case code == websocket.CloseNoStatusReceived:
				code = websocket.CloseNormalClosure
			default:
				c.log.Info("peer closed", "side", from.String(), "code", code, "reason", reason)
			}
			c.end(how, code, reason, ws)
			return
		}
		f := Frame{Data: b, Binary: typ == websocket.BinaryMessage}
		var in Input = FromAgent{f}
		if from == Server {
			in = FromServer{f}
		}
		c.stepFrom(from, func(r *Rule, now time.Time) []Action {
			c.inBuf = pooled // for the step's Through action, if any (do)
			return r.Step(now, in)
		})
	}
}

// framePool holds the buffers messages are read into (pooledFrame bytes each: a
// 40 ms frame of 24 kHz audio, 5 KB as base64 in JSON, fits). A buffer goes back once
// its frame is written, if the rule forwarded the frame as it came (Action.Through:
// audio); any other frame's buffer stays with the rule and is left to the collector.
// Audio then allocates nothing per frame: at 200 sessions, 13,000 frames a second of
// 2-5 KB were 40 MB/s of garbage, collected four times a second.
var framePool = sync.Pool{New: func() any { b := make([]byte, pooledFrame); return &b }}

const pooledFrame = 8 << 10

// readMessage reads ws's next message into a buffer of framePool and returns it and
// the buffer (nil when the message outgrew it: then it has its own). The read ends
// when the connection closes.
func readMessage(ws *websocket.Conn) (typ int, b []byte, pooled *[]byte, err error) {
	typ, r, err := ws.NextReader()
	if err != nil {
		return 0, nil, nil, err
	}
	pooled = framePool.Get().(*[]byte)
	b = (*pooled)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // past the pooled buffer: grown, its own
		}
		n, rerr := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			framePool.Put(pooled)
			return typ, nil, nil, rerr
		}
	}
	if cap(b) != cap(*pooled) {
		framePool.Put(pooled) // b has its own array
		pooled = nil
	}
	return typ, b, pooled, nil
}

// closeMessage is a close frame's payload: code (big endian) and reason (cutReason);
// none for 1005 (no status: the frame has no payload).
func closeMessage(code int, reason string) []byte {
	if code == websocket.CloseNoStatusReceived {
		return nil
	}
	return websocket.FormatCloseMessage(code, cutReason(reason))
}

// cutReason cuts a close reason to the 123 bytes a close frame holds (RFC 6455 5.5:
// 125 with the code), at a character's start: a reason cut inside a UTF-8 sequence
// is an invalid close frame, which the peer takes for a protocol error and loses the
// code.
func cutReason(reason string) string {
	if len(reason) <= 123 {
		return reason
	}
	n := 123
	for n > 0 && !utf8.RuneStart(reason[n]) {
		n--
	}
	return reason[:n]
}

// echoClose answers a peer's close frame with one of the same code (RFC 6455 5.5.1),
// or 1000 (normal closure) when it had none. A client that closes without a code
// (its own close, to reconnect: LiveKit agents-js's Google plugin restarts its
// session that way when its tools change) and gets an empty close back reads 1005
// (no status), which that plugin takes for a fatal error (the AgentSession ends); it
// asked for a normal closure. After the guard's own close (the handshake's reply)
// nothing more is sent.
func echoClose(ws *websocket.Conn) func(code int, text string) error {
	return func(code int, _ string) error {
		if code == websocket.CloseNoStatusReceived {
			code = websocket.CloseNormalClosure
		}
		_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(time.Second))
		return nil
	}
}

// step runs fn on the rule under its lock and carries out the actions, in order (the
// frames into the writers' queues, the reports into the outbox), then arms the
// timer for the rule's next deadline.
func (c *conn) step(fn func(*Rule, time.Time) []Action) { c.stepFrom(-1, fn) }

// stepFrom is step for the reader of side from: it writes the other side's frames
// itself, and leaves its own side's (an echo to the agent) to another goroutine, so
// that a reader never blocks on its own peer's socket (a peer that writes without
// reading would then wait on it forever).
func (c *conn) stepFrom(from Side, fn func(*Rule, time.Time) []Action) {
	c.mu.Lock()
	acts := fn(c.rule, c.p.o.Clock())
	for _, a := range acts {
		c.do(a)
	}
	c.inBuf = nil // not taken: the frame stays with the rule (or was dropped)
	c.arm()
	c.mu.Unlock()
	// Written outside the lock, in the order queued.
	var own *outq // the reader's own peer's queue (none for the outbox, timer, watch)
	switch from {
	case Agent:
		own = c.toAgent
	case Server:
		own = c.toServer
	}
	for _, q := range [2]*outq{c.toAgent, c.toServer} {
		if q == own {
			if q.pending() {
				go q.drain()
			}
			continue
		}
		q.drain()
	}
}

func (c *conn) do(a Action) {
	switch {
	case a.Bind != "":
		c.key.ID = a.Bind
	case a.Send != nil:
		q := c.toServer
		if a.To == Agent {
			q = c.toAgent
		}
		x := frameOut{f: *a.Send}
		if a.Through && c.inBuf != nil {
			x.pooled, c.inBuf = c.inBuf, nil
		}
		q.put(x)
	case a.Report != nil:
		if !c.reports.put(a) {
			c.log.Warn("reports to the arbiter queue up past their bound: one dropped", "event", eventName(a.Report))
			c.m.ReportLost(EventKind(a.Report), ReportQueueFull)
		}
	case a.Abandon != "":
		c.abandoned.Store(a.Abandon, true)
	case a.Log != nil:
		lvl := slog.LevelDebug
		if a.Log.Warn {
			lvl = slog.LevelWarn
		}
		c.log.Log(context.Background(), lvl, a.Log.Msg, append([]any{"session", c.key.ID}, a.Log.Attrs...)...)
		if a.Log.What != "" {
			c.m.Counted(a.Log.What, a.Log.Why)
		}
	}
}

// arm sets the timer to the rule's next deadline (called under mu), unless it is
// already set for it: a call waiting for its answer keeps one deadline while audio
// steps the rule tens of times a second, and a timer stopped and made again per frame
// is a timer-heap insert and delete each.
func (c *conn) arm() {
	next := c.rule.Next()
	if next.IsZero() || next.Equal(c.armed) {
		return
	}
	d := next.Sub(c.p.o.Clock())
	if d < time.Millisecond {
		d = time.Millisecond
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	c.armed = next
	c.timer = time.AfterFunc(d, func() {
		if c.ctx.Err() == nil {
			c.step(func(r *Rule, now time.Time) []Action {
				c.armed = time.Time{} // fired: the next deadline, even the same one, is set again
				return r.Step(now, Tick{})
			})
		}
	})
}

// outbox applies the reports in order. A tagged one's answer (a registration, a
// verdict on an answer) and each report's effects step the rule.
func (c *conn) outbox() {
	for {
		a, ok := c.reports.next()
		if !ok {
			return
		}
		if a.Tag != "" {
			if _, gone := c.abandoned.Load(a.Tag); gone {
				continue
			}
		}
		out, err := c.apply(a)
		switch ev := a.Report.(type) {
		case arbiter.Connect:
			if err == nil {
				c.startSeq = out.LogStart
				close(c.connected)
			}
		case arbiter.RegisterCall:
			if err == nil && out.Call.Disposition == arbiter.Execute {
				// The tool's helper names the job by this call id alone.
				// Its tool asks within the call's life (max_pending) and then names the
				// session: the entry lives that long and a minute more, so that a call
				// id a provider reuses later is not taken for this one (ambiguous).
				ttl := c.p.o.Rule.Policy.TimingsOf(ev.Tool).MaxPending + time.Minute
				if ierr := c.p.o.Service.IndexCall(c.ctx, c.key, out.Call.CallID, ttl); ierr != nil {
					c.log.Warn("call not indexed: its tool must name the session", "call_id", ev.CallID, "err", arbiter.MessageOf(ierr))
				}
			}
			if _, gone := c.abandoned.Load(a.Tag); gone {
				break
			}
			in := Registered{CallID: a.Tag, Err: err}
			if err == nil {
				in.Result = out.Call
			}
			c.step(func(r *Rule, now time.Time) []Action { return r.Step(now, in) })
		case arbiter.ToolAnswer:
			in := Answered{CallID: a.Tag, Err: err}
			if err == nil {
				in.Answer = out.Answer
			}
			c.step(func(r *Rule, now time.Time) []Action { return r.Step(now, in) })
		}
		if err == nil && !out.Effects.Empty() {
			c.effects(out.Effects)
		}
	}
}

// apply applies one report, trying again while the store refuses it for a while
// (Unavailable, Conflict). Errors: the last one.
func (c *conn) apply(a Action) (arbiter.Output, error) {
	start := time.Now()
	delay := 50 * time.Millisecond
	for {
		// On the connection's work context: once the connection's end has given up on
		// its last reports (run), an attempt in flight ends and no other is made.
		ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
		out, _, err := c.p.o.Apply(ctx, c.key, a.Report, true)
		cancel()
		if err == nil {
			return out, nil
		}
		if c.ctx.Err() != nil && ctx.Err() != nil {
			err = arbiter.Wrap(arbiter.Unavailable, err, "the connection ended before the store took the report")
		}
		k := arbiter.KindOf(err)
		retry := (k == arbiter.Unavailable || k == arbiter.Conflict) && time.Since(start) < c.p.o.ReportRetry && c.ctx.Err() == nil
		if a.Tag != "" {
			if _, gone := c.abandoned.Load(a.Tag); gone {
				retry = false
			}
		}
		if !retry {
			lvl := slog.LevelWarn
			if k == arbiter.Invalid || k == arbiter.FailedPrecondition || k == arbiter.NotFound {
				lvl = slog.LevelInfo // the arbiter refused it (a closed session, a malformed id): said once
			}
			c.log.Log(context.Background(), lvl, "report not applied", "session", c.key.ID, "event", eventName(a.Report), "err", arbiter.MessageOf(err))
			c.m.ReportLost(EventKind(a.Report), reportLoss(err))
			return out, err
		}
		select {
		case <-time.After(delay):
		case <-c.p.ctx.Done():
			c.m.ReportLost(EventKind(a.Report), reportLoss(err))
			return out, err
		case <-c.ctx.Done():
			// Counted and logged by the next pass (no retry once ctx is over).
		}
		delay = min(delay*2, time.Second)
	}
}

// effects feeds effects handed out by a report to the rule (the watch sees them too;
// the rule acts on each seq once).
func (c *conn) effects(e arbiter.Effects) {
	var entries []arbiter.LogEntry
	for _, r := range e.Responses {
		r := r
		entries = append(entries, arbiter.LogEntry{Seq: r.Seq, Response: &r})
	}
	for _, s := range e.Skips {
		s := s
		entries = append(entries, arbiter.LogEntry{Seq: s.Seq, Skip: &s})
	}
	for _, n := range e.Notes {
		n := n
		entries = append(entries, arbiter.LogEntry{Seq: n.Seq, Note: &n})
	}
	sortBySeq(entries)
	// A note of a report's effects goes on this connection: the report was its own.
	c.step(func(r *Rule, now time.Time) []Action { return r.Step(now, Effects{Entries: entries, Current: true}) })
}

func sortBySeq(es []arbiter.LogEntry) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].Seq < es[j-1].Seq; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

// watch feeds the session's effect log to the rule: on every save of the session
// (any replica's, the tool helpers' Complete among them) and when its next timer is
// due (stepping the timers, stored like any event). It resumes after a store outage.
func (c *conn) watch() {
	select {
	case <-c.connected:
	case <-c.ctx.Done():
		return
	}
	svc := c.p.o.Service
	after := c.startSeq // what came before belongs to earlier connections
	delay := 100 * time.Millisecond
	for c.ctx.Err() == nil {
		changes, stop, err := svc.Store.Watch(c.ctx, c.key)
		if err != nil {
			c.sleep(&delay)
			continue
		}
		for c.ctx.Err() == nil {
			_, s, err := c.p.o.Apply(c.ctx, c.key, arbiter.Tick{}, false)
			if err != nil {
				if arbiter.KindOf(err) == arbiter.NotFound {
					stop()
					return // expired
				}
				break
			}
			entries, err := s.LogAfter(after)
			if err != nil {
				after = s.LogSeq // fell behind the log: what is gone is gone
			} else if len(entries) > 0 {
				after = entries[len(entries)-1].Seq
				cur := s.Connection == c.id
				c.step(func(r *Rule, now time.Time) []Action { return r.Step(now, Effects{Entries: entries, Current: cur}) })
			}
			if s.Closed {
				stop()
				return
			}
			var timer <-chan time.Time
			if due, ok := svc.Engine.NextTimer(s); ok {
				d := time.Until(due)
				if d < time.Millisecond {
					d = time.Millisecond
				}
				timer = time.After(d)
			}
			select {
			case <-changes:
			case <-timer:
			case <-c.ctx.Done():
			}
			delay = 100 * time.Millisecond
		}
		stop()
		c.sleep(&delay)
	}
}

func (c *conn) sleep(delay *time.Duration) {
	select {
	case <-time.After(*delay):
	case <-c.ctx.Done():
	}
	*delay = min(*delay*2, 2*time.Second)
}

// eventName names an event for a log line.
func eventName(ev arbiter.Event) string {
	switch e := ev.(type) {
	case arbiter.Speech:
		return "speech:" + string(e.Kind)
	case arbiter.RegisterCall:
		return "call:" + e.CallID
	case arbiter.ToolAnswer:
		return "answer:" + e.CallID
	case arbiter.Transcript:
		return "transcript"
	case arbiter.ToolCallCancellation:
		return "cancellation"
	case arbiter.Connect:
		return "connect"
	case arbiter.Configure:
		return "configure"
	case arbiter.Close:
		return "close"
	}
	return "event"
}
