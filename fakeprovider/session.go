package fakeprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/voicearbiter/arbiter/replay"
)

// session is one trace being played, over one connection or several (a `connection`
// line in the trace, or a client that went away and came back).
type session struct {
	num   int
	trace *Trace
	// next is the index in trace.Events of the next event to play; at is the session
	// time (ms) the next connection starts at.
	next int
	at   int64
	ids  *ids
}

// handle is the session's Gemini resumption handle.
func (st *session) handle() string { return fmt.Sprintf("fake-session-%d", st.num) }

// connState is one accepted connection.
type connState struct {
	srv   *Server
	c     *websocket.Conn
	conn  int
	proto string
	path  string
	frame websocket.MessageType
	// OpenAI only: the protocol variant and the model query parameter.
	beta  bool
	model string

	st    *session
	start time.Time // wall time of session time st.at on this connection
	// paused: the clock stands at session time pausedAt while a due event is held
	// (see holder). clock guards start, paused and pausedAt once the reader runs (it
	// stamps client messages with now).
	clock    sync.Mutex
	paused   bool
	pausedAt int64
}

// maxHold is how long a due event is held (holder) before it is played anyway: long
// enough for a client still setting its session up (LiveKit's OpenAI plugin declared
// its tools over 500 ms after session.created on a loaded machine), short enough that a
// client that never declares tools is not kept waiting long (once per connection).
const maxHold = 2 * time.Second

// clientMsg is a message the reader received, at session time tMs.
type clientMsg struct {
	b   []byte
	tMs int64
}

// serveGemini reads the client's setup, gives the connection its session, answers
// setupComplete and plays.
func (cs *connState) serveGemini(name string) {
	ctx, cancel := context.WithTimeout(cs.srv.ctx, cs.srv.opts.SetupTimeout)
	var early [][]byte // messages before setup, recorded once the session is known
	var setup geminiSetup
	for {
		_, b, err := cs.c.Read(ctx)
		if err != nil {
			cancel()
			cs.srv.log.Warn("fake provider: gemini connection closed before its setup", "conn", cs.conn, "err", err)
			cs.c.CloseNow()
			return
		}
		early = append(early, b)
		var ok bool
		if setup, ok = parseGeminiSetup(b); ok {
			break
		}
		if len(early) > 64 {
			cancel()
			cs.refuse("the first messages carry no setup")
			return
		}
	}
	cancel()
	st, err := cs.srv.assign(name, setup.Handle)
	if errors.Is(err, errNoTrace) {
		cs.idle(newGemini(setup, ""))
		return
	} else if err != nil {
		cs.refuse(err.Error())
		return
	}
	cs.st = st
	cs.recordOpen(setup.Model)
	for _, b := range early {
		cs.record(KindClient, st.at, b, nil)
	}
	if why := Refusal(ProtoGemini, *st.trace); why != "" {
		cs.refuseTrace(why)
		return
	}
	cs.play(newGemini(setup, st.handle()))
}

// serveOpenAI gives the connection its session, sends session.created and plays.
func (cs *connState) serveOpenAI(name string) {
	st, err := cs.srv.assign(name, "")
	if errors.Is(err, errNoTrace) {
		cs.idle(newOpenAI(cs.beta, cs.model, &ids{}))
		return
	} else if err != nil {
		cs.refuse(err.Error())
		return
	}
	cs.st = st
	cs.recordOpen(cs.model)
	if why := Refusal(ProtoOpenAI, *st.trace); why != "" {
		cs.refuseTrace(why)
		return
	}
	cs.play(newOpenAI(cs.beta, cs.model, st.ids))
}

