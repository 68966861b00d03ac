package guard

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/coder/websocket"

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
	log    *slog.Logger

	mu    sync.Mutex
	rule  *Rule
	timer *time.Timer

	toAgent, toServer chan frameOut
	reports           chan Action
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
}

// frameOut is what a writer takes: a frame, or (close set) the close of its side
// once every frame before it is written.
type frameOut struct {
	f      Frame
	close  bool
	now    bool // close without the close handshake (the side is gone)
	code   websocket.StatusCode
	reason string
}

// queue sizes: frames waiting for a writer, reports waiting for the store.
const (
	frameQueue  = 1024
	reportQueue = 4096
)

func (c *conn) run() {
	o := c.p.o
	c.ctx, c.cancel = context.WithCancel(context.Background())
	defer c.cancel()
	c.io, c.ioClose = context.WithCancel(context.Background()) // ended by the close (end), not by the proxy's
	defer c.ioClose()
	c.toAgent, c.toServer = make(chan frameOut, frameQueue), make(chan frameOut, frameQueue)
	c.reports = make(chan Action, reportQueue)
	c.connected, c.done = make(chan struct{}), make(chan struct{})
	c.rule = NewRule(o.Rule, c.proto, c.beta, c.key.ID, c.id, c.named)
	c.log.Info("wire guard connection opened")
	var io, work sync.WaitGroup
	io.Add(4)
	go func() { defer io.Done(); c.write(c.agent, c.toAgent) }()
	go func() { defer io.Done(); c.write(c.server, c.toServer) }()
	go func() { defer io.Done(); c.read(c.agent, Agent) }()
	go func() { defer io.Done(); c.read(c.server, Server) }()
	work.Add(1)
	go func() { defer work.Done(); c.outbox() }()
	go c.watch() // ends with ctx
	c.step(func(r *Rule, now time.Time) []Action { return r.Start(now) })
	select {
	case <-c.done:
	case <-c.p.ctx.Done():
		c.goingAway()
		c.end(websocket.StatusGoingAway, "the wire guard is restarting: reconnect", nil)
	}
	// Let the writers send what they hold and close their sides; the readers end
	// with the sockets.
	waited := make(chan struct{})
	go func() { io.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(c.p.o.WriteTimeout + 5*time.Second):
		c.agent.CloseNow()
		c.server.CloseNow()
		<-waited
	}
	// The session goes on elsewhere, or is closed (End): its last reports are applied
	// before the connection's work stops.
	c.step(func(r *Rule, now time.Time) []Action { return r.End(now) })
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	counts, pending, session := c.rule.Counts(), c.rule.Pending(), c.rule.Session()
	c.mu.Unlock()
	close(c.reports)
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
	c.log.Info("wire guard connection closed", attrs...)
}

// end ends the connection once: each side other than from (the side that closed or
// broke) is closed with code and reason after the frames queued for it; from is
// dropped.
func (c *conn) end(code websocket.StatusCode, reason string, from *websocket.Conn) {
	c.closeOnce.Do(func() {
		if len(reason) > 120 {
			reason = reason[:120]
		}
		for ws, q := range map[*websocket.Conn]chan frameOut{c.agent: c.toAgent, c.server: c.toServer} {
			select {
			case q <- frameOut{close: true, now: ws == from, code: code, reason: reason}:
			default: // a full queue: the writer is stuck; close now
				go func() { _ = ws.CloseNow() }()
			}
		}
		close(c.done)
	})
}

// goingAway tells a Gemini agent the connection will end (goAway), as the server
// does before it closes one, so that it resumes.
func (c *conn) goingAway() {
	if c.proto != "gemini" {
		return
	}
	select {
	case c.toAgent <- frameOut{f: Frame{Data: []byte(`{"goAway":{"timeLeft":"0s"}}`), Binary: true}}:
	default:
	}
}