// idle serves a connection that comes after every trace was played: the greeting,
// then nothing (client messages are read and dropped, not recorded) until the client
// closes or the server stops. SDKs reconnect when the server closes the socket at a
// trace's end (LiveKit's OpenAI plugin 2.0.0 at once, in a loop without backoff, and a
// refused reconnect is an unhandled error there that ends the process); an idle
// session lets them sit until the agent shuts down.
func (cs *connState) idle(tr translator) {
	cs.srv.log.Warn("fake provider: no trace left to play; the connection gets an idle session", "conn", cs.conn, "proto", cs.proto)
	for _, m := range tr.greet().msgs {
		b, _ := marshal(m)
		if cs.c.Write(cs.srv.ctx, cs.frame, b) != nil {
			cs.c.CloseNow()
			return
		}
	}
	for {
		if _, _, err := cs.c.Read(cs.srv.ctx); err != nil {
			if cs.srv.ctx.Err() != nil {
				cs.c.Close(websocket.StatusGoingAway, "server shutting down")
			}
			cs.c.CloseNow()
			return
		}
	}
}

// refuse closes a connection that gets no session (policy violation, with why).
func (cs *connState) refuse(why string) {
	cs.srv.log.Warn("fake provider: connection refused", "conn", cs.conn, "proto", cs.proto, "reason", why)
	cs.c.Close(websocket.StatusPolicyViolation, truncate("arbiter fake-provider: "+why, 123))
}

// RefusedPrefix starts the close reason of a connection whose trace cannot be played
// over its protocol (Refusal): an agent under test tells a refusal from a failure by it.
const RefusedPrefix = "arbiter fake-provider: refused: "

// refuseTrace ends the session of a trace its protocol cannot carry (Refusal: why): a
// `refused` record line, close 1008 with the reason (cut to 123 bytes), and the
// session is over; a later connection naming the trace gets the same answer.
func (cs *connState) refuseTrace(why string) {
	st := cs.st
	l := cs.line(KindRefused, st.at)
	l.Text = why
	cs.srv.rec.write(l)
	cs.srv.log.Warn("fake provider: trace refused", "session", st.num, "conn", cs.conn, "trace", st.trace.Name, "proto", cs.proto, "reason", why)
	cs.srv.markRefused(st)
	cs.close(st.at, websocket.StatusPolicyViolation, RefusedPrefix+why, "server", false, false)
	cs.srv.release(st, false)
}

// truncate cuts s to n bytes (a close reason has at most 123).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func (cs *connState) line(kind string, tMs int64) RecordLine {
	return RecordLine{TMs: tMs, Session: cs.st.num, Conn: cs.conn, Trace: cs.st.trace.Name, Proto: cs.proto, Kind: kind}
}

func (cs *connState) recordOpen(model string) {
	l := cs.line(KindOpen, cs.st.at)
	l.Path, l.Model = cs.path, model
	if cs.proto == ProtoOpenAI {
		l.Variant = "ga"
		if cs.beta {
			l.Variant = "beta"
		}
	}
	cs.srv.rec.write(l)
	cs.srv.log.Info("fake provider: session playing", "session", cs.st.num, "conn", cs.conn, "trace", cs.st.trace.Name,
		"proto", cs.proto, "variant", l.Variant, "from_t_ms", cs.st.at)
}

// record writes a client or server message line; ev is the trace line a server
// message plays (nil for greetings and replies).
func (cs *connState) record(kind string, tMs int64, msg []byte, ev *replay.TraceEvent) {
	l := cs.line(kind, tMs)
	if json.Valid(msg) {
		l.Msg = json.RawMessage(msg)
	} else {
		l.Msg, _ = json.Marshal(string(msg)) // not JSON: kept as a string
	}
	if ev != nil {
		l.Line, l.Event = ev.Line, ev.Event
	}
	cs.srv.rec.write(l)
}

func (cs *connState) warn(tMs int64, texts []string) {
	for _, t := range texts {
		l := cs.line(KindWarning, tMs)
		l.Text = t
		cs.srv.rec.write(l)
		cs.srv.log.Warn("fake provider: "+t, "session", cs.st.num, "trace", cs.st.trace.Name)
	}
}

// now is the current session time in ms (never before the connection's start).
func (cs *connState) now() int64 {
	cs.clock.Lock()
	defer cs.clock.Unlock()
	if cs.paused {
		return cs.pausedAt
	}
	d := time.Since(cs.start).Milliseconds()
	if d < 0 {
		d = 0
	}
	return cs.st.at + d
}

// due is the wall time of session time tMs.
func (cs *connState) due(tMs int64) time.Time {
	cs.clock.Lock()
	defer cs.clock.Unlock()
	return cs.start.Add(time.Duration(tMs-cs.st.at) * time.Millisecond)
}

// pause stops the session clock where it stands (a due event is held).
func (cs *connState) pause() {
	t := cs.now()
	cs.clock.Lock()
	cs.pausedAt, cs.paused = t, true
	cs.clock.Unlock()
}

// resume starts the clock again from where it stood, d after pause.
func (cs *connState) resume(d time.Duration) {
	cs.clock.Lock()
	cs.start, cs.paused = cs.start.Add(d), false
	cs.clock.Unlock()
}

// errWrite wraps a failed send: the client is gone.
var errWrite = errors.New("write failed")

// send sends a step's messages (recording each) and its warnings.
func (cs *connState) send(tMs int64, s step, ev *replay.TraceEvent) error {
	for _, m := range s.msgs {
		b, err := marshal(m)
		if err != nil {
			return fmt.Errorf("fakeprovider: encoding a server message: %w", err)
		}
		ctx, cancel := context.WithTimeout(cs.srv.ctx, 10*time.Second)
		err = cs.c.Write(ctx, cs.frame, b)
		cancel()
		if err != nil {
			return fmt.Errorf("%w: %v", errWrite, err)
		}
		cs.record(KindServer, tMs, b, ev)
	}
	cs.warn(tMs, s.warnings)
	return nil
}

// play greets the client and plays the session's events from st.next at their times,
// answering client messages as they come, until the trace's end (close 1000), a
// `connection` line (goAway, close 1000, the session waits for its next connection),
// the client's going away (the session waits too) or the server's Close (1001).
func (cs *connState) play(tr translator) {
	st := cs.st
	cs.start = time.Now()
	if err := cs.send(st.at, tr.greet(), nil); err != nil {
		cs.finish(st.at, 0, err.Error(), "client", false, true)
		return
	}
	cs.start = time.Now() // t_ms counts from the greeting
	r := cs.startReader()
	defer r.stop()

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	played := false // a wire event was played on this connection
	events := st.trace.Events
	hd, _ := tr.(holder)
	var held time.Time // when the due event began to be held (zero: none is)
	why := ""          // why it is held
	holds := hd != nil // false once a hold ran out on this connection: no more holds
	for {
		for st.next < len(events) && !playable(events[st.next].Event) {
			st.next++
		}
		if st.next == len(events) { // no `end` line: close after the last
			cs.finish(cs.now(), websocket.StatusNormalClosure, "end of trace", "server", true, false)
			return
		}
		ev := events[st.next]
		wake := cs.due(ev.TMs)
		if !held.IsZero() {
			ranOut := time.Since(held) >= maxHold
			if ranOut || hd.hold(ev) == "" {
				// Released: the clock goes on from where it stood, so the trace's later
				// events keep their spacing.
				d := time.Since(held)
				cs.resume(d)
				held = time.Time{}
				cs.warn(cs.now(), []string{fmt.Sprintf("trace line %d held %d ms: %s", ev.Line, d.Milliseconds(), why)})
				if ranOut {
					holds = false
				}
				wake = time.Now()
			} else {
				wake = held.Add(maxHold)
			}
		}
		timer.Reset(time.Until(wake))
		select {
		case <-timer.C:
			if !held.IsZero() {
				continue // ran out: released above
			}
			if holds {
				if why = hd.hold(ev); why != "" {
					cs.pause()
					held = time.Now()
					continue
				}
			}
			st.next++
			if cs.playEvent(tr, ev, &played) {
				return
			}
		case m := <-r.msgs:
			if err := cs.send(m.tMs, tr.client(m.b), nil); err != nil {
				st.at = cs.now()
				cs.finish(st.at, 0, err.Error(), "client", false, true)
				return
			}
		case err := <-r.err:
			cs.readFailed(err)
			return
		case <-cs.srv.ctx.Done():
			cs.finish(cs.now(), websocket.StatusGoingAway, "server shutting down", "server", false, false)
			return
		}
	}
}