// read steps the rule with each message from one side until the connection ends;
// then ends it with the peer's close code (1011 to the other side when it broke).
func (c *conn) read(ws *websocket.Conn, from Side) {
	for {
		typ, b, err := ws.Read(c.io)
		if err != nil {
			code := websocket.CloseStatus(err)
			reason := ""
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				reason = ce.Reason
			}
			switch {
			case c.io.Err() != nil:
				code = websocket.StatusGoingAway
			case code == -1:
				c.log.Info("connection broke", "side", from.String(), "err", err.Error())
				code, reason = websocket.StatusInternalError, "the "+from.String()+"'s connection broke"
			case code == websocket.StatusNoStatusRcvd:
				code = websocket.StatusNormalClosure
			default:
				c.log.Info("peer closed", "side", from.String(), "code", int(code), "reason", reason)
			}
			c.end(code, reason, ws)
			return
		}
		f := Frame{Data: b, Binary: typ == websocket.MessageBinary}
		var in Input = FromAgent{f}
		if from == Server {
			in = FromServer{f}
		}
		c.step(func(r *Rule, now time.Time) []Action { return r.Step(now, in) })
	}
}

// write sends the frames of one destination in order, each write bounded, then the
// close when it comes.
func (c *conn) write(ws *websocket.Conn, q <-chan frameOut) {
	for {
		select {
		case x := <-q:
			if x.close {
				if x.now {
					_ = ws.CloseNow()
				} else {
					_ = ws.Close(x.code, x.reason)
				}
				return
			}
			typ := websocket.MessageText
			if x.f.Binary {
				typ = websocket.MessageBinary
			}
			ctx, cancel := context.WithTimeout(c.io, c.p.o.WriteTimeout)
			err := ws.Write(ctx, typ, x.f.Data)
			cancel()
			if err != nil {
				if c.io.Err() == nil {
					c.log.Info("write failed", "err", err.Error())
				}
				c.end(websocket.StatusInternalError, "a write failed", ws)
				return
			}
		case <-c.io.Done():
			return
		}
	}
}

// step runs fn on the rule under its lock and carries out the actions, in order (the
// frames into the writers' queues, the reports into the outbox), then arms the
// timer for the rule's next deadline.
func (c *conn) step(fn func(*Rule, time.Time) []Action) {
	c.mu.Lock()
	defer c.mu.Unlock()
	acts := fn(c.rule, c.p.o.Clock())
	for _, a := range acts {
		c.do(a)
	}
	c.arm()
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
		select {
		case q <- frameOut{f: *a.Send}:
		case <-c.io.Done():
		}
	case a.Report != nil:
		select {
		case c.reports <- a:
		default:
			c.log.Warn("reports to the arbiter queue up past their bound: one dropped", "event", eventName(a.Report))
		}
	case a.Abandon != "":
		c.abandoned.Store(a.Abandon, true)
	case a.Log != nil:
		lvl := slog.LevelDebug
		if a.Log.Warn {
			lvl = slog.LevelWarn
		}
		c.log.Log(context.Background(), lvl, a.Log.Msg, append([]any{"session", c.key.ID}, a.Log.Attrs...)...)
	}
}

// arm sets the timer to the rule's next deadline (called under mu).
func (c *conn) arm() {
	next := c.rule.Next()
	if next.IsZero() {
		return
	}
	d := next.Sub(c.p.o.Clock())
	if d < time.Millisecond {
		d = time.Millisecond
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timer = time.AfterFunc(d, func() {
		if c.ctx.Err() == nil {
			c.step(func(r *Rule, now time.Time) []Action { return r.Step(now, Tick{}) })
		}
	})
}

// outbox applies the reports in order. A tagged one's answer (a registration, a
// verdict on an answer) and each report's effects step the rule.
func (c *conn) outbox() {
	for a := range c.reports {
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
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, _, err := c.p.o.Apply(ctx, c.key, a.Report, true)
		cancel()
		if err == nil {
			return out, nil
		}
		k := arbiter.KindOf(err)
		retry := (k == arbiter.Unavailable || k == arbiter.Conflict) && time.Since(start) < c.p.o.ReportRetry
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
			return out, err
		}
		select {
		case <-time.After(delay):
		case <-c.p.ctx.Done():
			return out, err
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