// playEvent plays one due event; it reports whether the connection is over.
func (cs *connState) playEvent(tr translator, ev replay.TraceEvent, played *bool) bool {
	st := cs.st
	switch ev.Event {
	case "end":
		cs.finish(ev.TMs, websocket.StatusNormalClosure, "end of trace", "server", true, false)
		return true
	case "connection":
		if !*played {
			return false // the connection this one already is
		}
		st.at = ev.TMs
		err := cs.send(ev.TMs, tr.goAway(), &ev)
		// Released before the close: the client may reconnect the moment it sees goAway.
		cs.srv.release(st, true)
		by, reason := "server", "reconnect: trace connection "+ev.ID
		if err != nil {
			by, reason = "client", err.Error()
		}
		cs.close(ev.TMs, websocket.StatusNormalClosure, reason, by, false, true)
		return true
	}
	*played = true
	if err := cs.send(ev.TMs, tr.event(ev), &ev); err != nil {
		st.at = ev.TMs
		cs.finish(ev.TMs, 0, err.Error(), "client", false, true)
		return true
	}
	return false
}

// readFailed ends the connection after the reader's error: the client closed or went
// away (the session waits for its next connection), or the server is shutting down.
func (cs *connState) readFailed(err error) {
	st := cs.st
	st.at = cs.now()
	if cs.srv.ctx.Err() != nil {
		cs.finish(st.at, websocket.StatusGoingAway, "server shutting down", "server", false, false)
		return
	}
	reason := err.Error()
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		reason = ce.Reason
	}
	cs.recordClose(st.at, int(websocket.CloseStatus(err)), reason, "client", false, true)
	cs.c.CloseNow()
	cs.srv.release(st, true)
}

// reader reads the client's messages, recording each with its arrival time.
type reader struct {
	msgs chan clientMsg
	err  chan error
	quit chan struct{}
	done chan struct{}
}

// startReader starts the connection's reader goroutine.
func (cs *connState) startReader() *reader {
	r := &reader{msgs: make(chan clientMsg, 1024), err: make(chan error, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			_, b, err := cs.c.Read(cs.srv.ctx)
			if err != nil {
				r.err <- err
				return
			}
			t := cs.now()
			cs.record(KindClient, t, b, nil)
			select {
			case r.msgs <- clientMsg{b: b, tMs: t}:
			case <-r.quit:
				return
			}
		}
	}()
	return r
}

// stop waits for the reader to end (the connection is closed by then).
func (r *reader) stop() {
	close(r.quit)
	<-r.done
}

// playable: the events the loop acts on (wire events, connection, end).
func playable(ev string) bool { return wireEvent(ev) || ev == "connection" || ev == "end" }

// finish closes the connection and releases the session (see close).
func (cs *connState) finish(tMs int64, code websocket.StatusCode, reason, by string, end, resume bool) {
	cs.close(tMs, code, reason, by, end, resume)
	cs.srv.release(cs.st, resume)
}

// close closes the connection (by the server unless by is "client") and records the
// close.
func (cs *connState) close(tMs int64, code websocket.StatusCode, reason, by string, end, resume bool) {
	if by == "server" {
		cs.c.Close(code, truncate(reason, 123))
	} else {
		cs.c.CloseNow()
	}
	cs.recordClose(tMs, int(code), reason, by, end, resume)
}

func (cs *connState) recordClose(tMs int64, code int, reason, by string, end, resume bool) {
	l := cs.line(KindClose, tMs)
	if code > 0 {
		l.Code = code
	}
	l.Reason, l.By, l.End, l.Resume = reason, by, end, resume
	cs.srv.rec.write(l)
	msg := "fake provider: session ended"
	if resume {
		msg = "fake provider: session waits for a reconnect"
	}
	cs.srv.log.Info(msg, "session", cs.st.num, "conn", cs.conn, "trace", cs.st.trace.Name, "t_ms", tMs,
		"by", by, "code", code, "reason", strings.TrimSpace(reason))
}
